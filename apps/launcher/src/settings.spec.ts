import { readSettings, serverEnv, SettingsError } from './settings';

const ROOT = '/repo';

describe('readSettings', () => {
  it('provides every server on the default ports, rspamd only if one answers, for start', () => {
    const s = readSettings('start', ROOT, {});
    expect(s.dataDir).toBe('/repo/.data');
    expect(s.servers).toEqual({
      postgres: { kind: 'local', port: 5432 },
      nats: { kind: 'local', port: 14222 },
      rspamd: { kind: 'local', port: 11333, optional: true },
    });
  });

  it('requires rspamd for the tests, and starts one when asked to for start', () => {
    expect(readSettings('test', ROOT, {}).servers.rspamd).toEqual({ kind: 'local', port: 11333, optional: false });
    expect(readSettings('start', ROOT, { MAILROOM_RSPAMD: 'on' }).servers.rspamd).toEqual({ kind: 'local', port: 11333, optional: false });
    expect(readSettings('start', ROOT, { MAILROOM_RSPAMD: 'off' }).servers.rspamd).toEqual({ kind: 'off' });
  });

  it('leaves alone a server given by URL (the tests read their own variables first)', () => {
    const s = readSettings('test', ROOT, { DATABASE_URL: 'postgres://a/b', TEST_DATABASE_URL: 'postgres://t/u', NATS_URL: 'nats://n:1', RSPAMD_URL: 'http://r:1' });
    expect(s.servers).toEqual({
      postgres: { kind: 'configured', url: 'postgres://t/u' },
      nats: { kind: 'configured', url: 'nats://n:1' },
      rspamd: { kind: 'configured', url: 'http://r:1' },
    });
    expect(serverEnv(s)).toEqual({});
  });

  it('takes other ports and a data directory', () => {
    const s = readSettings('start', ROOT, { MAILROOM_POSTGRES_PORT: '15432', MAILROOM_NATS_PORT: '14222', MAILROOM_RSPAMD: 'on', MAILROOM_RSPAMD_PORT: '21333', MAILROOM_DATA_DIR: 'tmp/d' });
    expect(s.dataDir).toBe('/repo/tmp/d');
    expect(serverEnv(s)).toEqual({
      DATABASE_URL: 'postgres://postgres@127.0.0.1:15432/mailroom',
      NATS_URL: 'nats://127.0.0.1:14222',
      NATS_CREDENTIALS_DIR: '/repo/tmp/d/nats/auth',
      RSPAMD_URL: 'http://127.0.0.1:21333',
    });
    expect(readSettings('start', ROOT, { MAILROOM_DATA_DIR: '/abs' }).dataDir).toBe('/abs');
  });

  it('points the tests at the servers through their own variables', () => {
    expect(serverEnv(readSettings('test', ROOT, {}))).toEqual({
      TEST_DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/postgres',
      TEST_NATS_URL: 'nats://127.0.0.1:14222',
      TEST_NATS_AUTH_DIR: '/repo/.data/nats/auth',
      TEST_RSPAMD_URL: 'http://127.0.0.1:11333',
    });
    expect(serverEnv(readSettings('start', ROOT, { RSPAMD_URL: 'off' }))).toMatchObject({ RSPAMD_URL: 'off' });
  });

  it('refuses what it cannot use, in one line naming the variable', () => {
    expect(() => readSettings('start', ROOT, { MAILROOM_POSTGRES_PORT: '70000' })).toThrow(new SettingsError('MAILROOM_POSTGRES_PORT must be a port number (1-65535), not "70000"'));
    expect(() => readSettings('start', ROOT, { MAILROOM_NATS_PORT: 'x' })).toThrow(/MAILROOM_NATS_PORT/);
    expect(() => readSettings('start', ROOT, { MAILROOM_RSPAMD: 'maybe' })).toThrow('MAILROOM_RSPAMD must be on, off or auto, not "maybe"');
    expect(() => readSettings('test', ROOT, { RSPAMD_URL: 'off' })).toThrow(/the tests need rspamd/);
  });
});
