export { adminService } from './main';
export type { AdminConfig } from './config';
