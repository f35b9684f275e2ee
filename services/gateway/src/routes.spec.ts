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
    const internal = ['auth.apikey.verify', 'auth.jwks.get', 'orgs.organization.createForOwner', 'orgs.membership.listForUser', 'orgs.environment.get'];
    expect(ROUTES.filter((r) => r.op && internal.includes(r.op))).toEqual([]);
  });
});
