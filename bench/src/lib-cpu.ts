/**
 * Where the machine's CPU goes during one load round: CPU time per process (from
 * /proc/<pid>/stat), the load generator's (this process's reaped children, cutime/cstime),
 * and the whole machine's busy time (/proc/stat). Linux only; elsewhere every figure is NaN.
 * Only reads /proc: it never signals or stops anything.
 */
import { readdirSync, readFileSync } from 'node:fs';

/** Clock ticks per second of /proc's times (USER_HZ; 100 on every Linux the project runs on). */
export const TICKS_PER_SECOND = 100;

export interface CpuGroup {
  readonly name: string;
  /** Resolved when sampling starts: the processes counted in this group. */
  readonly pids: () => number[];
}

export interface CpuShare {
  readonly name: string;
  /** CPU seconds per wall second (1.0 = one core busy the whole round). */
  readonly cores: number;
}

export interface CpuReport {
  readonly wallSeconds: number;
  readonly machineBusyCores: number;
  readonly groups: CpuShare[];
  /** The machine's busy time no group accounts for (kernel threads, other processes). */
  readonly otherCores: number;
}

/**
 * The process's CPU time so far in clock ticks (fractional), or null when it has ended: the
 * sum over its threads of /proc/<pid>/task/<tid>/schedstat (nanoseconds on the CPU), so a
 * round's figure is exact to the microsecond rather than to /proc/<pid>/stat's 10 ms tick;
 * /proc/<pid>/stat where schedstat is missing.
 */
export function processTicks(pid: number): number | null {
  try {
    let ns = 0;
    for (const tid of readdirSync(`/proc/${pid}/task`)) {
      try {
        ns += Number(readFileSync(`/proc/${pid}/task/${tid}/schedstat`, 'utf8').split(' ')[0]);
      } catch {
        // A thread that ended between the listing and the read: its time is gone with it.
      }
    }
    if (Number.isFinite(ns) && ns > 0) return (ns / 1e9) * TICKS_PER_SECOND;
  } catch {
    // No task listing (not Linux, or the process ended): fall back to /proc/<pid>/stat.
  }
  try {
    const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name (which may hold spaces) start after the last ')'.
    const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]);
  } catch {
    return null;
  }
}

function reapedChildTicks(): number {
  const text = readFileSync('/proc/self/stat', 'utf8');
  const fields = text.slice(text.lastIndexOf(')') + 2).split(' ');
  return Number(fields[13]) + Number(fields[14]);
}

function machineBusyTicks(): number {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0] ?? '';
  const [, user, nice, system, , , irq, softirq] = line.trim().split(/\s+/).map(Number);
  return (user ?? 0) + (nice ?? 0) + (system ?? 0) + (irq ?? 0) + (softirq ?? 0);
}

/** Every process whose command name is `comm` (e.g. all of PostgreSQL's backends). */
export function pidsNamed(comm: string): number[] {
  const pids: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      if (readFileSync(`/proc/${entry}/comm`, 'utf8').trim() === comm) pids.push(Number(entry));
    } catch {
      // The process ended while we looked.
    }
  }
  return pids;
}

/**
 * Runs `work` and reports the CPU each group used meanwhile. The load generator is counted
 * as "load generator" from this process's reaped children (autocannon runs as a child).
 */
export async function measureCpu<T>(groups: readonly CpuGroup[], work: () => Promise<T>): Promise<{ value: T; cpu: CpuReport }> {
  if (process.platform !== 'linux') {
    const value = await work();
    return { value, cpu: { wallSeconds: Number.NaN, machineBusyCores: Number.NaN, groups: [], otherCores: Number.NaN } };
  }
  const resolved = groups.map((group) => ({ name: group.name, pids: group.pids() }));
  const before = resolved.map((group) => new Map(group.pids.map((pid) => [pid, processTicks(pid)])));
  // Only processes alive at both ends count: one that ended meanwhile (a PostgreSQL backend
  // closing) takes its ticks with it, and subtracting its earlier total would go negative.
  const used = (index: number): number => {
    let ticks = 0;
    for (const [pid, start] of before[index] ?? []) {
      const end = processTicks(pid);
      if (start !== null && end !== null) ticks += end - start;
    }
    return ticks;
  };
  const childrenBefore = reapedChildTicks();
  const machineBefore = machineBusyTicks();
  const started = process.hrtime.bigint();
  const value = await work();
  const wallSeconds = Number(process.hrtime.bigint() - started) / 1e9;
  const machineBusy = (machineBusyTicks() - machineBefore) / TICKS_PER_SECOND / wallSeconds;
  const shares: CpuShare[] = resolved.map((group, index) => ({
    name: group.name,
    cores: round(used(index) / TICKS_PER_SECOND / wallSeconds),
  }));
  shares.push({ name: 'load generator (autocannon)', cores: round((reapedChildTicks() - childrenBefore) / TICKS_PER_SECOND / wallSeconds) });
  const accounted = shares.reduce((total, share) => total + share.cores, 0);
  return { value, cpu: { wallSeconds: round(wallSeconds), machineBusyCores: round(machineBusy), groups: shares, otherCores: round(Math.max(0, machineBusy - accounted)) } };
}

/** Cores to 1/10,000 (at 1,000 searches/s, 0.1 µs per search): figures per search come from these. */
function round(value: number): number {
  return Math.round(value * 10_000) / 10_000;
}
