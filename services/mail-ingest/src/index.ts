export { ingestService } from './main';
export type { IngestConfig } from './config';
