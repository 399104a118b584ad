import { Inject, Injectable } from '@nestjs/common';
import type { KeyKind } from '@svc/keys';
import type { LimitReset } from '@svc/contracts';
import { changed, created } from '../audit/audit';
import { appendAudit } from '../audit/audit.repository';
import type { AuditActor, AuditFields } from '../audit/audit';
import type { AuditAction } from '@svc/contracts';
import { DatabaseRepository } from '../db/database.repository';
import { toRow } from '../db/key-row';
import type { KeyRow } from '../db/key-row';
import type { Prisma } from '../generated/prisma/client';

/** What a new key is made of: the row's own fields, before the database sets the rest. */
export type NewKey = Pick<KeyRow, 'id' | 'accountId' | 'kind' | 'name' | 'keyHash' | 'label' | 'limitMicros' | 'limitReset' | 'expiresAt' | 'disabled'>
  & { allowedModels?: string[]; allowedIps?: string[] };

/**
 * The audit entry a change appends in its own transaction: who, the action, and the
 * resource's audited fields (the changes are computed from the rows before and after).
 */
export interface KeyAudit {
  actor: AuditActor;
  action: AuditAction;
  fields: (row: KeyRow) => AuditFields;
}

/** The fields an update sets; an absent property is left as it is. */
export interface KeyChanges {
  name?: string;
  limitMicros?: number | null;
  limitReset?: LimitReset | null;
  expiresAt?: Date | null;
  disabled?: boolean;
  /** Empty: the fence is removed. */
  allowedModels?: string[];
  allowedIps?: string[];
}

/** Position after which a page starts (the last row of the previous page). */
export interface KeyPosition {
  createdAt: Date;
  id: string;
}

/** A committed key change and the key_cache_outbox row written in its transaction. */
export interface ChangedKey {
  row: KeyRow;
  outboxId: bigint;
}

/** The transaction client Prisma hands to `$transaction` callbacks. */
export type Tx = Parameters<Parameters<DatabaseRepository['client']['$transaction']>[0]>[0];

/** Inserts a key and its outbox row inside the caller's transaction (a key made with something else, e.g. an OAuth grant). */
export async function insertKey(tx: Tx, key: NewKey): Promise<ChangedKey> {
  const now = new Date();
  const model = await tx.key.create({
    data: {
      ...key,
      limitMicros: key.limitMicros === null ? null : BigInt(key.limitMicros),
      version: 1,
      createdAt: now,
      updatedAt: now,
    },
  });
  const outbox = await tx.keyCacheOutbox.create({ data: { keyHash: model.keyHash, version: model.version }, select: { id: true } });
  return { row: toRow(model), outboxId: outbox.id };
}

function isRecordNotFound(error: unknown): boolean {
  return typeof error === 'object' && error !== null && (error as { code?: unknown }).code === 'P2025';
}

@Injectable()
export class KeysRepository {
  constructor(@Inject(DatabaseRepository) private readonly db: DatabaseRepository) {}

  /** Inserts the key, its outbox row and its audit entry in one transaction. */
  async create(key: NewKey, audit?: KeyAudit): Promise<ChangedKey> {
    return this.db.client.$transaction(async (tx) => {
      const inserted = await insertKey(tx, key);
      if (audit !== undefined) {
        await appendAudit(tx, { accountId: inserted.row.accountId, actor: audit.actor, action: audit.action, targetId: inserted.row.id, changes: created(audit.fields(inserted.row)) });
      }
      return inserted;
    });
  }

  /** A live (not deleted) key of the account and kind. */
  async findLive(accountId: string, kind: KeyKind, id: string): Promise<KeyRow | null> {
    const model = await this.db.client.key.findFirst({ where: { id, accountId, kind, deletedAt: null } });
    return model === null ? null : toRow(model);
  }

  /**
   * Sets `last_used_at` to each use's time when the stored one is unset or at least a minute
   * older (so a key is written at most once a minute however busy), never moving it back.
   * Not a change of the key record (no version, no cache write). Resolves with rows updated.
   */
  async markUsed(uses: readonly { keyId: string; usedAtMs: number }[]): Promise<number> {
    if (uses.length === 0) return 0;
    const latest = new Map<string, number>();
    for (const use of uses) latest.set(use.keyId, Math.max(latest.get(use.keyId) ?? 0, use.usedAtMs));
    const ids = [...latest.keys()];
    const times = ids.map((id) => new Date(latest.get(id) ?? 0).toISOString());
    return this.db.client.$executeRaw`
      UPDATE keys SET last_used_at = u.used_at
      FROM unnest(${ids}::text[], ${times}::timestamptz[]) AS u(id, used_at)
      WHERE keys.id = u.id AND (keys.last_used_at IS NULL OR keys.last_used_at <= u.used_at - interval '1 minute')`;
  }

