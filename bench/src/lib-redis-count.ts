/**
 * Counts the Redis commands each process sends while some work runs: MONITOR on one
 * database, each command's client address mapped to the process that owns the socket
 * (`ss -tnp`, so the gateway's commands are told apart from billing's worker and the
 * control plane); commands that scripts run are listed apart (`inside Lua scripts`) and
 * not in `total`. MONITOR costs Redis a lot: use it on a short, light run, never under the
 * measured load.
 */
import { spawnSync } from 'node:child_process';
import { Redis } from 'ioredis';

export interface CommandCounts {
  /** Process label (from `labels`, else `pid <n>` or `unknown <addr>`) -> command -> count. */
  byProcess: Record<string, Record<string, number>>;
  total: number;
}

/** Local port -> pid for this machine's TCP connections to the given Redis port. */
export function socketOwners(redisPort: number): Map<number, number> {
  const owners = new Map<number, number>();
  const ss = spawnSync('ss', ['-tnpH'], { encoding: 'utf8' });
  if (ss.status !== 0) return owners;
  for (const line of ss.stdout.split('\n')) {
    const cols = line.trim().split(/\s+/);
    const local = cols[3] ?? '';
    const peer = cols[4] ?? '';
    if (!peer.endsWith(`:${redisPort}`)) continue;
    const pid = /pid=(\d+)/.exec(line)?.[1];
    const port = Number(local.slice(local.lastIndexOf(':') + 1));
    if (pid !== undefined && Number.isInteger(port)) owners.set(port, Number(pid));
  }
  return owners;
}

/**
 * Runs `work` with MONITOR attached to `redisUrl`'s database and returns the commands seen
 * on that database, grouped by the sending process.
 */
export async function countRedisCommands(redisUrl: string, labels: Map<number, string>, work: () => Promise<void>): Promise<CommandCounts> {
  const url = new URL(redisUrl);
  const db = url.pathname.replace('/', '') === '' ? '0' : url.pathname.replace('/', '');
  const redisPort = Number(url.port === '' ? 6379 : url.port);
  // monitor() opens its own connection in MONITOR mode; `client` itself never connects.
  const client = new Redis(redisUrl, { lazyConnect: true });
  const monitor = await client.monitor();
  const seen: { source: string; command: string }[] = [];
  monitor.on('monitor', (_time: string, args: string[], source: string, database: string) => {
    if (database === db) seen.push({ source, command: (args[0] ?? '?').toLowerCase() });
  });
  // An error on the MONITOR connection (ioredis has raised "Command queue state error" there)
  // must not crash the benchmark before its stack is stopped: it fails the count instead.
  let failure: Error | undefined;
  monitor.on('error', (error: Error) => {
    failure ??= error;
  });
  try {
    await work();
    if (failure !== undefined) throw new Error(`counting Redis commands failed: ${failure.message}`);
    // MONITOR lines arrive after the commands ran; a PING on the monitored database marks the end.
    const marker = new Redis(redisUrl);
    const markerPort = await new Promise<number>((resolve) => marker.once('ready', () => resolve(marker.stream.localPort ?? 0)));
    await marker.ping();
    const deadline = Date.now() + 10_000;
    while (!seen.some((s) => s.command === 'ping' && s.source.endsWith(`:${markerPort}`)) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await marker.quit();
    const owners = socketOwners(redisPort);
    const byProcess: Record<string, Record<string, number>> = {};
    let total = 0;
    for (const { source, command } of seen) {
      if (source === 'lua') {
        const row = (byProcess['inside Lua scripts'] ??= {});
        row[command] = (row[command] ?? 0) + 1;
        continue;
      }
      const port = Number(source.slice(source.lastIndexOf(':') + 1));
      if (port === markerPort) continue;
      const pid = owners.get(port);
      const label = pid === undefined ? `unknown ${source}` : (labels.get(pid) ?? `pid ${pid}`);
      const row = (byProcess[label] ??= {});
      row[command] = (row[command] ?? 0) + 1;
      total += 1;
    }
    return { byProcess, total };
  } finally {
    monitor.disconnect();
    client.disconnect();
  }
}
