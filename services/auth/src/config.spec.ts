import { ConfigError } from '@mailroom/platform';
import { attemptPolicy, loadConfig } from './config';

const production = { MAILROOM_ENV: 'production', SECRETS_ENCRYPTION_KEY: Buffer.alloc(32, 1).toString('base64'), NATS_CREDENTIALS_DIR: '/creds', SSO_SAML_BASE_URL: 'https://api.example.com' };

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

describe('auth configuration: the environment itself', () => {
  it('reads process.env, which is no plain object (the service starts with it)', () => {
    expect(loadConfig(process.env).OAUTH_PROVIDERS).toEqual([]);
  });
});

describe('auth configuration: outside providers', () => {
  const google = { OAUTH_GOOGLE_CLIENT_ID: 'g-id', OAUTH_GOOGLE_CLIENT_SECRET: 'g-secret' };
  const github = { OAUTH_GITHUB_CLIENT_ID: 'gh-id', OAUTH_GITHUB_CLIENT_SECRET: 'gh-secret' };

  it('has none unless configured, and a 4 s deadline', () => {
    expect(loadConfig({})).toMatchObject({ OAUTH_PROVIDERS: [], OAUTH_TIMEOUT_MS: 4000 });
  });

  it('reads Google and GitHub from their client, and OpenID Connect providers by name', () => {
    const config = loadConfig({
      ...google,
      ...github,
      OAUTH_GITHUB_API_URL: 'http://127.0.0.1:9/api',
      OAUTH_OIDC_PROVIDERS: 'acme, acme-id',
      OAUTH_ACME_ISSUER: 'http://127.0.0.1:4000',
      OAUTH_ACME_CLIENT_ID: 'acme',
      OAUTH_ACME_CLIENT_SECRET: 'acme-secret',
      OAUTH_ACME_REDIRECT_URI: 'https://app.example.com/signed-in',
      OAUTH_ACME_ID_ISSUER: 'https://id.acme.example',
      OAUTH_ACME_ID_CLIENT_ID: 'x',
      OAUTH_ACME_ID_CLIENT_SECRET: 'y',
    });
    expect(config.OAUTH_PROVIDERS).toEqual([
      { kind: 'oidc', name: 'google', issuer: 'https://accounts.google.com', clientId: 'g-id', clientSecret: 'g-secret', redirectUri: undefined },
      { kind: 'github', name: 'github', clientId: 'gh-id', clientSecret: 'gh-secret', redirectUri: undefined, webUrl: 'https://github.com', apiUrl: 'http://127.0.0.1:9/api' },
      { kind: 'oidc', name: 'acme', issuer: 'http://127.0.0.1:4000', clientId: 'acme', clientSecret: 'acme-secret', redirectUri: 'https://app.example.com/signed-in' },
      { kind: 'oidc', name: 'acme-id', issuer: 'https://id.acme.example', clientId: 'x', clientSecret: 'y', redirectUri: undefined },
    ]);
  });

  it('lists every problem at once', () => {
    expect(
      problems({
        OAUTH_GOOGLE_CLIENT_ID: 'g-id',
        OAUTH_OIDC_PROVIDERS: 'acme,Bad_Name,github,acme',
        OAUTH_ACME_CLIENT_ID: 'a',
        OAUTH_TIMEOUT_MS: '20000',
      }),
    ).toEqual([
      expect.stringMatching(/^OAUTH_TIMEOUT_MS: /),
      'OAUTH_GOOGLE_CLIENT_SECRET: is required with OAUTH_GOOGLE_CLIENT_ID',
      'OAUTH_ACME_ISSUER: is required with acme in OAUTH_OIDC_PROVIDERS',
      'OAUTH_ACME_CLIENT_SECRET: is required with acme in OAUTH_OIDC_PROVIDERS',
      expect.stringMatching(/^OAUTH_OIDC_PROVIDERS: Bad_Name: a name is/),
      expect.stringMatching(/^OAUTH_OIDC_PROVIDERS: github: is built in/),
      'OAUTH_OIDC_PROVIDERS: acme: is named twice',
    ]);
  });

  it('takes only https URLs in production', () => {
    const env = { ...production, APP_URL: 'https://app.example.com', ...github, OAUTH_GITHUB_WEB_URL: 'http://github.example', OAUTH_OIDC_PROVIDERS: 'acme', OAUTH_ACME_ISSUER: 'http://id.example', OAUTH_ACME_CLIENT_ID: 'a', OAUTH_ACME_CLIENT_SECRET: 'b' };
    expect(problems(env)).toEqual([expect.stringMatching(/^OAUTH_GITHUB_WEB_URL: must be an https URL in production/), expect.stringMatching(/^OAUTH_ACME_ISSUER: must be an https URL in production/)]);
  });
});

describe('auth configuration: the brute-force guard', () => {
  it('locks after 10 failures for 15 minutes, doubling up to a day, remembering a day; the cap is at least the first lock', () => {
    expect(attemptPolicy(loadConfig({}))).toEqual({ failures: 10, lockMs: 900_000, maxLockMs: 86_400_000, memoryMs: 86_400_000 });
    expect(attemptPolicy(loadConfig({ AUTH_LOCKOUT_FAILURES: '5', AUTH_LOCKOUT_SECONDS: '60', AUTH_LOCKOUT_MAX_SECONDS: '600' }))).toMatchObject({ failures: 5, lockMs: 60_000, maxLockMs: 600_000 });
    expect(problems({ AUTH_LOCKOUT_SECONDS: '3600', AUTH_LOCKOUT_MAX_SECONDS: '60' })).toEqual(['AUTH_LOCKOUT_MAX_SECONDS: must be at least AUTH_LOCKOUT_SECONDS (the first lock)']);
    expect(problems({ AUTH_LOCKOUT_FAILURES: '1' })).toEqual([expect.stringMatching(/^AUTH_LOCKOUT_FAILURES: /)]);
  });
});

describe('auth configuration: SAML', () => {
  it('takes the SP key pair together, as PEM, and an https base URL in production', () => {
    expect(problems({ SSO_SAML_SP_PRIVATE_KEY: 'x' })).toEqual(expect.arrayContaining([expect.stringMatching(/^SSO_SAML_SP_CERTIFICATE: set SSO_SAML_SP_PRIVATE_KEY and SSO_SAML_SP_CERTIFICATE together/), expect.stringMatching(/^SSO_SAML_SP_PRIVATE_KEY: must be a PEM RSA private key/)]));
    expect(problems({ ...production, APP_URL: 'https://app.example.com', SSO_SAML_BASE_URL: 'http://api.example.com' })).toEqual([expect.stringMatching(/^SSO_SAML_BASE_URL: must be set to the API's public https URL in production/)]);
    expect(problems({ ...production, APP_URL: 'https://app.example.com', SSO_SAML_BASE_URL: '' })).toEqual([expect.stringMatching(/^SSO_SAML_BASE_URL: must be set/)]);
    expect(loadConfig({ SSO_SAML_CLOCK_SKEW_SECONDS: '30' }).SSO_SAML_BASE_URL).toBe('http://localhost:8080');
  });
});

