// The import-cycle check of `npm run lint` (`npm run check:cycles`; docs/decisions/0031):
// no file imports itself through others, and no folder imports itself through others.
// Production code only: specs and test folders may import fakes from anywhere.
const { join } = require('node:path');

/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'no-file-cycle',
      comment: 'A file reaches itself through its imports. Move what both sides share into a file of its own, or have one side declare the interface the other implements.',
      severity: 'error',
      from: {},
      to: { circular: true },
    },
    {
      name: 'no-folder-cycle',
      comment: 'A folder reaches itself through its files\' imports. Keep one direction between two folders: the other side gets an interface, or the shared part moves.',
      severity: 'error',
      scope: 'folder',
      from: {},
      to: { circular: true },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    exclude: { path: ['(^|/)(dist|generated|node_modules|test|coverage)/', '\\.spec\\.tsx?$'] },
    // Type-only imports count: a cycle of types is a cycle of meaning.
    tsPreCompilationDeps: true,
    tsConfig: { fileName: join(__dirname, 'tsconfig.json') },
    enhancedResolveOptions: { extensions: ['.ts', '.tsx', '.js', '.d.ts'] },
  },
};
