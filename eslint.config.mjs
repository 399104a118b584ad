// Lint rules that carry the house style: no floating promises, exhaustive switches,
// no `any`, no non-null assertions, the data plane never touches Postgres, and in the
// services SQL is written only in repositories (`*.repository.ts`) and `db/`.
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: ['**/dist/**', '**/node_modules/**', '**/generated/**', 'coverage/**', '**/*.js', '**/*.mjs', '**/*.cjs'],
  },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ['**/*.ts', '**/*.tsx'],
    languageOptions: {
      parserOptions: {
        projectService: { allowDefaultProject: ['services/*/prisma.config.ts'] },
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/switch-exhaustiveness-check': ['error', { considerDefaultExhaustiveForUnions: true }],
      '@typescript-eslint/no-explicit-any': 'error',
      '@typescript-eslint/no-non-null-assertion': 'error',
      '@typescript-eslint/consistent-type-imports': ['error', { prefer: 'type-imports', fixStyle: 'separate-type-imports', disallowTypeAnnotations: false }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', ignoreRestSiblings: true }],
      'no-restricted-imports': ['error', { patterns: [{ group: ['@svc/*/src', '@svc/*/src/*', '@svc/*/dist/*'], message: 'Import a package only through its root.' }] }],
    },
  },
  {
    // The data plane never opens Postgres.
    files: ['services/search-gateway/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        paths: [
          { name: 'pg', message: 'search-gateway must not open Postgres.' },
          { name: '@prisma/client', message: 'search-gateway must not import Prisma.' },
        ],
        patterns: [
          { group: ['@prisma/*', 'prisma', 'pg-*', '**/generated/prisma*'], message: 'search-gateway must not import Prisma or pg.' },
          { group: ['@svc/*/src', '@svc/*/src/*', '@svc/*/dist/*'], message: 'Import a package only through its root.' },
        ],
      }],
    },
  },
  {
    // SQL only in repositories and db/ (docs/decisions/0040): outside them a service's source
    // neither runs a statement (Prisma's raw queries and transactions), nor builds one
    // (Prisma.sql and its helpers), nor holds a Prisma or node-postgres client to make one.
    // A service opens a transaction with db/transactions.ts and hands it to the stores.
    files: ['services/account-admin/src/**/*.ts', 'services/billing/src/**/*.ts'],
    ignores: ['**/*.repository.ts', 'services/*/src/db/**', '**/*.spec.ts'],
    rules: {
      'no-restricted-syntax': ['error',
        {
          selector: 'MemberExpression[property.name=/^\\$(queryRaw|executeRaw|queryRawUnsafe|executeRawUnsafe|transaction|runCommandRaw)$/]',
          message: 'SQL only in repositories (*.repository.ts) and db/: move the statement into a store; a service opens its transaction with db/transactions.',
        },
        {
          selector: 'MemberExpression[object.name="Prisma"][property.name=/^(sql|raw|join|empty)$/]',
          message: 'SQL only in repositories (*.repository.ts) and db/: build the statement in a store.',
        },
      ],
      'no-restricted-imports': ['error', {
        paths: [{ name: 'pg', allowTypeImports: true, message: 'SQL only in repositories (*.repository.ts) and db/: the driver belongs to a store.' }],
        patterns: [
          { group: ['**/generated/prisma/*', '**/generated/prisma', '@prisma/*'], allowTypeImports: true, message: 'SQL only in repositories (*.repository.ts) and db/: only a store (or db/) uses the Prisma client; others may name its types.' },
          { group: ['@svc/*/src', '@svc/*/src/*', '@svc/*/dist/*'], message: 'Import a package only through its root.' },
        ],
      }],
    },
  },
  {
    // The tools reach a service through its package entry point (@svc/account-admin, @svc/billing,
    // @svc/search-gateway: each service's src/index.ts), never by a relative path into its sources.
    files: ['tools/**/*.ts'],
    rules: {
      'no-restricted-imports': ['error', {
        patterns: [
          { group: ['**/services/**'], message: 'Import a service through its package entry point (@svc/<service>), not by a path into its sources.' },
          { group: ['@svc/*/src', '@svc/*/src/*', '@svc/*/dist/*'], message: 'Import a package only through its root.' },
        ],
      }],
    },
  },
);
