import { createHmac } from 'node:crypto';

/**
 * The `svc-signature` value of one delivery: `t=<unix seconds>,v1=<hex HMAC-SHA256 of
 * "<t>.<raw body>">`, one v1 per secret (the current one first; during a rotation the
 * previous one too). The SDK's verifyWebhook checks it (a test signs here and verifies there).
 */
export function signatureHeader(rawBody: string, secrets: readonly string[], timestampSeconds: number): string {
  const t = String(Math.floor(timestampSeconds));
  const parts = [`t=${t}`];
  for (const secret of secrets) parts.push(`v1=${createHmac('sha256', secret).update(`${t}.${rawBody}`, 'utf8').digest('hex')}`);
  return parts.join(',');
}
