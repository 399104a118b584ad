import pino from 'pino';
import { createRegistry, HttpMetrics, parsePrometheusText, startMetricsServer, sumSamples } from './index';

describe('metrics', () => {
  it('counts requests by method, route pattern and status, unmatched routes and unknown methods bounded', async () => {
    const registry = createRegistry('test');
    const http = new HttpMetrics(registry);
    http.observe('GET', '/v1/keys/:id', 200, 3);
    http.observe('GET', '/v1/keys/:id', 200, 5);
    http.observe('GET', null, 404, 1);
    http.observe('BREW', null, 405, 1);
    const samples = parsePrometheusText(await registry.metrics());
    expect(sumSamples(samples, 'http_requests_total', { method: 'GET', route: '/v1/keys/:id', status: '200', service: 'test' })).toBe(2);
    expect(sumSamples(samples, 'http_requests_total', { route: 'unmatched', status: '404' })).toBe(1);
    expect(sumSamples(samples, 'http_requests_total', { method: 'OTHER', status: '405' })).toBe(1);
    expect(sumSamples(samples, 'http_request_duration_seconds_sum', { route: '/v1/keys/:id' })).toBeCloseTo(0.008);
  });

  it('serves GET /metrics on its own listener and nothing else; a taken port leaves the service running without it', async () => {
    const registry = createRegistry('test');
    const log = pino({ level: 'silent' });
    const server = await startMetricsServer({ registry, port: 0, host: '127.0.0.1', log });
    if (server === null) throw new Error('no metrics server');
    try {
      const ok = await fetch(`${server.url}/metrics`);
      expect(ok.status).toBe(200);
      expect(parsePrometheusText(await ok.text()).some((s) => s.name === 'process_cpu_user_seconds_total')).toBe(true);
      expect((await fetch(`${server.url}/`)).status).toBe(404);
      expect((await fetch(`${server.url}/metrics`, { method: 'POST' })).status).toBe(404);
      const port = Number(new URL(server.url).port);
      expect(await startMetricsServer({ registry, port, host: '127.0.0.1', log })).toBeNull();
    } finally {
      await server.close();
    }
  });
});
