// ESLint flat config: typescript-eslint's recommended rules, and Nx's module boundaries
// from the project tags: libs never import services, services never import each other,
// contracts import nothing of ours.
import js from '@eslint/js';
import nx from '@nx/eslint-plugin';
import globals from 'globals';
import tseslint from 'typescript-eslint';

const TESTING_ONLY = { name: '@mailroom/testing', message: 'test helpers are for tests only' };

// What a service's domain/ may not import: put it behind a port (domain/ports.ts) and a client (src/clients/).
const because = (why) => `domain code does not import ${why}; use a port from domain/ports.ts`;
const fenced = (names, why) => names.map((name) => ({ name, message: because(why) }));
const FENCED = {
  'the HTTP edge': ['express', 'smtp-server'],
  'the database': ['pg', 'kysely', '@mailroom/db'],
  'the bus or the runtime': ['@mailroom/messaging', '@mailroom/runtime', '@nats-io/*'],
  'network clients': ['undici', 'node:dns', 'node:dns/promises', 'dns', 'dns/promises', 'node:http', 'http', 'node:https', 'https', 'node:http2', 'http2', 'node:net', 'net', 'node:tls', 'tls', 'node:dgram', 'dgram'],
};
export const DOMAIN_FENCE = {
  paths: Object.entries(FENCED).flatMap(([why, names]) => fenced(names.filter((n) => !n.endsWith('*')), why)),
  // Deep imports too (kysely/helpers/postgres, @nats-io/jetstream, ...).
  patterns: Object.entries(FENCED).map(([why, names]) => ({ group: names.filter((n) => !n.startsWith('node:')).map((n) => (n.endsWith('*') ? n : `${n}/*`)), message: because(why) })),
};
/** Repositories and clients are reached through ports: their types may be named, never their code. */
const PORTS_ONLY = [{ group: ['**/repo/*', '**/clients/*'], allowTypeImports: true, message: 'domain code takes repositories and clients through its ports (types only); main.ts passes them in' }];

export default tseslint.config(
  { ignores: ['**/dist/**', '**/node_modules/**', '.tools/**', '.nx/**', 'coverage/**', '.data/**', 'libs/sdk/src/generated/**'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    plugins: { '@nx': nx },
    rules: {
      '@nx/enforce-module-boundaries': [
        'error',
        {
          enforceBuildableLibDependency: false,
          allow: [],
          // The tests of a lib use libs/testing, which is built on that lib: a test-only cycle.
          ignoredCircularDependencies: ['contracts', 'platform', 'db', 'messaging', 'runtime'].map((lib) => ['@mailroom/testing', `@mailroom/${lib}`]),
          depConstraints: [
            { sourceTag: 'scope:contracts', onlyDependOnLibsWithTags: [] },
            { sourceTag: 'type:lib', onlyDependOnLibsWithTags: ['type:lib'] },
            { sourceTag: 'type:service', onlyDependOnLibsWithTags: ['type:lib'] },
            { sourceTag: 'type:app', onlyDependOnLibsWithTags: ['type:lib', 'type:service'] },
          ],
        },
      ],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports', disallowTypeAnnotations: false }],
      'no-console': 'error',
    },
  },
  {
    // Test helpers never reach production code.
    files: ['**/src/**/*.ts'],
    ignores: ['**/*.spec.ts', 'libs/testing/**'],
    rules: { 'no-restricted-imports': ['error', { paths: [TESTING_ONLY] }] },
  },
  {
    // Domain code is the product's rules: no transport, no database, no network client. It
    // reaches them through the ports of its domain/ports.ts, which main.ts fills in.
    files: ['services/*/src/domain/**/*.ts'],
    ignores: ['**/*.spec.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': ['error', { paths: DOMAIN_FENCE.paths, patterns: [...DOMAIN_FENCE.patterns, ...PORTS_ONLY] }],
      'no-restricted-globals': ['error', { name: 'fetch', message: because('network clients') }],
    },
  },
  {
    files: ['services/*/src/domain/**/*.spec.ts'],
    rules: { '@typescript-eslint/no-restricted-imports': ['error', DOMAIN_FENCE] },
  },
  {
    files: ['**/*.spec.ts', '**/test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off', '@typescript-eslint/no-non-null-assertion': 'off' },
  },
  {
    files: ['**/*.js', '**/*.mjs', '**/*.cjs'],
    languageOptions: { globals: globals.node },
    rules: { '@typescript-eslint/no-require-imports': 'off', 'no-console': 'off' },
  },
);
