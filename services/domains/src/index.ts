export { domainsService } from './main';
export type { DomainsConfig } from './config';
