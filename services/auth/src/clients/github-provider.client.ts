/**
 * GitHub, which speaks plain OAuth 2 (no ID token, no discovery): openid-client's
 * authorization code grant against GitHub's two endpoints (with PKCE and state), then who
 * signed in from its API: /user for the id and name, /user/emails for the address. Only the
 * primary address, and only when GitHub says it is verified, counts as verified; without
 * access to the addresses, the public one of the profile is taken, unverified.
 */
import * as oidc from 'openid-client';
import { z } from 'zod';
import type { AttemptChecks, OAuthProviderPort, ProviderIdentity } from '../domain/ports';
import type { GithubProviderSettings } from '../oauth-config';
import { fetchUntil, providerFailure } from './oauth-http';
import type { ProviderClientSettings } from './oidc-provider.client';

export const GITHUB_SCOPES = 'read:user user:email';

const githubUser = z.object({ id: z.number().int(), login: z.string(), name: z.string().nullish(), email: z.string().nullish() });
const githubEmails = z.array(z.object({ email: z.string(), primary: z.boolean(), verified: z.boolean() }));

/** Who signed in, from GitHub's answers (`emails`: undefined when they could not be read). */
export function githubIdentity(user: z.infer<typeof githubUser>, emails: z.infer<typeof githubEmails> | undefined): ProviderIdentity {
  const primary = emails?.find((e) => e.primary);
  const email = emails ? (primary?.email ?? null) : (user.email ?? null);
  return { subject: String(user.id), email, emailVerified: primary?.verified === true, name: user.name ?? user.login };
}

export class GithubProviderClient implements OAuthProviderPort {
  private readonly server: oidc.ServerMetadata;
  private readonly insecure: boolean;

  constructor(
    private readonly provider: GithubProviderSettings,
    private readonly settings: ProviderClientSettings,
  ) {
    const web = provider.webUrl.replace(/\/+$/, '');
    this.server = { issuer: web, authorization_endpoint: `${web}/login/oauth/authorize`, token_endpoint: `${web}/login/oauth/access_token` };
    this.insecure = new URL(provider.webUrl).protocol === 'http:' || new URL(provider.apiUrl).protocol === 'http:';
  }

  async authorizationUrl(checks: AttemptChecks): Promise<string> {
    const params = {
      redirect_uri: this.settings.redirectUri,
      scope: GITHUB_SCOPES,
      state: checks.state,
      code_challenge: await oidc.calculatePKCECodeChallenge(checks.codeVerifier),
      code_challenge_method: 'S256',
    };
    return oidc.buildAuthorizationUrl(this.configuration(), params).toString();
  }

  async identify(callback: { code: string; state: string }, checks: AttemptChecks): Promise<ProviderIdentity> {
    const config = this.configuration(AbortSignal.timeout(this.settings.timeoutMs));
    try {
      const current = new URL(this.settings.redirectUri);
      current.searchParams.set('code', callback.code);
      current.searchParams.set('state', callback.state);
      const tokens = await oidc.authorizationCodeGrant(config, current, { pkceCodeVerifier: checks.codeVerifier, expectedState: checks.state });
      const [user, emails] = await Promise.all([this.read(config, tokens.access_token, '/user'), this.read(config, tokens.access_token, '/user/emails')]);
      if (user === undefined) throw new Error('GitHub did not answer /user');
      return githubIdentity(githubUser.parse(user), emails === undefined ? undefined : githubEmails.parse(emails));
    } catch (err) {
      throw providerFailure(this.provider.name, err);
    }
  }

  /** A GET of GitHub's API; undefined when it refuses (an address list the token may not read). */
  private async read(config: oidc.Configuration, accessToken: string, path: string): Promise<unknown> {
    const headers = new Headers({ accept: 'application/vnd.github+json', 'x-github-api-version': '2022-11-28', 'user-agent': 'Mailroom' });
    const res = await oidc.fetchProtectedResource(config, accessToken, new URL(`${this.provider.apiUrl.replace(/\/+$/, '')}${path}`), 'GET', null, headers);
    if (res.status === 401 || res.status === 403 || res.status === 404) return undefined;
    if (!res.ok) throw new Error(`GitHub answered ${path} with ${res.status}`);
    return res.json();
  }

  /** `deadline`: when the requests made with it end (none for building a URL). */
  private configuration(deadline?: AbortSignal): oidc.Configuration {
    // GitHub takes the client's credentials in the body.
    const config = new oidc.Configuration(this.server, this.provider.clientId, undefined, oidc.ClientSecretPost(this.provider.clientSecret));
    if (this.insecure) oidc.allowInsecureRequests(config);
    if (deadline) config[oidc.customFetch] = fetchUntil(deadline);
    return config;
  }
}
