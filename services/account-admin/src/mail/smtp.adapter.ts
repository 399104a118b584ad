import { Inject, Injectable } from '@nestjs/common';
import type { OnApplicationShutdown } from '@nestjs/common';
import { createTransport } from 'nodemailer';
import type { Transporter } from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport';
import { APP_CONFIG } from '../config';
import type { AppConfig, SmtpSettings } from '../config';

/** One message as it goes out: plain text and HTML of the same words. */
export interface OutgoingMail {
  to: string;
  subject: string;
  text: string;
  html: string;
}

/** What the SMTP server said: accepted (its queue id line), or refused for now or for good. */
export type SmtpOutcome =
  | { sent: true; messageId: string; response: string }
  | { sent: false; permanent: boolean; detail: string };

/** The longest SMTP answer or error a record keeps. */
const DETAIL_MAX = 300;

/**
 * Mail out through the configured SMTP server with nodemailer, on a pool of at most
 * MAIL_CONCURRENCY connections. A refusal with a 5xx reply is permanent (the address or the
 * message will not be taken however often it is sent); every other failure (a 4xx, a refused
 * or broken connection, a timeout) is worth another attempt. Nothing here logs: the caller
 * records the outcome, and an error's text never carries the credentials.
 */
@Injectable()
export class SmtpAdapter implements OnApplicationShutdown {
  private readonly transport: Transporter<SMTPTransport.SentMessageInfo> | null;
  private readonly from: string;

  constructor(@Inject(APP_CONFIG) config: AppConfig) {
    this.transport = config.smtp === null ? null : createTransport(transportOptions(config.smtp, config.MAIL_CONCURRENCY));
    this.from = config.smtp?.from ?? '';
  }

  /** False when no SMTP server is set (SMTP_HOST unset): nothing can be sent. */
  get configured(): boolean {
    return this.transport !== null;
  }

  async send(mail: OutgoingMail): Promise<SmtpOutcome> {
    if (this.transport === null) return { sent: false, permanent: true, detail: 'no SMTP server is set (SMTP_HOST)' };
    try {
      const info = await this.transport.sendMail({ from: this.from, to: mail.to, subject: mail.subject, text: mail.text, html: mail.html });
      if (info.rejected.length > 0) return { sent: false, permanent: true, detail: clip(`refused: ${info.response}`) };
      return { sent: true, messageId: info.messageId, response: clip(info.response) };
    } catch (error) {
      const responseCode = (error as { responseCode?: unknown }).responseCode;
      const permanent = typeof responseCode === 'number' && responseCode >= 500 && responseCode < 600;
      return { sent: false, permanent, detail: clip(error instanceof Error ? error.message : String(error)) };
    }
  }

  onApplicationShutdown(): void {
    this.transport?.close();
  }
}

function transportOptions(smtp: SmtpSettings, maxConnections: number): SMTPTransport.Options & { pool: true; maxConnections: number } {
  return {
    pool: true,
    maxConnections,
    host: smtp.host,
    port: smtp.port,
    // `tls`: TLS from the first byte; `starttls`: the upgrade is required, never skipped; `off`: plain (a local catcher).
    secure: smtp.tls === 'tls',
    requireTLS: smtp.tls === 'starttls',
    ignoreTLS: smtp.tls === 'off',
    ...(smtp.auth === null ? {} : { auth: { user: smtp.auth.user, pass: smtp.auth.password } }),
    connectionTimeout: 10_000,
    greetingTimeout: 10_000,
    socketTimeout: 30_000,
    disableFileAccess: true,
    disableUrlAccess: true,
  };
}

function clip(text: string): string {
  const oneLine = text.replace(/\s+/g, ' ').trim();
  return oneLine.length > DETAIL_MAX ? `${oneLine.slice(0, DETAIL_MAX)}…` : oneLine;
}
