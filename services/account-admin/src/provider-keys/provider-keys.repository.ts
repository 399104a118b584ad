import { appendAudit } from '../audit/audit.repository';
import type { AuditActor } from '../audit/audit';
import { Inject, Injectable } from '@nestjs/common';
import type { Provider } from '@svc/contracts';
import type { ProviderKeyEnvelope } from '@svc/keys';
import { DatabaseRepository } from '../db/database.repository';

/** One stored provider key: the envelope (ciphertext only) and what may be shown. */
export interface ProviderKeyRow {
  accountId: string;
  provider: Provider;
  envelope: ProviderKeyEnvelope;
  label: string;
  createdAt: Date;
  updatedAt: Date;
}

interface Model {
  accountId: string;
  provider: string;
  kekId: string;
  wrappedKey: string;
  ciphertext: string;
  label: string;
  createdAt: Date;
  updatedAt: Date;
}

function toRow(model: Model): ProviderKeyRow {
  return {
    accountId: model.accountId,
    provider: model.provider as Provider,
    envelope: { kekId: model.kekId, wrappedKey: model.wrappedKey, ciphertext: model.ciphertext },
    label: model.label,
    createdAt: model.createdAt,
    updatedAt: model.updatedAt,
  };
}

/** The provider_keys table (account-admin's own). */
/** What the audit log says of a provider key: that there was one, never any part of it. */
const PREVIOUS_KEY = 'previous key';
const NEW_KEY = 'new key';

@Injectable()
export class ProviderKeysRepository {
  constructor(@Inject(DatabaseRepository) private readonly db: DatabaseRepository) {}

  /** Stores or replaces, with its audit entry, in one transaction; `created` tells which. */
  async upsert(accountId: string, provider: Provider, envelope: ProviderKeyEnvelope, label: string, actor?: AuditActor): Promise<{ row: ProviderKeyRow; created: boolean }> {
    const now = new Date();
    const data = { kekId: envelope.kekId, wrappedKey: envelope.wrappedKey, ciphertext: envelope.ciphertext, label, updatedAt: now };
    return this.db.client.$transaction(async (tx) => {
      const existing = await tx.providerKey.findUnique({ where: { accountId_provider: { accountId, provider } }, select: { createdAt: true } });
      const model = await tx.providerKey.upsert({
        where: { accountId_provider: { accountId, provider } },
        create: { accountId, provider, ...data, createdAt: now },
        update: data,
      });
      if (actor !== undefined) {
        // Never the key, its envelope or its label: only that one was stored or replaced.
        const changes = { key: { before: existing === null ? null : PREVIOUS_KEY, after: NEW_KEY } };
        await appendAudit(tx, { accountId, actor, action: 'provider_key.set', targetId: provider, changes });
      }
      return { row: toRow(model), created: existing === null };
    });
  }

  async find(accountId: string, provider: Provider): Promise<ProviderKeyRow | null> {
    const model = await this.db.client.providerKey.findUnique({ where: { accountId_provider: { accountId, provider } } });
    return model === null ? null : toRow(model);
  }

  async list(accountId: string): Promise<ProviderKeyRow[]> {
    const models = await this.db.client.providerKey.findMany({ where: { accountId }, orderBy: { provider: 'asc' } });
    return models.map(toRow);
  }

  /** True when a row was deleted (with its audit entry, in one transaction). */
  async remove(accountId: string, provider: Provider, actor?: AuditActor): Promise<boolean> {
    return this.db.client.$transaction(async (tx) => {
      const { count } = await tx.providerKey.deleteMany({ where: { accountId, provider } });
      if (count > 0 && actor !== undefined) {
        await appendAudit(tx, { accountId, actor, action: 'provider_key.delete', targetId: provider, changes: { key: { before: PREVIOUS_KEY, after: null } } });
      }
      return count > 0;
    });
  }

  /** Up to `limit` rows not wrapped by `kekId`, in key order after `after` (the rotation command pages with it). */
  async notWrappedBy(kekId: string, limit: number): Promise<ProviderKeyRow[]> {
    const models = await this.db.client.providerKey.findMany({
      where: { kekId: { not: kekId } },
      orderBy: [{ accountId: 'asc' }, { provider: 'asc' }],
      take: limit,
    });
    return models.map(toRow);
  }

  /** Replaces a row's wrapped data key, only if it is still wrapped by `fromKekId` (a concurrent PUT wins). */
  async rewrap(accountId: string, provider: Provider, fromKekId: string, envelope: ProviderKeyEnvelope): Promise<boolean> {
    const { count } = await this.db.client.providerKey.updateMany({
      where: { accountId, provider, kekId: fromKekId, ciphertext: envelope.ciphertext },
      data: { kekId: envelope.kekId, wrappedKey: envelope.wrappedKey },
    });
    return count > 0;
  }

  async countByKek(): Promise<{ kekId: string; count: number }[]> {
    const groups = await this.db.client.providerKey.groupBy({ by: ['kekId'], _count: { _all: true } });
    return groups.map((g) => ({ kekId: g.kekId, count: g._count._all }));
  }
}
