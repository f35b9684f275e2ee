import { z } from 'zod';
import { RPC, ROUTE_ACCESS, apiKeyCreateRequest, idSchema, inboxUpdateRequest, loginRequest, pageQuery } from '@mailroom/contracts';
import { accessOf, expressPath, pathPattern, route, ROUTES, type PartParser, type Route } from './routes';

describe('route table', () => {
  it('converts paths for express and matches them for 405 detection', () => {
    expect(expressPath('/api/v1/keys/{id}')).toBe('/api/v1/keys/:id');
    const re = pathPattern('/api/v1/keys/{id}');
    expect(re.test('/api/v1/keys/key_1')).toBe(true);
    expect(re.test('/api/v1/keys/key_1/')).toBe(true);
    expect(re.test('/api/v1/keys')).toBe(false);
    expect(re.test('/api/v1/keys/a/b')).toBe(false);
  });

  it('routes only to catalogued operations, each path and method once', () => {
    const seen = new Set<string>();
    for (const route of ROUTES) {
      if (route.op) expect(RPC[route.op]).toBeDefined();
      for (const path of [route.path, ...(route.aliases ?? [])]) {
        const key = `${route.method} ${path}`;
        expect(seen.has(key)).toBe(false);
        seen.add(key);
      }
    }
  });

  it('keeps internal operations off the HTTP surface', () => {
    const internal = ['auth.apikey.verify', 'auth.jwks.get', 'auth.user.profiles', 'orgs.organization.createForOwner', 'orgs.membership.listForUser', 'orgs.environment.get', 'orgs.environment.access', 'orgs.organization.limits', 'auth.apikey.countInEnvironment', 'mailbox.inbox.countInEnvironment', 'webhooks.endpoint.countInEnvironment', 'mail-send.outbound.check', 'mailbox.inbox.resolve', 'orgs.membership.owned', 'orgs.membership.purgeUser'];
    expect(ROUTES.filter((r) => r.op && internal.includes(r.op))).toEqual([]);
  });
});

describe('the permission table', () => {
  it('names every route of the route table, and no route that is not in it', () => {
    for (const r of ROUTES) expect(() => accessOf(r)).not.toThrow();
    const served = new Set(ROUTES.map((r) => `${r.method.toUpperCase()} ${r.path}`));
    expect(Object.keys(ROUTE_ACCESS).filter((k) => !served.has(k))).toEqual([]);
  });

  it('refuses to build a route it does not name, or names for another credential', () => {
    const stray: Route = { method: 'get', path: '/api/v1/nowhere', auth: 'tenant', summary: 's', tag: 'T' };
    expect(() => accessOf(stray)).toThrow(/not in the permission table/);
    expect(() => accessOf({ ...stray, path: '/api/v1/inboxes', auth: 'none' })).toThrow(/takes auth none but the permission table says inboxes.read/);
    expect(() => accessOf({ ...stray, path: '/api/v1/admin/keys', auth: 'tenant' })).toThrow(/says admin/);
  });
});

describe('webhooks routes', () => {
  it('serve every public webhooks operation at the spec paths', () => {
    const routed = new Map(ROUTES.filter((r) => r.op?.startsWith('webhooks.')).map((r) => [r.op, `${r.method.toUpperCase()} ${r.path}`]));
    expect(Object.fromEntries(routed)).toEqual({
      'webhooks.endpoint.create': 'POST /api/v1/webhooks/endpoints',
      'webhooks.endpoint.list': 'GET /api/v1/webhooks/endpoints',
      'webhooks.endpoint.get': 'GET /api/v1/webhooks/endpoints/{id}',
      'webhooks.endpoint.update': 'PATCH /api/v1/webhooks/endpoints/{id}',
      'webhooks.endpoint.delete': 'DELETE /api/v1/webhooks/endpoints/{id}',
      'webhooks.delivery.list': 'GET /api/v1/webhooks/endpoints/{id}/deliveries',
      'webhooks.delivery.redeliver': 'POST /api/v1/webhooks/endpoints/{id}/deliveries/{delivery_id}/redeliver',
      'webhooks.endpoint.recover': 'POST /api/v1/webhooks/endpoints/{id}/recover',
      'webhooks.recovery.get': 'GET /api/v1/webhooks/endpoints/{id}/recoveries/{recovery_id}',
    });
    expect(ROUTES.filter((r) => r.op?.startsWith('webhooks.')).every((r) => r.auth === 'tenant')).toBe(true);
  });
});

describe('verification and password routes', () => {
  it('serve the spec paths without a credential, and ours for a signed-in person only', () => {
    const routed = new Map(ROUTES.filter((r) => r.op?.startsWith('auth.email.') || r.op?.startsWith('auth.password.')).map((r) => [r.op, [`${r.method.toUpperCase()} ${r.path}`, r.auth, accessOf(r), r.status ?? 200]]));
    expect(Object.fromEntries(routed)).toEqual({
      'auth.email.verify': ['POST /api/v1/auth/verify-email', 'none', 'public', 200],
      'auth.email.resend': ['POST /api/v1/user/me/verify-email/resend', 'user', 'self', 202],
      'auth.password.resetRequest': ['POST /api/v1/auth/password/reset-request', 'none', 'public', 202],
      'auth.password.reset': ['POST /api/v1/auth/password/reset', 'none', 'public', 204],
      'auth.password.change': ['POST /api/v1/user/me/change-password', 'user', 'self', 204],
    });
  });
});

