export { authService } from './main';
export type { AuthConfig } from './config';
export { purgeDeleted, rotateSigningKey } from './cli';
