import { lookup as dnsLookup } from 'node:dns';
import type { LookupAddress, LookupOptions } from 'node:dns';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { isIP } from 'node:net';
import { refusedAddress } from './url-policy';
import type { UrlPolicy } from './url-policy';

export interface AttemptResult {
  /** The receiver's HTTP status, or null when none came (refused, unreachable, timed out). */
  statusCode: number | null;
  /** Why no 2xx came, in a few words (never a secret); null on success. */
  error: string | null;
  durationMs: number;
  /** The first bytes of the receiver's answer (UTF-8, lossy). */
  responseHead: string | null;
}

export type Resolver = (hostname: string, callback: (error: Error | null, addresses: LookupAddress[]) => void) => void;

const systemResolver: Resolver = (hostname, callback) => dnsLookup(hostname, { all: true, verbatim: true }, (error, addresses) => callback(error, addresses ?? []));

class RefusedAddressError extends Error {}

/**
 * The connection's DNS lookup, with every answer checked: if any address the name resolves
 * to is refused by the policy, the connection is not made (a name with one public and one
 * private answer is refused, so the choice cannot be steered). The address connected to is
 * one that was checked, so a second resolution cannot swap it (no rebinding window).
 */
export function guardedLookup(policy: UrlPolicy, resolver: Resolver = systemResolver) {
  return (hostname: string, options: LookupOptions, callback: (error: NodeJS.ErrnoException | null, address: string | LookupAddress[], family?: number) => void): void => {
    resolver(hostname, (error, addresses) => {
      if (error !== null) return callback(error, '', 0);
      if (addresses.length === 0) return callback(Object.assign(new Error(`no address for ${hostname}`), { code: 'ENOTFOUND' }), '', 0);
      for (const address of addresses) {
        const refused = refusedAddress(address.address, policy);
        if (refused !== null) return callback(new RefusedAddressError(`${hostname} resolves to ${refused}`), '', 0);
      }
      if (options.all === true) return callback(null, addresses);
      const first = addresses[0] as LookupAddress;
      return callback(null, first.address, first.family);
    });
  };
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
    const host = target.hostname.startsWith('[') ? target.hostname.slice(1, -1) : target.hostname;
    // An address literal is never looked up, so it is checked here.
    if (isIP(host) !== 0) {
      const refused = refusedAddress(host, options.policy);
      if (refused !== null) return finish({ statusCode: null, error: `refused: ${refused}`, responseHead: null });
    }
    const isHttps = target.protocol === 'https:';
    if (!isHttps && !(options.policy.allowHttpAndLoopback && target.protocol === 'http:')) {
      return finish({ statusCode: null, error: 'refused: not https', responseHead: null });
    }
    const send = isHttps ? httpsRequest : httpRequest;
    const request = send(target, {
      method: 'POST',
      headers: { ...headers, 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(rawBody)), 'user-agent': 'svc-webhooks/1' },
      lookup: guardedLookup(options.policy, options.resolver),
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
      const why = error instanceof RefusedAddressError ? `refused: ${error.message}` : `connection failed (${error.code ?? 'error'})`;
      finish({ statusCode: null, error: why, responseHead: null });
    });
    request.end(rawBody);
  });
}
