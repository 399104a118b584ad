import { readFileSync } from 'node:fs';
import { createServer } from 'node:net';

/**
 * Ports handed out for a listener are taken below the kernel's ephemeral range. A port the
 * kernel picks for `listen(0)` comes from that range, which is also where every outgoing
 * connection's source port comes from: between the moment a port is found free and the moment
 * a child process listens on it, any connection on the machine (to Redis, PostgreSQL, the
 * simulator) could take it, and the child fails with EADDRINUSE. No outgoing connection takes
 * a port below the range, so a port found free there stays free unless another listener
 * picks it too, which the random choice and the set below make unlikely. The floor stays above
 * the test Redis Cluster's ports and their bus ports (7100-7199 and 17100-17199 by default), so a
 * node killed in a test finds its ports free when it starts again.
 */
const FLOOR = 20_000;
const handedOut = new Set<number>();

/** The first port of the kernel's ephemeral range (Linux), else the IANA range's 49152. */
export function ephemeralLow(read: () => string = () => readFileSync('/proc/sys/net/ipv4/ip_local_port_range', 'utf8')): number {
  try {
    const low = Number(read().trim().split(/\s+/)[0]);
    return Number.isInteger(low) && low > FLOOR + 1000 && low <= 65535 ? low : 49152;
  } catch {
    return 49152;
  }
}

function tryListen(port: number): Promise<number | null> {
  return new Promise((resolve) => {
    const server = createServer();
    server.once('error', () => resolve(null));
    server.listen(port, '127.0.0.1', () => {
      const address = server.address();
      const bound = address === null || typeof address === 'string' ? null : address.port;
      server.close(() => resolve(bound));
    });
  });
}

/** A TCP port on 127.0.0.1, below the ephemeral range, that was free a moment ago and that this process has not handed out before. */
export async function freePort(): Promise<number> {
  const high = ephemeralLow() - 1;
  for (let tries = 0; tries < 200; tries += 1) {
    const candidate = FLOOR + Math.floor(Math.random() * (high - FLOOR + 1));
    if (handedOut.has(candidate)) continue;
    const bound = await tryListen(candidate);
    if (bound !== null) {
      handedOut.add(bound);
      return bound;
    }
  }
  // Every try was taken: fall back to a port the kernel picks.
  const bound = await tryListen(0);
  if (bound === null) throw new Error('no free port on 127.0.0.1');
  handedOut.add(bound);
  return bound;
}
