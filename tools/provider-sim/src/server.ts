import Fastify from 'fastify';
import type { FastifyInstance } from 'fastify';
import { BRAVE_DEFAULT_KEY, braveRoutes } from './brave.routes';
import { EXA_DEFAULT_KEY, exaRoutes } from './exa.routes';
import { SIM_PROVIDERS } from './directives';
import type { SimProvider } from './directives';
import { OUTAGE_KINDS, SimContext } from './simulate';
import type { OutageKind } from './simulate';
import { StatsCounter } from './stats';
import { TAVILY_DEFAULT_KEY, tavilyRoutes } from './tavily.routes';
import { RESEARCH_DEFAULT_MS, ResearchSim } from './research';

export interface SimulatorOptions {
  /** Accepted keys; defaults sim-brave-key, sim-exa-key, tvly-sim-key. */
  readonly braveKey?: string;
  readonly exaKey?: string;
  readonly tavilyKey?: string;
  /** Added before every provider answer (default 0). */
  readonly baseLatencyMs?: number;
  /** Fastify logger level; no logging when unset. */
  readonly logLevel?: string;
  /** How long a research run takes unless its input says otherwise (default 1,500 ms). */
  readonly researchMs?: number;
  /** The research runs' clock (ms; tests move it); default Date.now. */
  readonly researchClock?: () => number;
}

export const DEFAULT_KEYS = { brave: BRAVE_DEFAULT_KEY, exa: EXA_DEFAULT_KEY, tavily: TAVILY_DEFAULT_KEY } as const;

/**
 * The simulator as a Fastify instance (not yet listening): Brave under /brave, Exa under
 * /exa, Tavily under /tavily, counters at GET /_sim/stats and POST /_sim/reset, a whole-provider
 * outage at PUT/DELETE /_sim/outage/:provider (and GET /_sim/outages).
 */
export function buildSimulator(options: SimulatorOptions = {}): FastifyInstance {
  const app = Fastify({
    logger: options.logLevel === undefined ? false : { level: options.logLevel },
    // Hanging requests (sim:x=timeout) must not keep close() waiting.
    forceCloseConnections: true,
  });
  const stats = new StatsCounter();
  const context = new SimContext(stats, options.baseLatencyMs ?? 0);
  const research = new ResearchSim(options.researchMs ?? RESEARCH_DEFAULT_MS, options.researchClock);
  app.addHook('preClose', async () => context.releaseAll());

  app.get('/healthz', async () => ({ ok: true }));
  app.get('/readyz', async () => ({ ok: true }));
  app.get('/_sim/stats', async () => stats.snapshot());
  app.get('/_sim/requests', async () => ({ requests: context.seen }));
  // Research runs as the simulated providers see them: status, polls and what each would charge now.
  app.get('/_sim/research', async () => ({ runs: research.snapshot() }));
  app.post('/_sim/reset', async () => {
    stats.reset();
    context.seen.length = 0;
    return stats.snapshot();
  });
  // A provider failing as a whole: PUT {"kind":"timeout"|"error500"|"error429"} until DELETE.
  const outages = (): Record<string, OutageKind> => Object.fromEntries(context.outages);
  app.get('/_sim/outages', async () => outages());
  app.put<{ Params: { provider: string }; Body: unknown }>('/_sim/outage/:provider', async (request, reply) => {
    const provider = request.params.provider;
    const kind = (request.body as { kind?: unknown } | null)?.kind;
    if (!(SIM_PROVIDERS as readonly string[]).includes(provider)) return reply.code(404).send({ error: `unknown provider "${provider}"` });
    if (typeof kind !== 'string' || !(OUTAGE_KINDS as readonly string[]).includes(kind)) {
      return reply.code(400).send({ error: `kind must be one of ${OUTAGE_KINDS.join(', ')}` });
    }
    context.outages.set(provider as SimProvider, kind as OutageKind);
    return outages();
  });
  app.delete<{ Params: { provider: string } }>('/_sim/outage/:provider', async (request, reply) => {
    const provider = request.params.provider;
    if (!(SIM_PROVIDERS as readonly string[]).includes(provider)) return reply.code(404).send({ error: `unknown provider "${provider}"` });
    context.outages.delete(provider as SimProvider);
    return outages();
  });
  void app.register(braveRoutes(context, options.braveKey ?? BRAVE_DEFAULT_KEY), { prefix: '/brave' });
  void app.register(exaRoutes(context, options.exaKey ?? EXA_DEFAULT_KEY, research), { prefix: '/exa' });
  void app.register(tavilyRoutes(context, options.tavilyKey ?? TAVILY_DEFAULT_KEY, research), { prefix: '/tavily' });
  return app;
}
