/**
 * One Jest configuration for the repository. Tiers by file name:
 *   *.spec.ts      unit tests beside the code
 *   *.int.spec.ts  integration tests on the real PostgreSQL and Redis
 *   *.e2e.spec.ts  end-to-end tests through HTTP with the services as separate processes
 * Workspace packages are mapped to their TypeScript sources, so unit tests need no build;
 * end-to-end tests start the built services (npm test builds first).
 */
const esmOnly = ['@nestjs', '@seriousme', '@prisma/schema-engine-wasm', 'cookie', 'file-type', 'strtok3', 'token-types', '@tokenizer', 'uint8array-extras', '@borewit', '@modelcontextprotocol/ext-tasks'];

/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/packages', '<rootDir>/services', '<rootDir>/tools', '<rootDir>/test'],
  testMatch: ['**/*.spec.ts'],
  testPathIgnorePatterns: ['/node_modules/', '/dist/'],
  modulePathIgnorePatterns: ['<rootDir>/.*/dist/'],
  moduleNameMapper: {
    // The services' entry points (src/index.ts), for the tools that describe them (tools/openapi).
    '^@svc/(account-admin|billing|search-gateway)$': '<rootDir>/services/$1/src/index.ts',
    '^@svc/([a-z-]+)$': '<rootDir>/packages/$1/src/index.ts',
    // The dashboard's web app imports single dependency-free files (its Vite aliases): the same files here.
    '^@svc/contracts/([a-z-]+)$': '<rootDir>/packages/contracts/src/$1.ts',
    '^@svc/sdk/types$': '<rootDir>/packages/sdk/src/types.ts',
    // The MCP Tasks extension's requester (ES modules only, no `require` export): its entry points' files, transformed below.
    '^@modelcontextprotocol/ext-tasks/(client|core)$': '<rootDir>/node_modules/@modelcontextprotocol/ext-tasks/dist/$1/index.js',
    // Sources written for ES modules (packages/sdk) import './file.js'; the file is file.ts.
    '^(\\.{1,2}/.*)\\.js$': '$1',
  },
  transform: {
    '^.+\\.(t|j)s$': [
      '@swc/jest',
      {
        jsc: {
          target: 'es2023',
          parser: { syntax: 'typescript', decorators: true },
          transform: { legacyDecorator: true, decoratorMetadata: true },
        },
        module: { type: 'commonjs' },
      },
    ],
  },
  transformIgnorePatterns: [`/node_modules/(?!(${esmOnly.join('|')})/)`],
  testTimeout: 30_000,
};
