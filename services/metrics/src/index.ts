export { metricsService } from './main';
export type { MetricsConfig } from './config';
export { replayRollups } from './replay';
