export * from './service-module';
export * from './run';
export * from './outbox';
