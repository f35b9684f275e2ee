/** The OpenAPI 3.1 document, generated from the route table and the contracts' zod schemas. */
import { z } from 'zod';
import { ERROR_CODES, KEY_SCOPE_NAMES, KEY_SCOPES, ROLE_PERMISSIONS, ROLES, routeAccess, type RouteAccess } from '@mailroom/contracts';
import { responseSchemaOf, type Route } from './routes';

/** The document's info.version. Here, beside the builder, so the SDK's generator loads both from source without the rest of the gateway. */
export const API_VERSION = '1.0.0';

type JsonSchema = Record<string, unknown>;

function schemaOf(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _drop, ...rest } = z.toJSONSchema(schema, { io, unrepresentable: 'any', target: 'draft-2020-12' }) as JsonSchema;
  return rest;
}

function parametersOf(route: Route): unknown[] {
  const out: unknown[] = [];
  const add = (where: 'path' | 'query', obj: z.ZodObject | undefined) => {
    if (!obj) return;
    const json = schemaOf(obj, 'input') as { properties?: Record<string, JsonSchema>; required?: string[] };
    for (const [name, schema] of Object.entries(json.properties ?? {})) {
      out.push({ name, in: where, required: where === 'path' || (json.required ?? []).includes(name), schema });
    }
  };
  add('path', route.params);
  add('query', route.query);
  for (const m of route.path.matchAll(/\{([a-zA-Z_]+)\}/g)) {
    if (!route.params?.shape[m[1]!]) out.push({ name: m[1], in: 'path', required: true, schema: { type: 'string' } });
  }
  if (route.auth === 'tenant' || route.auth === 'user') {
    out.push({
      name: 'X-Env-Id',
      in: 'header',
      required: false,
      description:
        "Environment to act in (user access tokens; defaults to the organization's default one). Owners and admins may name any environment of the organization, others those they are members of (else 404). API keys are bound to theirs (another is 403).",
      schema: { type: 'string' },
    });
  }
  if (route.idempotent) {
    out.push({
      name: 'Idempotency-Key',
      in: 'header',
      required: false,
      description: 'Same key and body within 24 h returns the first answer; same key with another body is a 409.',
      schema: { type: 'string', maxLength: 255 },
    });
  }
  return out;
}

const errorRef = { $ref: '#/components/responses/Error' };

/** Who may call a route, in words, from the permission table. */
function accessText(access: RouteAccess | undefined): string {
  switch (access) {
    case undefined:
      return 'Not in the permission table.';
    case 'public':
      return 'No credential.';
    case 'self':
      return 'A signed-in user (access token), any role; not an API key.';
    case 'admin':
      return 'An admin key only.';
    default: {
      const roles = ROLES.filter((r) => ROLE_PERMISSIONS[r].includes(access));
      const scopes = KEY_SCOPE_NAMES.filter((s) => KEY_SCOPES[s].includes(access));
      return `Needs permission \`${access}\`: roles ${roles.join(', ')}; API keys ${scopes.length ? `of scope ${scopes.join(', ')} or a custom list holding it` : 'never'}.`;
    }
  }
}

export function buildOpenApi(routes: Route[], version: string): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    const response = responseSchemaOf(route);
    const status = String(route.status ?? 200);
    const operation = {
      operationId: route.op ?? `${route.method}${route.path.replace(/[^a-zA-Z0-9]+/g, '_')}`,
      summary: route.summary,
      description: accessText(routeAccess(route.method, route.path)),
      'x-permission': routeAccess(route.method, route.path) ?? null,
      tags: [route.tag],
      security: route.auth === 'none' || route.auth === 'signature' ? [] : [{ bearer: [] }],
      parameters: parametersOf(route),
      ...(route.textBody ? { requestBody: { required: true, content: { 'text/plain': { schema: { type: 'string' } } } } } : {}),
      ...(route.upload
        ? {
            requestBody: {
              required: true,
              content: {
                'multipart/form-data': { schema: { type: 'object', required: ['file'], properties: { file: { type: 'string', format: 'binary', description: 'The file, with its filename and Content-Type' } } } },
                '*/*': { schema: { type: 'string', format: 'binary', description: 'The file itself, with its Content-Type and ?filename=' } },
              },
            },
          }
        : {}),
      ...(route.body && !route.upload
        ? { requestBody: { required: true, content: { [route.formBody ? 'application/x-www-form-urlencoded' : 'application/json']: { schema: schemaOf(route.body, 'input') } } } }
        : {}),
      responses: {
        [status]:
          status === '204'
            ? { description: 'No content' }
            : route.textResponse
              ? { description: 'Success', content: { 'text/plain': { schema: { type: 'string' } } } }
              : { description: 'Success', content: response ? { 'application/json': { schema: schemaOf(response, 'output') } } : {} },
        '400': errorRef,
        ...(route.auth === 'none' || route.auth === 'signature' ? {} : { '401': errorRef, '403': errorRef }),
        '404': errorRef,
        '429': errorRef,
        ...(route.op ? {} : { '501': errorRef }),
        '503': errorRef,
      },
    };
    for (const path of [route.path, ...(route.aliases ?? [])]) {
      paths[path] = { ...paths[path], [route.method]: operation };
    }
  }
  return {
    openapi: '3.1.0',
    info: {
      title: 'Mailroom API',
      version,
      description: 'Email for software agents. Errors share one shape; lists page with limit (1-100, default 20) and page_token.',
    },
    servers: [{ url: '/' }],
    paths,
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'An API key (mr_...) or a user access token' } },
      responses: {
        Error: { description: 'Error', content: { 'application/json': { schema: { $ref: '#/components/schemas/Error' } } } },
      },
      schemas: {
        Error: {
          type: 'object',
          required: ['error'],
          properties: {
            error: {
              type: 'object',
              required: ['code', 'message', 'request_id'],
              properties: {
                code: { type: 'string', enum: Object.keys(ERROR_CODES) },
                message: { type: 'string' },
                request_id: { type: 'string' },
                details: {
                  type: 'array',
                  items: { type: 'object', properties: { path: { type: 'string' }, message: { type: 'string' } } },
                },
              },
            },
          },
        },
      },
    },
  };
}
