import { existsSync } from 'node:fs';
import { join } from 'node:path';
import {
  DEPLOYABLES, MAIL_CATCHER, PROVIDER_SIM, ROOT, arr, composeEnv, composeService, interpolations, knownVars, loadCompose, neededVars,
  obj, optArr, readText, text,
} from './deploy-kit';
import type { Deployable, Json } from './deploy-kit';

const compose = loadCompose();
const services = obj(compose['services'], 'services');
const RUNNABLE: readonly Deployable[] = [...DEPLOYABLES, PROVIDER_SIM, MAIL_CATCHER];
/** The local stand-ins, health-checked on /healthz (they have no stores to be ready for). */
const STAND_INS: readonly Deployable[] = [PROVIDER_SIM, MAIL_CATCHER];

function healthTest(service: Json, name: string): string[] {
  const healthcheck = obj(service['healthcheck'], `${name}.healthcheck`);
  return arr(healthcheck['test'], `${name}.healthcheck.test`).map((part) => text(part, `${name}.healthcheck.test`));
}

function dependsOn(service: Json, name: string): Json {
  return obj(service['depends_on'], `${name}.depends_on`);
}

function conditionOf(service: Json, name: string, dependency: string): unknown {
  const entry = dependsOn(service, name)[dependency];
  return entry === undefined ? undefined : obj(entry, `${name}.depends_on.${dependency}`)['condition'];
}

function dockerfileTargets(): Map<string, string[]> {
  const targets = new Map<string, string[]>();
  let current: string | undefined;
  for (const line of readText('Dockerfile').split('\n')) {
    const from = /^FROM\s+\S+\s+AS\s+(\S+)/i.exec(line);
    if (from !== null) {
      current = from[1];
      continue;
    }
    const cmd = /^CMD\s+(\[.*\])\s*$/.exec(line);
    if (cmd !== null && current !== undefined) targets.set(current, JSON.parse(cmd[1] ?? '[]') as string[]);
  }
  return targets;
}

