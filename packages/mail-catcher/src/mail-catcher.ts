import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { simpleParser } from 'mailparser';
import type { AddressObject } from 'mailparser';
import { SMTPServer } from 'smtp-server';
import type { SMTPServerAuthentication, SMTPServerAuthenticationResponse, SMTPServerDataStream, SMTPServerSession } from 'smtp-server';

/** A message the catcher took, parsed. */
export interface CaughtMail {
  /** 1, 2, 3, … in the order received. */
  id: number;
  receivedAt: string;
  /** The SMTP envelope: MAIL FROM and every RCPT TO. */
  envelope: { from: string | null; to: string[] };
  /** The user the client authenticated as (SMTP AUTH), or null. */
  authUser: string | null;
  from: string;
  to: string[];
  subject: string;
  text: string;
  html: string | null;
  messageId: string | null;
  /** The whole message as it arrived (headers and MIME body). */
  raw: string;
}

export interface MailCatcherOptions {
  /** SMTP port (0: a free one). */
  smtpPort?: number;
  /** The web page's port (0: a free one; null: no page). */
  httpPort?: number | null;
  host?: string;
  /** When set, a client must authenticate with exactly these (AUTH PLAIN or LOGIN) before sending. */
  auth?: { user: string; password: string };
  /** The most messages kept (the oldest go first). */
  keep?: number;
}

type Waiter = { predicate: (mail: CaughtMail) => boolean; resolve: (mail: CaughtMail) => void };

/**
 * A local SMTP server for development and tests: it accepts every message (smtp-server), parses
 * it (mailparser), keeps it in memory and shows it on a small web page. It delivers nothing
 * anywhere. Tests read what a service sent over real SMTP: `waitFor`, `to`, and `refuse` to play
 * a server that answers an SMTP error.
 */
export class MailCatcher {
  private readonly caught: CaughtMail[] = [];
  private readonly waiters = new Set<Waiter>();
  private readonly sockets = new Set<Socket>();
  private nextId = 1;
  private refusal: { code: number; message: string; remaining: number } | null = null;

  private constructor(
    private readonly smtp: SMTPServer,
    private readonly web: Server | null,
    readonly host: string,
    readonly smtpPort: number,
    /** The web page's address, or null without one. */
    readonly viewerUrl: string | null,
    private readonly keep: number,
  ) {}

