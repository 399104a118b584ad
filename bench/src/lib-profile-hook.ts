/**
 * Preloaded into a process under test with NODE_OPTIONS="--require <this file>" and
 * BENCH_PROFILE_DIR set: the first SIGUSR2 starts the V8 CPU profiler (the sampler behind
 * `node --cpu-prof`), the next one stops it and writes <dir>/<pid>-<n>.cpuprofile
 * (renamed into place when complete, so a reader never sees half a file), after
 * <dir>/<pid>-<n>.json: `{"redisWrites": n, "batch": {"awaited", "sent", "writes"} | null}`:
 * the socket writes this process made to Redis (port BENCH_REDIS_PORT, default 6379) while
 * the profiler ran (ioredis writes each command, and each pipeline, with one socket write),
 * and, when BENCH_BATCH_MODULE names the gateway's built redis-batch.js, what its batches
 * did meanwhile (redisBatchCounters: pipelines awaited, pipelines sent without waiting,
 * writes). The module is required by its absolute path, so it is the instance the gateway
 * itself loaded.
 *
 * Why not `--cpu-prof` itself: it writes only on a normal exit, and a Nest app with
 * shutdown hooks re-raises SIGTERM after closing, so the profile is lost; it would also
 * include start-up. This samples exactly the load window.
 */
import { renameSync, writeFileSync } from 'node:fs';
import { Session } from 'node:inspector';
import { Socket } from 'node:net';
import { join } from 'node:path';

interface BatchCounters {
  awaited: number;
  sent: number;
  writes: number;
}

const dir = process.env.BENCH_PROFILE_DIR;
if (dir !== undefined && dir !== '') {
  let session: Session | undefined;
  let running = false;
  let count = 0;
  let redisWrites = 0;
  let patched = false;
  let batchAtStart: BatchCounters | null = null;
  const redisPort = Number(process.env.BENCH_REDIS_PORT ?? 6379);
  const batchCounters = (): BatchCounters | null => {
    const module = process.env.BENCH_BATCH_MODULE;
    if (module === undefined || module === '') return null;
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- the gateway's own module instance, by path, at run time
    const counters = (require(module) as { redisBatchCounters?: BatchCounters }).redisBatchCounters;
    return counters === undefined ? null : { ...counters };
  };
  const countWrites = (): void => {
    if (patched) return;
    patched = true;
    const original = Socket.prototype.write;
    // Counts only while the profiler runs; the check is a flag and a cached peer port.
    Socket.prototype.write = function write(this: Socket, ...args: Parameters<Socket['write']>): boolean {
      if (running && this.remotePort === redisPort) redisWrites += 1;
      return original.apply(this, args);
    } as Socket['write'];
  };
  const post = (method: string, params?: object): Promise<unknown> =>
    new Promise((resolve, reject) => {
      if (session === undefined) {
        session = new Session();
        session.connect();
      }
      session.post(method, params ?? {}, (error, result) => (error === null ? resolve(result) : reject(error)));
    });
  const toggle = async (): Promise<void> => {
    if (!running) {
      countWrites();
      redisWrites = 0;
      batchAtStart = batchCounters();
      running = true;
      await post('Profiler.enable');
      await post('Profiler.setSamplingInterval', { interval: 1000 });
      await post('Profiler.start');
      return;
    }
    running = false;
    const result = (await post('Profiler.stop')) as { profile: unknown };
    count += 1;
    const counters = join(dir, `${process.pid}-${count}.json`);
    const batchNow = batchCounters();
    const batch = batchNow === null || batchAtStart === null ? null : {
      awaited: batchNow.awaited - batchAtStart.awaited, sent: batchNow.sent - batchAtStart.sent, writes: batchNow.writes - batchAtStart.writes,
    };
    writeFileSync(`${counters}.part`, JSON.stringify({ redisWrites, batch }));
    renameSync(`${counters}.part`, counters);
    const file = join(dir, `${process.pid}-${count}.cpuprofile`);
    writeFileSync(`${file}.part`, JSON.stringify(result.profile));
    renameSync(`${file}.part`, file);
  };
  process.on('SIGUSR2', () => {
    toggle().catch((error: unknown) => {
      process.stderr.write(`profile hook: ${error instanceof Error ? error.message : String(error)}\n`);
    });
  });
}
