import { Counter } from 'prom-client';
import type { Histogram, LabelValues, MetricObjectWithValues, MetricValueWithName, Registry } from 'prom-client';

/**
 * Counters and histograms for the search path (docs/decisions/0019-hot-path-metrics.md).
 *
 * prom-client hashes the label values of every observation (a string built, then looked up),
 * which cost the gateway about 2 µs per search for its seven observations. Here a caller
 * asks once for the child of a label set and keeps it; an observation is then one or two
 * additions on plain fields, with no string and no allocation. prom-client still owns the
 * registry and the exposition: a hot counter's totals reach its prom-client Counter in the
 * counter's collect hook, at scrape time; a hot histogram is read by the registry like any
 * metric (`getForPromString()` for the text exposition, `get()` for JSON).
 */

/** One label set of a HotCounter: `inc` adds to a plain number. */
export class HotCounterChild<L extends string> {
  value = 0;
  /** What the prom-client counter has been given so far. */
  reported = 0;
  constructor(readonly labels: LabelValues<L>) {}

  inc(amount = 1): void {
    this.value += amount;
  }
}

export interface HotMetricConfig<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly labelNames: readonly L[];
  readonly registers: readonly Registry[];
}

/** A counter whose label children are kept by the caller; totals reach prom-client at scrape. */
export class HotCounter<L extends string> {
  private readonly children: ChildIndex<HotCounterChild<L>>;

  constructor(config: HotMetricConfig<L>) {
    const children = (this.children = new ChildIndex(config.labelNames.length, (values) => new HotCounterChild<L>(labelsOf(config.labelNames, values))));
    new Counter<L>({
      name: config.name,
      help: config.help,
      labelNames: config.labelNames,
      registers: [...config.registers],
      // A plain function: prom-client calls collect with the Counter as `this`.
      collect(this: Counter<L>) {
        for (const child of children.values()) {
          const delta = child.value - child.reported;
          // A child made but never counted still shows its series, at 0.
          if (delta > 0 || child.reported === 0) {
            this.inc(child.labels, delta);
            child.reported = child.value;
          }
        }
      },
    });
  }

  /** The child of one label set, in label-name order (made on first use; no allocation after). */
  child(a: string, b?: string, c?: string, d?: string): HotCounterChild<L> {
    return this.children.get(a, b, c, d);
  }
}

/** One label set of a HotHistogram: per-bucket counts (not cumulative), sum and count. */
export class HotHistogramChild<L extends string> {
  readonly counts: Float64Array;
  sum = 0;
  count = 0;
  constructor(readonly labels: LabelValues<L>, private readonly bounds: readonly number[]) {
    this.counts = new Float64Array(bounds.length);
  }

  observe(value: number): void {
    const bounds = this.bounds;
    let i = 0;
    while (i < bounds.length && value > (bounds[i] as number)) i++;
    // Above the last bound: only +Inf (count) has it.
    if (i < bounds.length) this.counts[i] = (this.counts[i] as number) + 1;
    this.sum += value;
    this.count += 1;
  }
}

export interface HotHistogramConfig<L extends string> extends HotMetricConfig<L> {
  readonly buckets: readonly number[];
}

/**
 * A histogram whose label children are kept by the caller. It is registered in each registry
 * as a metric of type histogram; the registry reads it through `get()` like its own.
 */
export class HotHistogram<L extends string> {
  readonly name: string;
  readonly help: string;
  readonly type = 'histogram' as const;
  readonly aggregator = 'sum' as const;
  private readonly bounds: readonly number[];
  private readonly children: ChildIndex<HotHistogramChild<L>>;

  constructor(config: HotHistogramConfig<L>) {
    this.name = config.name;
    this.help = config.help;
    const bounds = (this.bounds = [...config.buckets].sort((a, b) => a - b));
    this.children = new ChildIndex(config.labelNames.length, (values) => new HotHistogramChild<L>(labelsOf(config.labelNames, values), bounds));
    // The registry takes any metric with a name and get(); its type names only its own classes.
    for (const registry of config.registers) registry.registerMetric(this as unknown as Histogram<L>);
  }

  /** The child of one label set, in label-name order (made on first use; no allocation after). */
  child(a: string, b?: string, c?: string, d?: string): HotHistogramChild<L> {
    return this.children.get(a, b, c, d);
  }

