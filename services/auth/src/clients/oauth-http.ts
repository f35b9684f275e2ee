/**
 * What the outside providers' clients share: one deadline over all the calls of a sign-in
 * (openid-client's own timeout is per request), and the translation of openid-client's
 * errors into ours. A provider that refuses the code, or whose answer fails a check (state,
 * iss, aud, exp, nonce, signature), is the client's 400: the attempt is spent, start again.
 * A provider that does not answer, answers nonsense, or refuses this platform's own client
 * credentials is a 503 (and the operator's problem, logged by the caller).
 */
import * as oidc from 'openid-client';
import { AppError } from '@mailroom/contracts';

/** A fetch for openid-client whose every request also ends at `deadline`. */
export function fetchUntil(deadline: AbortSignal): oidc.CustomFetch {
  return (url, options) => fetch(url, { ...options, signal: options.signal ? AbortSignal.any([options.signal, deadline]) : deadline });
}

/** openid-client's codes that say the provider (or its configuration here) failed, not the person's callback. */
const PROVIDER_FAULTS = new Set([
  'OAUTH_TIMEOUT',
  'OAUTH_ABORT',
  'OAUTH_RESPONSE_IS_NOT_CONFORM',
  'OAUTH_RESPONSE_IS_NOT_JSON',
  'OAUTH_INVALID_SERVER_METADATA',
  'OAUTH_MISSING_SERVER_METADATA',
  'OAUTH_HTTP_REQUEST_FORBIDDEN',
  'OAUTH_REQUEST_PROTOCOL_FORBIDDEN',
  'OAUTH_UNSUPPORTED_OPERATION',
]);

/** Token endpoint errors that name this platform's client, not the code. */
const CLIENT_REFUSED = new Set(['invalid_client', 'unauthorized_client']);

/** Whether the failure is the provider's (or its configuration's): a 503 rather than the client's 400. */
export function isProviderFault(err: unknown): boolean {
  if (err instanceof oidc.ResponseBodyError) return err.status >= 500 || CLIENT_REFUSED.has(err.error);
  if (err instanceof oidc.AuthorizationResponseError) return false;
  if (err instanceof oidc.ClientError) return err.code === undefined || PROVIDER_FAULTS.has(err.code);
  // fetch's own failures (no route, refused, reset) and anything unforeseen.
  return !(err instanceof AppError);
}

/** Our error for a failed exchange with `provider`; an AppError raised on the way is kept. */
export function providerFailure(provider: string, err: unknown): AppError {
  if (err instanceof AppError) return err;
  if (isProviderFault(err)) {
    return new AppError('service_unavailable', `${provider} could not be reached or did not answer as expected; try again later`, { cause: err });
  }
  const reason = err instanceof oidc.ResponseBodyError || err instanceof oidc.AuthorizationResponseError ? err.error : err instanceof Error ? err.message : 'refused';
  return new AppError('invalid_code', `${provider} did not accept this sign-in (${reason}): the code is wrong, used or expired, or the answer failed a check; start again`, { cause: err });
}
