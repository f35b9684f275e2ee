/**
 * Outside providers for oauth.int.spec.ts, on loopback: a real OpenID provider (oidc-provider,
 * its development login and consent pages), a stand-in of GitHub's three endpoints (authorize,
 * access_token, and the API's /user and /user/emails), and a person's browser going through
 * the redirects and forms with fetch until the provider sends it back to the web app.
 */
import { createHash, generateKeyPairSync, randomBytes } from 'node:crypto';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import Provider from 'oidc-provider';

/** Who a login at the OpenID provider is, by the login typed in its form. */
export interface OidcPerson {
  email?: string;
  email_verified?: boolean;
  name?: string;
}

/** Runs `make` without the warning oidc-provider prints for its development pages, which these tests use on purpose. */
function quietly<T>(make: () => T): T {
  const warn = jest.spyOn(console, 'warn').mockImplementation(() => undefined);
  try {
    return make();
  } finally {
    warn.mockRestore();
  }
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  return `http://127.0.0.1:${port}`;
}

function close(server: Server): Promise<void> {
  server.closeAllConnections();
  return new Promise((resolve, reject) => server.close((err) => (err ? reject(err) : resolve())));
}

export interface TestOidcProvider {
  issuer: string;
  clientId: string;
  clientSecret: string;
  /** People by login; a login not here has no address. */
  people: Map<string, OidcPerson>;
  close(): Promise<void>;
}

/** oidc-provider with one client (our platform), whose people the test names. */
export async function startOidcProvider(redirectUris: string[]): Promise<TestOidcProvider> {
  const people = new Map<string, OidcPerson>();
  const server = createServer();
  const issuer = await listen(server);
  const clientId = 'mailroom';
  const clientSecret = randomBytes(24).toString('base64url');
  const minutes = (n: number) => () => n * 60;
  const signingKey = generateKeyPairSync('rsa', { modulusLength: 2048 }).privateKey.export({ format: 'jwk' });
  const provider = quietly(
    () =>
      new Provider(issuer, {
        clients: [{ client_id: clientId, client_secret: clientSecret, redirect_uris: redirectUris, grant_types: ['authorization_code'], response_types: ['code'] }],
        claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name'] },
        findAccount: (_ctx, id) => ({ accountId: id, claims: () => ({ sub: id, ...people.get(id) }) }),
        cookies: { keys: [randomBytes(16).toString('hex')] },
        jwks: { keys: [{ ...signingKey, kid: 'test-key', use: 'sig', alg: 'RS256' }] },
        ttl: { Interaction: minutes(10), Session: minutes(60), Grant: minutes(60), AccessToken: minutes(10), IdToken: minutes(10), AuthorizationCode: minutes(1) },
        // Its own login and consent pages: the simplest real flow a browser can go through.
        features: { devInteractions: { enabled: true } },
      }),
  );
  server.on('request', provider.callback());
  return { issuer, clientId, clientSecret, people, close: () => close(server) };
}

/** A GitHub account of the stand-in: its profile and its addresses. */
export interface GithubPerson {
  id: number;
  login: string;
  name: string | null;
  emails: { email: string; primary: boolean; verified: boolean }[];
}

export interface GithubStandIn {
  /** OAUTH_GITHUB_WEB_URL and OAUTH_GITHUB_API_URL. */
  webUrl: string;
  apiUrl: string;
  clientId: string;
  clientSecret: string;
  /** Who approves the next authorization (the person at GitHub's consent page). */
  signedIn: GithubPerson | undefined;
  close(): Promise<void>;
}

async function body(req: IncomingMessage): Promise<URLSearchParams> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return new URLSearchParams(Buffer.concat(chunks).toString('utf8'));
}

/**
 * GitHub as its OAuth app documentation describes it: authorize redirects back with a code
 * (the person approves at once), access_token redeems it once, with the client's secret and
 * the PKCE verifier, answering JSON (errors too, with 200); the API reads the bearer token.
 */
