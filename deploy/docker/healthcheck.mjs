// Container health probe without curl: `node deploy/docker/healthcheck.mjs <port> <path>`.
// Exits 0 when GET http://127.0.0.1:<port><path> answers 2xx within the timeout, else 1.
const [port = process.env.PORT ?? '8080', path = '/readyz'] = process.argv.slice(2);
const timeoutMs = Number(process.env.HEALTHCHECK_TIMEOUT_MS ?? 2000);

try {
  const response = await fetch(`http://127.0.0.1:${port}${path}`, { signal: AbortSignal.timeout(timeoutMs) });
  process.exit(response.ok ? 0 : 1);
} catch {
  process.exit(1);
}
