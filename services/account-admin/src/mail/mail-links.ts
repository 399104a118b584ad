import type { AccountMailKind } from '@svc/contracts';

/** The single-use link a confirmation or reset message carries, made when the message is sent. */
export interface MessageLink {
  url: string;
  /** How long it works, in words ("24 hours"). */
  validFor: string;
}

/**
 * Makes the link of a message (sessions implements it: the sign-up requests and password
 * resets are its tables). Each call makes a new token and replaces the one before, so only the
 * link of the last attempt works; `null`: the message has nothing to link any more (a newer
 * sign-up of the address replaced it, or it was confirmed or used), so it is not sent.
 */
export interface MailLinks {
  linkFor(kind: LinkKind, messageId: string): Promise<MessageLink | null>;
  /** Deletes the links (and their sign-up requests) that expired before `now`; answers how many. */
  deleteExpired(now: Date): Promise<number>;
}

/** The kinds of message that carry a link. */
export type LinkKind = Extract<AccountMailKind, 'signup.confirm' | 'password_reset.link'>;

/** Nest injection token of the MailLinks implementation. */
export const MAIL_LINKS = Symbol('MAIL_LINKS');

/** The dashboard's public address: the public base URL (the gateway's origin) and `/dashboard`. */
export function dashboardUrlOf(publicBaseUrl: string): string {
  return `${publicBaseUrl.replace(/\/+$/, '')}/dashboard`;
}
