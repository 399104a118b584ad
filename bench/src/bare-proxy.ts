/**
 * The baseline of bench/src/search.ts and latency.ts: a bare Fastify + undici proxy that
 * forwards POST /v1/search to the simulator's Exa endpoint with no checks at all (no key,
 * no money, no limits, no validation), mapping the body the way the gateway's Exa adapter
 * does, and replies with the upstream status and body as they came.
 *
 * Runs as its own process (bench/dist/bare-proxy.js). Environment:
 *   PORT (0 = any), HOST (127.0.0.1), UPSTREAM_URL (e.g. http://127.0.0.1:9090/exa/search),
 *   UPSTREAM_KEY (the simulator's Exa key), UPSTREAM_TYPE (Exa `type`, default fast: exa/fast).
 * It prints `bare-proxy listening on <url>` once it accepts connections.
 * Not a benchmark itself: `npm run bench` (every script in bench/dist) also runs this file,
 * without UPSTREAM_URL, so then it says so and exits 0 instead of failing the run.
 */
import Fastify from 'fastify';
import { Agent, request } from 'undici';

interface SearchBody {
  query?: unknown;
  max_results?: unknown;
}

function required(name: string): string {
  const value = process.env[name];
  if (value === undefined || value === '') {
    process.stderr.write(`bare-proxy: ${name} is required\n`);
    process.exit(1);
  }
  return value;
}

async function main(): Promise<void> {
  if (process.env.UPSTREAM_URL === undefined) {
    process.stdout.write('bare-proxy: the baseline process of `npm run bench -- search`; nothing to measure alone\n');
    return;
  }
  const upstreamUrl = required('UPSTREAM_URL');
  const upstreamKey = required('UPSTREAM_KEY');
  const upstreamType = process.env.UPSTREAM_TYPE ?? 'fast';
  const agent = new Agent({ connections: 128, keepAliveTimeout: 10_000, keepAliveMaxTimeout: 60_000 });
  const headers = { accept: 'application/json', 'content-type': 'application/json', 'x-api-key': upstreamKey };
  const app = Fastify({ logger: false });

  app.get('/readyz', async () => ({ ok: true }));
  app.post<{ Body: SearchBody }>('/v1/search', async (req, reply) => {
    const body = req.body ?? {};
    const numResults = typeof body.max_results === 'number' ? body.max_results : 10;
    const upstream = await request(upstreamUrl, {
      dispatcher: agent,
      method: 'POST',
      headers,
      body: JSON.stringify({ query: body.query, type: upstreamType, numResults, contents: { highlights: true } }),
    });
    const text = await upstream.body.text();
    return reply.code(upstream.statusCode).header('content-type', 'application/json; charset=utf-8').send(text);
  });

  for (const signal of ['SIGTERM', 'SIGINT'] as const) {
    process.once(signal, () => {
      app.close().then(
        () => agent.close(),
      ).then(
        () => process.exit(0),
        () => process.exit(1),
      );
    });
  }
  const address = await app.listen({ port: Number(process.env.PORT ?? 0), host: process.env.HOST ?? '127.0.0.1' });
  process.stdout.write(`bare-proxy listening on ${address}\n`);
}

main().catch((error: unknown) => {
  process.stderr.write(`bare-proxy: failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
