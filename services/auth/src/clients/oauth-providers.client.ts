/** The configured outside providers by name, as the auth domain's OAuthProviderRegistry. */
import { AppError } from '@mailroom/contracts';
import type { Logger } from '@mailroom/platform';
import type { OAuthProviderPort, OAuthProviderRegistry } from '../domain/ports';
import type { OAuthProviderSettings } from '../oauth-config';
import { GithubProviderClient } from './github-provider.client';
import { OidcProviderClient } from './oidc-provider.client';

/** Where a provider sends the person back unless configured: the web app's page for it. */
export function defaultRedirectUri(appUrl: string, provider: string): string {
  return `${appUrl.replace(/\/+$/, '')}/oauth/${provider}/callback`;
}

/**
 * What went wrong, in words: the library's errors hold the provider's responses, which are
 * not logged (a token endpoint's answer may carry tokens).
 */
export function failureSummary(err: unknown): { reason: string; code?: string } {
  if (!(err instanceof Error)) return { reason: String(err) };
  const code = (err as { code?: unknown }).code;
  const inner = err.cause instanceof Error ? `; ${err.cause.name}: ${err.cause.message}` : '';
  return { reason: `${err.name}: ${err.message}${inner}`, ...(typeof code === 'string' ? { code } : {}) };
}

/** The provider's failures are the operator's to see (the person is told only to try later). */
function logged(name: string, port: OAuthProviderPort, log: Logger): OAuthProviderPort {
  const watch = <T>(work: Promise<T>): Promise<T> =>
    work.catch((err: unknown) => {
      if (err instanceof AppError && err.code === 'service_unavailable') log.warn({ provider: name, ...failureSummary(err.cause) }, 'OAuth provider failed');
      throw err;
    });
  return {
    authorizationUrl: (checks) => watch(port.authorizationUrl(checks)),
    identify: (callback, checks) => watch(port.identify(callback, checks)),
  };
}

export function oauthProviders(providers: readonly OAuthProviderSettings[], opts: { appUrl: string; timeoutMs: number; log: Logger }): OAuthProviderRegistry {
  return new Map(
    providers.map((p): [string, OAuthProviderPort] => {
      const settings = { redirectUri: p.redirectUri ?? defaultRedirectUri(opts.appUrl, p.name), timeoutMs: opts.timeoutMs };
      return [p.name, logged(p.name, p.kind === 'github' ? new GithubProviderClient(p, settings) : new OidcProviderClient(p, settings), opts.log)];
    }),
  );
}