describe('docker-compose.yml: the whole stack on one machine', () => {
  it('defines every service of the platform with PostgreSQL, Redis and the migrations', () => {
    expect(Object.keys(services).sort()).toEqual(
      ['account-admin', 'billing', 'billing-worker', 'mail-catcher', 'migrate-account-admin', 'migrate-billing', 'postgres', 'provider-sim', 'redis', 'research-worker', 'search-gateway'],
    );
    expect(text(composeService(compose, 'postgres')['image'], 'postgres.image')).toMatch(/^postgres:16(\b|-)/);
    expect(text(composeService(compose, 'redis')['image'], 'redis.image')).toMatch(/^redis:7(\b|-)/);
  });

  it.each(RUNNABLE.map((d) => [d.name, d] as const))('%s gets every variable its config needs, and no unknown one', (_name, deployable) => {
    const env = composeEnv(composeService(compose, deployable.name), deployable.name);
    const missing = neededVars(deployable).filter((v) => !env.has(v));
    expect(missing).toEqual([]);
    const known = knownVars(deployable);
    const unknown = [...env.keys()].filter((v) => !known.has(v) && !(deployable === PROVIDER_SIM && v.startsWith('SIM_')) && v !== 'LOG_LEVEL');
    expect(unknown).toEqual([]);
  });

  it.each(RUNNABLE.map((d) => [d.name, d] as const))('%s listens on its port and is health-checked on it', (_name, deployable) => {
    const service = composeService(compose, deployable.name);
    const env = composeEnv(service, deployable.name);
    expect(env.get('PORT')).toBe(String(deployable.port));
    expect(env.get('HOST')).toBe('0.0.0.0');
    const test = healthTest(service, deployable.name);
    expect(test.join(' ')).toContain(`healthcheck.mjs ${deployable.port} /${STAND_INS.includes(deployable) ? 'healthz' : 'readyz'}`);
  });

  it('PostgreSQL and Redis have health checks, and PostgreSQL creates both databases on first start', () => {
    expect(healthTest(composeService(compose, 'postgres'), 'postgres')).toContain('pg_isready');
    expect(healthTest(composeService(compose, 'redis'), 'redis')).toEqual(['CMD', 'redis-cli', 'ping']);
    const volumes = optArr(composeService(compose, 'postgres')['volumes'], 'postgres.volumes').map((v) => text(v, 'volume'));
    const init = volumes.find((v) => v.endsWith(':/docker-entrypoint-initdb.d:ro'));
    expect(init).toBeDefined();
    const hostDir = (init ?? '').split(':')[0] ?? '';
    const sql = readText(join(hostDir, '01-create-databases.sql'));
    expect(sql).toMatch(/CREATE DATABASE svc_account_admin;/);
    expect(sql).toMatch(/CREATE DATABASE svc_billing;/);
  });

  it('each database owner migrates its own database once, before its service starts', () => {
    for (const [migrator, owner, database] of [
      ['migrate-account-admin', 'account-admin', 'svc_account_admin'],
      ['migrate-billing', 'billing', 'svc_billing'],
    ] as const) {
      const service = composeService(compose, migrator);
      expect(service['command']).toEqual(['node', `services/${owner}/dist/db/migrate-cli.js`]);
      expect(service['image']).toBe(composeService(compose, owner)['image']);
      expect(service['restart']).toBe('no');
      expect(composeEnv(service, migrator).get('DATABASE_URL')).toMatch(new RegExp(`@postgres:5432/${database}$`));
      expect(conditionOf(service, migrator, 'postgres')).toBe('service_healthy');
      expect(composeEnv(composeService(compose, owner), owner).get('DATABASE_URL')).toMatch(new RegExp(`@postgres:5432/${database}$`));
      expect(composeEnv(composeService(compose, owner), owner).get('MIGRATE_ON_START')).toBe('false');
      expect(conditionOf(composeService(compose, owner), owner, migrator)).toBe('service_completed_successfully');
    }
    expect(conditionOf(composeService(compose, 'billing-worker'), 'billing-worker', 'migrate-billing')).toBe('service_completed_successfully');
    expect(conditionOf(composeService(compose, 'research-worker'), 'research-worker', 'migrate-billing')).toBe('service_completed_successfully');
  });

  it('services start only after what they talk to is healthy', () => {
    const expectations: Record<string, string[]> = {
      'account-admin': ['postgres', 'redis'],
      billing: ['postgres', 'redis', 'account-admin'],
      'billing-worker': ['postgres', 'redis'],
      'research-worker': ['postgres', 'redis', 'provider-sim'],
      'search-gateway': ['redis', 'account-admin', 'billing', 'provider-sim'],
    };
    for (const [name, dependencies] of Object.entries(expectations)) {
      for (const dependency of dependencies) {
        expect([name, dependency, conditionOf(composeService(compose, name), name, dependency)]).toEqual([name, dependency, 'service_healthy']);
      }
    }
  });

  it('publishes only the gateway, and the operator API and the mail catcher\'s page only on the host loopback', () => {
    const published = Object.fromEntries(
      Object.entries(services)
        .filter(([, s]) => obj(s, 'service')['ports'] !== undefined)
        .map(([name, s]) => [name, optArr(obj(s, name)['ports'], `${name}.ports`).map((p) => String(p))]),
    );
    expect(published).toEqual({ billing: ['127.0.0.1:8081:8081'], 'mail-catcher': ['127.0.0.1:1080:1080'], 'search-gateway': ['8080:8080'] });
    expect(composeEnv(composeService(compose, 'billing'), 'billing').get('OPERATOR_PORT')).toBe('8081');
  });

  it('account-admin mails through the catcher unless .env names a relay, and confirms sign-ups by mail', () => {
    const env = composeEnv(composeService(compose, 'account-admin'), 'account-admin');
    const catcher = composeEnv(composeService(compose, 'mail-catcher'), 'mail-catcher');
    expect(env.get('SMTP_HOST')).toBe('${SMTP_HOST:-mail-catcher}');
    expect(env.get('SMTP_PORT')).toBe(`\${SMTP_PORT:-${catcher.get('SMTP_PORT') ?? ''}}`);
    expect(env.get('SMTP_TLS')).toBe('${SMTP_TLS:-off}');
    expect(env.get('SIGNUP_CONFIRMATION')).toBe('${SIGNUP_CONFIRMATION:-required}');
    expect(env.get('MAIL_FROM')).toMatch(/^\$\{MAIL_FROM:-.+<.+@.+>\}$/);
    expect(env.get('SMTP_PASSWORD')).toBe('${SMTP_PASSWORD:-}');
  });

  it('the workers run the billing image with their own entry points', () => {
    const worker = composeService(compose, 'billing-worker');
    expect(worker['command']).toEqual(['node', 'services/billing/dist/worker.js']);
    expect(worker['image']).toBe(composeService(compose, 'billing')['image']);
    expect(worker['build']).toEqual(composeService(compose, 'billing')['build']);
    const research = composeService(compose, 'research-worker');
    expect(research['command']).toEqual(['node', 'services/billing/dist/research-worker.js']);
    expect(research['image']).toBe(composeService(compose, 'billing')['image']);
    expect(research['build']).toEqual(composeService(compose, 'billing')['build']);
  });

  it('sets the session cookie Secure (COOKIE_SECURE true unless the environment says otherwise)', () => {
    const env = composeEnv(composeService(compose, 'account-admin'), 'account-admin');
    expect(env.get('COOKIE_SECURE')).toBe('true');
  });

  it('the gateway points at the simulator for all three providers, with keys the simulator accepts', () => {
    const env = composeEnv(composeService(compose, 'search-gateway'), 'search-gateway');
    expect(env.get('BRAVE_BASE_URL')).toBe('http://provider-sim:9090/brave/res/v1');
    expect(env.get('EXA_BASE_URL')).toBe('http://provider-sim:9090/exa');
    expect(env.get('TAVILY_BASE_URL')).toBe('http://provider-sim:9090/tavily');
    expect(env.get('ACCOUNT_ADMIN_GRPC_URL')).toBe('account-admin:50051');
    expect(env.get('ACCOUNT_ADMIN_HTTP_URL')).toBe('http://account-admin:3001');
    expect(env.get('BILLING_HTTP_URL')).toBe('http://billing:3002');
    const sim = composeEnv(composeService(compose, 'provider-sim'), 'provider-sim');
    expect(sim.get('SIM_BRAVE_KEY')).toBe(env.get('BRAVE_API_KEY'));
    expect(sim.get('SIM_EXA_KEY')).toBe(env.get('EXA_API_KEY'));
    expect(sim.get('SIM_TAVILY_KEY')).toBe(env.get('TAVILY_API_KEY'));
    // The research worker calls the same simulator with the same keys.
    const research = composeEnv(composeService(compose, 'research-worker'), 'research-worker');
    expect([research.get('EXA_BASE_URL'), research.get('TAVILY_BASE_URL')]).toEqual(['http://provider-sim:9090/exa', 'http://provider-sim:9090/tavily']);
    expect([research.get('EXA_API_KEY'), research.get('TAVILY_API_KEY')]).toEqual([env.get('EXA_API_KEY'), env.get('TAVILY_API_KEY')]);
  });

  it('secrets come from the uncommitted .env file, and .env.example documents every required one', () => {
    const source = readText('docker-compose.yml');
    const example = readText('.env.example');
    const documented = new Set([...example.matchAll(/^#?\s*([A-Z_][A-Z0-9_]*)=/gm)].map((m) => m[1]));
    const refs = interpolations(source);
    expect(refs.length).toBeGreaterThan(0);
    const undocumented = refs.filter((r) => !r.hasDefault && !documented.has(r.name)).map((r) => r.name);
    expect(undocumented).toEqual([]);
    for (const name of ['INTERNAL_TOKEN', 'OPERATOR_TOKEN', 'POSTGRES_PASSWORD']) {
      expect(refs.some((r) => r.name === name && r.required)).toBe(true);
    }
    for (const [service, name] of [
      ['billing', 'OPERATOR_TOKEN'], ['billing', 'STRIPE_SECRET_KEY'], ['billing', 'STRIPE_WEBHOOK_SECRET'], ['search-gateway', 'INTERNAL_TOKEN'],
    ] as const) {
      expect(composeEnv(composeService(compose, service), service).get(name)).toMatch(new RegExp(`^\\$\\{${name}(:[-?][^}]*)?\\}$`));
    }
    expect(readText('.gitignore').split('\n').map((l) => l.trim())).toContain('.env');
    expect(readText('.dockerignore').split('\n').map((l) => l.trim())).toContain('.env');
    expect(existsSync(join(ROOT, '.env.example'))).toBe(true);
  });

  it('every built service names a Dockerfile target whose command is its entry point', () => {
    const targets = dockerfileTargets();
    for (const deployable of RUNNABLE) {
      const build = obj(composeService(compose, deployable.name)['build'], `${deployable.name}.build`);
      const target = text(build['target'], `${deployable.name}.build.target`);
      expect(build['context']).toBe('.');
      expect(targets.has(target)).toBe(true);
      const command = composeService(compose, deployable.name)['command'] ?? targets.get(target);
      expect([deployable.name, command]).toEqual([deployable.name, [...deployable.command]]);
    }
  });
});

describe('Dockerfile: one multi-stage build', () => {
  const dockerfile = readText('Dockerfile');
  const instructions = dockerfile.split('\n').filter((line) => !line.trimStart().startsWith('#'));

  // The base image, npm ci, the stages and the image's contents: image.spec.ts.
  it('runs as a numeric non-root user with an init process', () => {
    const users = instructions.filter((l) => /^USER /.test(l));
    expect(users).toEqual(['USER 1000:1000']);
    expect(instructions).toContain('ENTRYPOINT ["/usr/bin/tini", "--"]');
  });

  it('has one target per deployable with its entry point, the gateway being the default', () => {
    const targets = dockerfileTargets();
    expect(targets.get('search-gateway')).toEqual([...(DEPLOYABLES[0]?.command ?? [])]);
    expect(targets.get('account-admin')).toEqual(['node', 'services/account-admin/dist/main.js']);
    expect(targets.get('billing')).toEqual(['node', 'services/billing/dist/main.js']);
    expect(targets.get('provider-sim')).toEqual(['node', 'tools/provider-sim/dist/main.js']);
    expect(targets.get('mail-catcher')).toEqual(['node', 'packages/mail-catcher/dist/main.js']);
    const froms = instructions.filter((l) => /^FROM /.test(l));
    expect(froms.at(-1)).toMatch(/AS search-gateway$/);
  });

  it('keeps node_modules, build output and the local .env out of the build context', () => {
    const ignored = readText('.dockerignore').split('\n').map((l) => l.trim());
    expect(ignored).toEqual(expect.arrayContaining(['**/node_modules', '**/dist', '.env', '.git']));
  });
});
