#!/usr/bin/env node
// Starts the whole platform on this machine: PostgreSQL and Redis (if down), the provider
// simulator standing in for Brave, Exa and Tavily, a mail catcher (every message the platform
// sends lands there, readable on a web page), account-admin, billing (with the ledger worker
// and the research worker) and the gateway; then makes a demo account (confirmed) with credits, a
// dashboard login, a management key and an API key, and prints how to use them.
// Stays in the foreground; Ctrl-C stops every process it started, by PID.
import { spawn, spawnSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync, mkdirSync, openSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';

// The platform runs on Node.js 24 LTS (package.json engines, .nvmrc, the images): on an older
// Node.js this fetches Node.js 24 from the npm registry and runs this script again under it.
await createRequire(import.meta.url)('./node-runtime.cjs').relaunchUnderWantedNode('npm start');

const { serviceEnv } = createRequire(import.meta.url)('./local-env.cjs');

const root = new URL('..', import.meta.url).pathname;
const localDir = join(root, '.local');
const logDir = join(localDir, 'logs');
mkdirSync(logDir, { recursive: true });

function run(cmd, args, env = {}) {
  const result = spawnSync(cmd, args, { cwd: root, stdio: 'inherit', env: { ...process.env, ...env } });
  if (result.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed`);
}

// Secrets of the local stack: made once, kept in .local/ (git-ignored), never printed except the demo's.
const secretsPath = join(localDir, 'secrets.json');
const secrets = existsSync(secretsPath)
  ? JSON.parse(readFileSync(secretsPath, 'utf8'))
  : {
      INTERNAL_TOKEN: randomBytes(24).toString('base64url'),
      OPERATOR_TOKEN: randomBytes(24).toString('base64url'),
      DEMO_PASSWORD: `demo-${randomBytes(9).toString('base64url')}`,
    };
// The fake Stripe's keys: test-mode placeholders made locally, never real ones.
secrets.STRIPE_SECRET_KEY ??= `sk_test_local_${randomBytes(12).toString('hex')}`;
secrets.STRIPE_WEBHOOK_SECRET ??= `whsec_local_${randomBytes(12).toString('hex')}`;
// The key-encryption key of stored provider keys (BYOK): made once for this machine.
secrets.PROVIDER_KEY_KEK ??= randomBytes(32).toString('base64');
secrets.PROVIDER_KEY_KEK_ID ??= 'local-1';
writeFileSync(secretsPath, JSON.stringify(secrets, null, 2), { mode: 0o600 });
// A token set in the environment is the one the services get (serviceEnv), so use it here too.
const OPERATOR_TOKEN = process.env.OPERATOR_TOKEN || secrets.OPERATOR_TOKEN;

const PG = process.env.POSTGRES_URL ?? 'postgresql://postgres@127.0.0.1:5432';
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const SIM = 'http://127.0.0.1:9090';
const FAKE_STRIPE = 'http://127.0.0.1:12111';
// The mail catcher: SMTP for account-admin, and the page that shows what was sent.
const MAIL_SMTP_PORT = '1025';
const MAIL_PAGE = 'http://127.0.0.1:1080';
const REDIS_CLUSTER = process.env.REDIS_CLUSTER ?? 'false';
const common = { REDIS_URL, REDIS_CLUSTER, INTERNAL_TOKEN: secrets.INTERNAL_TOKEN, LOG_LEVEL: process.env.LOG_LEVEL ?? 'info', HOST: '127.0.0.1' };
// The provider-key KEK goes to account-admin and the gateway only.
const kek = {
  PROVIDER_KEY_KEK: process.env.PROVIDER_KEY_KEK ?? secrets.PROVIDER_KEY_KEK, PROVIDER_KEY_KEK_ID: process.env.PROVIDER_KEY_KEK_ID ?? secrets.PROVIDER_KEY_KEK_ID,
  ...(process.env.PROVIDER_KEY_KEK_PREVIOUS === undefined ? {} : { PROVIDER_KEY_KEK_PREVIOUS: process.env.PROVIDER_KEY_KEK_PREVIOUS }),
};
const providers = {
  BRAVE_API_KEY: 'sim-brave-key', EXA_API_KEY: 'sim-exa-key', TAVILY_API_KEY: 'tvly-sim-key',
  BRAVE_BASE_URL: `${SIM}/brave/res/v1`, EXA_BASE_URL: `${SIM}/exa`, TAVILY_BASE_URL: `${SIM}/tavily`,
};

const services = [
  {
    name: 'fake-stripe', script: 'tools/fake-stripe/dist/main.js', ready: `${FAKE_STRIPE}/healthz`,
    env: {
      PORT: '12111', HOST: '127.0.0.1', STRIPE_SECRET_KEY: secrets.STRIPE_SECRET_KEY,
      STRIPE_WEBHOOK_URL: 'http://127.0.0.1:8080/v1/credits/webhook', STRIPE_WEBHOOK_SECRET: secrets.STRIPE_WEBHOOK_SECRET,
    },
  },
  { name: 'provider-sim', script: 'tools/provider-sim/dist/main.js', ready: `${SIM}/_sim/stats`, env: { PORT: '9090', HOST: '127.0.0.1' } },
  { name: 'mail-catcher', script: 'packages/mail-catcher/dist/main.js', ready: MAIL_PAGE, env: { SMTP_PORT: MAIL_SMTP_PORT, PORT: '1080', HOST: '127.0.0.1' } },
  {
    name: 'account-admin', script: 'services/account-admin/dist/main.js', ready: 'http://127.0.0.1:3001/readyz',
    env: { ...common, ...kek, PORT: '3001', GRPC_PORT: '50051', DATABASE_URL: `${PG}/svc_account_admin`, COOKIE_SECURE: 'false', MIGRATE_ON_START: 'true',
      // Mail goes to the catcher; a sign-up is confirmed by the link it mails (SIGNUP_CONFIRMATION=off npm start: at once).
      SMTP_HOST: '127.0.0.1', SMTP_PORT: MAIL_SMTP_PORT, SMTP_TLS: 'off', MAIL_FROM: 'Search gateway <no-reply@localhost>', SIGNUP_CONFIRMATION: 'required' },
  },
  {
    name: 'billing', script: 'services/billing/dist/main.js', ready: 'http://127.0.0.1:3002/readyz',
    env: { ...common, PORT: '3002', OPERATOR_PORT: '8081', DATABASE_URL: `${PG}/svc_billing`, OPERATOR_TOKEN: secrets.OPERATOR_TOKEN, ACCOUNT_ADMIN_GRPC_URL: '127.0.0.1:50051', MIGRATE_ON_START: 'true',
      STRIPE_SECRET_KEY: secrets.STRIPE_SECRET_KEY, STRIPE_WEBHOOK_SECRET: secrets.STRIPE_WEBHOOK_SECRET, STRIPE_API_BASE: FAKE_STRIPE,
      CHECKOUT_SUCCESS_URL: 'http://localhost:8080/dashboard?checkout=success', CHECKOUT_CANCEL_URL: 'http://localhost:8080/dashboard?checkout=cancel',
      // Local receivers (http, loopback) may be webhook endpoints here, never in production (docs/decisions/0028).
      WEBHOOK_ALLOW_HTTP_AND_LOOPBACK: 'true' },
  },
  {
    name: 'ledger-worker', script: 'services/billing/dist/worker.js', ready: 'http://127.0.0.1:3003/healthz',
    env: { ...common, PORT: '3003', DATABASE_URL: `${PG}/svc_billing`, ACCOUNT_ADMIN_GRPC_URL: '127.0.0.1:50051', WEBHOOK_ALLOW_HTTP_AND_LOOPBACK: 'true',
      // Automatic top-up charges the saved card through the same fake Stripe.
      STRIPE_SECRET_KEY: secrets.STRIPE_SECRET_KEY, STRIPE_API_BASE: FAKE_STRIPE },
  },
  {
    // Research runs (POST /v1/research) against the simulator's Exa Agent runs and Tavily research.
    name: 'research-worker', script: 'services/billing/dist/research-worker.js', ready: 'http://127.0.0.1:3004/healthz',
    env: { ...common, PORT: '3004', DATABASE_URL: `${PG}/svc_billing`, EXA_API_KEY: providers.EXA_API_KEY, TAVILY_API_KEY: providers.TAVILY_API_KEY,
      EXA_BASE_URL: providers.EXA_BASE_URL, TAVILY_BASE_URL: providers.TAVILY_BASE_URL },
  },
  {
    name: 'search-gateway', script: 'services/search-gateway/dist/main.js', ready: 'http://127.0.0.1:8080/readyz',
    env: { ...common, ...kek, PORT: '8080', ACCOUNT_ADMIN_GRPC_URL: '127.0.0.1:50051', ACCOUNT_ADMIN_HTTP_URL: 'http://127.0.0.1:3001', BILLING_HTTP_URL: 'http://127.0.0.1:3002', ...providers },
  },
];

const children = [];
function stopAll(code) {
  for (const child of children.reverse()) {
    if (child.exitCode === null) child.kill('SIGTERM');
  }
  process.exit(code);
}
process.on('SIGINT', () => stopAll(0));
process.on('SIGTERM', () => stopAll(0));

async function waitReady(name, url, child) {
  const deadline = Date.now() + 60_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) throw new Error(`${name} exited; see .local/logs/${name}.log`);
    const ok = await fetch(url).then((r) => r.status === 200, () => false);
    if (ok) return;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`${name} not ready at ${url}; see .local/logs/${name}.log`);
}

async function createDatabases() {
  const { Client } = await import('pg');
  const admin = new Client({ connectionString: `${PG}/postgres` });
  await admin.connect();
  for (const db of ['svc_account_admin', 'svc_billing']) {
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [db]);
    if (exists.rowCount === 0) await admin.query(`CREATE DATABASE ${db}`);
  }
  await admin.end();
}

async function json(method, url, { body, headers = {} } = {}) {
  const response = await fetch(url, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, body: text === '' ? null : JSON.parse(text) };
}

async function demoAccount() {
  const base = 'http://127.0.0.1:8080';
  const email = 'demo@example.com';
  const credentials = { email, password: secrets.DEMO_PASSWORD };
  let auth = await json('POST', `${base}/dashboard/api/login`, { body: credentials });
  if (auth.status === 400) {
    // No demo user yet (it is made confirmed, without a mail), or one from an earlier .local/
    // whose password is gone: the operator's command makes it or sets its password.
    run(process.execPath, ['services/account-admin/dist/sessions/reset-password-cli.js'], {
      DATABASE_URL: `${PG}/svc_account_admin`, RESET_EMAIL: email, RESET_PASSWORD: secrets.DEMO_PASSWORD, RESET_CREATE: 'true',
    });
    auth = await json('POST', `${base}/dashboard/api/login`, { body: credentials });
  }
  if (auth.status !== 200) throw new Error(`demo login failed: ${JSON.stringify(auth.body)}`);
  const cookie = (auth.headers.get('set-cookie') ?? '').split(';')[0];
  const session = { cookie, 'x-csrf-token': auth.body.csrf_token };
  const mgmt = await json('POST', `${base}/dashboard/api/management-keys`, { body: { name: `demo ${new Date().toISOString()}` }, headers: session });
  if (mgmt.status !== 201) throw new Error(`demo management key failed: ${JSON.stringify(mgmt.body)}`);
  const api = await json('POST', `${base}/v1/keys`, { body: { name: 'demo' }, headers: { authorization: `Bearer ${mgmt.body.secret}` } });
  if (api.status !== 201) throw new Error(`demo API key failed: ${JSON.stringify(api.body)}`);
  const grant = await json('POST', `http://127.0.0.1:8081/operator/accounts/${auth.body.account_id}/grants`, {
    body: { amount_usd: 25, reason: 'demo credits' },
    headers: { authorization: `Bearer ${OPERATOR_TOKEN}`, 'idempotency-key': `demo-initial-grant-${auth.body.account_id}` },
  });
  if (grant.status !== 201) throw new Error(`demo grant failed: ${JSON.stringify(grant.body)}`);
  return { accountId: auth.body.account_id, email, managementKey: mgmt.body.secret, apiKey: api.body.secret };
}

