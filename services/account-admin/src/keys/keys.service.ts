import { Inject, Injectable } from '@nestjs/common';
import { periodOf } from '@svc/contracts';
import type { ManagementKeyView } from '@svc/contracts';
import type { ApiKey } from '@svc/sdk';
import { AppError } from '@svc/errors';
import { decodeTimeIdCursor, encodeTimeIdCursor } from '@svc/http-edge';
import { isId, newId } from '@svc/ids';
import { generateSecret, hashSecret, labelOf } from '@svc/keys';
import type { KeyKind } from '@svc/keys';
import { microsToUsd } from '@svc/money';
import { KeyCacheRepository } from '../key-cache/key-cache.repository';
import type { Usage } from '../key-cache/key-cache.repository';
import { KeyCacheService } from '../key-cache/key-cache.service';
import { toKeyRecord } from '../key-cache/key-record';
import { LOGGER } from '../logging/logger';
import type { Logger } from '../logging/logger';
import type { KeyInput, ListQuery } from './keys.dto';
import type { AuditActor, AuditFields } from '../audit/audit';
import { KeysRepository } from './keys.repository';
import type { KeyPosition } from './keys.repository';
import type { KeyRow } from '../db/key-row';

/** The authenticated key a request comes with (from the gateway's internal headers). */
export interface Caller {
  accountId: string;
  keyId: string;
  kind: KeyKind;
}

/**
 * The API key record (docs/api.md 9.1): the SDK's `ApiKey` (held to the one schema in
 * @svc/contracts by tools/openapi's answer-schemas test), except that usage_usd and
 * usage_total_usd (with limit_remaining_usd) are null in a change's reply when Redis could
 * not be read (a known difference, decision 21).
 */
export type KeyView = Omit<ApiKey, 'usage_usd' | 'usage_total_usd'> & { usage_usd: number | null; usage_total_usd: number | null };

/** What GET /v1/key shows of a management key: the record fields that apply to it. */
export interface ManagementKeySelfView {
  id: string;
  name: string;
  label: string;
  expires_at: string | null;
  disabled: boolean;
  created_at: string;
  updated_at: string;
  last_used_at: string | null;
}

export type { ManagementKeyView };

/** A reply of a change: what to answer and which hash the gateway should forget. */
export interface Changed<T> {
  value: T;
  changedKeyHash: string | null;
}

export interface Page<T> {
  data: T[];
  next_cursor: string | null;
}

/** Management keys per account are few; the dashboard lists them in one page of at most this. */
const MANAGEMENT_LIST_MAX = 1_000;

/** An API key's audited fields, as the API shows them (never the secret, its hash or its label). */
export function apiKeyAuditFields(row: KeyRow): AuditFields {
  return {
    name: row.name,
    limit_usd: row.limitMicros === null ? null : microsToUsd(row.limitMicros),
    limit_reset: row.limitReset,
    expires_at: iso(row.expiresAt),
    disabled: row.disabled,
    allowed_models: row.allowedModels.length === 0 ? null : row.allowedModels,
    allowed_ips: row.allowedIps.length === 0 ? null : row.allowedIps,
  };
}

/** A management key's audited fields. */
export function managementKeyAuditFields(row: KeyRow): AuditFields {
  return { name: row.name, disabled: row.disabled };
}

function iso(date: Date | null): string | null {
  return date === null ? null : date.toISOString();
}

export function encodeCursor(position: KeyPosition): string {
  return encodeTimeIdCursor({ atMs: position.createdAt.getTime(), id: position.id });
}

export function decodeCursor(cursor: string, idKind: 'apiKey' | 'managementKey'): KeyPosition {
  const { atMs, id } = decodeTimeIdCursor(cursor, (value): value is string => isId(idKind, value));
  return { createdAt: new Date(atMs), id };
}

