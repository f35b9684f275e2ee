export { sendService } from './service';
export type { SendConfig } from './config';
export { Verp, isVerpAddress } from './domain/verp';
