import fastify from 'fastify';
import pino from 'pino';
import { DrainState, drainingReadiness } from './drain';
import { installEdge } from './edge';

describe('the drain', () => {
  const log = pino({ level: 'silent' });

  async function appWith(drain?: DrainState): Promise<ReturnType<typeof fastify>> {
    const app = fastify();
    installEdge(app, log, undefined, drain === undefined ? {} : { drain });
    app.get('/ok', async () => ({ ok: true }));
    app.get('/fails', async () => {
      throw new Error('boom');
    });
    await app.ready();
    return app;
  }

  it('every reply says connection: close once the drain started, and not before', async () => {
    const drain = new DrainState();
    const app = await appWith(drain);
    expect(drain.draining).toBe(false);
    expect((await app.inject({ method: 'GET', url: '/ok' })).headers['connection']).not.toBe('close');
    drain.start();
    expect(drain.draining).toBe(true);
    for (const url of ['/ok', '/fails', '/missing']) {
      const reply = await app.inject({ method: 'GET', url });
      expect([url, reply.headers['connection']]).toEqual([url, 'close']);
    }
    await app.close();
  });

  it('costs a process without a drain nothing per request: its onSend hook is installed only with one', async () => {
    const without = await appWith();
    const withDrain = await appWith(new DrainState());
    expect(without.printRoutes({ includeHooks: true })).not.toContain('closeWhileDraining');
    expect(withDrain.printRoutes({ includeHooks: true })).toContain('closeWhileDraining');
    await without.close();
    await withDrain.close();
  });

  it('/readyz says draining in one shape on every service', () => {
    expect(drainingReadiness('req_1')).toEqual({ status: 'draining', checks: {}, request_id: 'req_1' });
  });
});
