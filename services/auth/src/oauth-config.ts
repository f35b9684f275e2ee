/**
 * The outside providers people may sign in with, read from the environment: Google and
 * GitHub when their client is configured, and any OpenID Connect provider named in
 * OAUTH_OIDC_PROVIDERS with its OAUTH_<NAME>_* variables (NAME: the name upper-cased, `-`
 * as `_`). A client id without its secret (or the reverse), a named provider without its
 * issuer, or an http URL in production is a start-up error, listed with every other.
 */
import { z } from 'zod';
import { oauthProviderName } from '@mailroom/contracts';

export const GOOGLE_ISSUER = 'https://accounts.google.com';
export const GITHUB_WEB_URL = 'https://github.com';
export const GITHUB_API_URL = 'https://api.github.com';

interface ClientSettings {
  name: string;
  clientId: string;
  clientSecret: string;
  /** Where the provider sends the person back; unset: `<APP_URL>/oauth/<name>/callback`. */
  redirectUri: string | undefined;
}

/** An OpenID Connect provider (Google, or one of the configuration), its metadata discovered from the issuer. */
export interface OidcProviderSettings extends ClientSettings {
  kind: 'oidc';
  issuer: string;
}

/** GitHub: plain OAuth 2 (no ID token); who signed in is read from its API. */
export interface GithubProviderSettings extends ClientSettings {
  kind: 'github';
  /** Serves /login/oauth/authorize and /login/oauth/access_token. */
  webUrl: string;
  /** Serves /user and /user/emails. */
  apiUrl: string;
}

export type OAuthProviderSettings = OidcProviderSettings | GithubProviderSettings;

/** The prefix of a provider's variables: `acme-id` -> `OAUTH_ACME_ID_`. */
export function variablePrefix(name: string): string {
  return `OAUTH_${name.toUpperCase().replaceAll('-', '_')}_`;
}

type Env = Record<string, string | undefined>;

/** Reads the providers, adding each problem to `ctx` at the variable it is about. */
function readProviders(env: Env, ctx: z.RefinementCtx): OAuthProviderSettings[] {
  const production = env.MAILROOM_ENV === 'production';
  // Empty counts as unset, as everywhere in the configuration.
  const get = (key: string) => env[key] || undefined;
  const problem = (key: string, message: string) => ctx.addIssue({ code: 'custom', path: [key], message });
  const url = (key: string, fallback?: string): string | undefined => {
    const value = get(key) ?? fallback;
    if (value === undefined) return undefined;
    const parsed = URL.canParse(value) ? new URL(value) : undefined;
    if (!parsed || (parsed.protocol !== 'https:' && parsed.protocol !== 'http:')) problem(key, 'must be an http(s) URL');
    else if (production && parsed.protocol !== 'https:') problem(key, 'must be an https URL in production (codes and tokens travel on it)');
    return value;
  };
  const client = (name: string, required: boolean): ClientSettings | undefined => {
    const prefix = variablePrefix(name);
    const clientId = get(`${prefix}CLIENT_ID`);
    const clientSecret = get(`${prefix}CLIENT_SECRET`);
    const redirectUri = url(`${prefix}REDIRECT_URI`);
    if (!clientId && !clientSecret && !required) return undefined;
    if (!clientId) problem(`${prefix}CLIENT_ID`, `is required with ${required ? `${name} in OAUTH_OIDC_PROVIDERS` : `${prefix}CLIENT_SECRET`}`);
    if (!clientSecret) problem(`${prefix}CLIENT_SECRET`, `is required with ${required ? `${name} in OAUTH_OIDC_PROVIDERS` : `${prefix}CLIENT_ID`}`);
    return clientId && clientSecret ? { name, clientId, clientSecret, redirectUri } : undefined;
  };

  const providers: OAuthProviderSettings[] = [];
  const google = client('google', false);
  if (google) providers.push({ kind: 'oidc', ...google, issuer: GOOGLE_ISSUER });
  const github = client('github', false);
  const webUrl = url('OAUTH_GITHUB_WEB_URL', GITHUB_WEB_URL);
  const apiUrl = url('OAUTH_GITHUB_API_URL', GITHUB_API_URL);
  if (github && webUrl && apiUrl) providers.push({ kind: 'github', ...github, webUrl, apiUrl });

  const names = (get('OAUTH_OIDC_PROVIDERS') ?? '').split(',').map((n) => n.trim()).filter(Boolean);
  for (const [i, name] of names.entries()) {
    if (!oauthProviderName.safeParse(name).success) problem('OAUTH_OIDC_PROVIDERS', `${name}: a name is lower-case letters, digits and -, starting with a letter, at most 32 characters`);
    else if (name === 'google' || name === 'github') problem('OAUTH_OIDC_PROVIDERS', `${name}: is built in; configure it with ${variablePrefix(name)}CLIENT_ID and ${variablePrefix(name)}CLIENT_SECRET`);
    else if (names.indexOf(name) !== i) problem('OAUTH_OIDC_PROVIDERS', `${name}: is named twice`);
    else {
      const issuerKey = `${variablePrefix(name)}ISSUER`;
      const issuer = url(issuerKey);
      if (issuer === undefined) problem(issuerKey, `is required with ${name} in OAUTH_OIDC_PROVIDERS`);
      const settings = client(name, true);
      if (settings && issuer) providers.push({ kind: 'oidc', ...settings, issuer });
    }
  }
  return providers;
}

/** The providers of the environment, as `OAUTH_PROVIDERS` of the configuration. */
export const oauthProvidersSchema = z.record(z.string(), z.string().optional()).transform((env, ctx) => ({ OAUTH_PROVIDERS: readProviders(env, ctx) }));
