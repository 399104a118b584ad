/**
 * Helpers for the deployment tests: load the compose file and the Kubernetes manifests,
 * read each service's environment schema (its src/config.ts) and check env coverage.
 * Everything here is pure parsing: there is no Docker engine or cluster on these machines.
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import * as ts from 'typescript';
import { parse, parseAllDocuments } from 'yaml';
import { repoRoot } from '@svc/test-kit';

export const ROOT = repoRoot();
export const K8S_DIR = join(ROOT, 'deploy', 'k8s');
export const NAMESPACE = 'svc-platform';
/** The Secret template: documents names and keys, never applied (not in kustomization). */
export const SECRET_TEMPLATE = 'secrets.template.yaml';

export type Json = Record<string, unknown>;

export function readText(relative: string): string {
  return readFileSync(join(ROOT, relative), 'utf8');
}

export function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

export function obj(value: unknown, where: string): Json {
  if (!isObject(value)) throw new Error(`${where}: expected a mapping, got ${JSON.stringify(value)}`);
  return value;
}

export function arr(value: unknown, where: string): unknown[] {
  if (!Array.isArray(value)) throw new Error(`${where}: expected a list, got ${JSON.stringify(value)}`);
  return value;
}

export function optArr(value: unknown, where: string): unknown[] {
  return value === undefined ? [] : arr(value, where);
}

export function text(value: unknown, where: string): string {
  if (typeof value !== 'string') throw new Error(`${where}: expected a string, got ${JSON.stringify(value)}`);
  return value;
}

// ---------------------------------------------------------------- environment schemas --

export interface EnvVarSpec {
  readonly name: string;
  /** No default and not optional: the service refuses to start without it. */
  readonly required: boolean;
  /** Declared with secret(): must come from a Secret, never a ConfigMap or literal. */
  readonly secret: boolean;
}

const FIELD_FACTORIES = new Set(['int', 'str', 'bool', 'url', 'secret', 'oneOf']);

/**
 * Reads the env schema object literals of a TypeScript file with the compiler API: every
 * property `NAME: <factory>(...)` where factory is one of @svc/config's field builders.
 */