  /** The values with every label in `labels` (Registry.getMetricsAsJSON, as prom-client's get()). */
  async get(): Promise<MetricObjectWithValues<MetricValueWithName<L | 'le'>>> {
    const data = await this.getForPromString();
    const values = data.values.map((value) => {
      const { sharedLabels, ...rest } = value as MetricValueWithName<L | 'le'> & { sharedLabels: LabelValues<L> };
      return { ...rest, labels: { ...rest.labels, ...sharedLabels } };
    });
    return { ...data, values };
  }

  /**
   * What the registry's text exposition reads: cumulative buckets, +Inf, sum and count per
   * label set, laid out as prom-client's own histogram lays them out (`le` first).
   */
  async getForPromString(): Promise<MetricObjectWithValues<MetricValueWithName<L | 'le'>>> {
    const values: MetricValueWithName<L | 'le'>[] = [];
    const bucketName = `${this.name}_bucket`;
    for (const child of this.children.values()) {
      let cumulative = 0;
      for (let i = 0; i < this.bounds.length; i++) {
        cumulative += child.counts[i] as number;
        values.push(bucket(this.bounds[i] as number, child.labels, cumulative, bucketName));
      }
      values.push(bucket('+Inf', child.labels, child.count, bucketName));
      values.push(shared(child.labels, child.sum, `${this.name}_sum`), shared(child.labels, child.count, `${this.name}_count`));
    }
    return { name: this.name, help: this.help, type: 'histogram' as never, values, aggregator: this.aggregator, collect: () => undefined };
  }

  /** Registry.resetMetrics(): every child back to zero (the children stay with their callers). */
  reset(): void {
    for (const child of this.children.values()) {
      child.counts.fill(0);
      child.sum = 0;
      child.count = 0;
    }
  }
}

type Level<C> = Map<string, C | Level<C>>;

/**
 * Children by label values, one map level per label (at most four): a lookup of a child that
 * exists builds no key string and allocates nothing.
 */
class ChildIndex<C> {
  private readonly root: Level<C> = new Map();
  private readonly all: C[] = [];

  constructor(private readonly depth: number, private readonly make: (values: readonly string[]) => C) {
    if (depth < 1 || depth > 4) throw new Error('a hot metric has one to four labels');
  }

  get(a: string, b?: string, c?: string, d?: string): C {
    let level = this.root;
    const depth = this.depth;
    for (let i = 0; i < depth - 1; i++) {
      const value = i === 0 ? a : i === 1 ? b : c;
      if (value === undefined) throw new Error(`expected ${depth} label values`);
      let next = level.get(value) as Level<C> | undefined;
      if (next === undefined) {
        next = new Map();
        level.set(value, next);
      }
      level = next;
    }
    const last = depth === 1 ? a : depth === 2 ? b : depth === 3 ? c : d;
    if (last === undefined) throw new Error(`expected ${depth} label values`);
    let child = level.get(last) as C | undefined;
    if (child === undefined) {
      child = this.make([a, b, c, d].slice(0, depth) as string[]);
      level.set(last, child);
      this.all.push(child);
    }
    return child;
  }

  values(): readonly C[] {
    return this.all;
  }
}

/** A bucket as prom-client's own histogram gives it: `le` first, the label set after it. */
function bucket<L extends string>(le: number | string, labels: LabelValues<L>, value: number, metricName: string): MetricValueWithName<L | 'le'> {
  return { labels: { le } as LabelValues<L | 'le'>, sharedLabels: labels, value, metricName } as MetricValueWithName<L | 'le'>;
}

/** A sum or count as prom-client gives it (the label set as shared labels). */
function shared<L extends string>(labels: LabelValues<L>, value: number, metricName: string): MetricValueWithName<L | 'le'> {
  return { labels: {}, sharedLabels: labels, value, metricName } as MetricValueWithName<L | 'le'>;
}

function labelsOf<L extends string>(names: readonly L[], values: readonly string[]): LabelValues<L> {
  const labels: Partial<Record<L, string>> = {};
  names.forEach((name, i) => {
    labels[name] = values[i] as string;
  });
  return labels as LabelValues<L>;
}
