// The gateway's OpenAPI document, built from its route table's TypeScript sources: no build and
// no running server needed, so the SDK can be generated before anything is compiled.
// `node route-table.mjs` prints it; generate.mjs and the coverage test import it.
//
// The route table (services/gateway/src/routes.ts, openapi.ts) imports zod and
// @mailroom/contracts only; contracts imports zod only. Those sources are loaded through a
// module hook that compiles TypeScript with SWC (as jest does) and maps @mailroom/contracts
// to its src/ (as jest's moduleNameMapper does).
import { existsSync, readFileSync } from 'node:fs';
import { createRequire, registerHooks } from 'node:module';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { transformSync } from '@swc/core';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const SOURCES = { '@mailroom/contracts': path.join(repo, 'libs/contracts/src/index.ts') };

let hooked = false;
function hookTypeScript() {
  if (hooked) return;
  hooked = true;
  registerHooks({
    resolve(specifier, context, next) {
      if (SOURCES[specifier]) return { url: pathToFileURL(SOURCES[specifier]).href, shortCircuit: true };
      if (specifier.startsWith('.') && context.parentURL?.endsWith('.ts')) {
        const base = fileURLToPath(new URL(specifier.replace(/\.js$/, ''), context.parentURL));
        const found = [`${base}.ts`, path.join(base, 'index.ts')].find((f) => existsSync(f));
        if (found) return { url: pathToFileURL(found).href, shortCircuit: true };
      }
      return next(specifier, context);
    },
    load(url, context, next) {
      if (!url.startsWith('file:') || !url.endsWith('.ts')) return next(url, context);
      const filename = fileURLToPath(url);
      const { code } = transformSync(readFileSync(filename, 'utf8'), {
        filename,
        jsc: { parser: { syntax: 'typescript' }, target: 'es2022', keepClassNames: true },
        module: { type: 'commonjs' },
      });
      return { format: 'commonjs', source: code, shortCircuit: true };
    },
  });
}

/** The document `GET /api/v1/openapi.json` serves, from the sources as they are now. */
export function routeTableDocument() {
  hookTypeScript();
  const load = createRequire(import.meta.url);
  const { ROUTES } = load(path.join(repo, 'services/gateway/src/routes.ts'));
  const { buildOpenApi, API_VERSION } = load(path.join(repo, 'services/gateway/src/openapi.ts'));
  // Through JSON, as the gateway serves it (undefined fields dropped).
  return JSON.parse(JSON.stringify(buildOpenApi(ROUTES, API_VERSION)));
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  process.stdout.write(`${JSON.stringify(routeTableDocument(), null, 2)}\n`);
}
