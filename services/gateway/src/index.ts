export { gatewayService, API_VERSION } from './service';
export { ROUTES } from './routes';
export { buildOpenApi } from './openapi';
export type { GatewayConfig } from './config';
