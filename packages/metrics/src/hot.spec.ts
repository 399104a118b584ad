import { Counter, Histogram, Registry } from 'prom-client';
import { HotCounter, HotHistogram } from './hot';
import { LATENCY_BUCKETS_S } from './registry';

/** The exposition of one registry, with the metric names renamed so two registries compare. */
async function exposition(registry: Registry, rename: (text: string) => string = (t) => t): Promise<string> {
  return rename(await registry.metrics());
}

describe('hot metrics', () => {
  // The reference: prom-client's own Counter and Histogram fed the same observations must
  // expose exactly the same text (same series, labels, cumulative buckets, sums and counts).
  it('a hot histogram exposes what prom-client\'s Histogram exposes for the same observations', async () => {
    const hotRegistry = new Registry();
    const refRegistry = new Registry();
    hotRegistry.setDefaultLabels({ service: 'x' });
    refRegistry.setDefaultLabels({ service: 'x' });
    const hot = new HotHistogram({ name: 'd_seconds', help: 'h', labelNames: ['route', 'status'], buckets: LATENCY_BUCKETS_S, registers: [hotRegistry] });
    const ref = new Histogram({ name: 'd_seconds', help: 'h', labelNames: ['route', 'status'], buckets: LATENCY_BUCKETS_S, registers: [refRegistry] });
    // Values on bucket bounds (le is inclusive), between them, above the last, and zero.
    const values = [0, 0.001, 0.0011, 0.0025, 0.003, 0.25, 0.9, 1, 14.9, 150, 151, 1_000];
    for (const [i, value] of values.entries()) {
      const status = i % 3 === 0 ? '200' : '404';
      hot.child('/v1/search', status).observe(value);
      ref.labels('/v1/search', status).observe(value);
    }
    hot.child('/v1/keys', '201').observe(0.004);
    ref.labels('/v1/keys', '201').observe(0.004);
    expect(await exposition(hotRegistry)).toBe(await exposition(refRegistry));
  });

  it('a hot counter exposes what prom-client\'s Counter exposes, across scrapes', async () => {
    const hotRegistry = new Registry();
    const refRegistry = new Registry();
    const hot = new HotCounter({ name: 'c_total', help: 'h', labelNames: ['provider', 'source'], registers: [hotRegistry] });
    const ref = new Counter({ name: 'c_total', help: 'h', labelNames: ['provider', 'source'], registers: [refRegistry] });
    const exa = hot.child('exa', 'platform');
    exa.inc();
    exa.inc(5_000);
    ref.labels('exa', 'platform').inc();
    ref.labels('exa', 'platform').inc(5_000);
    // A child made and never counted shows its series at 0, as prom-client's inc(0) does.
    hot.child('brave', 'byok');
    ref.labels('brave', 'byok').inc(0);
    expect(await exposition(hotRegistry)).toBe(await exposition(refRegistry));
    // Counted between two scrapes: only what is new is added.
    exa.inc(7);
    ref.labels('exa', 'platform').inc(7);
    expect(await exposition(hotRegistry)).toBe(await exposition(refRegistry));
    expect(await exposition(hotRegistry)).toContain('c_total{provider="exa",source="platform"} 5008');
  });

  it('a child is the same object on every lookup, and a wrong number of label values is refused', () => {
    const registry = new Registry();
    const counter = new HotCounter({ name: 'n_total', help: 'h', labelNames: ['a', 'b', 'c', 'd'], registers: [registry] });
    expect(counter.child('1', '2', '3', '4')).toBe(counter.child('1', '2', '3', '4'));
    expect(counter.child('1', '2', '3', '5')).not.toBe(counter.child('1', '2', '3', '4'));
    expect(() => counter.child('1', '2')).toThrow('expected 4 label values');
    const histogram = new HotHistogram({ name: 'h_seconds', help: 'h', labelNames: ['a'], buckets: [1], registers: [registry] });
    expect(histogram.child('x')).toBe(histogram.child('x'));
  });

  it('resetMetrics zeroes a hot histogram and keeps its children usable', async () => {
    const registry = new Registry();
    const histogram = new HotHistogram({ name: 'r_seconds', help: 'h', labelNames: ['a'], buckets: [1, 2], registers: [registry] });
    const child = histogram.child('x');
    child.observe(1.5);
    expect(await registry.metrics()).toContain('r_seconds_count{a="x"} 1');
    registry.resetMetrics();
    expect(await registry.metrics()).toContain('r_seconds_count{a="x"} 0');
    child.observe(0.5);
    expect(await registry.metrics()).toContain('r_seconds_bucket{le="1",a="x"} 1');
  });
});

describe('hot histogram as JSON', () => {
  it('getMetricsAsJSON gives the same values as prom-client\'s Histogram', async () => {
    const hotRegistry = new Registry();
    const refRegistry = new Registry();
    const hot = new HotHistogram({ name: 'j_seconds', help: 'h', labelNames: ['a'], buckets: [0.1, 1], registers: [hotRegistry] });
    const ref = new Histogram({ name: 'j_seconds', help: 'h', labelNames: ['a'], buckets: [0.1, 1], registers: [refRegistry] });
    for (const value of [0.05, 0.5, 5]) {
      hot.child('x').observe(value);
      ref.labels('x').observe(value);
    }
    const strip = (json: { values: { labels: object; value: number; metricName?: string }[] }[]) => json.map((m) => m.values.map((v) => ({ labels: v.labels, value: v.value, metricName: v.metricName })));
    expect(strip(await hotRegistry.getMetricsAsJSON() as never)).toEqual(strip(await refRegistry.getMetricsAsJSON() as never));
  });
});
