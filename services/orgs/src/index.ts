export { orgsService } from './main';
export type { OrgsConfig } from './config';
