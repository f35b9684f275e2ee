export * from './service-module';
export * from './run';
