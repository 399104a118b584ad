import { PROVIDERS, providerHealthKeys } from '@svc/contracts';
import type { BreakerMode, Provider } from '@svc/contracts';
import type { RedisClient } from '@svc/redis-client';

/** A provider's breaker as the operator API shows it. */
export interface BreakerView {
  provider: Provider;
  /** The shared state: `open` (its platform key is skipped) or `closed`. */
  state: 'open' | 'closed';
  /** Set while an operator overrides the window. */
  forced: 'open' | 'closed' | null;
  reason: string | null;
  opened_at: string | null;
  /** When the cool-down ends and the probe goes out (open only). */
  open_until: string | null;
}

const iso = (ms: string | null | undefined): string | null => (ms === null || ms === undefined || ms === '' ? null : new Date(Number(ms)).toISOString());

/**
 * The providers' breakers in Redis (docs/decisions/0027), as the gateways share them. An
 * operator forces one open (every gateway skips the provider's platform key, no probe) or
 * closed (it is called whatever the window says, and the window never opens it), or gives it
 * back to the window (`auto`). Every gateway sees the change within PROVIDER_HEALTH_REFRESH_MS.
 */
export class ProviderBreakers {
  constructor(private readonly redis: RedisClient, private readonly now: () => number = Date.now) {}

  async list(): Promise<BreakerView[]> {
    return Promise.all(PROVIDERS.map((provider) => this.view(provider)));
  }

  async view(provider: Provider): Promise<BreakerView> {
    const [state, force, reason, openedAt, openUntil] = await this.redis.hmget(providerHealthKeys.breaker(provider), 'state', 'force', 'reason', 'opened_at_ms', 'open_until_ms');
    const open = state === 'open';
    return {
      provider,
      state: open ? 'open' : 'closed',
      forced: force === 'open' || force === 'closed' ? force : null,
      reason: open ? reason ?? null : null,
      opened_at: open ? iso(openedAt) : null,
      open_until: open ? iso(openUntil) : null,
    };
  }

  async set(provider: Provider, mode: BreakerMode): Promise<BreakerView> {
    const key = providerHealthKeys.breaker(provider);
    switch (mode) {
      case 'open':
        await this.redis.hset(key, 'force', 'open');
        break;
      case 'closed':
        // Closed now, and the window does not open it while forced.
        await this.redis.hset(key, 'force', 'closed', 'state', 'closed', 'closed_at_ms', this.now(), 'streak', 0);
        await this.redis.hdel(key, 'open_until_ms', 'opened_at_ms', 'reason');
        break;
      case 'auto':
        await this.redis.hdel(key, 'force');
        break;
    }
    return this.view(provider);
  }
}
