import { createHmac } from 'node:crypto';
import { verifyWebhook, WebhookSignatureError } from '../src/index';

/**
 * verifyWebhook against signatures made here with node:crypto by the documented recipe
 * (HMAC-SHA256 of "<t>.<raw body>", hex), independent of the SDK's Web Crypto code.
 */
const SECRET = 'whsec_test_secret_one';
const OLD = 'whsec_test_secret_old';
const body = JSON.stringify({ id: 'evt_1', object: 'event', type: 'balance.low', account_id: 'acct_1', created_at: '2026-11-26T00:00:00.000Z', data: { balance_usd: 1 } });
const sign = (secret: string, t: number, raw = body): string => createHmac('sha256', secret).update(`${t}.${raw}`).digest('hex');
const now = 1_800_000_000;

async function failure(promise: Promise<unknown>): Promise<string> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof WebhookSignatureError) return error.reason;
    throw error;
  }
  throw new Error('verifyWebhook accepted it');
}

describe('verifyWebhook', () => {
  it('accepts a valid signature and returns the event', async () => {
    const event = await verifyWebhook(body, `t=${now},v1=${sign(SECRET, now)}`, SECRET, { nowSeconds: now + 10 });
    expect(event).toMatchObject({ id: 'evt_1', type: 'balance.low', data: { balance_usd: 1 } });
  });

  it('accepts the body as bytes, and either of two v1 (a rotation), in any order', async () => {
    const header = `t=${now},v1=${sign(OLD, now)},v1=${sign(SECRET, now)}`;
    await expect(verifyWebhook(new TextEncoder().encode(body), header, SECRET, { nowSeconds: now })).resolves.toMatchObject({ id: 'evt_1' });
    await expect(verifyWebhook(body, header, OLD, { nowSeconds: now })).resolves.toMatchObject({ id: 'evt_1' });
  });

  it('refuses a forged signature, another secret, and a tampered body', async () => {
    expect(await failure(verifyWebhook(body, `t=${now},v1=${'0'.repeat(64)}`, SECRET, { nowSeconds: now }))).toBe('no_matching_signature');
    expect(await failure(verifyWebhook(body, `t=${now},v1=${sign('whsec_other', now)}`, SECRET, { nowSeconds: now }))).toBe('no_matching_signature');
    const tampered = body.replace('"balance_usd":1', '"balance_usd":1000');
    expect(await failure(verifyWebhook(tampered, `t=${now},v1=${sign(SECRET, now)}`, SECRET, { nowSeconds: now }))).toBe('no_matching_signature');
    // The timestamp is signed: moving it breaks the signature.
    expect(await failure(verifyWebhook(body, `t=${now + 1},v1=${sign(SECRET, now)}`, SECRET, { nowSeconds: now }))).toBe('no_matching_signature');
  });

  it('refuses a stale (replayed) or far-future timestamp, with the tolerance adjustable', async () => {
    const header = `t=${now},v1=${sign(SECRET, now)}`;
    expect(await failure(verifyWebhook(body, header, SECRET, { nowSeconds: now + 301 }))).toBe('timestamp_outside_tolerance');
    expect(await failure(verifyWebhook(body, header, SECRET, { nowSeconds: now - 301 }))).toBe('timestamp_outside_tolerance');
    await expect(verifyWebhook(body, header, SECRET, { nowSeconds: now + 300 })).resolves.toMatchObject({ id: 'evt_1' });
    expect(await failure(verifyWebhook(body, header, SECRET, { nowSeconds: now + 61, toleranceSeconds: 60 }))).toBe('timestamp_outside_tolerance');
  });

  it('refuses a missing or malformed header', async () => {
    expect(await failure(verifyWebhook(body, undefined, SECRET))).toBe('missing_header');
    expect(await failure(verifyWebhook(body, '', SECRET))).toBe('missing_header');
    expect(await failure(verifyWebhook(body, `v1=${sign(SECRET, now)}`, SECRET))).toBe('malformed_header');
    expect(await failure(verifyWebhook(body, `t=${now}`, SECRET))).toBe('malformed_header');
    expect(await failure(verifyWebhook(body, `t=abc,v1=${sign(SECRET, now)}`, SECRET))).toBe('malformed_header');
  });
});
