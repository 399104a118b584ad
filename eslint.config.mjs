// Lint rules that carry the house style: no floating promises, exhaustive switches,
// no `any`, no non-null assertions, and the data plane never touches Postgres.
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
