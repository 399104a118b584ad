import { fileURLToPath } from 'node:url';
import react from '@vitejs/plugin-react';
import { defineConfig } from 'vite';

// Built offline by the root `npm run build` into services/account-admin/dist/web, which
// account-admin serves under /dashboard. Every asset is a local file (no CDN, no inline script).
export default defineConfig({
  root: fileURLToPath(new URL('.', import.meta.url)),
  base: '/dashboard/',
  plugins: [react()],
  // Dependency-free files of the workspace: the API's limits, the audit log's names, the alert types, the SDK's
  // types and the CSV writer (the same paths as tsconfig.json's).
  resolve: {
    alias: {
      '@svc/csv': fileURLToPath(new URL('../../../packages/csv/src/index.ts', import.meta.url)),
      '@svc/contracts/limits': fileURLToPath(new URL('../../../packages/contracts/src/limits.ts', import.meta.url)),
      '@svc/contracts/audit': fileURLToPath(new URL('../../../packages/contracts/src/audit.ts', import.meta.url)),
      '@svc/contracts/mail': fileURLToPath(new URL('../../../packages/contracts/src/mail.ts', import.meta.url)),
      '@svc/sdk/types': fileURLToPath(new URL('../../../packages/sdk/src/types.ts', import.meta.url)),
    },
  },
  logLevel: 'warn',
  build: {
    outDir: fileURLToPath(new URL('../dist/web', import.meta.url)),
    emptyOutDir: true,
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    chunkSizeWarningLimit: 600,
  },
});
