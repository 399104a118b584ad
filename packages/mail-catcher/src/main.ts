// The local stack's mail server (npm start): SMTP on SMTP_PORT (1025) and the page to read what
// was sent on PORT (1080), both on HOST (127.0.0.1). Nothing is delivered anywhere.
import { int, loadEnvOrExit, str } from '@svc/config';
import { MailCatcher } from './mail-catcher';

async function main(): Promise<void> {
  const env = loadEnvOrExit({
    SMTP_PORT: int({ default: 1025, min: 0, max: 65535 }),
    PORT: int({ default: 1080, min: 0, max: 65535 }),
    HOST: str({ default: '127.0.0.1' }),
  }, 'mail-catcher');
  const catcher = await MailCatcher.start({ smtpPort: env.SMTP_PORT, httpPort: env.PORT, host: env.HOST });
  process.stdout.write(`mail-catcher: SMTP on ${catcher.host}:${catcher.smtpPort}, messages at ${catcher.viewerUrl ?? '(no page)'}\n`);
  const stop = (): void => {
    catcher.stop().then(() => process.exit(0), () => process.exit(1));
  };
  process.on('SIGTERM', stop);
  process.on('SIGINT', stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`mail-catcher failed to start: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
