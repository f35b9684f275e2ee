export { ingestService } from './service';
export type { IngestConfig } from './config';
