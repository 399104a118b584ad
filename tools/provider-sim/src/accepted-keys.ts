/**
 * The keys the simulator accepts for a provider: SIM_<PROVIDER>_KEY, a comma-separated list
 * (the platform's key, and accounts' own keys in BYOK tests). Anything else is a bad key.
 */
export function accepts(keys: string, presented: string | string[] | undefined): boolean {
  if (typeof presented !== 'string' || presented === '') return false;
  return keys.split(',').includes(presented);
}

/** The token of an `Authorization: Bearer <token>` header, or undefined. */
export function bearerOf(header: string | undefined): string | undefined {
  return header !== undefined && header.startsWith('Bearer ') ? header.slice('Bearer '.length) : undefined;
}