async function main() {
  run('bash', ['scripts/ensure-stores.sh']);
  if (process.env.SKIP_BUILD !== '1') run('npm', ['run', 'build']);
  await createDatabases();
  for (const service of services) {
    if (!existsSync(join(root, service.script))) {
      if (service.optional) continue;
      throw new Error(`${service.script} is missing: run npm run build`);
    }
    const log = openSync(join(logDir, `${service.name}.log`), 'a');
    const child = spawn(process.execPath, [service.script], {
      cwd: root, stdio: ['ignore', log, log], env: serviceEnv(service.env, process.env),
    });
    children.push(child);
    child.on('exit', (code) => console.error(`${service.name} (pid ${child.pid}) exited with ${code}; see .local/logs/${service.name}.log`));
    if (service.ready !== undefined) await waitReady(service.name, service.ready, child);
    console.log(`started ${service.name} (pid ${child.pid})`);
  }
  const demo = await demoAccount();
  console.log(`
The platform is running. Public API: http://localhost:8080  (logs in .local/logs/)

Dashboard:        http://localhost:8080/dashboard
  login           ${demo.email} / ${secrets.DEMO_PASSWORD}
Management key:   ${demo.managementKey}
API key:          ${demo.apiKey}
Account:          ${demo.accountId} (25 USD of credits)
Operator API:     http://127.0.0.1:8081  (token: OPERATOR_TOKEN in .local/secrets.json)
Mail:             every message sent is caught, not delivered: read it at ${MAIL_PAGE}
                  (SMTP 127.0.0.1:${MAIL_SMTP_PORT}); ${process.env.SIGNUP_CONFIRMATION === 'off' ? 'sign-up makes the account at once (SIGNUP_CONFIRMATION=off)' : 'a new sign-up is confirmed by the link it mails'}
Stripe:           a local fake at ${FAKE_STRIPE}; pay a checkout with
                  curl -X POST ${FAKE_STRIPE}/_fake/sessions/<cs_ id>/complete -H 'content-type: application/json' -d '{"deliver":true}'

Try:
  export SVC_API_KEY=${demo.apiKey}
  curl -s localhost:8080/v1/models
  curl -s -H "Authorization: Bearer $SVC_API_KEY" localhost:8080/v1/credits
  curl -s -H "Authorization: Bearer $SVC_API_KEY" -H 'content-type: application/json' \\
       -d '{"query":"rust async runtimes","models":["exa/fast","brave/web"]}' localhost:8080/v1/search

Ctrl-C stops everything.`);
}

main().catch((error) => {
  console.error(error instanceof Error ? error.message : error);
  stopAll(1);
});
