import { verifyWebhook, WEBHOOK_EVENT_TYPES as SDK_EVENT_TYPES, WEBHOOK_SIGNATURE_HEADER as SDK_HEADER } from '@svc/sdk';
import { WEBHOOK_EVENT_TYPES, WEBHOOK_SIGNATURE_HEADER } from '@svc/contracts';
import { signatureHeader } from './signature';

/** What billing signs, the SDK verifies; the SDK's header name and event types are billing's. */
describe('the webhook signature, billing to SDK', () => {
  const body = '{"id":"evt_x","object":"event","type":"credits.purchased","account_id":"acct_x","created_at":"2026-11-26T00:00:00.000Z","data":{}}';

  it('verifies with the current secret and, during a rotation, with the previous one', async () => {
    const t = Math.floor(Date.now() / 1000);
    const header = signatureHeader(body, ['whsec_new', 'whsec_old'], t);
    expect(header).toMatch(/^t=\d+,v1=[0-9a-f]{64},v1=[0-9a-f]{64}$/);
    await expect(verifyWebhook(body, header, 'whsec_new')).resolves.toMatchObject({ id: 'evt_x' });
    await expect(verifyWebhook(body, header, 'whsec_old')).resolves.toMatchObject({ id: 'evt_x' });
    await expect(verifyWebhook(body, header, 'whsec_other')).rejects.toMatchObject({ reason: 'no_matching_signature' });
  });

  it('agrees on the header name and the event types', () => {
    expect(SDK_HEADER).toBe(WEBHOOK_SIGNATURE_HEADER);
    expect([...SDK_EVENT_TYPES]).toEqual([...WEBHOOK_EVENT_TYPES]);
  });
});
