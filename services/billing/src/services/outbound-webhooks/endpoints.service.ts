import type { AuditChange } from '@svc/contracts';
import { LIMITS } from '@svc/contracts';
import { AppError } from '@svc/errors';
import { isId } from '@svc/ids';
import type { Transactions } from '../../db/transactions';
import type { AuditActor, AuditRepository } from '../../stores/audit.repository';
import type { DeliveryRow, EndpointRow, EndpointsRepository } from '../../stores/webhook-endpoints.repository';
import type { HistoryPage } from '../../common/pages';
import { refusedUrl } from './url-policy';
import type { UrlPolicy } from './url-policy';

export interface EndpointsStores {
  transactions: Transactions;
  endpoints: EndpointsRepository;
  audit: AuditRepository;
}

export interface EndpointChange {
  url?: string;
  events?: string[];
  enabled?: boolean;
}

/** The fields of an endpoint the audit log shows (never its secret). */
const shown = (row: { url: string; events: readonly string[]; enabled: boolean }): { url: string; events: string[]; enabled: boolean } =>
  ({ url: row.url, events: [...row.events], enabled: row.enabled });

function changedFields(before: ReturnType<typeof shown>, after: ReturnType<typeof shown>): Record<string, AuditChange> {
  const changes: Record<string, AuditChange> = {};
  if (before.url !== after.url) changes.url = { before: before.url, after: after.url };
  if (before.events.length !== after.events.length || before.events.some((event, i) => event !== after.events[i])) changes.events = { before: before.events, after: after.events };
  if (before.enabled !== after.enabled) changes.enabled = { before: before.enabled, after: after.enabled };
  return changes;
}

/**
 * The account's webhook endpoints (docs/api.md, "Events and webhooks"). Every change is
 * audited in its own transaction (docs/decisions/0025): created, its URL, events or state
 * changed, its secret rotated, deleted. An entry never holds a secret: a rotation is recorded
 * as `previous secret` → `new secret`.
 */
export class EndpointsService {
  constructor(
    private readonly stores: EndpointsStores,
    private readonly policy: UrlPolicy,
  ) {}

  /** 400 when the deployment may not send to `url` (its scheme, or an address literal in a refused range). */
  checkUrl(url: string): void {
    const refused = refusedUrl(url, this.policy);
    if (refused !== null) throw new AppError('invalid_request', refused);
  }

  async create(accountId: string, input: { url: string; events: string[]; enabled: boolean }, actor: AuditActor): Promise<EndpointRow> {
    this.checkUrl(input.url);
    const { transactions, endpoints, audit } = this.stores;
    const created = await transactions.run(async (tx) => {
      const row = await endpoints.create(tx, accountId, input, LIMITS.webhookEndpoints.max);
      if (row === null) return null;
      const after = shown(row);
      await audit.append(tx, {
        accountId, actor, action: 'webhook_endpoint.create', targetId: row.id,
        changes: { url: { before: null, after: after.url }, events: { before: null, after: after.events }, enabled: { before: null, after: after.enabled } },
      });
      return row;
    });
    if (created === null) throw new AppError('invalid_request', `an account has at most ${LIMITS.webhookEndpoints.max} webhook endpoints`);
    return created;
  }

  async list(accountId: string, page: HistoryPage): Promise<{ rows: EndpointRow[]; more: boolean }> {
    const rows = await this.stores.endpoints.list(accountId, page.limit + 1, page.after);
    return { rows: rows.slice(0, page.limit), more: rows.length > page.limit };
  }

  async get(accountId: string, id: string): Promise<EndpointRow> {
    const row = isId('webhookEndpoint', id) ? await this.stores.endpoints.get(accountId, id) : null;
    if (row === null) throw new AppError('not_found', 'no such webhook endpoint');
    return row;
  }

  /** A change of URL, events or state; audited when a field the owner sees changed. */
  async update(accountId: string, id: string, change: EndpointChange, actor: AuditActor): Promise<EndpointRow> {
    if (change.url !== undefined) this.checkUrl(change.url);
    const { transactions, endpoints, audit } = this.stores;
    const updated = !isId('webhookEndpoint', id) ? null : await transactions.run(async (tx) => {
      const before = await endpoints.lockOne(tx, accountId, id);
      if (before === null) return null;
      const row = await endpoints.update(tx, accountId, id, change);
      if (row === null) return null;
      const changes = changedFields(shown(before), shown(row));
      if (Object.keys(changes).length > 0) await audit.append(tx, { accountId, actor, action: 'webhook_endpoint.update', targetId: id, changes });
      return row;
    });
    if (updated === null) throw new AppError('not_found', 'no such webhook endpoint');
    return updated;
  }

  /** Deletes the endpoint (its pending deliveries are cancelled). */
  async remove(accountId: string, id: string, actor: AuditActor): Promise<void> {
    const { transactions, endpoints, audit } = this.stores;
    const deleted = isId('webhookEndpoint', id) && await transactions.run(async (tx) => {
      if (!(await endpoints.delete(tx, accountId, id))) return false;
      await audit.append(tx, { accountId, actor, action: 'webhook_endpoint.delete', targetId: id, changes: { deleted: { before: false, after: true } } });
      return true;
    });
    if (!deleted) throw new AppError('not_found', 'no such webhook endpoint');
  }

  /** A new secret (answered once); the old one keeps signing (a second v1) for 24 hours. */
  async rotate(accountId: string, id: string, actor: AuditActor): Promise<EndpointRow> {
    const { transactions, endpoints, audit } = this.stores;
    const rotated = !isId('webhookEndpoint', id) ? null : await transactions.run(async (tx) => {
      const row = await endpoints.rotate(tx, accountId, id);
      if (row === null) return null;
      await audit.append(tx, { accountId, actor, action: 'webhook_endpoint.rotate_secret', targetId: id, changes: { secret: { before: 'previous secret', after: 'new secret' } } });
      return row;
    });
    if (rotated === null) throw new AppError('not_found', 'no such webhook endpoint');
    return rotated;
  }

  /** The endpoint's deliveries, newest first, each with every attempt. */
  async deliveries(accountId: string, id: string, page: HistoryPage): Promise<{ rows: DeliveryRow[]; more: boolean }> {
    await this.get(accountId, id);
    const rows = await this.stores.endpoints.deliveries(accountId, id, page.limit + 1, page.after);
    return { rows: rows.slice(0, page.limit), more: rows.length > page.limit };
  }

  /** Sends a delivery again (whatever its state), with a fresh 24-hour retry window. */
  async redeliver(accountId: string, id: string, deliveryId: string): Promise<void> {
    const queued = isId('webhookEndpoint', id) && isId('webhookDelivery', deliveryId) && (await this.stores.endpoints.redeliver(accountId, id, deliveryId));
    if (!queued) throw new AppError('not_found', 'no such delivery');
  }
}
