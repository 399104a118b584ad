import { Inject, Injectable } from '@nestjs/common';
import { INTERNAL_HEADERS } from '@svc/contracts';
import type { AuditEntryView } from '@svc/contracts';
import { encodeAuditCursor } from '@svc/http-edge';
import type { AuditFilters, AuditPosition } from '@svc/http-edge';
import type { AuditSource } from '../audit/audit.service';
import { AppError } from '@svc/errors';
import { APP_CONFIG } from '../config';
import type { SessionActor } from '../http/actor';
import type { AppConfig } from '../config';
import { LOGGER } from '../logging/logger';
import type { Logger } from '../logging/logger';

/** Who the dashboard acts for: the signed-in user's account, with management authority. */
export type DashboardActor = Pick<SessionActor, 'accountId' | 'userId'>;

/**
 * The key id a dashboard call names: the identity headers carry a management key's id, and a
 * session has no key. A fixed, recognisable id that no key can have (real ids are random)
 * marks these calls in billing's logs; billing uses a management caller's key id for nothing
 * else (docs/decisions/0015-dashboard-reaches-billing.md).
 */
export const DASHBOARD_SESSION_KEY_ID = 'mkey_dashboardSession00000000';

export interface BillingCall {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** Path and query string on billing's internal HTTP API. */
  path: string;
  actor: DashboardActor;
  requestId: string;
  /** Raw JSON body, passed on unchanged so billing validates it exactly as for /v1. */
  body?: string;
  /** The client's address (the audit log of a purchase started from the dashboard). */
  clientAddress?: string;
}

export interface BillingReply {
  status: number;
  /** billing's JSON body, passed back unchanged (its request_id is ours: we send it). */
  body: string;
}

const TIMEOUT_MS = 15_000;

/**
 * billing's internal HTTP API, called the way the gateway forwards /v1 calls: the shared
 * internal token and the identity headers (docs/decisions/0015-dashboard-reaches-billing.md).
 */
@Injectable()
export class BillingAdapter implements AuditSource {
  private readonly base: string;
  private readonly token: string;

  constructor(
    @Inject(APP_CONFIG) config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {
    this.base = config.BILLING_HTTP_URL.replace(/\/+$/, '');
    this.token = config.INTERNAL_TOKEN;
  }

  async send(call: BillingCall): Promise<BillingReply> {
    const headers: Record<string, string> = {
      [INTERNAL_HEADERS.token]: this.token,
      [INTERNAL_HEADERS.accountId]: call.actor.accountId,
      [INTERNAL_HEADERS.keyId]: DASHBOARD_SESSION_KEY_ID,
      [INTERNAL_HEADERS.keyKind]: 'management',
      [INTERNAL_HEADERS.requestId]: call.requestId,
      [INTERNAL_HEADERS.userId]: call.actor.userId,
      accept: 'application/json',
    };
    if (call.clientAddress !== undefined) headers[INTERNAL_HEADERS.clientAddress] = call.clientAddress;
    if (call.body !== undefined) headers['content-type'] = 'application/json';
    try {
      const response = await fetch(`${this.base}${call.path}`, {
        method: call.method,
        headers,
        body: call.body,
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
      return { status: response.status, body: await response.text() };
    } catch (error) {
      this.logger.error({ request_id: call.requestId, user_id: call.actor.userId, err: error instanceof Error ? `${error.name}: ${error.message}` : String(error) }, 'billing could not be reached');
      throw new AppError('internal', 'internal error');
    }
  }

  /**
   * billing's part of the audit log (GET /internal/audit-log): the same query, read as a
   * management caller of the account. A failure is a 500: a log with a part missing would
   * look complete.
   */
  async list(accountId: string, filters: AuditFilters, after: AuditPosition | null, limit: number, requestId: string): Promise<{ entries: AuditEntryView[]; more: boolean }> {
    const query = new URLSearchParams({ limit: String(limit) });
    if (filters.action !== undefined) query.set('action', filters.action);
    if (filters.actorKind !== undefined) query.set('actor_kind', filters.actorKind);
    if (filters.actorId !== undefined) query.set('actor_id', filters.actorId);
    if (filters.targetId !== undefined) query.set('target_id', filters.targetId);
    if (filters.fromMs !== undefined) query.set('from', new Date(filters.fromMs).toISOString());
    if (filters.toMs !== undefined) query.set('to', new Date(filters.toMs).toISOString());
    if (after !== null) query.set('cursor', encodeAuditCursor(after));
    const headers: Record<string, string> = {
      [INTERNAL_HEADERS.token]: this.token,
      [INTERNAL_HEADERS.accountId]: accountId,
      [INTERNAL_HEADERS.keyId]: DASHBOARD_SESSION_KEY_ID,
      [INTERNAL_HEADERS.keyKind]: 'management',
      [INTERNAL_HEADERS.requestId]: requestId,
      accept: 'application/json',
    };
    let status: number;
    let body: unknown;
    try {
      const response = await fetch(`${this.base}/internal/audit-log?${query.toString()}`, { headers, signal: AbortSignal.timeout(TIMEOUT_MS) });
      status = response.status;
      body = await response.json();
    } catch (error) {
      this.logger.error({ request_id: requestId, err: error instanceof Error ? `${error.name}: ${error.message}` : String(error) }, 'billing\'s audit log could not be read');
      throw new AppError('internal', 'internal error');
    }
    const page = body as { data?: unknown; more?: unknown } | null;
    if (status !== 200 || !Array.isArray(page?.data) || typeof page.more !== 'boolean') {
      this.logger.error({ request_id: requestId, status }, 'billing\'s audit log answered with an error');
      throw new AppError('internal', 'internal error');
    }
    return { entries: page.data as AuditEntryView[], more: page.more };
  }
}
