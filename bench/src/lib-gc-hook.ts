/**
 * Preloaded into a process under test with NODE_OPTIONS="--require <this file>": every 2 s it
 * appends one JSON line to <BENCH_GC_LOG_DIR, default the system's temp dir>/gc-<pid>.log with
 * what V8's collectors did in those 2 s. The fields are `scavenges` and `scavenge_ms` (the
 * young generation), `majors` and `major_ms` (mark-compact), `old_used_kb`, and `at`. This is
 * how decision 0033 told a gateway whose scavenges take about 2 ms from one whose scavenges
 * take about 10 ms (allocation-site pretenuring). `npm run bench -- search` loads the gateway
 * with its own hook already: add this one through GATEWAY_NODE_OPTIONS.
 */
import { appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { constants, PerformanceObserver } from 'node:perf_hooks';
import type { PerformanceEntry } from 'node:perf_hooks';
import { getHeapSpaceStatistics } from 'node:v8';

const file = join(process.env.BENCH_GC_LOG_DIR ?? tmpdir(), `gc-${process.pid}.log`);
let window = { scavenges: 0, scavengeMs: 0, majors: 0, majorMs: 0 };

new PerformanceObserver((list) => {
  for (const entry of list.getEntries() as (PerformanceEntry & { detail?: { kind?: number } })[]) {
    const kind = entry.detail?.kind;
    if (kind === constants.NODE_PERFORMANCE_GC_MINOR) {
      window.scavenges += 1;
      window.scavengeMs += entry.duration;
    } else if (kind === constants.NODE_PERFORMANCE_GC_MAJOR) {
      window.majors += 1;
      window.majorMs += entry.duration;
    }
  }
}).observe({ entryTypes: ['gc'] });

setInterval(() => {
  const old = getHeapSpaceStatistics().find((space) => space.space_name === 'old_space');
  const line = {
    at: new Date().toISOString(),
    scavenges: window.scavenges,
    scavenge_ms: Math.round(window.scavengeMs * 10) / 10,
    majors: window.majors,
    major_ms: Math.round(window.majorMs * 10) / 10,
    old_used_kb: Math.round((old?.space_used_size ?? 0) / 1024),
  };
  window = { scavenges: 0, scavengeMs: 0, majors: 0, majorMs: 0 };
  appendFileSync(file, `${JSON.stringify(line)}\n`);
}, 2_000).unref();
