export { authService } from './main';
export type { AuthConfig } from './config';
export { rotateSigningKey } from './cli';
