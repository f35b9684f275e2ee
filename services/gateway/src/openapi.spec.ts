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

  it('documents both answers of login: a session, or the challenge of its second factor', () => {
    type Answered = { responses: Record<string, { content: Record<string, { schema: { anyOf?: { required?: string[] }[] } }> }> };
    const login = (doc.paths as Record<string, Record<string, Answered>>)['/api/v1/auth/login']!.post!;
    const answers = login.responses['200']!.content['application/json']!.schema.anyOf!;
    expect(answers.map((a) => a.required?.includes('mfa_required') ?? false)).toEqual([false, true]);
    expect(answers[0]!.required).toEqual(expect.arrayContaining(['user', 'organization', 'access_token', 'refresh_token']));
    expect(answers[1]!.required).toEqual(expect.arrayContaining(['mfa_token', 'expires_in']));
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
