export * from './service-module';
export * from './run';
export * from './outbox';
export * from './environment-deletions';
export * from './deleted-environments';
export * from './replication';