  static async start(options: MailCatcherOptions = {}): Promise<MailCatcher> {
    const host = options.host ?? '127.0.0.1';
    const holder: { catcher?: MailCatcher } = {};
    const auth = options.auth;
    const smtp = new SMTPServer({
      secure: false,
      disabledCommands: auth === undefined ? ['STARTTLS', 'AUTH'] : ['STARTTLS'],
      authOptional: auth === undefined,
      allowInsecureAuth: true,
      banner: 'mail-catcher: nothing is delivered',
      size: 10 * 1024 * 1024,
      logger: false,
      // A client that keeps its connection open (a sender's pool) does not hold up stopping.
      closeTimeout: 500,
      onAuth(login: SMTPServerAuthentication, _session: SMTPServerSession, callback: (err: Error | null | undefined, response?: SMTPServerAuthenticationResponse) => void) {
        if (auth !== undefined && login.username === auth.user && login.password === auth.password) callback(null, { user: login.username });
        else callback(new Error('Invalid username or password'));
      },
      onData(stream: SMTPServerDataStream, session: SMTPServerSession, callback: (err?: Error | null) => void) {
        const chunks: Buffer[] = [];
        stream.on('data', (chunk: Buffer) => chunks.push(chunk));
        stream.on('end', () => {
          const catcher = holder.catcher;
          const refusal = catcher?.takeRefusal();
          if (refusal !== undefined && refusal !== null) {
            callback(Object.assign(new Error(refusal.message), { responseCode: refusal.code }));
            return;
          }
          const raw = Buffer.concat(chunks);
          catcher?.store(raw, session).then(() => callback(), (error: unknown) => callback(error instanceof Error ? error : new Error(String(error))));
        });
      },
    });
    smtp.on('error', () => undefined);
    await new Promise<void>((resolve, reject) => {
      smtp.server.once('error', reject);
      smtp.listen(options.smtpPort ?? 0, host, () => resolve());
    });
    const smtpPort = (smtp.server.address() as AddressInfo).port;
    let web: Server | null = null;
    let viewerUrl: string | null = null;
    if (options.httpPort !== null) {
      web = createServer((req, res) => holder.catcher?.serve(req, res));
      const server = web;
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(options.httpPort ?? 0, host, () => resolve());
      });
      viewerUrl = `http://${host}:${(server.address() as AddressInfo).port}`;
      server.on('connection', (socket: Socket) => {
        holder.catcher?.sockets.add(socket);
        socket.on('close', () => holder.catcher?.sockets.delete(socket));
      });
    }
    const catcher = new MailCatcher(smtp, web, host, smtpPort, viewerUrl, options.keep ?? 500);
    holder.catcher = catcher;
    return catcher;
  }

  /** Every message kept, oldest first. */
  messages(): CaughtMail[] {
    return [...this.caught];
  }

  /** The messages addressed (envelope) to `address`, oldest first. */
  to(address: string): CaughtMail[] {
    const wanted = address.toLowerCase();
    return this.caught.filter((mail) => mail.envelope.to.some((to) => to.toLowerCase() === wanted));
  }

  /** The first message (kept or coming) that matches; rejects after `timeoutMs`. */
  waitFor(predicate: (mail: CaughtMail) => boolean, timeoutMs = 20_000): Promise<CaughtMail> {
    const found = this.caught.find(predicate);
    if (found !== undefined) return Promise.resolve(found);
    return new Promise((resolve, reject) => {
      const waiter: Waiter = {
        predicate,
        resolve: (mail) => {
          clearTimeout(timer);
          this.waiters.delete(waiter);
          resolve(mail);
        },
      };
      const timer = setTimeout(() => {
        this.waiters.delete(waiter);
        reject(new Error(`no matching message within ${timeoutMs} ms (${this.caught.length} kept)`));
      }, timeoutMs);
      this.waiters.add(waiter);
    });
  }

  /** The next `count` messages are refused with `code` (e.g. 451: try later; 550: never), then all are taken again. */
  refuse(code: number, count = 1, message = code >= 500 ? 'Mailbox unavailable' : 'Try again later'): void {
    this.refusal = { code, message, remaining: count };
  }

  clear(): void {
    this.caught.length = 0;
  }

  async stop(): Promise<void> {
    for (const socket of this.sockets) socket.destroy();
    await new Promise<void>((resolve) => this.smtp.close(() => resolve()));
    const web = this.web;
    if (web !== null) await new Promise<void>((resolve) => web.close(() => resolve()));
  }

  private takeRefusal(): { code: number; message: string } | null {
    const refusal = this.refusal;
    if (refusal === null) return null;
    refusal.remaining -= 1;
    if (refusal.remaining <= 0) this.refusal = null;
    return refusal;
  }

  private async store(raw: Buffer, session: SMTPServerSession): Promise<void> {
    const parsed = await simpleParser(raw);
    const mail: CaughtMail = {
      id: this.nextId++,
      receivedAt: new Date().toISOString(),
      envelope: {
        from: session.envelope.mailFrom === false ? null : session.envelope.mailFrom.address,
        to: session.envelope.rcptTo.map((r) => r.address),
      },
      authUser: typeof session.user === 'string' ? session.user : null,
      from: parsed.from?.text ?? '',
      to: addresses(parsed.to),
      subject: parsed.subject ?? '',
      text: parsed.text ?? '',
      html: typeof parsed.html === 'string' ? parsed.html : null,
      messageId: parsed.messageId ?? null,
      raw: raw.toString('utf8'),
    };
    this.caught.push(mail);
    if (this.caught.length > this.keep) this.caught.shift();
    for (const waiter of [...this.waiters]) if (waiter.predicate(mail)) waiter.resolve(mail);
  }

  /** The web page: `/` the list, `/messages/<id>` one message, `/messages/<id>/html` its HTML body (sandboxed), `/api/messages` JSON, `/healthz`. */
  private serve(req: IncomingMessage, res: ServerResponse): void {
    const path = (req.url ?? '/').split('?')[0] ?? '/';
    if (req.method !== 'GET') {
      res.writeHead(405, { allow: 'GET', 'content-type': 'text/plain' }).end('method not allowed');
      return;
    }
    if (path === '/healthz') {
      res.writeHead(200, { 'content-type': 'application/json' }).end('{"ok":true}');
      return;
    }
    if (path === '/api/messages') {
      res.writeHead(200, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store' }).end(JSON.stringify({ data: this.caught.toReversed() }));
      return;
    }
    const one = /^\/messages\/(\d+)(\/html)?$/.exec(path);
    const mail = one === null ? undefined : this.caught.find((m) => m.id === Number(one[1]));
    if (one !== null && mail === undefined) {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('no such message');
      return;
    }
    if (mail !== undefined && one?.[2] !== undefined) {
      // The message's own HTML, in a sandbox: no script runs, nothing loads from elsewhere.
      res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': "sandbox; default-src 'none'; style-src 'unsafe-inline'; img-src data:", 'cache-control': 'no-store' })
        .end(mail.html ?? '<p>(no HTML part)</p>');
      return;
    }
    if (mail === undefined && path !== '/') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found');
      return;
    }
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8', 'content-security-policy': "default-src 'none'; style-src 'unsafe-inline'; frame-src 'self'", 'cache-control': 'no-store' })
      .end(mail === undefined ? this.listPage() : messagePage(mail));
  }

  private listPage(): string {
    const rows = this.caught.toReversed().map((m) => `<tr><td>${escape(m.receivedAt)}</td><td>${escape(m.envelope.to.join(', '))}</td><td><a href="/messages/${m.id}">${escape(m.subject || '(no subject)')}</a></td></tr>`);
    return page('Mail caught', `<h1>Mail caught</h1><p>Every message sent to this SMTP server, newest first (${this.caught.length} kept). Nothing is delivered.</p>`
      + `<table><thead><tr><th>Received</th><th>To</th><th>Subject</th></tr></thead><tbody>${rows.join('') || '<tr><td colspan="3">Nothing yet.</td></tr>'}</tbody></table>`);
  }
}

