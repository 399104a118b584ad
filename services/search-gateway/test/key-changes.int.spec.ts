import { Redis } from 'ioredis';
import pino from 'pino';
import { KEY_CHANGES_CHANNEL } from '@svc/contracts';
import { freePort, redisUrl, TcpProxy } from '@svc/test-kit';
import { KeyChangesSubscriber } from '../src/auth/key-changes.subscriber';

/**
 * The key-change subscriber when Redis is down as the gateway starts: the start does not
 * fail, and once Redis is reachable the subscription is made and changes arrive. Redis is
 * put behind a TCP relay that is opened only after the start.
 */
describe('KeyChangesSubscriber with Redis down at start (real Redis behind a relay)', () => {
  it('starts anyway, then subscribes by itself once Redis can be reached', async () => {
    const target = new URL(redisUrl(0));
    const proxy = new TcpProxy(await freePort(), { host: target.hostname, port: Number(target.port || 6379) });
    const invalidated: string[] = [];
    let dropped = 0;
    const subscriber = new KeyChangesSubscriber({ url: `redis://127.0.0.1:${proxy.port}`, cluster: false }, {
      invalidate: (keyHash) => invalidated.push(keyHash),
      invalidateAll: () => {
        dropped += 1;
      },
    }, pino({ level: 'silent' }));
    const publisher = new Redis(redisUrl(0), { lazyConnect: true });
    try {
      await subscriber.start();
      await publisher.connect();
      const message = JSON.stringify({ v: 1, keyHash: 'hash-after-outage', keyId: 'key_x', accountId: 'acct_x', version: 2 });
      // Nothing can arrive while Redis is unreachable.
      await publisher.publish(KEY_CHANGES_CHANNEL, message);
      expect(invalidated).toEqual([]);
      await proxy.open();
      for (let i = 0; i < 100 && invalidated.length === 0; i++) {
        await publisher.publish(KEY_CHANGES_CHANNEL, message);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(invalidated[0]).toBe('hash-after-outage');
      // The whole cache was dropped when the connection came up (changes sent before were lost).
      expect(dropped).toBeGreaterThan(0);
    } finally {
      await subscriber.stop();
      await publisher.quit();
      await proxy.cut();
    }
  });
});
