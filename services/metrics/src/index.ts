export { metricsService } from './main';
export type { MetricsConfig } from './config';
