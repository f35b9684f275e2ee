export { gatewayService } from './main';
export { ROUTES } from './routes';
export { API_VERSION, buildOpenApi } from './openapi';
export type { GatewayConfig } from './config';
