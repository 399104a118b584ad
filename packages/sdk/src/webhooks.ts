/**
 * Verifying the gateway's webhooks in a receiver. Each delivery carries
 * `svc-signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<raw body>" with the endpoint's secret>`
 * (a second v1 while a rotated-out secret is still valid). Web Crypto only, so it runs in
 * Node 22+, Deno, Bun, edge runtimes and browsers alike; the comparison is the platform's
 * HMAC verify, which takes the same time whatever the bytes.
 */

/** The header name (lower case; HTTP header names are case-insensitive). */
export const WEBHOOK_SIGNATURE_HEADER = 'svc-signature';

/** How old a delivery's timestamp may be (and how far ahead), in seconds, by default. */
export const DEFAULT_WEBHOOK_TOLERANCE_SECONDS = 300;

import type { WebhookEvent } from './types.js';

export type WebhookSignatureFailure = 'missing_header' | 'malformed_header' | 'timestamp_outside_tolerance' | 'no_matching_signature' | 'invalid_body';

export class WebhookSignatureError extends Error {
  readonly reason: WebhookSignatureFailure;
  constructor(reason: WebhookSignatureFailure, message: string) {
    super(message);
    this.name = 'WebhookSignatureError';
    this.reason = reason;
  }
}

export interface VerifyWebhookOptions {
  /** Refuse a timestamp further than this from now (default 300 s). */
  toleranceSeconds?: number;
  /** Now, in unix seconds (tests). */
  nowSeconds?: number;
}

// Made on first use: the SDK's module loads where no TextEncoder exists (a bare scope), and only verifying needs one.
let encoder: InstanceType<typeof TextEncoder> | undefined;

function hexToBytes(hex: string): Uint8Array<ArrayBuffer> | null {
  if (!/^[0-9a-f]{64}$/i.test(hex)) return null;
  const bytes = new Uint8Array(hex.length / 2);
  for (let i = 0; i < bytes.length; i++) bytes[i] = Number.parseInt(hex.slice(i * 2, i * 2 + 2), 16);
  return bytes;
}

function parseHeader(header: string): { t: number; signatures: string[] } | null {
  let t: number | null = null;
  const signatures: string[] = [];
  for (const part of header.split(',')) {
    const at = part.indexOf('=');
    if (at === -1) continue;
    const key = part.slice(0, at).trim();
    const value = part.slice(at + 1).trim();
    if (key === 't' && /^\d{1,12}$/.test(value)) t = Number(value);
    else if (key === 'v1') signatures.push(value);
  }
  return t === null || signatures.length === 0 ? null : { t, signatures };
}

/**
 * Checks a delivery and returns its event. `rawBody` must be the bytes as received (not
 * re-serialised JSON); `secret` is the endpoint's secret, or several (during your own
 * rotation). Throws WebhookSignatureError when the header is missing or malformed, the
 * timestamp is outside the tolerance (a replay), or no v1 matches (a forgery).
 */
export async function verifyWebhook(
  rawBody: string | Uint8Array,
  header: string | null | undefined,
  secret: string | readonly string[],
  options: VerifyWebhookOptions = {},
): Promise<WebhookEvent> {
  if (header === null || header === undefined || header === '') throw new WebhookSignatureError('missing_header', `no ${WEBHOOK_SIGNATURE_HEADER} header`);
  const parsed = parseHeader(header);
  if (parsed === null) throw new WebhookSignatureError('malformed_header', `${WEBHOOK_SIGNATURE_HEADER} has no t= and v1= parts`);
  const tolerance = options.toleranceSeconds ?? DEFAULT_WEBHOOK_TOLERANCE_SECONDS;
  const now = options.nowSeconds ?? Math.floor(Date.now() / 1000);
  if (Math.abs(now - parsed.t) > tolerance) {
    throw new WebhookSignatureError('timestamp_outside_tolerance', `the signature's timestamp is more than ${tolerance} s from now`);
  }
  const text = (encoder ??= new TextEncoder());
  const body = typeof rawBody === 'string' ? text.encode(rawBody) : rawBody;
  const prefix = text.encode(`${parsed.t}.`);
  const signed = new Uint8Array(prefix.length + body.length);
  signed.set(prefix, 0);
  signed.set(body, prefix.length);
  const subtle = globalThis.crypto.subtle;
  for (const candidate of typeof secret === 'string' ? [secret] : secret) {
    const key = await subtle.importKey('raw', text.encode(candidate), { name: 'HMAC', hash: 'SHA-256' }, false, ['verify']);
    for (const signature of parsed.signatures) {
      const bytes = hexToBytes(signature);
      if (bytes !== null && (await subtle.verify('HMAC', key, bytes, signed))) {
        try {
          return JSON.parse(new TextDecoder().decode(body)) as WebhookEvent;
        } catch {
          throw new WebhookSignatureError('invalid_body', 'the signed body is not JSON');
        }
      }
    }
  }
  throw new WebhookSignatureError('no_matching_signature', 'no v1 signature matches the secret');
}