  /** The limits of live API keys among `ids` (keys without a limit are left out). */
  async limitsOf(ids: readonly string[]): Promise<{ id: string; accountId: string; limitMicros: number; limitReset: LimitReset | null }[]> {
    if (ids.length === 0) return [];
    const models = await this.db.client.key.findMany({ where: { id: { in: [...ids] }, kind: 'api', deletedAt: null, limitMicros: { not: null } } });
    return models.map(toRow).flatMap((row) => (row.limitMicros === null ? [] : [{ id: row.id, accountId: row.accountId, limitMicros: row.limitMicros, limitReset: row.limitReset }]));
  }

  /** Any key, deleted or not, by the hash of its secret. */
  async findByHash(keyHash: string): Promise<KeyRow | null> {
    const model = await this.db.client.key.findUnique({ where: { keyHash } });
    return model === null ? null : toRow(model);
  }

  /** Live keys, newest first, `limit` of them after `after`. */
  async listLive(accountId: string, kind: KeyKind, limit: number, after: KeyPosition | null): Promise<KeyRow[]> {
    const models = await this.db.client.key.findMany({
      where: {
        accountId,
        kind,
        deletedAt: null,
        ...(after === null
          ? {}
          : { OR: [{ createdAt: { lt: after.createdAt } }, { createdAt: after.createdAt, id: { lt: after.id } }] }),
      },
      orderBy: [{ createdAt: 'desc' }, { id: 'desc' }],
      take: limit,
    });
    return models.map(toRow);
  }

  /**
   * Applies the changes to a live key and bumps its version, with its outbox row, in one
   * transaction; null when there is no such key.
   */
  async update(accountId: string, kind: KeyKind, id: string, changes: KeyChanges, audit?: KeyAudit): Promise<ChangedKey | null> {
    const { limitMicros, ...rest } = changes;
    try {
      return await this.db.client.$transaction(async (tx) => {
        // The row as it was, locked, so the audit entry's "before" is the state this change replaced.
        const before = audit === undefined ? null : await lockedLive(tx, accountId, kind, id);
        if (audit !== undefined && before === null) return null;
        const model = await tx.key.update({
          where: { id, accountId, kind, deletedAt: null },
          data: {
            ...rest,
            ...(limitMicros === undefined ? {} : { limitMicros: limitMicros === null ? null : BigInt(limitMicros) }),
            version: { increment: 1 },
            updatedAt: new Date(),
          },
        });
        const outbox = await tx.keyCacheOutbox.create({ data: { keyHash: model.keyHash, version: model.version }, select: { id: true } });
        const row = toRow(model);
        if (audit !== undefined && before !== null) {
          await appendAudit(tx, { accountId, actor: audit.actor, action: audit.action, targetId: id, changes: changed(audit.fields(before), audit.fields(row)) });
        }
        return { row, outboxId: outbox.id };
      });
    } catch (error) {
      if (isRecordNotFound(error)) return null;
      throw error;
    }
  }

  /**
   * Marks a live key deleted and bumps its version, with its outbox row, in one transaction;
   * null when there is no such key.
   */
  async softDelete(accountId: string, kind: KeyKind, id: string, audit?: Omit<KeyAudit, 'fields'>): Promise<ChangedKey | null> {
    const now = new Date();
    try {
      return await this.db.client.$transaction(async (tx) => {
        const model = await tx.key.update({
          where: { id, accountId, kind, deletedAt: null },
          data: { deletedAt: now, updatedAt: now, version: { increment: 1 } },
        });
        const outbox = await tx.keyCacheOutbox.create({ data: { keyHash: model.keyHash, version: model.version }, select: { id: true } });
        if (audit !== undefined) {
          await appendAudit(tx, { accountId, actor: audit.actor, action: audit.action, targetId: id, changes: { deleted: { before: false, after: true } } });
        }
        return { row: toRow(model), outboxId: outbox.id };
      });
    } catch (error) {
      if (isRecordNotFound(error)) return null;
      throw error;
    }
  }
}

/** A live key's row, locked for the rest of the transaction (SELECT ... FOR UPDATE); null when there is none. */
async function lockedLive(tx: Prisma.TransactionClient, accountId: string, kind: KeyKind, id: string): Promise<KeyRow | null> {
  const locked = await tx.$queryRaw<{ id: string }[]>`SELECT id FROM keys WHERE id = ${id} AND account_id = ${accountId} AND deleted_at IS NULL FOR UPDATE`;
  if (locked.length === 0) return null;
  const model = await tx.key.findFirst({ where: { id, accountId, kind, deletedAt: null } });
  return model === null ? null : toRow(model);
}
