import { MailCatcher } from '@svc/mail-catcher';

export { MailCatcher };
export type { CaughtMail } from '@svc/mail-catcher';

/** The sender the test stacks' mail comes from. */
export const TEST_MAIL_FROM = 'Search gateway <no-reply@example.test>';

/**
 * account-admin's environment for sending through a catcher on this machine (plain SMTP, no
 * TLS); with `auth`, the credentials it must log in with (the catcher then refuses others).
 */
export function smtpEnv(catcher: MailCatcher, auth?: { user: string; password: string }): Record<string, string> {
  return {
    SMTP_HOST: catcher.host,
    SMTP_PORT: String(catcher.smtpPort),
    SMTP_TLS: 'off',
    MAIL_FROM: TEST_MAIL_FROM,
    ...(auth === undefined ? {} : { SMTP_USER: auth.user, SMTP_PASSWORD: auth.password }),
  };
}
