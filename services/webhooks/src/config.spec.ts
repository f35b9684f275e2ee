import { ConfigError, DEVELOPMENT_ENCRYPTION_KEY } from '@mailroom/platform';
import { loadConfig } from './config';

describe('webhooks configuration', () => {
  it('defaults to the spec: 30 s deadline, the issue schedule, public addresses only', () => {
    const c = loadConfig({});
    expect(c.WEBHOOK_TIMEOUT_MS).toBe(30_000);
    expect(c.retrySchedule).toEqual([5, 300, 1800, 7200, 18000, 36000, 50400, 72000, 86400]);
    expect(c.allowedCidrs).toEqual([]);
    expect(c.WEBHOOK_MAX_IN_FLIGHT).toBe(256);
  });

  it('takes a compressed schedule and allowed ranges', () => {
    const c = loadConfig({ WEBHOOK_RETRY_SCHEDULE: '1,2', WEBHOOK_ALLOWED_CIDRS: '127.0.0.1/32, ::1' });
    expect(c.retrySchedule).toEqual([1, 2]);
    expect(c.allowedCidrs).toEqual(['127.0.0.1/32', '::1']);
  });

  it('lists every problem at once', () => {
    let err: unknown;
    try {
      loadConfig({ MAILROOM_ENV: 'production', WEBHOOK_ALLOWED_CIDRS: '10.0.0.0/99', WEBHOOK_RETRY_SCHEDULE: '5,x', WEBHOOK_TIMEOUT_MS: '60000' });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ConfigError);
    const text = (err as ConfigError).problems.join('\n');
    for (const name of ['SECRETS_ENCRYPTION_KEY', 'WEBHOOK_ALLOWED_CIDRS', 'WEBHOOK_RETRY_SCHEDULE', 'WEBHOOK_TIMEOUT_MS']) expect(text).toContain(name);
  });

  it('refuses the development secrets key in production: it is in the repository', () => {
    expect(() => loadConfig({ MAILROOM_ENV: 'production', SECRETS_ENCRYPTION_KEY: DEVELOPMENT_ENCRYPTION_KEY })).toThrow(/SECRETS_ENCRYPTION_KEY.*development key/);
    expect(loadConfig({ SECRETS_ENCRYPTION_KEY: DEVELOPMENT_ENCRYPTION_KEY }).SECRETS_ENCRYPTION_KEY).toBe(DEVELOPMENT_ENCRYPTION_KEY);
  });
});
