import { createServer } from 'node:net';
import { freePort } from '@svc/test-kit';
import { ephemeralLow } from '../src/ports';

describe('freePort', () => {
  it('hands out distinct ports below the kernel ephemeral range, each one a port a server can listen on', async () => {
    const low = ephemeralLow();
    const ports: number[] = [];
    for (let i = 0; i < 50; i += 1) ports.push(await freePort());
    expect(new Set(ports).size).toBe(ports.length);
    for (const port of ports) {
      expect(port).toBeGreaterThanOrEqual(20_000);
      expect(port).toBeLessThan(low);
    }
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(ports[0], '127.0.0.1', () => resolve());
    });
    await new Promise<void>((resolve) => server.close(() => resolve()));
  });

  it('reads the low end of the ephemeral range, and falls back to 49152 on what it cannot use', () => {
    expect(ephemeralLow(() => '32768\t60999\n')).toBe(32768);
    expect(ephemeralLow(() => '1024 65535')).toBe(49152);
    expect(ephemeralLow(() => 'garbage')).toBe(49152);
    expect(ephemeralLow(() => {
      throw new Error('no such file');
    })).toBe(49152);
  });
});