export function envSchemaFromSource(source: string, fileName = 'config.ts'): EnvVarSpec[] {
  const file = ts.createSourceFile(fileName, source, ts.ScriptTarget.ES2022, true, ts.ScriptKind.TS);
  const specs = new Map<string, EnvVarSpec>();
  const visit = (node: ts.Node): void => {
    if (ts.isPropertyAssignment(node) && ts.isCallExpression(node.initializer)) {
      const name = ts.isIdentifier(node.name) || ts.isStringLiteral(node.name) ? node.name.text : undefined;
      const callee = node.initializer.expression;
      if (name !== undefined && /^[A-Z][A-Z0-9_]*$/.test(name) && ts.isIdentifier(callee) && FIELD_FACTORIES.has(callee.text)) {
        const options = node.initializer.arguments.filter(ts.isObjectLiteralExpression).at(-1);
        const property = (key: string): ts.PropertyAssignment | undefined =>
          options?.properties.find(
            (p): p is ts.PropertyAssignment => ts.isPropertyAssignment(p) && ts.isIdentifier(p.name) && p.name.text === key,
          );
        const optional = property('optional')?.initializer.kind === ts.SyntaxKind.TrueKeyword;
        const hasDefault = property('default') !== undefined;
        specs.set(name, { name, required: !optional && !hasDefault, secret: callee.text === 'secret' });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return [...specs.values()];
}

/** The env schema in `relative` (e.g. services/billing/src/config.ts), or undefined while it does not exist. */
export function envSchemaOf(relative: string): EnvVarSpec[] | undefined {
  const path = join(ROOT, relative);
  if (!existsSync(path)) return undefined;
  return envSchemaFromSource(readFileSync(path, 'utf8'), relative);
}

export interface Deployable {
  /** Name of the compose service and of the Kubernetes Deployment. */
  readonly name: string;
  /** Where its environment schema lives (the first that exists wins). */
  readonly configFiles: readonly string[];
  /** The variables the platform's deployment brief lists for it. */
  readonly listed: readonly string[];
  /** Variables holding credentials: Secret-only in Kubernetes. */
  readonly secrets: readonly string[];
  readonly port: number;
  readonly command: readonly string[];
}

const ALL = ['REDIS_URL', 'INTERNAL_TOKEN', 'LOG_LEVEL'];

export const DEPLOYABLES: readonly Deployable[] = [
  {
    name: 'search-gateway',
    configFiles: ['services/search-gateway/src/config.ts'],
    listed: [
      ...ALL, 'PORT', 'HOST', 'ACCOUNT_ADMIN_GRPC_URL', 'ACCOUNT_ADMIN_HTTP_URL', 'BILLING_HTTP_URL', 'KEY_CACHE_TTL_MS',
      'KEY_PROPAGATION_MAX_MS', 'RATE_LIMIT_PER_SECOND', 'RATE_LIMIT_BURST', 'ACCOUNT_MAX_IN_FLIGHT',
      'PROVIDER_MAX_IN_FLIGHT_BRAVE', 'PROVIDER_MAX_IN_FLIGHT_EXA', 'PROVIDER_MAX_IN_FLIGHT_TAVILY', 'PROVIDER_TIMEOUT_MS',
      'BYOK_ENABLED', 'BYOK_FEE_PERCENT', 'BRAVE_API_KEY', 'EXA_API_KEY', 'TAVILY_API_KEY', 'BRAVE_BASE_URL', 'EXA_BASE_URL',
      'TAVILY_BASE_URL',
    ],
    secrets: ['REDIS_URL', 'INTERNAL_TOKEN', 'BRAVE_API_KEY', 'EXA_API_KEY', 'TAVILY_API_KEY'],
    port: 8080,
    command: ['node', 'services/search-gateway/dist/main.js'],
  },
  {
    name: 'account-admin',
    configFiles: ['services/account-admin/src/config.ts'],
    // Mail (decisions 0054, 0055): the SMTP server, the sender, and sign-up confirmed by mail.
    listed: [
      ...ALL, 'PORT', 'GRPC_PORT', 'HOST', 'DATABASE_URL', 'SESSION_TTL_HOURS', 'COOKIE_SECURE', 'MIGRATE_ON_START', 'BILLING_HTTP_URL',
      'SMTP_HOST', 'SMTP_PORT', 'SMTP_TLS', 'MAIL_FROM', 'SIGNUP_CONFIRMATION',
    ],
    secrets: ['REDIS_URL', 'INTERNAL_TOKEN', 'DATABASE_URL', 'SMTP_USER', 'SMTP_PASSWORD'],
    port: 3001,
    command: ['node', 'services/account-admin/dist/main.js'],
  },
  {
    name: 'billing',
    configFiles: ['services/billing/src/config.ts'],
    listed: [
      ...ALL, 'PORT', 'OPERATOR_PORT', 'HOST', 'DATABASE_URL', 'OPERATOR_TOKEN', 'ACCOUNT_ADMIN_GRPC_URL', 'STRIPE_SECRET_KEY',
      'STRIPE_WEBHOOK_SECRET', 'STRIPE_API_BASE', 'MIGRATE_ON_START',
    ],
    secrets: ['REDIS_URL', 'INTERNAL_TOKEN', 'DATABASE_URL', 'OPERATOR_TOKEN', 'STRIPE_SECRET_KEY', 'STRIPE_WEBHOOK_SECRET'],
    port: 3002,
    command: ['node', 'services/billing/dist/main.js'],
  },
  {
    // Same image as billing, with its own environment schema.
    name: 'billing-worker',
    configFiles: ['services/billing/src/worker-config.ts'],
    // Stripe's secret key and API base: automatic top-up's off-session PaymentIntents (decision 0028);
    // one account's share of the delivery slots (decision 0041).
    listed: [...ALL, 'PORT', 'HOST', 'DATABASE_URL', 'STRIPE_SECRET_KEY', 'STRIPE_API_BASE', 'WEBHOOK_ACCOUNT_CONCURRENCY'],
    secrets: ['REDIS_URL', 'INTERNAL_TOKEN', 'DATABASE_URL', 'STRIPE_SECRET_KEY'],
    port: 3003,
    command: ['node', 'services/billing/dist/worker.js'],
  },
  {
    // Same image as billing: research runs as BullMQ jobs (decision 0064), with the gateway's provider keys and hosts.
    name: 'research-worker',
    configFiles: ['services/billing/src/research-worker-config.ts'],
    listed: [...ALL, 'PORT', 'HOST', 'DATABASE_URL', 'EXA_API_KEY', 'TAVILY_API_KEY', 'EXA_BASE_URL', 'TAVILY_BASE_URL'],
    secrets: ['REDIS_URL', 'INTERNAL_TOKEN', 'DATABASE_URL', 'EXA_API_KEY', 'TAVILY_API_KEY'],
    port: 3004,
    command: ['node', 'services/billing/dist/research-worker.js'],
  },
];

export const PROVIDER_SIM: Deployable = {
  name: 'provider-sim',
  configFiles: ['tools/provider-sim/src/main.ts', 'tools/provider-sim/src/config.ts'],
  listed: ['PORT', 'HOST', 'SIM_BASE_LATENCY_MS'],
  secrets: [],
  port: 9090,
  command: ['node', 'tools/provider-sim/dist/main.js'],
};

/** The local stack's mail catcher (compose only: production sends through a real SMTP relay). */
export const MAIL_CATCHER: Deployable = {
  name: 'mail-catcher',
  configFiles: ['packages/mail-catcher/src/main.ts'],
  listed: ['PORT', 'HOST', 'SMTP_PORT'],
  secrets: [],
  port: 1080,
  command: ['node', 'packages/mail-catcher/dist/main.js'],
};

/** The schema of a deployable from its first existing config file (undefined before it exists). */
export function schemaOf(deployable: Deployable): EnvVarSpec[] | undefined {
  for (const file of deployable.configFiles) {
    const schema = envSchemaOf(file);
    if (schema !== undefined && schema.length > 0) return schema;
  }
  return undefined;
}

/** Everything a deployment must provide: the listed variables plus the schema's required ones. */
export function neededVars(deployable: Deployable): string[] {
  const required = (schemaOf(deployable) ?? []).filter((v) => v.required).map((v) => v.name);
  return [...new Set([...deployable.listed, ...required])].sort();
}

/** Variables that must come from a Secret: the listed credentials plus every secret() field. */
export function secretVars(deployable: Deployable): string[] {
  const declared = (schemaOf(deployable) ?? []).filter((v) => v.secret).map((v) => v.name);
  return [...new Set([...deployable.secrets, ...declared])].sort();
}

/** Variables the deployable knows: listed or declared (a name outside both is a typo). */
export function knownVars(deployable: Deployable): Set<string> {
  return new Set([...deployable.listed, ...(schemaOf(deployable) ?? []).map((v) => v.name)]);
}

// ------------------------------------------------------------------------- compose --

export function loadCompose(): Json {
  // Merge keys (<<: *anchor) are YAML 1.1; the compose file uses them for shared blocks.
  return obj(parse(readText('docker-compose.yml'), { merge: true }), 'docker-compose.yml');
}

export function composeService(compose: Json, name: string): Json {
  return obj(obj(compose['services'], 'services')[name], `services.${name}`);
}

/** A compose service's environment as a map, whichever of the two forms it uses. */
export function composeEnv(service: Json, where: string): Map<string, string> {
  const env = service['environment'];
  const out = new Map<string, string>();
  if (env === undefined) return out;
  if (Array.isArray(env)) {
    for (const entry of env) {
      const line = text(entry, `${where}.environment`);
      const eq = line.indexOf('=');
      out.set(eq < 0 ? line : line.slice(0, eq), eq < 0 ? '' : line.slice(eq + 1));
    }
    return out;
  }
  for (const [key, value] of Object.entries(obj(env, `${where}.environment`))) {
    out.set(key, value === null ? '' : String(value));
  }
  return out;
}

/** `${NAME}`, `${NAME:-default}`, `${NAME:?message}` references in a compose value. */
export function interpolations(value: string): { name: string; hasDefault: boolean; required: boolean }[] {
  return [...value.matchAll(/\$\{([A-Z_][A-Z0-9_]*)(?:(:?-)[^}]*|(:?\?)[^}]*)?\}/g)].map((m) => ({
    name: m[1] ?? '',
    hasDefault: m[2] !== undefined,
    required: m[3] !== undefined,
  }));
}

// ---------------------------------------------------------------------- kubernetes --

export interface Manifest {
  readonly file: string;
  readonly doc: Json;
  readonly kind: string;
  readonly name: string;
}

export function parseManifests(file: string, source: string): Manifest[] {
  return parseAllDocuments(source)
    .map((document, index) => {
      if (document.errors.length > 0) throw new Error(`${file} document ${index}: ${document.errors[0]?.message ?? 'invalid YAML'}`);
      return document.toJS() as unknown;
    })
    .filter((doc) => doc !== null && doc !== undefined)
    .map((doc, index) => {
      const d = obj(doc, `${file} document ${index}`);
      const metadata = obj(d['metadata'], `${file} document ${index} metadata`);
      return { file, doc: d, kind: text(d['kind'], `${file} kind`), name: text(metadata['name'], `${file} name`) };
    });
}

export function k8sFiles(): string[] {
  return readdirSync(K8S_DIR).filter((f) => f.endsWith('.yaml') || f.endsWith('.yml')).sort();
}

export function loadKustomization(): Json {
  return obj(parse(readFileSync(join(K8S_DIR, 'kustomization.yaml'), 'utf8')), 'kustomization.yaml');
}

/** kustomize input that is never applied (annotated `config.kubernetes.io/local-config: "true"`). */
export function isLocalConfig(manifest: Manifest): boolean {
  const annotations = obj(manifest.doc['metadata'], `${manifest.name} metadata`)['annotations'];
  return isObject(annotations) && annotations['config.kubernetes.io/local-config'] === 'true';
}

function kustomizationResources(): Manifest[] {
  const resources = arr(loadKustomization()['resources'], 'kustomization resources').map((r) => text(r, 'resource'));
  return resources.flatMap((file) => parseManifests(file, readFileSync(join(K8S_DIR, file), 'utf8')));
}

/** Every manifest the kustomization deploys (its local-config input left out). */
export function deployedManifests(): Manifest[] {
  return kustomizationResources().filter((m) => !isLocalConfig(m));
}

/** The stores' network the user set (deploy/k8s/stores-network.yaml, `data.cidr`). */
export function storesCidr(): string {
  const config = localConfig().find((m) => m.kind === 'ConfigMap' && m.name === 'stores-network');
  if (config === undefined) throw new Error('deploy/k8s has no stores-network ConfigMap');
  return text(obj(config.doc['data'], 'stores-network data')['cidr'], 'stores-network data.cidr');
}

/** The kustomization's local-config input (the values the user sets, e.g. the stores' network). */
export function localConfig(): Manifest[] {
  return kustomizationResources().filter(isLocalConfig);
}

export function templateSecrets(): Manifest[] {
  return parseManifests(SECRET_TEMPLATE, readFileSync(join(K8S_DIR, SECRET_TEMPLATE), 'utf8'));
}

export function byKind(manifests: readonly Manifest[], kind: string): Manifest[] {
  return manifests.filter((m) => m.kind === kind);
}

export function podSpecOf(workload: Manifest): Json {
  const spec = obj(workload.doc['spec'], `${workload.name} spec`);
  return obj(obj(spec['template'], `${workload.name} template`)['spec'], `${workload.name} pod spec`);
}

export function podLabelsOf(workload: Manifest): Json {
  const spec = obj(workload.doc['spec'], `${workload.name} spec`);
  const metadata = obj(obj(spec['template'], `${workload.name} template`)['metadata'], `${workload.name} template metadata`);
  return obj(metadata['labels'], `${workload.name} template labels`);
}

export function containersOf(workload: Manifest): Json[] {
  return arr(podSpecOf(workload)['containers'], `${workload.name} containers`).map((c, i) => obj(c, `${workload.name} container ${i}`));
}

export function labelsMatch(selector: Json, labels: Json): boolean {
  const entries = Object.entries(selector);
  return entries.length > 0 && entries.every(([key, value]) => labels[key] === value);
}

export type EnvSource = 'configmap' | 'secret' | 'literal';

/**
 * Resolves what a container's environment will hold: envFrom ConfigMaps and Secrets
 * (the later source wins, as in Kubernetes) then `env` entries. Returns each variable with
 * where it comes from, plus the problems found (a missing ConfigMap, Secret or key).
 */
export function resolveContainerEnv(
  container: Json,
  configMaps: readonly Manifest[],
  secrets: readonly Manifest[],
  where: string,
): { env: Map<string, EnvSource>; problems: string[] } {
  const env = new Map<string, EnvSource>();
  const problems: string[] = [];
  const keysOf = (kind: 'configmap' | 'secret', name: string): string[] | undefined => {
    const found = (kind === 'configmap' ? configMaps : secrets).find((m) => m.name === name);
    if (found === undefined) return undefined;
    const data = { ...(isObject(found.doc['data']) ? found.doc['data'] : {}), ...(isObject(found.doc['stringData']) ? found.doc['stringData'] : {}) };
    return Object.keys(data);
  };
  for (const [i, entry] of optArr(container['envFrom'], `${where}.envFrom`).entries()) {
    const e = obj(entry, `${where}.envFrom[${i}]`);
    const kind = isObject(e['configMapRef']) ? 'configmap' : isObject(e['secretRef']) ? 'secret' : undefined;
    if (kind === undefined) {
      problems.push(`${where}.envFrom[${i}] is neither a configMapRef nor a secretRef`);
      continue;
    }
    const ref = obj(kind === 'configmap' ? e['configMapRef'] : e['secretRef'], `${where}.envFrom[${i}]`);
    const name = text(ref['name'], `${where}.envFrom[${i}].name`);
    const keys = keysOf(kind, name);
    if (keys === undefined) problems.push(`${where}: ${kind} ${name} does not exist`);
    for (const key of keys ?? []) env.set(key, kind);
  }
  for (const [i, entry] of optArr(container['env'], `${where}.env`).entries()) {
    const e = obj(entry, `${where}.env[${i}]`);
    const name = text(e['name'], `${where}.env[${i}].name`);
    if (e['value'] !== undefined) {
      env.set(name, 'literal');
      continue;
    }
    const from = obj(e['valueFrom'], `${where}.env[${i}].valueFrom`);
    const kind = isObject(from['secretKeyRef']) ? 'secret' : isObject(from['configMapKeyRef']) ? 'configmap' : undefined;
    if (kind === undefined) {
      problems.push(`${where}: ${name} comes from neither a Secret nor a ConfigMap`);
      continue;
    }
    const ref = obj(kind === 'secret' ? from['secretKeyRef'] : from['configMapKeyRef'], `${where}.env[${i}]`);
    const source = text(ref['name'], `${where}.env[${i}] source`);
    const key = text(ref['key'], `${where}.env[${i}] key`);
    if (!(keysOf(kind, source) ?? []).includes(key)) problems.push(`${where}: ${name} needs key ${key} of ${kind} ${source}, which does not exist`);
    env.set(name, kind);
  }
  return { env, problems };
}

/** The container port a probe or Service targets: a port name or a number. */
export function containerPortNumber(container: Json, port: unknown, where: string): number | undefined {
  const ports = optArr(container['ports'], `${where}.ports`).map((p, i) => obj(p, `${where}.ports[${i}]`));
  if (typeof port === 'number') return ports.some((p) => p['containerPort'] === port) ? port : undefined;
  const named = ports.find((p) => p['name'] === port);
  return typeof named?.['containerPort'] === 'number' ? named['containerPort'] : undefined;
}

// ------------------------------------------------------------------------- secrets --

/** Shapes of real credentials. A match anywhere in the deployment files fails the tests. */
export const REAL_LOOKING_SECRETS: readonly { what: string; pattern: RegExp }[] = [
  { what: 'Stripe secret or restricted key', pattern: /\b[sr]k_(live|test)_[0-9A-Za-z]{10,}/ },
  { what: 'Stripe webhook secret', pattern: /\bwhsec_[0-9A-Za-z]{10,}/ },
  { what: 'Tavily key', pattern: /\btvly-(?:dev-|prod-)?[0-9A-Za-z]{16,}/ },
  { what: 'Brave key', pattern: /\bBSA[0-9A-Za-z_-]{20,}/ },
  { what: 'UUID-shaped key (Exa)', pattern: /\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/i },
  { what: 'platform API or management key', pattern: /\bsvc-(?:mgmt-)?[0-9A-Za-z_-]{43}(?![0-9A-Za-z_-])/ },
  { what: 'AWS access key', pattern: /\bAKIA[0-9A-Z]{16}\b/ },
  { what: 'private key', pattern: /-----BEGIN [A-Z ]*PRIVATE KEY-----/ },
  { what: 'password in a URL', pattern: /:\/\/[^/\s:@]+:(?!REPLACE_ME@|\$\{)[^@\s/]{8,}@/ },
];

export function findRealLookingSecrets(source: string): string[] {
  return REAL_LOOKING_SECRETS.filter(({ pattern }) => pattern.test(source)).map(({ what }) => what);
}
