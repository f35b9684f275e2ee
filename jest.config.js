// Unit tests (*.spec.ts beside the code) and integration tests (test/*.int.spec.ts, against
// the real PostgreSQL and NATS). TypeScript runs from source through SWC; tsc -b type-checks.

// Our packages, each imported from its source. Jest resolves test files' imports with
// moduleNameMapper, but loads the global set-up with Node's own resolution, which would find
// dist/: so SWC also rewrites the imports (jsc.paths), and the set-up reads the sources too.
const packages = {
  libs: ['contracts', 'platform', 'db', 'messaging', 'runtime', 'testing', 'sdk'],
  services: ['auth', 'orgs', 'gateway', 'mailbox', 'mail-ingest', 'mail-send', 'webhooks', 'domains', 'metrics', 'admin'],
  apps: ['all-in-one', 'launcher', 'mcp', 'cli'],
};
const sources = Object.entries(packages).flatMap(([dir, names]) => names.map((name) => [`@mailroom/${name}`, `${dir}/${name}/src`]));

const swc = [
  '@swc/jest',
  {
    jsc: {
      parser: { syntax: 'typescript' },
      target: 'es2022',
      keepClassNames: true,
      baseUrl: __dirname,
      paths: Object.fromEntries(sources.map(([name, dir]) => [name, [dir]])),
    },
    module: { type: 'commonjs' },
    sourceMaps: 'inline',
  },
];

const shared = {
  testEnvironment: 'node',
  transform: { '^.+\\.(t|j)s$': swc },
  // jose, kysely, openid-client (with oauth4webapi), oidc-provider (tests' OpenID provider) and
  // kubernetes-models (with @kubernetes-models/*, is-cidr and cidr-regex; the manifests' schema
  // check) ship ES modules only: SWC turns them into CommonJS for jest. kubernetes-models
  // exports them under `import` alone, which jest.resolver.js adds for it.
  transformIgnorePatterns: ['/node_modules/(?!(jose|kysely|openid-client|oauth4webapi|oidc-provider|kubernetes-models|@kubernetes-models|is-cidr|cidr-regex)/)'],
  resolver: '<rootDir>/jest.resolver.js',
  moduleNameMapper: {
    ...Object.fromEntries(sources.map(([name, dir]) => [`^${name}$`, `<rootDir>/${dir}`])),
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  modulePathIgnorePatterns: ['<rootDir>/.*/dist/', '<rootDir>/.tools/', '<rootDir>/.data/'],
};

module.exports = {
  testTimeout: 30_000,
  // A worker that has loaded ESLint, TypeScript and the services takes more than jest's
  // default 500 ms to end on two busy cores; jest then kills it and warns of a leak. It is
  // not one: such a worker is past its event loop (it no longer runs a SIGTERM handler), and
  // --detectOpenHandles finds nothing. The one real leak found this way (a test's pending
  // 15 s timer) is fixed.
  workerGracefulExitTimeout: 5_000,
  // Two test files at once at least: integration tests spend most of their time waiting on
  // sockets and timers, so even two cores run two files in about half the time of one (jest's
  // default is one worker fewer than the cores). Each file has its own database and NATS
  // namespace. More than four would mostly add platforms competing for PostgreSQL.
  maxWorkers: Math.max(2, Math.min(4, require('node:os').availableParallelism())),
  projects: [
    { ...shared, displayName: 'unit', testMatch: ['<rootDir>/{libs,services,apps}/*/src/**/*.spec.ts'] },
    {
      ...shared,
      displayName: 'integration',
      testMatch: ['<rootDir>/{libs,services,apps}/*/test/**/*.int.spec.ts'],
      // Every service's schema goes into the run's template database: the set-up that knows
      // the services is the all-in-one app's.
      globalSetup: '<rootDir>/apps/all-in-one/test/jest/global-setup.ts',
      globalTeardown: '<rootDir>/libs/testing/src/jest/global-teardown.ts',
    },
  ],
};
