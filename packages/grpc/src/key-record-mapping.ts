import type { KeyRecord, LimitReset } from '@svc/contracts';
import { KeyKind, LimitReset as ProtoLimitReset } from './generated/svc/accountadmin/v1/account_admin';
import type { KeyRecord as ProtoKeyRecord } from './generated/svc/accountadmin/v1/account_admin';

const RESET_TO_PROTO: Record<LimitReset, ProtoLimitReset> = {
  daily: ProtoLimitReset.LIMIT_RESET_DAILY,
  weekly: ProtoLimitReset.LIMIT_RESET_WEEKLY,
  monthly: ProtoLimitReset.LIMIT_RESET_MONTHLY,
};

export function keyRecordToProto(record: KeyRecord): ProtoKeyRecord {
  return {
    keyId: record.id,
    accountId: record.accountId,
    kind: record.kind === 'api' ? KeyKind.KEY_KIND_API : KeyKind.KEY_KIND_MANAGEMENT,
    disabled: record.disabled,
    expiresAtMs: record.expiresAtMs ?? undefined,
    limitMicros: record.limitMicros ?? undefined,
    limitReset: record.limitReset === null ? ProtoLimitReset.LIMIT_RESET_NONE : RESET_TO_PROTO[record.limitReset],
    version: record.version,
    deleted: record.deleted,
    allowedModels: record.allowedModels === undefined ? [] : [...record.allowedModels],
    allowedIps: record.allowedIps === undefined ? [] : [...record.allowedIps],
  };
}

/** Throws on a record no account-admin would send (unknown kind or reset). */
export function keyRecordFromProto(proto: ProtoKeyRecord): KeyRecord {
  let kind: KeyRecord['kind'];
  if (proto.kind === KeyKind.KEY_KIND_API) kind = 'api';
  else if (proto.kind === KeyKind.KEY_KIND_MANAGEMENT) kind = 'management';
  else throw new Error(`key record with unknown kind ${proto.kind}`);
  let limitReset: LimitReset | null;
  switch (proto.limitReset) {
    case ProtoLimitReset.LIMIT_RESET_NONE: limitReset = null; break;
    case ProtoLimitReset.LIMIT_RESET_DAILY: limitReset = 'daily'; break;
    case ProtoLimitReset.LIMIT_RESET_WEEKLY: limitReset = 'weekly'; break;
    case ProtoLimitReset.LIMIT_RESET_MONTHLY: limitReset = 'monthly'; break;
    default: throw new Error(`key record with unknown limit reset ${proto.limitReset}`);
  }
  const record: KeyRecord = {
    id: proto.keyId,
    accountId: proto.accountId,
    kind,
    disabled: proto.disabled,
    expiresAtMs: proto.expiresAtMs ?? null,
    limitMicros: proto.limitMicros ?? null,
    limitReset,
    version: proto.version,
    deleted: proto.deleted,
  };
  // An empty list is no fence (a set fence is never empty).
  if (proto.allowedModels.length > 0) record.allowedModels = proto.allowedModels;
  if (proto.allowedIps.length > 0) record.allowedIps = proto.allowedIps;
  return record;
}

export function limitResetToProto(reset: LimitReset | null): ProtoLimitReset {
  return reset === null ? ProtoLimitReset.LIMIT_RESET_NONE : RESET_TO_PROTO[reset];
}

/** Throws on a value no account-admin would send. */
export function limitResetFromProto(reset: ProtoLimitReset): LimitReset | null {
  switch (reset) {
    case ProtoLimitReset.LIMIT_RESET_NONE: return null;
    case ProtoLimitReset.LIMIT_RESET_DAILY: return 'daily';
    case ProtoLimitReset.LIMIT_RESET_WEEKLY: return 'weekly';
    case ProtoLimitReset.LIMIT_RESET_MONTHLY: return 'monthly';
    default: throw new Error(`unknown limit reset ${String(reset)}`);
  }
}
