export { authService } from './service';
export type { AuthConfig } from './config';
export { rotateSigningKey } from './cli';