@Injectable()
export class KeysService {
  constructor(
    @Inject(KeysRepository) private readonly keys: KeysRepository,
    @Inject(KeyCacheService) private readonly cache: KeyCacheService,
    @Inject(KeyCacheRepository) private readonly counters: KeyCacheRepository,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  async createApiKey(accountId: string, input: KeyInput, actor?: AuditActor): Promise<Changed<KeyView & { secret: string }>> {
    const limitMicros = input.limitMicros ?? null;
    const limitReset = input.limitReset ?? null;
    if (limitReset !== null && limitMicros === null) throw new AppError('invalid_request', 'limit_reset needs limit_usd');
    const secret = generateSecret('api');
    const keyHash = hashSecret(secret);
    const asOfMs = Date.now();
    const { row, outboxId } = await this.keys.create({
      id: newId('apiKey'),
      accountId,
      kind: 'api',
      name: input.name ?? '',
      keyHash,
      label: labelOf(secret),
      limitMicros,
      limitReset,
      expiresAt: input.expiresAt ?? null,
      disabled: input.disabled ?? false,
      allowedModels: input.allowedModels ?? [],
      allowedIps: input.allowedIps ?? [],
    }, actor === undefined ? undefined : { actor, action: 'api_key.create', fields: apiKeyAuditFields });
    await this.cache.propagate({ keyHash, record: toKeyRecord(row), outboxId, asOfMs });
    const [view] = await this.views([row], 'committed');
    if (view === undefined) throw new Error('no view for a created key');
    return { value: { ...view, secret }, changedKeyHash: keyHash };
  }

  async listApiKeys(accountId: string, query: ListQuery): Promise<Page<KeyView>> {
    const after = query.cursor === null ? null : decodeCursor(query.cursor, 'apiKey');
    const rows = await this.keys.listLive(accountId, 'api', query.limit + 1, after);
    const page = rows.slice(0, query.limit);
    const last = page[page.length - 1];
    const nextCursor = rows.length > query.limit && last !== undefined ? encodeCursor(last) : null;
    return { data: await this.views(page), next_cursor: nextCursor };
  }

  async getApiKey(accountId: string, id: string): Promise<KeyView> {
    const row = await this.findApiKey(accountId, id);
    const [view] = await this.views([row]);
    if (view === undefined) throw new Error('no view for a key');
    return view;
  }

  async updateApiKey(accountId: string, id: string, input: KeyInput, actor?: AuditActor): Promise<Changed<KeyView>> {
    const current = await this.findApiKey(accountId, id);
    if (Object.keys(input).length === 0) {
      return { value: await this.getApiKey(accountId, id), changedKeyHash: null };
    }
    const changes = { ...input };
    // Removing the limit removes its reset period too, unless the body sets one (then 400 below).
    if (changes.limitMicros === null && changes.limitReset === undefined) changes.limitReset = null;
    const limitMicros = changes.limitMicros !== undefined ? changes.limitMicros : current.limitMicros;
    const limitReset = changes.limitReset !== undefined ? changes.limitReset : current.limitReset;
    if (limitReset !== null && limitMicros === null) throw new AppError('invalid_request', 'limit_reset needs limit_usd');
    const asOfMs = Date.now();
    const changed = await this.keys.update(accountId, 'api', id, changes, actor === undefined ? undefined : { actor, action: 'api_key.update', fields: apiKeyAuditFields });
    if (changed === null) throw notFound();
    const { row, outboxId } = changed;
    await this.cache.propagate({ keyHash: row.keyHash, record: toKeyRecord(row), outboxId, asOfMs });
    const [view] = await this.views([row], 'committed');
    if (view === undefined) throw new Error('no view for an updated key');
    return { value: view, changedKeyHash: row.keyHash };
  }

  async deleteApiKey(accountId: string, id: string, actor?: AuditActor): Promise<Changed<{ id: string; deleted: true }>> {
    if (!isId('apiKey', id)) throw notFound();
    const asOfMs = Date.now();
    const changed = await this.keys.softDelete(accountId, 'api', id, actor === undefined ? undefined : { actor, action: 'api_key.delete' });
    if (changed === null) throw notFound();
    const { row, outboxId } = changed;
    await this.cache.propagate({ keyHash: row.keyHash, record: toKeyRecord(row), outboxId, asOfMs });
    return { value: { id: row.id, deleted: true }, changedKeyHash: row.keyHash };
  }

  /** GET /v1/key: the calling key itself; a key gone meanwhile is an unknown key (401). */
  async self(caller: Caller): Promise<({ kind: 'api' } & KeyView) | ({ kind: 'management' } & ManagementKeySelfView)> {
    const row = await this.keys.findLive(caller.accountId, caller.kind, caller.keyId);
    if (row === null) throw new AppError('invalid_api_key', 'the key is unknown or deleted');
    if (row.kind === 'management') {
      return {
        kind: 'management',
        id: row.id,
        name: row.name,
        label: row.label,
        expires_at: iso(row.expiresAt),
        disabled: row.disabled,
        created_at: row.createdAt.toISOString(),
        updated_at: row.updatedAt.toISOString(),
        last_used_at: iso(row.lastUsedAt),
      };
    }
    const [view] = await this.views([row]);
    if (view === undefined) throw new Error('no view for a key');
    return { kind: 'api', ...view };
  }

  async createManagementKey(accountId: string, name: string, actor?: AuditActor): Promise<Changed<ManagementKeyView & { secret: string }>> {
    const secret = generateSecret('management');
    const keyHash = hashSecret(secret);
    const asOfMs = Date.now();
    const { row, outboxId } = await this.keys.create({
      id: newId('managementKey'),
      accountId,
      kind: 'management',
      name,
      keyHash,
      label: labelOf(secret),
      limitMicros: null,
      limitReset: null,
      expiresAt: null,
      disabled: false,
    }, actor === undefined ? undefined : { actor, action: 'management_key.create', fields: managementKeyAuditFields });
    await this.cache.propagate({ keyHash, record: toKeyRecord(row), outboxId, asOfMs });
    return { value: { ...managementView(row), secret }, changedKeyHash: keyHash };
  }

  async listManagementKeys(accountId: string): Promise<Page<ManagementKeyView>> {
    const rows = await this.keys.listLive(accountId, 'management', MANAGEMENT_LIST_MAX, null);
    return { data: rows.map(managementView), next_cursor: null };
  }

  /** Renames, disables or enables a management key of the account (the dashboard's key table). */
  async updateManagementKey(accountId: string, id: string, changes: { name?: string; disabled?: boolean }, actor?: AuditActor): Promise<Changed<ManagementKeyView>> {
    if (!isId('managementKey', id)) throw notFound();
    if (changes.name === undefined && changes.disabled === undefined) {
      const row = await this.keys.findLive(accountId, 'management', id);
      if (row === null) throw notFound();
      return { value: managementView(row), changedKeyHash: null };
    }
    const asOfMs = Date.now();
    const changed = await this.keys.update(accountId, 'management', id, changes, actor === undefined ? undefined : { actor, action: 'management_key.update', fields: managementKeyAuditFields });
    if (changed === null) throw notFound();
    const { row, outboxId } = changed;
    await this.cache.propagate({ keyHash: row.keyHash, record: toKeyRecord(row), outboxId, asOfMs });
    return { value: managementView(row), changedKeyHash: row.keyHash };
  }

  async deleteManagementKey(accountId: string, id: string, actor?: AuditActor): Promise<Changed<{ id: string; deleted: true }>> {
    if (!isId('managementKey', id)) throw notFound();
    const asOfMs = Date.now();
    const changed = await this.keys.softDelete(accountId, 'management', id, actor === undefined ? undefined : { actor, action: 'management_key.delete' });
    if (changed === null) throw notFound();
    const { row, outboxId } = changed;
    await this.cache.propagate({ keyHash: row.keyHash, record: toKeyRecord(row), outboxId, asOfMs });
    return { value: { id: row.id, deleted: true }, changedKeyHash: row.keyHash };
  }

  private async findApiKey(accountId: string, id: string): Promise<KeyRow> {
    if (!isId('apiKey', id)) throw notFound();
    const row = await this.keys.findLive(accountId, 'api', id);
    if (row === null) throw notFound();
    return row;
  }

  /**
   * Key records with their spend counters from Redis. For a reply to a change that is
   * already committed (`'committed'`), a Redis failure must not turn it into a 500: the
   * counters are then null and a warning is logged. A plain read still fails.
   */
  async views(rows: readonly KeyRow[], mode: 'read' | 'committed' = 'read'): Promise<KeyView[]> {
    const nowMs = Date.now();
    const periods = rows.map((row) => (row.limitReset === null ? null : periodOf(row.limitReset, nowMs)));
    const queries = rows.map((row, i) => ({ accountId: row.accountId, keyId: row.id, periodStartMs: periods[i]?.startMs ?? null, reset: row.limitReset }));
    let usage: readonly Usage[] | null;
    try {
      usage = await this.counters.readUsage(queries);
    } catch (error) {
      if (mode === 'read') throw error;
      this.logger.warn(
        { err: error instanceof Error ? `${error.name}: ${error.message}` : String(error), keyIds: rows.map((row) => row.id) },
        'key change committed but its usage counters could not be read from Redis; replying with null usage',
      );
      usage = null;
    }
    return rows.map((row, i) => apiKeyView(row, usage === null ? null : (usage[i] ?? { periodMicros: 0, totalMicros: 0 }), periods[i]?.endMs ?? null));
  }
}

function notFound(): AppError {
  return new AppError('not_found', 'no such key in this account');
}

/** `usage` null: the counters are unknown (Redis unreadable), so usage and remaining are null. */
export function apiKeyView(row: KeyRow, usage: Usage | null, periodEndMs: number | null): KeyView {
  const remaining = row.limitMicros === null || usage === null ? null : Math.max(0, row.limitMicros - usage.periodMicros);
  return {
    id: row.id,
    name: row.name,
    label: row.label,
    limit_usd: row.limitMicros === null ? null : microsToUsd(row.limitMicros),
    limit_reset: row.limitReset,
    limit_remaining_usd: remaining === null ? null : microsToUsd(remaining),
    usage_usd: usage === null ? null : microsToUsd(usage.periodMicros),
    limit_resets_at: periodEndMs === null ? null : new Date(periodEndMs).toISOString(),
    usage_total_usd: usage === null ? null : microsToUsd(usage.totalMicros),
    expires_at: iso(row.expiresAt),
    disabled: row.disabled,
    created_at: row.createdAt.toISOString(),
    updated_at: row.updatedAt.toISOString(),
    last_used_at: iso(row.lastUsedAt),
    allowed_models: row.allowedModels.length === 0 ? null : row.allowedModels,
    allowed_ips: row.allowedIps.length === 0 ? null : row.allowedIps,
  };
}

function managementView(row: KeyRow): ManagementKeyView {
  return {
    id: row.id, name: row.name, label: row.label, created_at: row.createdAt.toISOString(),
    disabled: row.disabled, updated_at: row.updatedAt.toISOString(), last_used_at: iso(row.lastUsedAt),
  };
}
