/**
 * A stand-in OpenID provider for sso.int.spec.ts, on loopback, that can misbehave the ways a
 * real one (oidc-provider) will not: its ID tokens name another audience or another nonce,
 * its key set is empty. Discovery, keys, an authorization endpoint that approves at once
 * (redirecting back with a code) and a token endpoint answering an RS256 ID token signed
 * with node:crypto. The happy paths are oidc-provider's (oauth-providers.ts).
 */
import { generateKeyPairSync, randomBytes, sign } from 'node:crypto';
import { createServer, type Server } from 'node:http';

export interface Misbehaviour {
  /** The ID token's aud instead of the client's id. */
  audience?: string;
  /** The ID token's nonce instead of the authorization request's. */
  nonce?: string;
  /** Publish an empty key set. */
  noKeys?: boolean;
}

export interface StandInProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** Who the next authorization signs in. */
  person: { sub: string; email: string; email_verified: boolean };
  misbehave: Misbehaviour;
  close(): Promise<void>;
}

const b64url = (v: object | Buffer) => (Buffer.isBuffer(v) ? v : Buffer.from(JSON.stringify(v))).toString('base64url');

export async function startStandInProvider(): Promise<StandInProvider> {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = { ...publicKey.export({ format: 'jwk' }), kid: 'stand-in', use: 'sig', alg: 'RS256' };
  const codes = new Map<string, { nonce: string; clientId: string }>();
  const server: Server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const issuer = `http://127.0.0.1:${(server.address() as { port: number }).port}`;
  const self: StandInProvider = {
    issuer,
    clientId: 'mailroom-stand-in',
    clientSecret: randomBytes(16).toString('hex'),
    person: { sub: 'p-1', email: 'p@example.com', email_verified: true },
    misbehave: {},
    close: () =>
      new Promise((resolve, reject) => {
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
  const json = (res: import('node:http').ServerResponse, value: unknown) => res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(value));
  server.on('request', (req, res) => {
    const url = new URL(req.url ?? '/', issuer);
    if (url.pathname === '/.well-known/openid-configuration') {
      return json(res, {
        issuer,
        authorization_endpoint: `${issuer}/authorize`,
        token_endpoint: `${issuer}/token`,
        jwks_uri: `${issuer}/jwks`,
        response_types_supported: ['code'],
        subject_types_supported: ['public'],
        id_token_signing_alg_values_supported: ['RS256'],
      });
    }
    if (url.pathname === '/jwks') return json(res, { keys: self.misbehave.noKeys ? [] : [jwk] });
    if (url.pathname === '/authorize') {
      const code = randomBytes(8).toString('hex');
      codes.set(code, { nonce: url.searchParams.get('nonce') ?? '', clientId: url.searchParams.get('client_id') ?? '' });
      const back = new URL(url.searchParams.get('redirect_uri') ?? '');
      back.searchParams.set('code', code);
      back.searchParams.set('state', url.searchParams.get('state') ?? '');
      return void res.writeHead(302, { location: back.href }).end();
    }
    if (url.pathname === '/token' && req.method === 'POST') {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString('utf8')));
      req.on('end', () => {
        const grant = codes.get(new URLSearchParams(body).get('code') ?? '');
        if (!grant) return void res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'invalid_grant' }));
        const now = Math.floor(Date.now() / 1000);
        const claims = { iss: issuer, sub: self.person.sub, aud: self.misbehave.audience ?? grant.clientId, iat: now, exp: now + 300, nonce: self.misbehave.nonce ?? grant.nonce, email: self.person.email, email_verified: self.person.email_verified };
        const signingInput = `${b64url({ alg: 'RS256', typ: 'JWT', kid: 'stand-in' })}.${b64url(claims)}`;
        const signature = sign('sha256', Buffer.from(signingInput), privateKey).toString('base64url');
        json(res, { access_token: randomBytes(8).toString('hex'), token_type: 'Bearer', expires_in: 300, id_token: `${signingInput}.${signature}` });
      });
      return;
    }
    res.writeHead(404).end();
  });
  return self;
}
