/** Rotating the access-token signing key while the platform runs. */
import { decodeProtectedHeader } from 'jose';
import { rotateSigningKey } from '@mailroom/auth';
import { ManualClock } from '@mailroom/platform';
import { usePlatform } from './fixtures';

const clock = new ManualClock(new Date());
const { anon: api, env } = usePlatform({ clock, tenant: false });

it('keeps old tokens valid and accepts tokens of the new key', async () => {
  const signup = await api.post('/api/v1/auth/signup', { email: 'rotate@example.com', password: 'correct horse battery' });
  const oldKid = decodeProtectedHeader(signup.body.access_token).kid;

  const newKid = await rotateSigningKey(env);
  expect(newKid).not.toBe(oldKid);
  // Running auth instances reload their key within 30 s; gateways refetch the JWKS on an unknown kid.
  clock.advance(31_000);
  const login = await api.post('/api/v1/auth/login', { email: 'rotate@example.com', password: 'correct horse battery' });
  expect(decodeProtectedHeader(login.body.access_token).kid).toBe(newKid);
  expect((await api.get('/api/v1/user/me', { token: login.body.access_token })).status).toBe(200);
  expect((await api.get('/api/v1/user/me', { token: signup.body.access_token })).status).toBe(200);

  // The old token ends with its lifetime, not with the rotation.
  clock.advance(15 * 60_000);
  expect((await api.get('/api/v1/user/me', { token: signup.body.access_token })).body.error.code).toBe('token_expired');
});