export async function startGithubStandIn(): Promise<GithubStandIn> {
  const codes = new Map<string, { person: GithubPerson; challenge: string; redirectUri: string }>();
  const tokens = new Map<string, GithubPerson>();
  const server = createServer();
  const webUrl = await listen(server);
  const self: GithubStandIn = { webUrl, apiUrl: `${webUrl}/api`, clientId: 'gh-client', clientSecret: randomBytes(24).toString('base64url'), signedIn: undefined, close: () => close(server) };
  const json = (res: import('node:http').ServerResponse, status: number, value: unknown) => res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(value));
  server.on('request', (req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', webUrl);
      if (req.method === 'GET' && url.pathname === '/login/oauth/authorize') {
        const q = url.searchParams;
        if (q.get('client_id') !== self.clientId || !self.signedIn || q.get('code_challenge_method') !== 'S256') return void res.writeHead(400).end();
        const code = randomBytes(10).toString('hex');
        codes.set(code, { person: self.signedIn, challenge: q.get('code_challenge') ?? '', redirectUri: q.get('redirect_uri') ?? '' });
        const back = new URL(q.get('redirect_uri') ?? '');
        back.searchParams.set('code', code);
        back.searchParams.set('state', q.get('state') ?? '');
        return void res.writeHead(302, { location: back.href }).end();
      }
      if (req.method === 'POST' && url.pathname === '/login/oauth/access_token') {
        const form = await body(req);
        if (form.get('client_id') !== self.clientId || form.get('client_secret') !== self.clientSecret) return json(res, 200, { error: 'incorrect_client_credentials' });
        const grant = codes.get(form.get('code') ?? '');
        codes.delete(form.get('code') ?? '');
        const verifier = form.get('code_verifier') ?? '';
        if (!grant || grant.redirectUri !== form.get('redirect_uri') || createHash('sha256').update(verifier).digest('base64url') !== grant.challenge) return json(res, 200, { error: 'bad_verification_code' });
        const token = `gho_${randomBytes(16).toString('hex')}`;
        tokens.set(token, grant.person);
        return json(res, 200, { access_token: token, token_type: 'bearer', scope: 'read:user,user:email' });
      }
      const person = tokens.get((req.headers.authorization ?? '').replace(/^Bearer /i, ''));
      if (req.method === 'GET' && url.pathname.startsWith('/api/') && !person) return json(res, 401, { message: 'Bad credentials' });
      if (req.method === 'GET' && url.pathname === '/api/user' && person) return json(res, 200, { id: person.id, login: person.login, name: person.name, email: null });
      if (req.method === 'GET' && url.pathname === '/api/user/emails' && person) return json(res, 200, person.emails.map((e) => ({ ...e, visibility: null })));
      json(res, 404, { message: 'Not Found' });
    })();
  });
  return self;
}

/** What the provider's redirect back to the web app carried. */
export interface ProviderRedirect {
  code: string;
  state: string;
  iss?: string;
}

/**
 * A person's browser from the authorization URL until the provider sends it to `appUrl`:
 * redirects followed by hand (with the provider's cookies), the login form filled with
 * `login` and the consent form submitted. Answers the query of the redirect to the web app.
 */
export async function signInAtProvider(authorizationUrl: string, appUrl: string, login: string): Promise<ProviderRedirect> {
  const cookies = new Map<string, string>();
  let url = authorizationUrl;
  let form: URLSearchParams | undefined;
  for (let step = 0; step < 20; step++) {
    const res = await fetch(url, {
      method: form ? 'POST' : 'GET',
      redirect: 'manual',
      headers: { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join('; '), ...(form ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) },
      ...(form ? { body: form.toString() } : {}),
    });
    for (const set of res.headers.getSetCookie()) {
      const [pair] = set.split(';');
      const at = pair!.indexOf('=');
      cookies.set(pair!.slice(0, at), pair!.slice(at + 1));
    }
    const location = res.headers.get('location');
    if (res.status >= 300 && res.status < 400 && location) {
      const next = new URL(location, url);
      if (next.href.startsWith(appUrl)) {
        const q = next.searchParams;
        if (q.has('error')) throw new Error(`the provider refused: ${q.get('error')} ${q.get('error_description')}`);
        return { code: q.get('code') ?? '', state: q.get('state') ?? '', ...(q.has('iss') ? { iss: q.get('iss')! } : {}) };
      }
      url = next.href;
      form = undefined;
      continue;
    }
    const page = await res.text();
    const action = /<form[^>]*action="([^"]+)"/.exec(page)?.[1];
    const prompt = /name="prompt" value="([a-z]+)"/.exec(page)?.[1];
    if (res.status !== 200 || !action || !prompt) throw new Error(`the provider answered ${res.status} at ${url}: ${page.slice(0, 300)}`);
    url = new URL(action.replaceAll('&amp;', '&'), url).href;
    form = new URLSearchParams(prompt === 'login' ? { prompt, login, password: 'any password' } : { prompt });
  }
  throw new Error('the provider did not send the browser back within 20 steps');
}
