/**
 * What the launcher brings up, read from the environment: for each server, whether the user
 * points at their own (its URL variable is set), or the launcher provides one on a local
 * port (reusing whatever already answers there, else starting its own under the data
 * directory). rspamd is optional for `start` and required for `test`.
 */
import { isAbsolute, join } from 'node:path';

export type Mode = 'start' | 'test';
export type ServerName = 'postgres' | 'nats' | 'rspamd';

export type Provision =
  /** The user's own server, given by URL: the launcher does not touch it. */
  | { kind: 'configured'; url: string }
  /**
   * A server on 127.0.0.1:<port>: the one that answers there, or else one the launcher
   * starts; when `optional`, none (as `off`) instead of starting one.
   */
  | { kind: 'local'; port: number; optional?: boolean }
  /** No spam scanning: messages are stored with the verdict `unscanned`. */
  | { kind: 'off' };

export interface Settings {
  mode: Mode;
  root: string;
  /** Where started servers keep their data, logs and pid files (`.data/` by default). */
  dataDir: string;
  servers: Record<ServerName, Provision>;
}

// NATS is the launcher's own, with its operator: not on 4222, where a machine's anonymous one often is.
const DEFAULT_PORTS: Record<ServerName, number> = { postgres: 5432, nats: 14222, rspamd: 11333 };
const PORT_VARIABLES: Record<ServerName, string> = { postgres: 'MAILROOM_POSTGRES_PORT', nats: 'MAILROOM_NATS_PORT', rspamd: 'MAILROOM_RSPAMD_PORT' };

export class SettingsError extends Error {}

function port(env: NodeJS.ProcessEnv, name: ServerName): number {
  const raw = env[PORT_VARIABLES[name]];
  if (raw === undefined || raw === '') return DEFAULT_PORTS[name];
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 65535) throw new SettingsError(`${PORT_VARIABLES[name]} must be a port number (1-65535), not "${raw}"`);
  return n;
}

type Switch = 'on' | 'off' | 'auto';
const SWITCH = new Map<string, Switch>([
  ...['on', 'true', '1'].map((k): [string, Switch] => [k, 'on']),
  ...['off', 'false', '0'].map((k): [string, Switch] => [k, 'off']),
  ...['auto', ''].map((k): [string, Switch] => [k, 'auto']),
]);

function onOffAuto(env: NodeJS.ProcessEnv, name: string): Switch {
  const value = SWITCH.get((env[name] ?? '').toLowerCase());
  if (value) return value;
  throw new SettingsError(`${name} must be on, off or auto, not "${env[name]}"`);
}

export function readSettings(mode: Mode, root: string, env: NodeJS.ProcessEnv): Settings {
  const dataDir = env.MAILROOM_DATA_DIR ? (isAbsolute(env.MAILROOM_DATA_DIR) ? env.MAILROOM_DATA_DIR : join(root, env.MAILROOM_DATA_DIR)) : join(root, '.data');
  // Tests honour their own variables first, as libs/testing does.
  const url = (name: string) => (mode === 'test' ? (env[`TEST_${name}`] ?? env[name]) : env[name]) || undefined;
  const given = (name: ServerName, variable: string): Provision => {
    const u = url(variable);
    return u ? { kind: 'configured', url: u } : { kind: 'local', port: port(env, name) };
  };
  const rspamd = ((): Provision => {
    const u = url('RSPAMD_URL');
    if (u === 'off' && mode === 'test') throw new SettingsError('the tests need rspamd (the spam tests scan GTUBE): unset RSPAMD_URL=off, or point it at a running rspamd');
    if (u === 'off') return { kind: 'off' };
    if (u) return { kind: 'configured', url: u };
    const wanted = mode === 'test' ? 'on' : onOffAuto(env, 'MAILROOM_RSPAMD');
    if (wanted === 'off') return { kind: 'off' };
    // auto: the machine's rspamd when one answers, else none; on: else the launcher starts one.
    return { kind: 'local', port: port(env, 'rspamd'), optional: wanted === 'auto' };
  })();
  return { mode, root, dataDir, servers: { postgres: given('postgres', 'DATABASE_URL'), nats: given('nats', 'NATS_URL'), rspamd } };
}

/** The variables the platform (start) or the tests read, for servers on local ports. */
export function serverEnv(settings: Settings): Record<string, string> {
  const out: Record<string, string> = {};
  const { postgres, nats, rspamd } = settings.servers;
  const test = settings.mode === 'test';
  if (postgres.kind === 'local') out[test ? 'TEST_DATABASE_URL' : 'DATABASE_URL'] = `postgres://postgres@127.0.0.1:${postgres.port}/${test ? 'postgres' : 'mailroom'}`;
  if (nats.kind === 'local') {
    out[test ? 'TEST_NATS_URL' : 'NATS_URL'] = `nats://127.0.0.1:${nats.port}`;
    out[test ? 'TEST_NATS_AUTH_DIR' : 'NATS_CREDENTIALS_DIR'] = join(settings.dataDir, 'nats', 'auth');
  }
  if (rspamd.kind === 'local') out[test ? 'TEST_RSPAMD_URL' : 'RSPAMD_URL'] = `http://127.0.0.1:${rspamd.port}`;
  if (rspamd.kind === 'off') out.RSPAMD_URL = 'off';
  return out;
}