function messagePage(mail: CaughtMail): string {
  return page(mail.subject, `<p><a href="/">All messages</a></p><h1>${escape(mail.subject || '(no subject)')}</h1>`
    + `<dl><dt>From</dt><dd>${escape(mail.from)}</dd><dt>To</dt><dd>${escape(mail.envelope.to.join(', '))}</dd><dt>Received</dt><dd>${escape(mail.receivedAt)}</dd></dl>`
    + `<h2>HTML</h2><iframe title="The message's HTML part" sandbox src="/messages/${mail.id}/html"></iframe>`
    + `<h2>Plain text</h2><pre>${escape(mail.text)}</pre>`);
}

function page(title: string, body: string): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>${escape(title)}</title><style>`
    + 'body{font-family:system-ui,sans-serif;margin:24px;color:#1f2933}table{border-collapse:collapse;width:100%}td,th{text-align:left;padding:6px 8px;border-bottom:1px solid #d9e2ec}'
    + 'pre{white-space:pre-wrap;background:#f4f5f7;padding:12px}iframe{width:100%;height:480px;border:1px solid #d9e2ec}dt{font-weight:bold}'
    + `</style></head><body>${body}</body></html>`;
}

function addresses(value: AddressObject | AddressObject[] | undefined): string[] {
  if (value === undefined) return [];
  return (Array.isArray(value) ? value : [value]).flatMap((group) => group.value.map((a) => a.address ?? '')).filter((a) => a !== '');
}

function escape(value: string): string {
  return value.replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c);
}
