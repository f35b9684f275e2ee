// Unit tests (*.spec.ts beside the code) and integration tests (test/*.int.spec.ts, against
// the real PostgreSQL and NATS). TypeScript runs from source through SWC; tsc -b type-checks.
const swc = [
  '@swc/jest',
  {
    jsc: { parser: { syntax: 'typescript' }, target: 'es2022', keepClassNames: true },
    module: { type: 'commonjs' },
    sourceMaps: 'inline',
  },
];

const shared = {
  testEnvironment: 'node',
  transform: { '^.+\\.(t|j)s$': swc },
  // jose and kysely ship ES modules only: SWC turns them into CommonJS for jest.
  transformIgnorePatterns: ['/node_modules/(?!(jose|kysely)/)'],
  moduleNameMapper: {
    '^@mailroom/(contracts|platform|db|messaging|runtime|testing)$': '<rootDir>/libs/$1/src',
    '^@mailroom/(auth|orgs|gateway|mailbox|mail-ingest|mail-send|webhooks)$': '<rootDir>/services/$1/src',
    '^@mailroom/all-in-one$': '<rootDir>/apps/all-in-one/src',
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  modulePathIgnorePatterns: ['<rootDir>/.*/dist/', '<rootDir>/.tools/'],
};

module.exports = {
  testTimeout: 30_000,
  projects: [
    { ...shared, displayName: 'unit', testMatch: ['<rootDir>/{libs,services,apps}/*/src/**/*.spec.ts'] },
    {
      ...shared,
      displayName: 'integration',
      testMatch: ['<rootDir>/{libs,services,apps}/*/test/**/*.int.spec.ts'],
      globalSetup: '<rootDir>/libs/testing/src/jest/global-setup.ts',
      globalTeardown: '<rootDir>/libs/testing/src/jest/global-teardown.ts',
    },
  ],
};
