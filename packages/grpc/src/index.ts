export {
  AccountAdminClient,
  AccountAdminService,
  KeyKind as ProtoKeyKind,
  LimitReset as ProtoLimitReset,
} from './generated/svc/accountadmin/v1/account_admin';
export type {
  AccountAdminServer,
  Account as ProtoAccount,
  KeyRecord as ProtoKeyRecord,
  LookupKeyRequest,
  LookupKeyResponse,
  CreateAccountRequest,
  GetAccountRequest,
  ProviderKeyEnvelope as ProtoProviderKeyEnvelope,
  KeyUse as ProtoKeyUse,
  KeyLimit as ProtoKeyLimit,
} from './generated/svc/accountadmin/v1/account_admin';
export { keyRecordFromProto, keyRecordToProto, limitResetFromProto, limitResetToProto } from './key-record-mapping';
