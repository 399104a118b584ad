/**
 * Headers the gateway sets when it forwards an authenticated request to a control-plane
 * service. The gateway strips any incoming copy first; services trust them only together
 * with the shared INTERNAL_TOKEN.
 */
export const INTERNAL_HEADERS = {
  token: 'x-svc-internal-token',
  accountId: 'x-svc-account-id',
  keyId: 'x-svc-key-id',
  keyKind: 'x-svc-key-kind',
  requestId: 'x-svc-request-id',
  /** The signed-in dashboard user a relayed call acts for (account-admin to billing; the audit log's actor). */
  userId: 'x-svc-user-id',
  /** The client's address as the gateway resolved it (TRUSTED_PROXIES; @svc/http-edge clientAddress). */
  clientAddress: 'x-svc-client-address',
  /** Set by account-admin on a reply that changed a key: the gateway drops that hash from its cache. */
  changedKeyHash: 'x-svc-changed-key-hash',
  /** Set by account-admin on a reply that changed an account's provider keys: the gateway drops that account's copy. */
  changedProviderKeys: 'x-svc-changed-provider-keys',
  /**
   * On the routes that reserve money in billing (research runs): the key's credit limit as
   * `<micro-USD>:<daily|weekly|monthly|none>`, absent when the key has none (key-facts.ts).
   */
  keyLimit: 'x-svc-key-limit',
  /** On the same routes: the key's `allowed_models` fence, comma-separated; absent when the key has none. */
  keyModels: 'x-svc-key-models',
} as const;
