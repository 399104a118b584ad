import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import { BRAVE_DEFAULT_KEY, braveRoutes } from './brave.routes';
import { EXA_DEFAULT_KEY, exaRoutes } from './exa.routes';
import { SimContext } from './simulate';
import { StatsCounter } from './stats';
import { TAVILY_DEFAULT_KEY, tavilyRoutes } from './tavily.routes';

export interface SimulatorOptions {
  /** Accepted keys; defaults sim-brave-key, sim-exa-key, tvly-sim-key. */
  readonly braveKey?: string;
  readonly exaKey?: string;
  readonly tavilyKey?: string;
  /** Added before every provider answer (default 0). */
  readonly baseLatencyMs?: number;
  /** Fastify logger level; no logging when unset. */
  readonly logLevel?: string;
}

export const DEFAULT_KEYS = { brave: BRAVE_DEFAULT_KEY, exa: EXA_DEFAULT_KEY, tavily: TAVILY_DEFAULT_KEY } as const;

/**
 * The simulator as a Fastify instance (not yet listening): Brave under /brave, Exa under
 * /exa, Tavily under /tavily, counters at GET /_sim/stats and POST /_sim/reset.
 */
export function buildSimulator(options: SimulatorOptions = {}): FastifyInstance {
  const app = Fastify({
    logger: options.logLevel === undefined ? false : { level: options.logLevel },
    // Hanging requests (sim:x=timeout) must not keep close() waiting.
    forceCloseConnections: true,
  });
  const stats = new StatsCounter();
  const context = new SimContext(stats, options.baseLatencyMs ?? 0);
  app.addHook('preClose', async () => context.releaseAll());

  app.get('/healthz', async () => ({ ok: true }));
  app.get('/readyz', async () => ({ ok: true }));
  app.get('/_sim/stats', async () => stats.snapshot());
  app.get('/_sim/requests', async () => ({ requests: context.seen }));
  app.post('/_sim/reset', async () => {
    stats.reset();
    context.seen.length = 0;
    return stats.snapshot();
  });
  void app.register(braveRoutes(context, options.braveKey ?? BRAVE_DEFAULT_KEY), { prefix: '/brave' });
  void app.register(exaRoutes(context, options.exaKey ?? EXA_DEFAULT_KEY), { prefix: '/exa' });
  void app.register(tavilyRoutes(context, options.tavilyKey ?? TAVILY_DEFAULT_KEY), { prefix: '/tavily' });
  return app;
}
