import { isKeyChangeMessage, isProviderKeyChangeMessage, KEY_CHANGES_CHANNEL, PROVIDER_KEY_CHANGES_CHANNEL } from '@svc/contracts';
import { createRedisClient } from '@svc/redis-client';
import type { RedisClient, RedisTarget } from '@svc/redis-client';
import type { Logger } from 'pino';
import { REDIS_DISCONNECT_TIMEOUT_MS } from '../redis/main-redis.client';

export interface KeyChangeSink {
  invalidate(keyHash: string): void;
  invalidateAll(): void;
}

/** Where provider-key changes go (the gateway's ProviderKeyCache): keyed by account. */
export interface ProviderKeyChangeSink {
  invalidate(accountId: string): void;
  invalidateAll(): void;
}

/**
 * Listens on KEY_CHANGES_CHANNEL with its own connection and drops each changed hash from
 * the in-process cache. After every (re)connect the whole cache is dropped, since
 * messages sent while disconnected are lost.
 */
export class KeyChangesSubscriber {
  private connection: RedisClient | undefined;

  constructor(
    private readonly target: RedisTarget,
    private readonly sink: KeyChangeSink,
    private readonly log: Logger,
    /** Also listens on PROVIDER_KEY_CHANGES_CHANNEL (same connection) when given. */
    private readonly providerKeys: ProviderKeyChangeSink | null = null,
  ) {}

  private dropAll(): void {
    this.sink.invalidateAll();
    this.providerKeys?.invalidateAll();
  }

  private channels(): string[] {
    return this.providerKeys === null ? [KEY_CHANGES_CHANNEL] : [KEY_CHANGES_CHANNEL, PROVIDER_KEY_CHANGES_CHANNEL];
  }

  async start(): Promise<void> {
    // On Redis Cluster a PUBLISH reaches every node, so the subscription may sit on any of them.
    const connection = createRedisClient(this.target, { lazyConnect: true, maxRetriesPerRequest: null, disconnectTimeout: REDIS_DISCONNECT_TIMEOUT_MS });
    this.connection = connection;
    connection.on('error', (error: Error) => this.log.warn({ err: error.message }, 'key-change subscriber connection error'));
    connection.on('ready', () => this.dropAll());
    connection.on('message', (channel: string, text: string) => {
      if (channel === PROVIDER_KEY_CHANGES_CHANNEL && this.providerKeys !== null) {
        let parsed: unknown;
        try {
          parsed = JSON.parse(text);
        } catch {
          parsed = undefined;
        }
        if (isProviderKeyChangeMessage(parsed)) this.providerKeys.invalidate(parsed.accountId);
        else this.log.warn('ignored a provider-key change message of unknown shape');
        return;
      }
      if (channel !== KEY_CHANGES_CHANNEL) return;
      let message: unknown;
      try {
        message = JSON.parse(text);
      } catch {
        this.log.warn('ignored a key-change message that is not JSON');
        return;
      }
      if (!isKeyChangeMessage(message)) {
        this.log.warn('ignored a key-change message of unknown shape');
        return;
      }
      this.sink.invalidate(message.keyHash);
    });
    try {
      await connection.connect();
    } catch (error) {
      // Redis is down at start: the gateway starts anyway (readyz says so). ioredis keeps
      // reconnecting and sends the queued SUBSCRIBE once Redis is up ('ready' drops the cache
      // then); until then the in-process cache is bounded by KEY_CACHE_TTL_MS alone.
      this.log.warn({ err: error instanceof Error ? error.message : String(error) }, 'key-change subscriber cannot reach redis at start; it keeps trying');
      connection.subscribe(...this.channels()).then(
        () => this.dropAll(),
        (cause: unknown) => this.log.warn({ err: cause instanceof Error ? cause.message : String(cause) }, 'key-change subscription failed'),
      );
      return;
    }
    await connection.subscribe(...this.channels());
    // Anything cached between connect and the subscription is dropped as well.
    this.dropAll();
  }

  async stop(): Promise<void> {
    const connection = this.connection;
    this.connection = undefined;
    if (connection === undefined) return;
    // Not connected: QUIT would wait in the offline queue for a Redis that may never come.
    if (connection.status !== 'ready') {
      connection.disconnect();
      return;
    }
    try {
      await connection.quit();
    } catch {
      connection.disconnect();
    }
  }
}
