import { FakeStripe } from './fake-stripe';

/**
 * The fake Stripe as a process (local stack): PORT (default 12111), HOST, and optionally
 * STRIPE_SECRET_KEY (the one key accepted), STRIPE_WEBHOOK_URL and STRIPE_WEBHOOK_SECRET
 * (where /_fake/... actions with {"deliver": true} send their signed events).
 */
async function main(): Promise<void> {
  const port = Number(process.env.PORT ?? '12111');
  if (!Number.isInteger(port) || port < 0 || port > 65535) throw new Error('PORT must be a port number');
  const fake = await FakeStripe.start({
    port,
    host: process.env.HOST ?? '127.0.0.1',
    secretKey: process.env.STRIPE_SECRET_KEY,
    webhookUrl: process.env.STRIPE_WEBHOOK_URL,
    webhookSecret: process.env.STRIPE_WEBHOOK_SECRET,
  });
  process.stdout.write(`fake-stripe listening on ${fake.url}\n`);
  const stop = (): void => {
    fake.stop().then(() => process.exit(0), () => process.exit(1));
  };
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`fake-stripe: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
