/**
 * Where the CPU goes: reads a V8 .cpuprofile (the format of `node --cpu-prof` and of the
 * inspector's Profiler.stop) and sums self time per function and per area (our services
 * and packages, each npm package, node internals, GC), as shares of the busy time.
 */
import { readFileSync } from 'node:fs';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

export interface SelfTimeRow {
  name: string;
  /** Where it lives: area and file:line. */
  where: string;
  area: string;
  selfMs: number;
  /** Share of busy (non-idle) time, 0..100. */
  percent: number;
}

export interface ProfileSummary {
  wallMs: number;
  busyMs: number;
  idleMs: number;
  /** Busy time over wall time of one core, 0..100. */
  busyPercentOfWall: number;
  byArea: { area: string; selfMs: number; percent: number }[];
  topFunctions: SelfTimeRow[];
  /**
   * Our own files (services/*, packages/*) by inclusive time: busy samples with the file
   * anywhere on the stack, so a step's cost includes the libraries it calls.
   */
  inclusiveOwnFiles: { file: string; inclusiveMs: number; percent: number }[];
}

function isOwnFile(url: string): boolean {
  return !url.includes('/node_modules/') && /\/(services|packages)\/[^/]+\/dist\//.test(url);
}

const SPECIAL = new Set(['(idle)', '(program)', '(garbage collector)', '(root)']);

/** Classifies a script URL: `services/<name>`, `@svc/<pkg>`, an npm package, `node:internal`, or a V8 pseudo-frame. */
export function areaOf(frame: CallFrame): string {
  if (SPECIAL.has(frame.functionName) && frame.url === '') return frame.functionName;
  const url = frame.url;
  if (url === '') return '(native/V8 builtins)';
  if (url.startsWith('node:')) return 'node internals';
  if (url.startsWith('wasm://')) return 'wasm (undici llhttp)';
  const modules = url.lastIndexOf('/node_modules/');
  if (modules >= 0) {
    const rest = url.slice(modules + '/node_modules/'.length).split('/');
    const first = rest[0] ?? '?';
    return first.startsWith('@') ? `${first}/${rest[1] ?? '?'}` : first;
  }
  const service = /\/services\/([^/]+)\//.exec(url);
  if (service !== null) return `services/${service[1] ?? '?'}`;
  const pkg = /\/packages\/([^/]+)\//.exec(url);
  if (pkg !== null) return `@svc/${pkg[1] ?? '?'}`;
  return url.replace(/^file:\/\//, '');
}

function shortFile(url: string): string {
  const path = url.replace(/^file:\/\//, '');
  const modules = path.lastIndexOf('/node_modules/');
  if (modules >= 0) return path.slice(modules + '/node_modules/'.length);
  const ours = /\/((?:services|packages|tools)\/.*)$/.exec(path);
  return ours?.[1] ?? path;
}

export function readCpuProfile(path: string): CpuProfile {
  return JSON.parse(readFileSync(path, 'utf8')) as CpuProfile;
}

/**
 * Self time per function over the samples whose time falls in [fromUs, toUs] of the
 * profile's clock (default: the whole profile). A sample's time is the delta that follows it.
 */
export function summarizeCpuProfile(profile: CpuProfile, { top = 25, fromUs, toUs }: { top?: number; fromUs?: number; toUs?: number } = {}): ProfileSummary {
  const byId = new Map<number, ProfileNode>();
  const parentOf = new Map<number, number>();
  for (const node of profile.nodes) {
    byId.set(node.id, node);
    for (const child of node.children ?? []) parentOf.set(child, node.id);
  }
  const selfUs = new Map<number, number>();
  const from = fromUs ?? profile.startTime;
  const to = toUs ?? profile.endTime;
  let clock = profile.startTime;
  let wallUs = 0;
  for (let i = 0; i < profile.samples.length; i++) {
    clock += profile.timeDeltas[i] ?? 0;
    const duration = profile.timeDeltas[i + 1] ?? 0;
    if (clock < from || clock > to) continue;
    const id = profile.samples[i] ?? -1;
    selfUs.set(id, (selfUs.get(id) ?? 0) + duration);
    wallUs += duration;
  }
  const rows = new Map<string, { name: string; where: string; area: string; us: number }>();
  const areas = new Map<string, number>();
  let idleUs = 0;
  for (const [id, us] of selfUs) {
    const node = byId.get(id);
    if (node === undefined) continue;
    const frame = node.callFrame;
    const area = areaOf(frame);
    if (area === '(idle)') {
      idleUs += us;
      continue;
    }
    areas.set(area, (areas.get(area) ?? 0) + us);
    const name = frame.functionName === '' ? '(anonymous)' : frame.functionName;
    const where = frame.url === '' ? area : `${shortFile(frame.url)}:${frame.lineNumber + 1}`;
    const key = `${name}@${where}`;
    const row = rows.get(key) ?? { name, where, area, us: 0 };
    row.us += us;
    rows.set(key, row);
  }
  const busyUs = wallUs - idleUs;
  const inclusive = new Map<string, number>();
  for (const [id, us] of selfUs) {
    const files = new Set<string>();
    for (let at: number | undefined = id; at !== undefined; at = parentOf.get(at)) {
      const url = byId.get(at)?.callFrame.url ?? '';
      if (isOwnFile(url)) files.add(shortFile(url));
    }
    for (const file of files) inclusive.set(file, (inclusive.get(file) ?? 0) + us);
  }
  const pct = (us: number): number => (busyUs > 0 ? Math.round((us / busyUs) * 1000) / 10 : 0);
  const ms = (us: number): number => Math.round(us / 100) / 10;
  return {
    wallMs: ms(wallUs),
    busyMs: ms(busyUs),
    idleMs: ms(idleUs),
    busyPercentOfWall: wallUs > 0 ? Math.round((busyUs / wallUs) * 1000) / 10 : 0,
    byArea: [...areas.entries()].sort((a, b) => b[1] - a[1]).map(([area, us]) => ({ area, selfMs: ms(us), percent: pct(us) })),
    topFunctions: [...rows.values()].sort((a, b) => b.us - a.us).slice(0, top)
      .map((r) => ({ name: r.name, where: r.where, area: r.area, selfMs: ms(r.us), percent: pct(r.us) })),
    inclusiveOwnFiles: [...inclusive.entries()].sort((a, b) => b[1] - a[1]).slice(0, top)
      .map(([file, us]) => ({ file, inclusiveMs: ms(us), percent: pct(us) })),
  };
}
