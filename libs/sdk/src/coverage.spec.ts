/**
 * Every operation of the OpenAPI document (the route table's, checked by the gateway's
 * sdk-document.spec.ts) is a method of the SDK, reached by its operation id, that sends that
 * method to that path.
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Mailroom, OPERATIONS } from './index';

type Operation = { operationId: string; parameters?: { name: string; in: string }[]; requestBody?: unknown };
const document = JSON.parse(readFileSync(path.join(__dirname, '../openapi.json'), 'utf8')) as { paths: Record<string, Record<string, Operation>> };
const operations = Object.entries(document.paths).flatMap(([url, methods]) => Object.entries(methods).map(([method, op]) => ({ url, method: method.toUpperCase(), op })));
const camel = (s: string) => s.replace(/[-_]+([a-z0-9])/gi, (_, c: string) => c.toUpperCase());

describe('the SDK covers the route table', () => {
  const sent: { method: string; path: string }[] = [];
  const fetch = (async (req: Request) => {
    sent.push({ method: req.method, path: new URL(req.url).pathname });
    return new Response('{}', { status: 200, headers: { 'content-type': 'application/json' } });
  }) as typeof globalThis.fetch;
  const mr = new Mailroom({ apiKey: 'mr_test', baseUrl: 'http://api.test', fetch, env: {} });

  it('lists every operation in OPERATIONS', () => {
    expect(operations.length).toBeGreaterThan(100);
    expect(OPERATIONS.map((o) => `${o.method} ${o.url} ${o.id}`).sort()).toEqual(operations.map((o) => `${o.method} ${o.url} ${o.op.operationId}`).sort());
  });

  // An operation served at aliases too (/admin/health) is sent to its first path.
  const first = operations.filter((o, i) => operations.findIndex((p) => p.op.operationId === o.op.operationId) === i);
  it.each(first.map((o) => [`${o.method} ${o.url}`, o] as const))('%s is a method that sends it', async (_name, { url, method, op }) => {
    let owner: unknown;
    let target: unknown = mr;
    for (const segment of op.operationId.split(/[./]/)) [owner, target] = [target, (target as Record<string, unknown>)[camel(segment)]];
    expect(typeof target).toBe('function');
    const pathParams = Object.fromEntries((op.parameters ?? []).filter((p) => p.in === 'path').map((p) => [p.name, `x_${p.name}`]));
    sent.length = 0;
    await (target as (o: unknown) => Promise<unknown>).call(owner, { path: pathParams, ...(op.requestBody ? { body: {} } : {}) });
    expect(sent).toEqual([{ method, path: url.replace(/\{([a-zA-Z_]+)\}/g, (_, name: string) => `x_${name}`) }]);
  });
});
