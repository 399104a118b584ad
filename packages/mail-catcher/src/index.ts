export { MailCatcher } from './mail-catcher';
export type { CaughtMail, MailCatcherOptions } from './mail-catcher';
