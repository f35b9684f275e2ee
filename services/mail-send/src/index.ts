export { mailSendService } from './main';
export type { MailSendConfig } from './config';
export { Verp } from './domain/verp';
