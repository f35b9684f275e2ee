import { ConfigError } from '@mailroom/platform';
import { loadConfig } from './config';

const production = { MAILROOM_ENV: 'production', SECRETS_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64'), NATS_CREDENTIALS_DIR: '/creds' };

function problems(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
  return [];
}

describe('auth configuration: APP_URL', () => {
  it('defaults to the local gateway outside production, and takes any http(s) URL', () => {
    expect(loadConfig({}).APP_URL).toBe('http://localhost:8080');
    expect(loadConfig({ APP_URL: 'https://app.example.com/console' }).APP_URL).toBe('https://app.example.com/console');
    expect(problems({ APP_URL: 'ftp://app.example.com' })).toEqual([expect.stringMatching(/^APP_URL: /)]);
    expect(problems({ APP_URL: 'not a url' })).toEqual([expect.stringMatching(/^APP_URL: /)]);
  });

  it('must be https in production: the links carry tokens', () => {
    expect(problems(production)).toEqual(['APP_URL: must be an https URL in production (verification and reset links carry tokens)']);
    expect(problems({ ...production, APP_URL: 'http://app.example.com' })).toHaveLength(1);
    expect(problems({ ...production, APP_URL: 'https://app.example.com' })).toEqual([]);
  });
});
