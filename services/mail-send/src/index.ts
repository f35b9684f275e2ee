export { sendService } from './service';
export type { SendConfig } from './config';
export { Verp } from './domain/verp';
