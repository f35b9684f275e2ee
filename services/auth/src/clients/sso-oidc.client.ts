/**
 * An organization's OpenID provider, through openid-client, over the guarded fetch
 * (sso-http.ts). `probe` discovers the issuer by hand to say precisely what is wrong
 * (unreachable, a non-public address, not an OpenID issuer, another issuer named, no keys);
 * the login is the authorization code flow with PKCE (S256), state and nonce, the ID token
 * checked by the library (signature against the provider's keys, iss, aud, exp, nonce).
 */
import * as oidc from 'openid-client';
import { AppError, type SsoTestProblem } from '@mailroom/contracts';
import type { AttemptChecks } from '../domain/ports';
import type { SsoProbe, SsoProviderPort, SsoProviderSettings } from '../domain/sso-ports';
import { providerFailure } from './oauth-http';
import { isBlocked, type GuardedFetch } from './sso-http';

const PROVIDER = 'the identity provider';

function problem(kind: SsoTestProblem, message: string, found: Partial<oidc.ServerMetadata> = {}): SsoProbe {
  return { ok: false, problem: kind, message, metadata: found, keys: 0 };
}

function why(err: unknown): string {
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  const code = typeof cause === 'object' && cause !== null && 'code' in cause ? String((cause as { code: unknown }).code) : undefined;
  return code ?? (cause instanceof Error ? cause.message : String(cause));
}

export class SsoOidcClient implements SsoProviderPort {
  constructor(
    private readonly fetch: GuardedFetch,
    /** Where the provider sends the person back (the web app's SSO page, which posts code and state to the API). */
    private readonly redirectUri: string,
  ) {}

  async probe(issuer: string): Promise<SsoProbe> {
    const where = `${issuer.replace(/\/+$/, '')}/.well-known/openid-configuration`;
    let res: Response;
    try {
      res = await this.fetch(where, { headers: { accept: 'application/json' } });
    } catch (err) {
      if (isBlocked(err)) return problem('blocked_destination', `${issuer} resolves to a private, loopback or otherwise non-public address, which this platform does not call`);
      return problem('unreachable', `${where} could not be reached (${why(err)})`);
    }
    if (res.status !== 200) return problem('not_openid_issuer', `${where} answered HTTP ${res.status}, not the OpenID provider metadata`);
    let doc: Record<string, unknown>;
    try {
      doc = (await res.json()) as Record<string, unknown>;
      if (typeof doc !== 'object' || doc === null || Array.isArray(doc)) throw new Error('not an object');
    } catch {
      return problem('not_openid_issuer', `${where} did not answer a JSON object (OpenID provider metadata)`);
    }
    const metadata = doc as unknown as oidc.ServerMetadata;
    for (const field of ['issuer', 'authorization_endpoint', 'token_endpoint'] as const) {
      if (typeof doc[field] !== 'string') return problem('not_openid_issuer', `the metadata at ${where} has no ${field}: not an OpenID provider`, metadata);
    }
    if (doc.issuer !== issuer) return problem('issuer_mismatch', `the metadata at ${where} names the issuer ${String(doc.issuer)}, not ${issuer}: configure the issuer exactly as the provider names it`, metadata);
    if (typeof doc.jwks_uri !== 'string') return problem('no_jwks', `the metadata at ${where} has no jwks_uri: ID tokens could not be checked`, metadata);
    let keys: unknown;
    try {
      const jwks = await this.fetch(doc.jwks_uri, { headers: { accept: 'application/json' } });
      if (jwks.status !== 200) return problem('no_jwks', `the provider's keys (${doc.jwks_uri}) answered HTTP ${jwks.status}`, metadata);
      keys = ((await jwks.json()) as { keys?: unknown }).keys;
    } catch (err) {
      if (isBlocked(err)) return problem('blocked_destination', `the provider's keys (${doc.jwks_uri}) are at a non-public address, which this platform does not call`, metadata);
      return problem('no_jwks', `the provider's keys (${doc.jwks_uri}) could not be read (${why(err)})`, metadata);
    }
    const signing = Array.isArray(keys) ? keys.filter((k: { use?: unknown; kty?: unknown }) => typeof k?.kty === 'string' && k.use !== 'enc') : [];
    if (signing.length === 0) return problem('no_jwks', `the provider's key set (${doc.jwks_uri}) has no signing key`, metadata);
    return { ok: true, problem: null, message: `${issuer} is an OpenID provider with ${signing.length} signing key(s)`, metadata, keys: signing.length };
  }

  async authorizationUrl(s: SsoProviderSettings, checks: AttemptChecks): Promise<string> {
    const config = await this.configuration(s);
    return oidc
      .buildAuthorizationUrl(config, {
        redirect_uri: this.redirectUri,
        scope: s.scopes.join(' '),
        state: checks.state,
        nonce: checks.nonce,
        code_challenge: await oidc.calculatePKCECodeChallenge(checks.codeVerifier),
        code_challenge_method: 'S256',
      })
      .toString();
  }

  async identify(s: SsoProviderSettings, callback: { code: string; state: string; iss?: string | undefined }, checks: AttemptChecks): Promise<Record<string, unknown>> {
    const config = await this.configuration(s);
    try {
      // What the redirect carried, at the redirect URI: the library checks state and iss on it.
      const current = new URL(this.redirectUri);
      current.searchParams.set('code', callback.code);
      current.searchParams.set('state', callback.state);
      if (callback.iss !== undefined) current.searchParams.set('iss', callback.iss);
      const tokens = await oidc.authorizationCodeGrant(config, current, { pkceCodeVerifier: checks.codeVerifier, expectedState: checks.state, expectedNonce: checks.nonce, idTokenExpected: true });
      const claims = tokens.claims();
      if (!claims) throw new Error('the token endpoint gave no ID token');
      if (claims[s.emailClaim] !== undefined || !config.serverMetadata().userinfo_endpoint) return { ...claims };
      // Providers may keep the address out of the ID token when an access token can read it.
      return { ...(await oidc.fetchUserInfo(config, tokens.access_token, claims.sub)), sub: claims.sub };
    } catch (err) {
      throw providerFailure(PROVIDER, err);
    }
  }

  /** The provider's metadata, discovered now (a provider that fails it: 503). */
  private async configuration(s: SsoProviderSettings): Promise<oidc.Configuration> {
    const found = await this.probe(s.issuer);
    if (!found.ok) throw new AppError('service_unavailable', `the organization's identity provider is not usable now (${found.problem}): ${found.message}`);
    const config = new oidc.Configuration(found.metadata as oidc.ServerMetadata, s.clientId, undefined, oidc.ClientSecretBasic(s.clientSecret));
    // http is refused for issuers in production when the configuration is saved; elsewhere a provider on loopback is one.
    if (new URL(s.issuer).protocol === 'http:') oidc.allowInsecureRequests(config);
    config[oidc.customFetch] = (url, options) => this.fetch(url, options as RequestInit);
    return config;
  }
}
