import { Writable } from 'node:stream';
import { checkLogLine, createServiceLogger, errText } from './index';

function capture(): { lines: string[]; stream: Writable } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(...chunk.toString('utf8').split('\n').filter((l) => l !== ''));
      done();
    },
  });
  return { lines, stream };
}

describe('the one log schema', () => {
  it('writes service, time, level and msg, err as text, and redacts secret fields', async () => {
    const { lines, stream } = capture();
    const log = createServiceLogger({ service: 'billing', level: 'info', destination: stream });
    log.error({ err: new TypeError('boom'), account_id: 'acc_1', token: 'tok-123', headers: { authorization: 'Bearer sk_live_x' } }, 'failed');
    await new Promise((resolve) => setImmediate(resolve));
    const line = JSON.parse(lines[0] ?? '{}') as Record<string, unknown>;
    expect(line).toMatchObject({ service: 'billing', level: 50, msg: 'failed', err: 'TypeError: boom', account_id: 'acc_1', token: '[redacted]' });
    expect(lines[0]).not.toContain('sk_live_x');
    expect(lines[0]).not.toContain('tok-123');
    expect(errText('plain')).toBe('plain');
  });

  it('accepts a schema line and refuses synonyms, secrets, query strings, wrong types and camelCase', () => {
    const ok = { level: 30, time: 1, service: 'search-gateway', msg: 'request', request_id: 'r', route: '/v1/keys/:id', status: 200, duration_ms: 1.2, models: ['exa/fast'], cost_usd: 0.009 };
    expect(checkLogLine(JSON.stringify(ok))).toBeNull();
    for (const bad of [
      { ...ok, requestId: 'r' }, { ...ok, error: 'x' }, { ...ok, url: '/v1/search?api_key=x' }, { ...ok, route: '/v1/search?x=1' },
      { ...ok, status: '200' }, { ...ok, cost_usd: '0.009' }, { ...ok, someField: 1 }, { ...ok, service: 'other' }, { ...ok, authorization: 'x' },
      { ...ok, nested: { deep: { deeper: 1 } } },
    ]) {
      expect([bad, checkLogLine(JSON.stringify(bad))]).not.toEqual([bad, null]);
    }
    expect(checkLogLine('not json')).toBe('not JSON');
  });
});
