/**
 * What a service is, to whoever runs it: its name, the schema and migrations it owns,
 * how it reads its configuration and how it starts given its dependencies. The same
 * module runs alone (runService) or beside the others in one process (all-in-one).
 */
import { z } from 'zod';
import type { Kysely } from '@mailroom/db';
import type { Bus } from '@mailroom/messaging';
import { commonEnv, runtimeEnv, type Clock, type Env, type HealthChecks, type Lifecycle, type Logger } from '@mailroom/platform';

export const baseEnv = { ...commonEnv, MAILROOM_ENV: runtimeEnv };
export const baseConfigSchema = z.object(baseEnv);
export type BaseConfig = z.output<typeof baseConfigSchema>;

export interface ServiceDeps<C extends BaseConfig, DB> {
  config: C;
  log: Logger;
  life: Lifecycle;
  bus: Bus;
  db: Kysely<DB>;
  clock: Clock;
}

export interface StartedService {
  /** Readiness checks beyond the database and the bus. */
  checks?: HealthChecks;
  /** Where it listens, e.g. { http: 'http://127.0.0.1:8080' }. */
  endpoints?: Record<string, string>;
}

export interface ServiceModule<C extends BaseConfig = BaseConfig, DB = unknown> {
  name: string;
  /** Absent when the service owns no tables (the gateway). */
  database?: {
    schema: string;
    migrationsDir: string;
    /** Prepared statements run their generic plan, never one made for each execution (see DbOptions.genericPlans). */
    genericPlans?: boolean;
  };
  loadConfig(env: Env): C;
  start(deps: ServiceDeps<C, DB>): Promise<StartedService | void>;
}

/** Erases a module's config and database types for lists of heterogeneous modules. */
export type AnyServiceModule = ServiceModule<any, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
