/**
 * Provider keys (BYOK) crossing services. account-admin owns them (PostgreSQL, envelopes
 * only); the gateway asks for an account's envelopes over gRPC (GetProviderKeys), keeps them
 * in process for at most KEY_CACHE_TTL_MS, and drops them at once on a change message on
 * this channel, or on the changed-provider-keys header of the reply that made the change.
 */
export const PROVIDER_KEY_CHANGES_CHANNEL = 'svc:provider-key-changes';

/** Published by account-admin after a stored, replaced or deleted provider key committed. */
export interface ProviderKeyChangeMessage {
  v: 1;
  accountId: string;
}

export function isProviderKeyChangeMessage(value: unknown): value is ProviderKeyChangeMessage {
  if (typeof value !== 'object' || value === null) return false;
  const m = value as Record<string, unknown>;
  return m.v === 1 && typeof m.accountId === 'string';
}
