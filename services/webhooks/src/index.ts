export { webhooksService, PER_ENDPOINT_IN_FLIGHT } from './main';
export { FAILURE_THRESHOLD } from './domain/endpoint-health';
export type { WebhooksConfig } from './config';
export { WebhookHttpClient, type PostResult } from './delivery/http-client';
export { IpPolicy } from './domain/ip-policy';
export { sign } from './domain/signature';
