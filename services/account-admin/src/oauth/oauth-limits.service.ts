import { isIP } from 'node:net';
import { Inject, Injectable } from '@nestjs/common';
import { describeError } from '@svc/errors';
import { AttemptCountersRepository } from '../attempt-counters/attempt-counters.repository';
import { APP_CONFIG } from '../config';
import type { AppConfig } from '../config';
import { LOGGER } from '../logging/logger';
import type { Logger } from '../logging/logger';

/** The anonymous endpoints that write: a registration stores a client, an authorization a request (and may fetch a document). */
export type LimitedEndpoint = 'register' | 'authorize';

export type LimitOutcome = { admitted: true } | { admitted: false; retryAfterSeconds: number };

const WINDOW_MS = 3_600_000;

/**
 * Per-address limits of the authorization server's anonymous writes (docs/decisions/0046):
 * OAUTH_REGISTER_PER_ADDRESS_PER_HOUR registrations and OAUTH_AUTHORIZE_PER_ADDRESS_PER_HOUR
 * authorization requests from one client address in a fixed hour, every attempt counted. An
 * IPv6 address counts for its /64 (one host usually holds a whole /64). When Redis cannot be
 * reached the limit is not applied (logged), as with the sign-in limits: connecting an app
 * stays possible.
 */
@Injectable()
export class OAuthLimitsService {
  constructor(
    @Inject(AttemptCountersRepository) private readonly counters: AttemptCountersRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** Counts one call of `endpoint` from `address`; refused with the seconds until the window ends when over the limit. */
  async admit(endpoint: LimitedEndpoint, address: string): Promise<LimitOutcome> {
    const limit = endpoint === 'register' ? this.config.OAUTH_REGISTER_PER_ADDRESS_PER_HOUR : this.config.OAUTH_AUTHORIZE_PER_ADDRESS_PER_HOUR;
    let count;
    try {
      count = await this.counters.count(`oauth-${endpoint}:addr`, limitSubject(address), WINDOW_MS);
    } catch (error) {
      this.logger.warn({ endpoint, err: describeError(error) }, 'oauth rate limit not applied: redis unavailable');
      return { admitted: true };
    }
    if (count.attempts <= limit) return { admitted: true };
    return { admitted: false, retryAfterSeconds: Math.max(1, Math.ceil(count.windowLeftMs / 1000)) };
  }
}

/** What an address counts as: an IPv4 address itself (also when IPv4-mapped), an IPv6 address its /64. */
export function limitSubject(address: string): string {
  const bare = address.includes('%') ? address.slice(0, address.indexOf('%')) : address;
  if (isIP(bare) !== 6) return bare;
  const groups = ipv6Groups(bare);
  if (groups.slice(0, 5).every((g) => g === 0) && groups[5] === 0xffff) {
    const [high = 0, low = 0] = groups.slice(6);
    return `${high >> 8}.${high & 0xff}.${low >> 8}.${low & 0xff}`;
  }
  return `${groups.slice(0, 4).map((g) => g.toString(16)).join(':')}::/64`;
}

/** The eight 16-bit groups of a valid IPv6 address (`::` expanded, a dotted IPv4 tail split in two). */
function ipv6Groups(address: string): number[] {
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(address);
  const text = dotted === null ? address : `${address.slice(0, dotted.index)}${((Number(dotted[1]) << 8) | Number(dotted[2])).toString(16)}:${((Number(dotted[3]) << 8) | Number(dotted[4])).toString(16)}`;
  const [head = '', tail] = text.split('::');
  const left = head === '' ? [] : head.split(':');
  const right = tail === undefined || tail === '' ? [] : tail.split(':');
  const middle = tail === undefined ? [] : Array<string>(8 - left.length - right.length).fill('0');
  return [...left, ...middle, ...right].map((group) => Number.parseInt(group, 16));
}
