export { mailIngestService } from './main';
export type { MailIngestConfig } from './config';
