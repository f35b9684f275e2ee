import { PERMISSION_NAMES, routeAccess } from '@mailroom/contracts';
import { buildOpenApi } from './openapi';
import { ROUTES } from './routes';

type Operation = { description: string; 'x-permission': string | null; requestBody?: { content: Record<string, { schema: unknown }> } };

describe('the OpenAPI document', () => {
  const doc = buildOpenApi(ROUTES, 'test');
  const paths = doc.paths as Record<string, Record<string, Operation>>;

  it('says what every operation needs, from the permission table', () => {
    for (const route of ROUTES) {
      const op = paths[route.path]![route.method]!;
      expect(op['x-permission']).toBe(routeAccess(route.method, route.path));
      expect(op.description).toEqual(expect.any(String));
    }
    expect(paths['/api/v1/inboxes']!.post!.description).toBe('Needs permission `inboxes.write`: roles owner, admin, member; API keys of scope full or a custom list holding it.');
    expect(paths['/api/v1/org/members']!.get!.description).toMatch(/roles owner, admin, member, viewer; API keys never/);
    expect(paths['/api/v1/org/members/leave']!.post!['x-permission']).toBe('self');
  });

  it("documents a key's scope and its list of permissions", () => {
    const schema = paths['/api/v1/keys']!.post!.requestBody!.content['application/json']!.schema;
    expect(schema).toMatchObject({
      properties: {
        scope: { enum: ['full', 'read_only', 'send_only', 'custom'] },
        permissions: { items: { enum: PERMISSION_NAMES }, description: expect.stringMatching(/a key holds at most org.read, inboxes.read/) },
      },
    });
  });
});
