export { orgsService } from './service';
export type { OrgsConfig } from './config';
