import * as oidc from 'openid-client';
import { AppError } from '@mailroom/contracts';
import { githubIdentity } from './github-provider.client';
import { providerFailure } from './oauth-http';
import { failureSummary } from './oauth-providers.client';

/** An openid-client error as the library raises it. */
function clientError(code: string | undefined): oidc.ClientError {
  return Object.assign(new oidc.ClientError('failed'), code === undefined ? {} : { code });
}

describe('providerFailure', () => {
  it("is the person's 400 when the code is refused or the answer fails a check", () => {
    expect(providerFailure('acme', clientError('OAUTH_JWT_CLAIM_COMPARISON_FAILED'))).toMatchObject({ code: 'invalid_code', status: 400 });
    expect(providerFailure('acme', clientError('OAUTH_INVALID_RESPONSE'))).toMatchObject({ code: 'invalid_code' });
  });

  it("is a 503 when the provider does not answer, answers nonsense, or the platform's client is refused", () => {
    for (const code of ['OAUTH_TIMEOUT', 'OAUTH_ABORT', 'OAUTH_RESPONSE_IS_NOT_CONFORM', undefined]) {
      expect(providerFailure('acme', clientError(code))).toMatchObject({ code: 'service_unavailable', status: 503 });
    }
    expect(providerFailure('acme', new TypeError('fetch failed'))).toMatchObject({ code: 'service_unavailable' });
  });

  it('keeps an error of ours', () => {
    const ours = new AppError('invalid_state', 'x');
    expect(providerFailure('acme', ours)).toBe(ours);
  });

  it('is logged in words, without the objects it holds', () => {
    const err = Object.assign(new Error('outer', { cause: new TypeError('connect ECONNREFUSED') }), { code: 'OAUTH_X', response: { body: 'tokens' } });
    expect(failureSummary(err)).toEqual({ reason: 'Error: outer; TypeError: connect ECONNREFUSED', code: 'OAUTH_X' });
  });
});

describe('githubIdentity', () => {
  const user = { id: 7, login: 'octo', name: null, email: 'public@example.com' };

  it('takes the primary address, verified only when GitHub says so', () => {
    const emails = [
      { email: 'other@example.com', primary: false, verified: true },
      { email: 'main@example.com', primary: true, verified: false },
    ];
    expect(githubIdentity(user, emails)).toEqual({ subject: '7', email: 'main@example.com', emailVerified: false, name: 'octo' });
    expect(githubIdentity({ ...user, name: 'Octo Cat' }, [{ ...emails[1]!, verified: true }])).toMatchObject({ email: 'main@example.com', emailVerified: true, name: 'Octo Cat' });
  });

  it('takes the public address, unverified, when the addresses cannot be read', () => {
    expect(githubIdentity(user, undefined)).toMatchObject({ email: 'public@example.com', emailVerified: false });
    expect(githubIdentity(user, [])).toMatchObject({ email: null, emailVerified: false });
  });
});
