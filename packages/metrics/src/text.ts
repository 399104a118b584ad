/** One sample of the Prometheus text format: name, labels and value. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

const LINE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})?\s+(\S+)(?:\s+\d+)?$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g;

/** Parses the Prometheus text format (tests and the operator tools read scrapes with it). */
export function parsePrometheusText(text: string): Sample[] {
  const samples: Sample[] = [];
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const match = LINE.exec(line);
    if (match === null) throw new Error(`not a Prometheus sample line: ${line}`);
    const labels: Record<string, string> = {};
    for (const label of (match[2] ?? '').matchAll(LABEL)) {
      labels[label[1] ?? ''] = (label[2] ?? '').replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
    }
    samples.push({ name: match[1] ?? '', labels, value: Number(match[3]) });
  }
  return samples;
}

function matches(sample: Sample, name: string, labels: Record<string, string>): boolean {
  if (sample.name !== name) return false;
  for (const [key, value] of Object.entries(labels)) if (sample.labels[key] !== value) return false;
  return true;
}

/** Sum of every sample of `name` whose labels include `labels` (0 when none). */
export function sumSamples(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number {
  return samples.filter((s) => matches(s, name, labels)).reduce((sum, s) => sum + s.value, 0);
}

/** The one sample of `name` with exactly these labels (besides `service`), or undefined. */
export function sampleValue(samples: readonly Sample[], name: string, labels: Record<string, string> = {}): number | undefined {
  const found = samples.filter((s) => matches(s, name, labels));
  return found.length === 0 ? undefined : found.reduce((sum, s) => sum + s.value, 0);
}
