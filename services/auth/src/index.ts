export { authService } from './service';
export type { AuthConfig } from './config';
