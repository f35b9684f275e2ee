export { mailboxService } from './service';
export type { MailboxConfig } from './config';
export { extractText } from './domain/extract-text';
