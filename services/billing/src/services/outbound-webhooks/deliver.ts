import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { guardedLookup, hostRefusal, refusedAddressOf } from '@svc/address-policy';
import type { Resolver } from '@svc/address-policy';
import { reachOf } from './url-policy';
import type { UrlPolicy } from './url-policy';

export type { Resolver };

export interface AttemptResult {
  /** The receiver's HTTP status, or null when none came (refused, unreachable, timed out). */
  statusCode: number | null;
  /** Why no 2xx came, in a few words (never a secret); null on success. */
  error: string | null;
  durationMs: number;
  /** The first bytes of the receiver's answer (UTF-8, lossy). */
  responseHead: string | null;
}

export interface PostOptions {
  policy: UrlPolicy;
  timeoutMs: number;
  responseHeadBytes: number;
  resolver?: Resolver;
}

/**
 * One attempt: POST the raw body to the endpoint's URL. Redirects are not followed (a 3xx is
 * a failed attempt); the whole exchange must finish within timeoutMs.
 */
export function postWebhook(url: string, rawBody: string, headers: Record<string, string>, options: PostOptions): Promise<AttemptResult> {
  const started = performance.now();
  const elapsed = (): number => Math.round(performance.now() - started);
  return new Promise<AttemptResult>((resolve) => {
    let settled = false;
    const finish = (result: Omit<AttemptResult, 'durationMs'>): void => {
      if (settled) return;
      settled = true;
      resolve({ ...result, durationMs: elapsed() });
    };
    let target: URL;
    try {
      target = new URL(url);
    } catch {
      return finish({ statusCode: null, error: 'the URL is not valid', responseHead: null });
    }
    // An address literal is never looked up, so it is checked here; a name, in the connection's own lookup.
    const refused = hostRefusal(target.hostname, reachOf(options.policy));
    if (refused !== null) return finish({ statusCode: null, error: `refused: ${refused}`, responseHead: null });
    const isHttps = target.protocol === 'https:';
    if (!isHttps && !(options.policy.allowHttpAndLoopback && target.protocol === 'http:')) {
      return finish({ statusCode: null, error: 'refused: not https', responseHead: null });
    }
    const send = isHttps ? httpsRequest : httpRequest;
    const request = send(target, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(rawBody)), 'user-agent': 'svc-webhooks/1' },
      lookup: guardedLookup(reachOf(options.policy), options.resolver),
      agent: false,
    }, (response) => {
      const chunks: Buffer[] = [];
      let kept = 0;
      response.on('data', (chunk: Buffer) => {
        if (kept < options.responseHeadBytes) {
          chunks.push(chunk.subarray(0, options.responseHeadBytes - kept));
          kept += Math.min(chunk.length, options.responseHeadBytes - kept);
        }
      });
      response.on('end', () => {
        const status = response.statusCode ?? 0;
        const ok = status >= 200 && status < 300;
        finish({ statusCode: status, error: ok ? null : `status ${status}`, responseHead: Buffer.concat(chunks).toString('utf8') });
      });
      response.on('error', () => finish({ statusCode: response.statusCode ?? null, error: 'the answer broke off', responseHead: Buffer.concat(chunks).toString('utf8') }));
    });
    const timer = setTimeout(() => {
      request.destroy();
      finish({ statusCode: null, error: `no answer within ${options.timeoutMs} ms`, responseHead: null });
    }, options.timeoutMs);
    timer.unref();
    request.on('close', () => clearTimeout(timer));
    request.on('error', (error: NodeJS.ErrnoException) => {
      clearTimeout(timer);
      const why = refusedAddressOf(error) !== null ? `refused: ${error.message}` : `connection failed (${error.code ?? 'error'})`;
      finish({ statusCode: null, error: why, responseHead: null });
    });
    request.end(rawBody);
  });
}
