// The KEK rotation command: re-wraps every stored provider key's data key under the current
// PROVIDER_KEY_KEK (`npm run rewrap-provider-keys`, docs/operations.md). Run it with the same
// environment as account-admin during a rotation: PROVIDER_KEY_KEK / PROVIDER_KEY_KEK_ID the
// new key, PROVIDER_KEY_KEK_PREVIOUS the old one. Prints JSON; exits 1 when records remain
// under another KEK.
import { ConfigError, parseEnv, url } from '@svc/config';
import { DatabaseRepository } from '../db/database.repository';
import type { AppConfig } from '../config';
import { kekRingOf } from '../config';
import { createLogger } from '../logging/logger';
import { ProviderKeysRepository } from './provider-keys.repository';
import { rewrapAll } from './provider-keys.rewrap';

async function main(): Promise<void> {
  const env = parseEnv({
    DATABASE_URL: url({ default: 'postgresql://postgres@127.0.0.1:5432/svc_account_admin', protocols: ['postgresql', 'postgres'] }),
  });
  const ring = kekRingOf(process.env, true);
  if (ring === null) throw new ConfigError('PROVIDER_KEY_KEK', 'is required');
  const db = new DatabaseRepository({ DATABASE_URL: env.DATABASE_URL } as AppConfig);
  try {
    const result = await rewrapAll(new ProviderKeysRepository(db), ring, createLogger('warn'));
    process.stdout.write(`${JSON.stringify({ kek_id: ring.current.id, ...result })}\n`);
    if (result.remaining.length > 0) process.exitCode = 1;
  } finally {
    await db.onApplicationShutdown();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`rewrap-provider-keys: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
