export { mailboxService } from './main';
export type { MailboxConfig } from './config';
export { extractText } from './domain/extract-text';
