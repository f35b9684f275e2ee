/**
 * An OpenID Connect provider (Google, or one of the configuration) through openid-client:
 * its metadata discovered from the issuer once per process (again after a failure), the
 * authorization code flow with PKCE (S256), state and nonce, and the ID token checked by the
 * library (signature against the provider's keys, iss, aud, exp, nonce). The address comes
 * from the ID token, or from the userinfo endpoint when the ID token has none.
 */
import * as oidc from 'openid-client';
import type { AttemptChecks, OAuthProviderPort, ProviderIdentity } from '../domain/ports';
import type { OidcProviderSettings } from '../oauth-config';
import { fetchUntil, providerFailure } from './oauth-http';

export const OIDC_SCOPES = 'openid email profile';

export interface ProviderClientSettings {
  /** Where the provider sends the person back (the web app's page, which posts code and state to the API). */
  redirectUri: string;
  /** The one deadline of a sign-in's calls to the provider. */
  timeoutMs: number;
}

/** The claims this platform reads of an ID token or a userinfo answer. */
interface PersonClaims {
  sub: string;
  email?: unknown;
  email_verified?: unknown;
  name?: unknown;
}

function identityOf(claims: PersonClaims): ProviderIdentity {
  return {
    subject: claims.sub,
    email: typeof claims.email === 'string' ? claims.email : null,
    // Some providers send the claim as a string.
    emailVerified: claims.email_verified === true || claims.email_verified === 'true',
    name: typeof claims.name === 'string' ? claims.name : null,
  };
}

export class OidcProviderClient implements OAuthProviderPort {
  private discovered: Promise<oidc.Configuration> | undefined;
  /** The provider's signing keys, kept across sign-ins (each has its own Configuration, for its deadline). */
  private jwks: ReturnType<typeof oidc.getJwksCache>;
  private readonly insecure: boolean;

  constructor(
    private readonly provider: OidcProviderSettings,
    private readonly settings: ProviderClientSettings,
  ) {
    // http is refused in production by the configuration; elsewhere a provider on loopback is one.
    this.insecure = new URL(provider.issuer).protocol === 'http:';
  }

  async authorizationUrl(checks: AttemptChecks): Promise<string> {
    try {
      const config = await this.discover();
      return oidc
        .buildAuthorizationUrl(config, {
          redirect_uri: this.settings.redirectUri,
          scope: OIDC_SCOPES,
          state: checks.state,
          nonce: checks.nonce,
          code_challenge: await oidc.calculatePKCECodeChallenge(checks.codeVerifier),
          code_challenge_method: 'S256',
        })
        .toString();
    } catch (err) {
      throw providerFailure(this.provider.name, err);
    }
  }

  async identify(callback: { code: string; state: string; iss?: string | undefined }, checks: AttemptChecks): Promise<ProviderIdentity> {
    const deadline = AbortSignal.timeout(this.settings.timeoutMs);
    try {
      const config = this.configuration(await this.discover(), deadline);
      // What the redirect carried, at the redirect URI: the library checks state and iss on it.
      const current = new URL(this.settings.redirectUri);
      current.searchParams.set('code', callback.code);
      current.searchParams.set('state', callback.state);
      if (callback.iss !== undefined) current.searchParams.set('iss', callback.iss);
      const tokens = await oidc.authorizationCodeGrant(config, current, { pkceCodeVerifier: checks.codeVerifier, expectedState: checks.state, expectedNonce: checks.nonce, idTokenExpected: true });
      this.jwks = oidc.getJwksCache(config) ?? this.jwks;
      const claims = tokens.claims();
      if (!claims) throw new Error('the token endpoint gave no ID token');
      if (typeof claims.email === 'string') return identityOf(claims);
      // Providers may keep the address out of the ID token when an access token can read it.
      return identityOf(await oidc.fetchUserInfo(config, tokens.access_token, claims.sub));
    } catch (err) {
      throw providerFailure(this.provider.name, err);
    }
  }

  /** The discovered metadata, once per process; a failed discovery is tried again by the next sign-in. */
  private discover(): Promise<oidc.Configuration> {
    this.discovered ??= oidc
      .discovery(new URL(this.provider.issuer), this.provider.clientId, undefined, oidc.ClientSecretBasic(this.provider.clientSecret), {
        timeout: Math.ceil(this.settings.timeoutMs / 1000),
        ...(this.insecure ? { execute: [oidc.allowInsecureRequests] } : {}),
      })
      .catch((err: unknown) => {
        this.discovered = undefined;
        throw err;
      });
    return this.discovered;
  }

  /** A configuration of the discovered metadata whose requests end at `deadline`. */
  private configuration(discovered: oidc.Configuration, deadline: AbortSignal): oidc.Configuration {
    const config = new oidc.Configuration(discovered.serverMetadata(), this.provider.clientId, undefined, oidc.ClientSecretBasic(this.provider.clientSecret));
    if (this.insecure) oidc.allowInsecureRequests(config);
    config[oidc.customFetch] = fetchUntil(deadline);
    if (this.jwks) oidc.setJwksCache(config, this.jwks);
    return config;
  }
}
