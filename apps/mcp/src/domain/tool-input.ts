/**
 * A tool's input, from its API operation (the SDK's OPERATIONS, generated from the route
 * table's OpenAPI document, itself built from the contracts' zod schemas): one flat JSON object
 * of the path parameters, the query parameters and the body's fields, plus idempotency_key
 * where the operation honours one. Flat, with `type: object` at the top and no $ref: the shape
 * every MCP client accepts. And back: the arguments a tool is called with, split into the
 * request's path, query, body and headers.
 */
import type { JsonSchema, OperationInfo } from '@mailroom/sdk';

export const IDEMPOTENCY_KEY = 'idempotency_key';

export interface ToolInputSchema {
  [keyword: string]: unknown;
  type: 'object';
  properties: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties: false;
}

export interface RequestParts {
  path: Record<string, unknown>;
  query: Record<string, unknown>;
  body: Record<string, unknown> | undefined;
  headers: Record<string, string>;
}

/** A body whose fields are spread into the tool's arguments (an object schema), or undefined. */
function bodyObject(op: OperationInfo): { properties: Record<string, JsonSchema>; required: string[] } | undefined {
  const schema = op.body?.schema;
  if (!schema || schema.type !== 'object' || typeof schema.properties !== 'object' || schema.properties === null) return undefined;
  return { properties: schema.properties as Record<string, JsonSchema>, required: Array.isArray(schema.required) ? (schema.required as string[]) : [] };
}

export function toolInputSchema(op: OperationInfo): ToolInputSchema {
  const properties: Record<string, JsonSchema> = {};
  const required: string[] = [];
  const add = (name: string, schema: JsonSchema, isRequired: boolean) => {
    if (Object.hasOwn(properties, name)) throw new Error(`${op.id}: argument ${name} is both a parameter and a body field`);
    properties[name] = schema;
    if (isRequired) required.push(name);
  };
  for (const p of op.parameters) add(p.name, p.description ? { ...p.schema, description: p.description } : p.schema, p.required);
  if (op.body) {
    const body = bodyObject(op);
    if (!body) throw new Error(`${op.id}: a body that is not a JSON object cannot be spread into tool arguments`);
    for (const [name, schema] of Object.entries(body.properties)) add(name, schema, body.required.includes(name));
  }
  if (op.idempotencyKey) {
    add(
      IDEMPOTENCY_KEY,
      {
        type: 'string',
        pattern: '^[!-~]{1,255}$',
        description: 'Optional; 1 to 255 printable ASCII characters, no spaces (a UUID will do). Calling again with the same key and arguments within 24 h returns the first answer instead of doing it twice. Without it, each call acts again.',
      },
      false,
    );
  }
  return { type: 'object', properties, ...(required.length ? { required } : {}), additionalProperties: false };
}

/** The request the arguments stand for. Unknown arguments are refused (the schema says additionalProperties: false). */
export function splitArguments(op: OperationInfo, args: Record<string, unknown>): RequestParts {
  const parts: RequestParts = { path: {}, query: {}, body: undefined, headers: {} };
  const bodyFields = new Set(Object.keys(bodyObject(op)?.properties ?? {}));
  const unknown: string[] = [];
  for (const [name, value] of Object.entries(args)) {
    if (value === undefined) continue;
    const param = op.parameters.find((p) => p.name === name);
    if (param) parts[param.in][name] = value;
    else if (bodyFields.has(name)) (parts.body ??= {})[name] = value;
    else if (name === IDEMPOTENCY_KEY && op.idempotencyKey && typeof value === 'string') parts.headers['Idempotency-Key'] = value;
    else unknown.push(name);
  }
  if (unknown.length) throw new InvalidArguments(`unknown argument${unknown.length > 1 ? 's' : ''}: ${unknown.join(', ')}`);
  const missing = op.parameters.filter((p) => p.in === 'path' && parts.path[p.name] === undefined).map((p) => p.name);
  if (missing.length) throw new InvalidArguments(`missing required argument${missing.length > 1 ? 's' : ''}: ${missing.join(', ')}`);
  // An operation that takes a body gets one, even when every field is optional.
  if (op.body && parts.body === undefined) parts.body = {};
  return parts;
}

export class InvalidArguments extends Error {
  readonly code = 'invalid_arguments';
  constructor(message: string) {
    super(message);
    this.name = 'InvalidArguments';
  }
}