describe('email change, deletion and recovery routes', () => {
  it('serve change-email and deletion signed in, recovery without a credential; deletion ends the caller\'s session', () => {
    const ops = ['auth.user.changeEmail', 'auth.user.confirmEmailChange', 'auth.user.delete', 'auth.user.recover'];
    const routed = new Map(ROUTES.filter((r) => r.op && ops.includes(r.op)).map((r) => [r.op, [`${r.method.toUpperCase()} ${r.path}`, r.auth, accessOf(r), r.status ?? 200, r.endsSession ?? false]]));
    expect(Object.fromEntries(routed)).toEqual({
      'auth.user.changeEmail': ['POST /api/v1/user/me/change-email', 'user', 'self', 202, false],
      'auth.user.confirmEmailChange': ['POST /api/v1/user/me/change-email/confirm', 'user', 'self', 200, false],
      'auth.user.delete': ['DELETE /api/v1/user/me', 'user', 'self', 200, true],
      'auth.user.recover': ['POST /api/v1/user/me/recover', 'none', 'public', 200, false],
    });
  });
});

describe('MFA routes', () => {
  it("serve a person's own second factor under /api/v1/user/me/mfa, and the login's second step without a credential", () => {
    const routed = new Map(ROUTES.filter((r) => r.op?.startsWith('auth.mfa.')).map((r) => [r.op, [`${r.method.toUpperCase()} ${r.path}`, r.auth, accessOf(r), r.status ?? 200]]));
    expect(Object.fromEntries(routed)).toEqual({
      'auth.mfa.status': ['GET /api/v1/user/me/mfa', 'user', 'self', 200],
      'auth.mfa.enrol': ['POST /api/v1/user/me/mfa/enrol', 'user', 'self', 200],
      'auth.mfa.confirm': ['POST /api/v1/user/me/mfa/confirm', 'user', 'self', 200],
      'auth.mfa.remove': ['DELETE /api/v1/user/me/mfa', 'user', 'self', 204],
      'auth.mfa.regenerateRecoveryCodes': ['POST /api/v1/user/me/mfa/recovery-codes', 'user', 'self', 200],
      'auth.mfa.verifyLogin': ['POST /api/v1/auth/mfa/verify-login', 'none', 'public', 200],
    });
  });
});

describe('route()', () => {
  const inboxId = z.object({ id: idSchema('inbox') });
  const meta = { method: 'post', path: '/x/{id}', auth: 'tenant', tag: 'T', summary: 's' } as const;

  it('builds the request of its operation from the parsed parts', () => {
    const update = route('mailbox.inbox.update', { ...meta, params: inboxId, body: inboxUpdateRequest });
    const parse: PartParser = (_where, schema, value) => schema?.parse(value);
    const request = update.request(parse, { params: { id: 'inb_01m8a4vabhcrd4hxzk162k1ma9' }, query: {}, body: { display_name: 'Support' } });
    expect({ ...request }).toEqual({ id: 'inb_01m8a4vabhcrd4hxzk162k1ma9', display_name: 'Support' });
    // A key such as __proto__ is a key, never the prototype of the request.
    expect(Object.getPrototypeOf(request)).toBeNull();
  });

  it('does not build a route whose parts do not make its operation request', () => {
    // @ts-expect-error: a login body has no `name`, which an API key's creation needs
    route('auth.apikey.create', { ...meta, body: loginRequest });
    // @ts-expect-error: getting an API key needs its id, from the path
    route('auth.apikey.get', { ...meta, query: pageQuery });
    // @ts-expect-error: a page token of the wrong type
    route('auth.apikey.list', { ...meta, query: z.object({ page_token: z.number() }) });
    // The same parts, on the operations they fit.
    expect(route('auth.apikey.create', { ...meta, body: apiKeyCreateRequest }).op).toBe('auth.apikey.create');
    expect(route('auth.apikey.list', { ...meta, query: pageQuery }).op).toBe('auth.apikey.list');
  });
});

describe('outside provider routes', () => {
  it('serve the spec paths (sign-in without a credential, links for the signed-in person) and ours for linking', () => {
    const routed = new Map(ROUTES.filter((r) => r.op?.startsWith('auth.oauth.')).map((r) => [r.op, [`${r.method.toUpperCase()} ${r.path}`, r.auth, accessOf(r), r.status ?? 200]]));
    expect(Object.fromEntries(routed)).toEqual({
      'auth.oauth.start': ['GET /api/v1/auth/oauth/{provider}', 'none', 'public', 200],
      'auth.oauth.callback': ['POST /api/v1/auth/oauth/{provider}/callback', 'none', 'public', 200],
      'auth.oauth.list': ['GET /api/v1/user/me/oauth-providers', 'user', 'self', 200],
      'auth.oauth.unlink': ['DELETE /api/v1/user/me/oauth-providers/{provider}', 'user', 'self', 204],
      'auth.oauth.linkStart': ['POST /api/v1/user/me/oauth-providers/{provider}', 'user', 'self', 200],
      'auth.oauth.linkCallback': ['POST /api/v1/user/me/oauth-providers/{provider}/callback', 'user', 'self', 200],
    });
  });
});
