export { gatewayService, API_VERSION } from './main';
export { ROUTES } from './routes';
export { buildOpenApi } from './openapi';
export type { GatewayConfig } from './config';
