export * from './infra';
export * from './context';
export * from './api-client';
export * from './wait';
export * from './services';
export * from './fixtures';
export * from './webhook-receiver';
export * from './events';
