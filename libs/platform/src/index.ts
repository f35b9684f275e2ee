export * from './config';
export * from './logger';
export * from './lifecycle';
export * from './health';
export * from './telemetry';
export * from './clock';
export * from './crypto';
