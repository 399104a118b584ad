#!/usr/bin/env node
// The svc command: a committed launcher, so npm links it at install time even before the
// first build (the CLI itself is compiled to dist/cli.js by npm run build).
require('../dist/cli.js');
