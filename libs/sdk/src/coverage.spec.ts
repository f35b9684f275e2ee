/**
 * The SDK covers the route table: every operation of the gateway's OpenAPI document, built
 * from the route table's sources as they are now, is a method of the SDK, reached by its
 * operation id, that sends that method to that path. A route added or changed without the
 * SDK regenerated (the build does it: node libs/sdk/scripts/generate.mjs) fails here.
 */
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { Mailroom, OPERATIONS } from './index';

type Operation = { operationId: string; parameters?: { name: string; in: string }[]; requestBody?: unknown };
const routeTable = JSON.parse(
  execFileSync(process.execPath, [path.join(__dirname, '../scripts/route-table.mjs')], { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 }),
) as { paths: Record<string, Record<string, Operation>> };
const operations = Object.entries(routeTable.paths).flatMap(([url, methods]) => Object.entries(methods).map(([method, op]) => ({ url, method: method.toUpperCase(), op })));

describe('the SDK covers the route table', () => {
  const sent: { method: string; path: string }[] = [];
  const fetch = (async (req: Request) => {
    sent.push({ method: req.method, path: new URL(req.url).pathname });
    return new Response('{}', { status: 200, headers: { 'content-type': 'application/json' } });
  }) as typeof globalThis.fetch;
  const mr = new Mailroom({ apiKey: 'mr_test', baseUrl: 'http://api.test', fetch, env: {} });

  it('was generated from the route table as it is (else: node libs/sdk/scripts/generate.mjs)', () => {
    expect(operations.length).toBeGreaterThan(100);
    expect(OPERATIONS.map((o) => `${o.method} ${o.url} ${o.id}`).sort()).toEqual(operations.map((o) => `${o.method} ${o.url} ${o.op.operationId}`).sort());
  });

  // An operation served at aliases too (/admin/health) is sent to its first path.
  const first = operations.filter((o, i) => operations.findIndex((p) => p.op.operationId === o.op.operationId) === i);
  it.each(first.map((o) => [`${o.method} ${o.url}`, o] as const))('%s is a method that sends it', async (_name, { url, method, op }) => {
    const pathParams = Object.fromEntries((op.parameters ?? []).filter((p) => p.in === 'path').map((p) => [p.name, `x_${p.name}`]));
    sent.length = 0;
    await mr.call(op.operationId, { path: pathParams, ...(op.requestBody ? { body: {} } : {}) });
    expect(sent).toEqual([{ method, path: url.replace(/\{([a-zA-Z_]+)\}/g, (_, name: string) => `x_${name}`) }]);
  });
});
