#!/usr/bin/env node
// Regenerates the gRPC TypeScript code from proto/ with protoc and ts-proto, and each
// service's Prisma client. With --check, regenerates the gRPC code into a temporary folder
// and fails when it differs from the committed files (the drift check).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const protoRoot = join(root, 'proto');
const committed = join(root, 'packages/grpc/src/generated');
const check = process.argv.includes('--check');

function walk(dir, ext) {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return walk(path, ext);
    return path.endsWith(ext) ? [path] : [];
  });
}

function generateGrpc(outDir) {
  const protos = walk(protoRoot, '.proto').map((p) => relative(protoRoot, p));
  const plugin = join(root, 'node_modules/.bin/protoc-gen-ts_proto');
  const options = [
    'outputServices=grpc-js',
    'esModuleInterop=true',
    'forceLong=number',
    'useOptionals=messages',
    'env=node',
    'useExactTypes=false',
  ].join(',');
  execFileSync('protoc', [
    `--plugin=protoc-gen-ts_proto=${plugin}`,
    `--ts_proto_out=${outDir}`,
    `--ts_proto_opt=${options}`,
    `-I${protoRoot}`,
    ...protos,
  ], { stdio: 'inherit' });
}

function hasProtoc() {
  try {
    execFileSync('protoc', ['--version'], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

if (check) {
  if (!hasProtoc()) {
    console.error('check:generated needs protoc (apt-get install protobuf-compiler)');
    process.exit(2);
  }
  const out = mkdtempSync(join(tmpdir(), 'svc-grpc-'));
  try {
    generateGrpc(out);
    const fresh = walk(out, '.ts').map((p) => relative(out, p)).sort();
    const have = existsSync(committed) ? walk(committed, '.ts').map((p) => relative(committed, p)).sort() : [];
    const drift = [];
    for (const file of new Set([...fresh, ...have])) {
      const a = fresh.includes(file) ? readFileSync(join(out, file), 'utf8') : null;
      const b = have.includes(file) ? readFileSync(join(committed, file), 'utf8') : null;
      if (a !== b) drift.push(file);
    }
    if (drift.length > 0) {
      console.error(`generated gRPC code drifted from proto/: ${drift.join(', ')}; run npm run generate`);
      process.exit(1);
    }
    console.log('generated gRPC code matches proto/');
  } finally {
    rmSync(out, { recursive: true, force: true });
  }
} else {
  if (hasProtoc()) {
    rmSync(committed, { recursive: true, force: true });
    execFileSync('mkdir', ['-p', committed]);
    generateGrpc(committed);
  } else {
    console.warn('protoc not found: keeping the committed gRPC code (apt-get install protobuf-compiler to regenerate)');
  }
  execFileSync('npm', ['run', 'generate:prisma'], { cwd: root, stdio: 'inherit' });
}
