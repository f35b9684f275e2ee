import { RPC } from '@mailroom/contracts';
import { expressPath, pathPattern, ROUTES } from './routes';

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
    const internal = ['auth.apikey.verify', 'auth.jwks.get', 'orgs.organization.createForOwner', 'orgs.membership.listForUser', 'orgs.environment.get', 'send.outbound.check', 'mailbox.inbox.resolve'];
    expect(ROUTES.filter((r) => r.op && internal.includes(r.op))).toEqual([]);
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
