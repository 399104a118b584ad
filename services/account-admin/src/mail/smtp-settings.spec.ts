import { parseConfig } from '../config';

const BASE = { INTERNAL_TOKEN: 'x'.repeat(16), BYOK_ENABLED: 'false' };

describe('the mail settings, read once at start', () => {
  it('refuses SIGNUP_CONFIRMATION=required (the default) without an SMTP server, naming both', () => {
    expect(() => parseConfig(BASE)).toThrow(/SIGNUP_CONFIRMATION is required but SMTP_HOST is not set/);
    expect(parseConfig({ ...BASE, SIGNUP_CONFIRMATION: 'off' }).smtp).toBeNull();
  });

  it('needs MAIL_FROM with SMTP_HOST, as an address or `Name <address>`', () => {
    expect(() => parseConfig({ ...BASE, SMTP_HOST: 'smtp.example.com' })).toThrow(/MAIL_FROM is required with SMTP_HOST/);
    expect(() => parseConfig({ ...BASE, SMTP_HOST: 'smtp.example.com', MAIL_FROM: 'nobody' })).toThrow(/MAIL_FROM must be an address/);
    expect(parseConfig({ ...BASE, SMTP_HOST: 'smtp.example.com', MAIL_FROM: 'Search gateway <no-reply@example.com>' }).smtp).toEqual({
      host: 'smtp.example.com', port: 587, tls: 'starttls', auth: null, from: 'Search gateway <no-reply@example.com>',
    });
  });

  it('takes SMTP credentials together or not at all, naming the missing one and never echoing the password', () => {
    const smtp = { ...BASE, SMTP_HOST: 'smtp.example.com', MAIL_FROM: 'no-reply@example.com' };
    expect(() => parseConfig({ ...smtp, SMTP_USER: 'mailer' })).toThrow(/SMTP_PASSWORD must be set together with SMTP_USER/);
    let message = '';
    try {
      parseConfig({ ...smtp, SMTP_PASSWORD: 'hunter2-secret' });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/SMTP_USER must be set together with SMTP_PASSWORD/);
    expect(message).not.toContain('hunter2-secret');
    expect(parseConfig({ ...smtp, SMTP_USER: 'mailer', SMTP_PASSWORD: 'pw', SMTP_TLS: 'tls', SMTP_PORT: '465' }).smtp).toMatchObject({ port: 465, tls: 'tls', auth: { user: 'mailer', password: 'pw' } });
    expect(() => parseConfig({ ...smtp, SMTP_TLS: 'maybe' })).toThrow(/SMTP_TLS/);
  });
});
