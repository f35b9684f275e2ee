export { sendService } from './main';
export type { SendConfig } from './config';
export { Verp } from './domain/verp';
