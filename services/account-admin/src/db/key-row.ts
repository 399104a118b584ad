import type { KeyKind } from '@svc/keys';
import type { LimitReset } from '@svc/contracts';
import type { Key as KeyModel } from '../generated/prisma/client';

/**
 * The `keys` table's row as the service uses it: read by the keys repository (src/keys) and
 * by the key-cache outbox (src/key-cache), which writes each changed key's record to Redis.
 */
/** A row of `keys`, with money as integer micro-USD. */
export interface KeyRow {
  id: string;
  accountId: string;
  kind: KeyKind;
  name: string;
  keyHash: string;
  label: string;
  limitMicros: number | null;
  limitReset: LimitReset | null;
  expiresAt: Date | null;
  disabled: boolean;
  version: number;
  deletedAt: Date | null;
  createdAt: Date;
  updatedAt: Date;
  lastUsedAt: Date | null;
  /** Empty: not fenced. */
  allowedModels: string[];
  allowedIps: string[];
}

export function toRow(model: KeyModel): KeyRow {
  return {
    id: model.id,
    accountId: model.accountId,
    kind: model.kind,
    name: model.name,
    keyHash: model.keyHash,
    label: model.label,
    limitMicros: model.limitMicros === null ? null : Number(model.limitMicros),
    limitReset: model.limitReset,
    expiresAt: model.expiresAt,
    disabled: model.disabled,
    version: model.version,
    deletedAt: model.deletedAt,
    createdAt: model.createdAt,
    updatedAt: model.updatedAt,
    lastUsedAt: model.lastUsedAt,
    allowedModels: model.allowedModels,
    allowedIps: model.allowedIps,
  };
}
