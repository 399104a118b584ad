import { randomBytes } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG } from '../config';
import type { AppConfig } from '../config';
import type { LinkKind, MailLinks, MessageLink } from '../mail/mail-links';
import { dashboardUrlOf } from '../mail/mail-links';
import { SessionsRepository } from './sessions.repository';
import { tokenHashOf } from './sessions.service';

/**
 * The links of sign-up confirmations and password resets (MailLinks, which the mail processor
 * calls when it sends such a message): a new 32-byte token each time, only its SHA-256 stored,
 * with the link's expiry counted from the send. The token is in the link's fragment
 * (`/dashboard/confirm#token=…`), which browsers never send to a server, so no access log,
 * proxy or Referer header sees it; the page posts it.
 */
@Injectable()
export class AccountLinksService implements MailLinks {
  private readonly dashboardUrl: string;

  constructor(
    @Inject(SessionsRepository) private readonly repo: SessionsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {
    this.dashboardUrl = dashboardUrlOf(config.PUBLIC_BASE_URL);
  }

  async linkFor(kind: LinkKind, messageId: string): Promise<MessageLink | null> {
    const token = randomBytes(32).toString('base64url');
    switch (kind) {
      case 'signup.confirm': {
        const hours = this.config.SIGNUP_CONFIRMATION_TTL_HOURS;
        const ok = await this.repo.setSignupToken(messageId, tokenHashOf(token), new Date(Date.now() + hours * 3_600_000));
        return ok ? { url: `${this.dashboardUrl}/confirm#token=${token}`, validFor: plural(hours, 'hour') } : null;
      }
      case 'password_reset.link': {
        const minutes = this.config.PASSWORD_RESET_TTL_MINUTES;
        const ok = await this.repo.setResetToken(messageId, tokenHashOf(token), new Date(Date.now() + minutes * 60_000));
        return ok ? { url: `${this.dashboardUrl}/reset-password#token=${token}`, validFor: plural(minutes, 'minute') } : null;
      }
    }
  }

  deleteExpired(now: Date): Promise<number> {
    return this.repo.deleteExpiredLinks(now);
  }
}

function plural(n: number, unit: string): string {
  return `${n} ${unit}${n === 1 ? '' : 's'}`;
}
