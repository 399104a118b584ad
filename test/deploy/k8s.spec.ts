import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  DEPLOYABLES, K8S_DIR, NAMESPACE, SECRET_TEMPLATE, arr, byKind, containerPortNumber, containersOf, deployedManifests, isObject,
  k8sFiles, knownVars, labelsMatch, loadKustomization, neededVars, obj, optArr, podLabelsOf, podSpecOf, resolveContainerEnv,
  secretVars, storesCidr, templateSecrets, text,
} from './deploy-kit';
import type { Json, Manifest } from './deploy-kit';

const manifests = deployedManifests();
const secrets = templateSecrets();
const configMaps = byKind(manifests, 'ConfigMap');
const deployments = byKind(manifests, 'Deployment');
const services = byKind(manifests, 'Service');

const REPLICAS: Record<string, number> = { 'search-gateway': 3, 'account-admin': 2, billing: 2, 'billing-worker': 2, 'research-worker': 2 };

function deployment(name: string): Manifest {
  const found = deployments.find((d) => d.name === name);
  if (found === undefined) throw new Error(`no Deployment ${name}`);
  return found;
}

function mainContainer(name: string): Json {
  const container = containersOf(deployment(name)).find((c) => c['name'] === name);
  if (container === undefined) throw new Error(`Deployment ${name} has no container named ${name}`);
  return container;
}

function service(name: string): Manifest {
  const found = services.find((s) => s.name === name);
  if (found === undefined) throw new Error(`no Service ${name}`);
  return found;
}

function servicePorts(svc: Manifest): Json[] {
  return arr(obj(svc.doc['spec'], `${svc.name} spec`)['ports'], `${svc.name} ports`).map((p, i) => obj(p, `${svc.name} port ${i}`));
}

function configMapValue(name: string, key: string): unknown {
  const found = configMaps.find((c) => c.name === name);
  return found === undefined ? undefined : obj(found.doc['data'], `${name} data`)[key];
}

/**
 * The NetworkPolicies (of `policyType` only, when given) whose podSelector selects pods with
 * `labels` (a selector without matchLabels selects every pod), each with its spec.
 */
function policiesSelecting(labels: Json, policyType?: string): { name: string; spec: Json }[] {
  const found: { name: string; spec: Json }[] = [];
  for (const policy of byKind(manifests, 'NetworkPolicy')) {
    const spec = obj(policy.doc['spec'], `${policy.name} spec`);
    if (policyType !== undefined && !arr(spec['policyTypes'], 'policyTypes').includes(policyType)) continue;
    const selector = obj(spec['podSelector'], `${policy.name} podSelector`);
    const matchLabels = isObject(selector['matchLabels']) ? selector['matchLabels'] : {};
    if (Object.keys(matchLabels).length > 0 && !labelsMatch(matchLabels, labels)) continue;
    found.push({ name: policy.name, spec });
  }
  return found;
}

/** The peers the NetworkPolicies let reach `port` on pods with `labels` ('anyone' for a rule without `from`). */
function allowedPeers(labels: Json, port: number): (Json | 'anyone')[] {
  const peers: (Json | 'anyone')[] = [];
  for (const policy of policiesSelecting(labels)) {
    const { spec } = policy;
    for (const [i, rule] of optArr(spec['ingress'], `${policy.name} ingress`).entries()) {
      const r = obj(rule, `${policy.name} ingress[${i}]`);
      const ports = optArr(r['ports'], `${policy.name} ingress[${i}].ports`).map((p) => obj(p, 'port')['port']);
      if (ports.length > 0 && !ports.includes(port)) continue;
      const from = optArr(r['from'], `${policy.name} ingress[${i}].from`);
      if (from.length === 0) peers.push('anyone');
      for (const peer of from) peers.push(obj(peer, `${policy.name} peer`));
    }
  }
  return peers;
}

/**
 * Where pods with `labels` may open connections, by the egress rules of the NetworkPolicies
 * that select them: each allowed (port, destination) as text, e.g. `6379 ip 10.0.0.0/8`,
 * `3002 pod billing`, `53 dns`, `443 public` (0.0.0.0/0 without the private ranges).
 */
function allowedEgress(labels: Json): string[] {
  const out = new Set<string>();
  for (const policy of policiesSelecting(labels, 'Egress')) {
    const { spec } = policy;
    for (const [i, rule] of optArr(spec['egress'], `${policy.name} egress`).entries()) {
      const r = obj(rule, `${policy.name} egress[${i}]`);
      const ports = optArr(r['ports'], `${policy.name} egress[${i}].ports`).map((p) => obj(p, 'port')['port']);
      const to = optArr(r['to'], `${policy.name} egress[${i}].to`).map((t) => obj(t, 'to'));
      if (ports.length === 0 || to.length === 0) throw new Error(`${policy.name} egress[${i}] allows every port or every destination`);
      for (const peer of to) {
        let where: string;
        const pod = isObject(peer['podSelector']) ? obj(peer['podSelector'], 'podSelector') : undefined;
        const ip = isObject(peer['ipBlock']) ? obj(peer['ipBlock'], 'ipBlock') : undefined;
        if (peer['namespaceSelector'] !== undefined) {
          expect(peer).toEqual({ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } }, podSelector: { matchLabels: { 'k8s-app': 'kube-dns' } } });
          where = 'dns';
        } else if (pod !== undefined) {
          where = `pod ${String(obj(pod['matchLabels'], 'matchLabels')['app.kubernetes.io/name'])}`;
        } else if (ip !== undefined && ip['cidr'] === '0.0.0.0/0') {
          expect(ip['except']).toEqual(expect.arrayContaining(['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16']));
          where = 'public';
        } else if (ip !== undefined) {
          where = `ip ${String(ip['cidr'])}`;
        } else {
          throw new Error(`${policy.name}: an egress peer of an unknown shape`);
        }
        for (const port of ports) out.add(`${String(port)} ${where}`);
      }
    }
  }
  return [...out].sort();
}

describe('deploy/k8s: the production manifests', () => {
  it('the kustomization lists every manifest but the Secret template, which it never applies', () => {
    const resources = arr(loadKustomization()['resources'], 'resources').map((r) => text(r, 'resource'));
    expect([...resources].sort()).toEqual(k8sFiles().filter((f) => f !== 'kustomization.yaml' && f !== SECRET_TEMPLATE));
    expect(resources).not.toContain(SECRET_TEMPLATE);
    expect(loadKustomization()['namespace']).toBe(NAMESPACE);
  });

  it('every namespaced object lives in the platform namespace', () => {
    for (const m of [...manifests, ...secrets]) {
      const namespace = obj(m.doc['metadata'], 'metadata')['namespace'];
      if (m.kind === 'Namespace') expect(m.name).toBe(NAMESPACE);
      else expect([m.kind, m.name, namespace]).toEqual([m.kind, m.name, NAMESPACE]);
    }
  });

  it('deploys the gateway (3), account-admin (2), billing (2), the ledger worker (2) and the research worker (2): the HPA owns the scale, no Deployment sets replicas', () => {
    // A Deployment's `replicas` beside an HPA would reset the scale on every apply; the HPA's
    // minReplicas is the count (a new Deployment starts at 1 and the HPA raises it at once).
    const hpaOwned = new Set(byKind(manifests, 'HorizontalPodAutoscaler').map((h) => obj(obj(h.doc['spec'], 'spec')['scaleTargetRef'], 'scaleTargetRef')['name']));
    expect(deployments.map((d) => d.name).sort()).toEqual(Object.keys(REPLICAS).sort());
    for (const d of deployments) {
      expect([d.name, hpaOwned.has(d.name)]).toEqual([d.name, true]);
      expect([d.name, obj(d.doc['spec'], 'spec')['replicas']]).toEqual([d.name, undefined]);
    }
  });

  it.each(DEPLOYABLES.map((d) => [d.name, d] as const))('%s runs its entry point and probes /healthz and /readyz on its port', (name, deployable) => {
    const container = mainContainer(name);
    expect(container['command']).toEqual([...deployable.command]);
    const liveness = obj(obj(container['livenessProbe'], `${name} livenessProbe`)['httpGet'], `${name} liveness httpGet`);
    const readiness = obj(obj(container['readinessProbe'], `${name} readinessProbe`)['httpGet'], `${name} readiness httpGet`);
    expect(liveness['path']).toBe('/healthz');
    expect(readiness['path']).toBe('/readyz');
    expect(containerPortNumber(container, liveness['port'], name)).toBe(deployable.port);
    expect(containerPortNumber(container, readiness['port'], name)).toBe(deployable.port);
  });

  it.each(DEPLOYABLES.map((d) => [d.name] as const))('%s sets resources and a non-root, read-only security context', (name) => {
    const pod = podSpecOf(deployment(name));
    expect(pod['automountServiceAccountToken']).toBe(false);
    expect(obj(pod['securityContext'], `${name} pod securityContext`)['runAsNonRoot']).toBe(true);
    for (const container of containersOf(deployment(name))) {
      const resources = obj(container['resources'], `${name} resources`);
      for (const bound of ['requests', 'limits']) {
        expect(Object.keys(obj(resources[bound], `${name} ${bound}`)).sort()).toEqual(['cpu', 'memory']);
      }
      const security = obj(container['securityContext'], `${name} securityContext`);
      expect(security['runAsNonRoot']).toBe(true);
      expect(security['readOnlyRootFilesystem']).toBe(true);
      expect(security['allowPrivilegeEscalation']).toBe(false);
      expect(typeof security['runAsUser'] === 'number' && security['runAsUser'] > 0).toBe(true);
      expect(obj(security['capabilities'], 'capabilities')['drop']).toEqual(['ALL']);
    }
  });

  it.each(DEPLOYABLES.map((d) => [d.name, d] as const))('%s gets every variable it needs from its ConfigMaps and Secrets', (name, deployable) => {
    const { env, problems } = resolveContainerEnv(mainContainer(name), configMaps, secrets, name);
    expect(problems).toEqual([]);
    expect(neededVars(deployable).filter((v) => !env.has(v))).toEqual([]);
    const known = knownVars(deployable);
    expect([...env.keys()].filter((v) => !known.has(v))).toEqual([]);
    const notFromSecret = secretVars(deployable).filter((v) => env.has(v) && env.get(v) !== 'secret');
    expect(notFromSecret).toEqual([]);
    expect(env.get('PORT')).toBe('configmap');
  });

  it('the PORT each ConfigMap sets is the port the container exposes', () => {
    const cases: [string, string][] = [
      ['search-gateway', 'search-gateway-config'], ['account-admin', 'account-admin-config'],
      ['billing', 'billing-config'], ['billing-worker', 'billing-worker-config'], ['research-worker', 'research-worker-config'],
    ];
    for (const [name, configMap] of cases) {
      const deployable = DEPLOYABLES.find((d) => d.name === name);
      expect(configMapValue(configMap, 'PORT')).toBe(String(deployable?.port));
      expect(containerPortNumber(mainContainer(name), 'http', name)).toBe(deployable?.port);
    }
    expect(configMapValue('account-admin-config', 'GRPC_PORT')).toBe('50051');
    expect(containerPortNumber(mainContainer('account-admin'), 'grpc', 'account-admin')).toBe(50051);
    expect(configMapValue('billing-config', 'OPERATOR_PORT')).toBe('8081');
    expect(containerPortNumber(mainContainer('billing'), 'operator', 'billing')).toBe(8081);
    expect(configMapValue('account-admin-config', 'MIGRATE_ON_START')).toBe('false');
    expect(configMapValue('billing-config', 'MIGRATE_ON_START')).toBe('false');
    expect(configMapValue('account-admin-config', 'COOKIE_SECURE')).toBe('true');
  });

  it('Deployment selectors match their pod labels, and each Service selects a Deployment on its real ports', () => {
    for (const d of deployments) {
      const selector = obj(obj(obj(d.doc['spec'], 'spec')['selector'], 'selector')['matchLabels'], `${d.name} matchLabels`);
      expect([d.name, labelsMatch(selector, podLabelsOf(d))]).toEqual([d.name, true]);
    }
    for (const svc of services) {
      const spec = obj(svc.doc['spec'], `${svc.name} spec`);
      expect([svc.name, spec['type']]).toEqual([svc.name, 'ClusterIP']);
      const targets = deployments.filter((d) => labelsMatch(obj(spec['selector'], `${svc.name} selector`), podLabelsOf(d)));
      expect([svc.name, targets.length]).toEqual([svc.name, 1]);
      const target = targets[0];
      if (target === undefined) continue;
      for (const port of servicePorts(svc)) {
        const container = containersOf(target).find((c) => containerPortNumber(c, port['targetPort'], svc.name) !== undefined);
        expect([svc.name, port['name'], container === undefined ? undefined : containerPortNumber(container, port['targetPort'], svc.name)])
          .toEqual([svc.name, port['name'], port['port']]);
      }
    }
  });

  it('exposes account-admin on 3001 and gRPC 50051, billing on 3002, and the operator API on its own Service', () => {
    const ports = (name: string): unknown[] => servicePorts(service(name)).map((p) => [p['name'], p['port']]);
    expect(ports('search-gateway')).toEqual([['http', 8080]]);
    expect(ports('account-admin')).toEqual([['http', 3001], ['grpc', 50051]]);
    expect(ports('billing')).toEqual([['http', 3002]]);
    expect(ports('billing-operator')).toEqual([['operator', 8081]]);
    expect(services.map((s) => s.name).sort()).toEqual([
      'account-admin', 'account-admin-metrics', 'billing', 'billing-metrics', 'billing-operator', 'billing-worker-metrics', 'research-worker-metrics', 'search-gateway', 'search-gateway-metrics',
    ]);
  });

  it('the Ingress routes only to the gateway', () => {
    const ingresses = byKind(manifests, 'Ingress');
    expect(ingresses.map((i) => i.name)).toEqual(['search-gateway']);
    const backends: Json[] = [];
    for (const ingress of ingresses) {
      const spec = obj(ingress.doc['spec'], 'ingress spec');
      if (spec['defaultBackend'] !== undefined) backends.push(obj(obj(spec['defaultBackend'], 'defaultBackend')['service'], 'service'));
      for (const rule of arr(spec['rules'], 'rules')) {
        for (const path of arr(obj(obj(rule, 'rule')['http'], 'http')['paths'], 'paths')) {
          backends.push(obj(obj(obj(path, 'path')['backend'], 'backend')['service'], 'backend service'));
        }
      }
    }
    expect(backends.length).toBeGreaterThan(0);
    for (const backend of backends) {
      expect(backend['name']).toBe('search-gateway');
      const port = obj(backend['port'], 'backend port');
      expect(servicePorts(service('search-gateway')).some((p) => p['name'] === port['name'] || p['port'] === port['number'])).toBe(true);
    }
  });

  it('every Deployment scales on CPU from its replica count (the gateway from 3), and has a disruption budget', () => {
    const hpas = byKind(manifests, 'HorizontalPodAutoscaler');
    expect(hpas.map((h) => h.name).sort()).toEqual(['account-admin', 'billing', 'billing-worker', 'research-worker', 'search-gateway']);
    for (const hpa of hpas) {
      const spec = obj(hpa.doc['spec'], 'hpa spec');
      expect(spec['scaleTargetRef']).toEqual({ apiVersion: 'apps/v1', kind: 'Deployment', name: hpa.name });
      expect([hpa.name, spec['minReplicas']]).toEqual([hpa.name, REPLICAS[hpa.name]]);
      expect(Number(spec['maxReplicas'])).toBeGreaterThan(Number(spec['minReplicas']));
      const metric = obj(arr(spec['metrics'], 'metrics')[0], 'metric');
      expect(obj(metric['resource'], 'resource')['name']).toBe('cpu');
    }
    for (const d of deployments) {
      const budgets = byKind(manifests, 'PodDisruptionBudget').filter((p) =>
        labelsMatch(obj(obj(obj(p.doc['spec'], 'spec')['selector'], 'selector')['matchLabels'], 'matchLabels'), podLabelsOf(d)),
      );
      expect([d.name, budgets.length]).toEqual([d.name, 1]);
    }
  });

  it('network policies deny by default and let only the gateway reach the control plane HTTP ports (and account-admin billing\'s, for the dashboard)', () => {
    const gateway = { 'app.kubernetes.io/name': 'search-gateway' };
    const defaultDeny = byKind(manifests, 'NetworkPolicy').filter((p) => {
      const spec = obj(p.doc['spec'], 'spec');
      return Object.keys(obj(spec['podSelector'], 'podSelector')).length === 0 && spec['ingress'] === undefined
        && arr(spec['policyTypes'], 'policyTypes').includes('Ingress');
    });
    expect(defaultDeny).toHaveLength(1);
    expect(allowedPeers(podLabelsOf(deployment('account-admin')), 3001)).toStrictEqual([{ podSelector: { matchLabels: gateway } }]);
    expect(allowedPeers(podLabelsOf(deployment('billing')), 3002)).toStrictEqual([
      { podSelector: { matchLabels: gateway } },
      { podSelector: { matchLabels: { 'app.kubernetes.io/name': 'account-admin' } } },
    ]);
    const grpcPeers = allowedPeers(podLabelsOf(deployment('account-admin')), 50051);
    expect(grpcPeers).toContainEqual({ podSelector: { matchLabels: gateway } });
    expect(grpcPeers.every((p) => p !== 'anyone' && p['namespaceSelector'] === undefined && p['ipBlock'] === undefined)).toBe(true);
    const operatorPeers = allowedPeers(podLabelsOf(deployment('billing')), 8081);
    expect(operatorPeers).toStrictEqual([{ podSelector: { matchLabels: { 'svc-platform/operator-client': 'true' } } }]);
    expect(allowedPeers(podLabelsOf(deployment('billing-worker')), 3003)).toStrictEqual([]);
    expect(allowedPeers(podLabelsOf(deployment('research-worker')), 3004)).toStrictEqual([]);
    expect(allowedPeers(podLabelsOf(deployment('search-gateway')), 8080)).toStrictEqual(['anyone']);
  });

  it('egress is denied by default; each service reaches only DNS, its stores, its peers, and (gateway, billing, the worker) the providers, Stripe or webhook endpoints on 443, (account-admin) the SMTP relay', () => {
    const defaultDeny = byKind(manifests, 'NetworkPolicy').filter((p) => {
      const spec = obj(p.doc['spec'], 'spec');
      return Object.keys(obj(spec['podSelector'], 'podSelector')).length === 0 && spec['egress'] === undefined
        && arr(spec['policyTypes'], 'policyTypes').includes('Egress');
    });
    expect(defaultDeny).toHaveLength(1);
    const stores = storesCidr();
    const dns = ['53 dns'];
    expect(allowedEgress(podLabelsOf(deployment('search-gateway')))).toEqual([...dns, '3001 pod account-admin', '3002 pod billing', '443 public', '50051 pod account-admin', `6379 ip ${stores}`].sort());
    // account-admin also reaches the SMTP relay (submission 587 and implicit TLS 465: decision 0054).
    expect(allowedEgress(podLabelsOf(deployment('account-admin')))).toEqual([...dns, '3002 pod billing', '443 public', '465 public', '587 public', `5432 ip ${stores}`, `6379 ip ${stores}`].sort());
    expect(allowedEgress(podLabelsOf(deployment('billing')))).toEqual([...dns, '443 public', '50051 pod account-admin', `5432 ip ${stores}`, `6379 ip ${stores}`].sort());
    expect(allowedEgress(podLabelsOf(deployment('billing-worker')))).toEqual([...dns, '443 public', '50051 pod account-admin', `5432 ip ${stores}`, `6379 ip ${stores}`].sort());
    // The research worker: its stores and the providers, nothing of the platform's.
    expect(allowedEgress(podLabelsOf(deployment('research-worker')))).toEqual([...dns, '443 public', `5432 ip ${stores}`, `6379 ip ${stores}`].sort());
    // Each URL a service is configured with points at a peer its egress allows.
    for (const [config, key, peer] of [['search-gateway-config', 'ACCOUNT_ADMIN_GRPC_URL', '50051 pod account-admin'], ['search-gateway-config', 'BILLING_HTTP_URL', '3002 pod billing'],
      ['account-admin-config', 'BILLING_HTTP_URL', '3002 pod billing'], ['billing-config', 'ACCOUNT_ADMIN_GRPC_URL', '50051 pod account-admin'], ['billing-worker-config', 'ACCOUNT_ADMIN_GRPC_URL', '50051 pod account-admin']] as const) {
      const value = String(configMapValue(config, key));
      const port = /:(\d+)/.exec(value)?.[1];
      expect([config, key, peer.startsWith(`${port} `)]).toEqual([config, key, true]);
      expect(allowedEgress(podLabelsOf(deployment(config.replace(/-config$/, ''))))).toContain(peer);
    }
  });

  it.each([
    ['account-admin', 'account-admin', 'account-admin-secrets'], ['billing', 'billing', 'billing-secrets'], ['billing-worker', 'billing', 'billing-secrets'],
    ['research-worker', 'billing', 'billing-secrets'],
  ] as const)('%s runs its database\'s migrations in an init container before it serves', (name, owner, secretName) => {
    expect(byKind(manifests, 'Job')).toEqual([]);
    const inits = arr(podSpecOf(deployment(name))['initContainers'], `${name} initContainers`).map((c) => obj(c, 'init container'));
    expect(inits).toHaveLength(1);
    const container = inits[0] ?? {};
    expect(container['command']).toEqual(['node', `services/${owner}/dist/db/migrate-cli.js`]);
    expect(text(container['image'], 'image').split(':')[0]).toBe(`svc/${owner}`);
    expect(text(container['image'], 'image')).toBe(text(mainContainer(name)['image'], 'image'));
    const dbUrl = optArr(container['env'], 'env').map((e) => obj(e, 'env')).find((e) => e['name'] === 'DATABASE_URL');
    expect(obj(obj(dbUrl?.['valueFrom'], 'valueFrom')['secretKeyRef'], 'secretKeyRef')).toEqual({ name: secretName, key: 'DATABASE_URL' });
    const { problems } = resolveContainerEnv(container, configMaps, secrets, `${name}/migrate`);
    expect(problems).toEqual([]);
    const security = obj(container['securityContext'], 'securityContext');
    expect([security['readOnlyRootFilesystem'], security['runAsNonRoot'], security['allowPrivilegeEscalation']]).toEqual([true, true, false]);
    expect(Object.keys(obj(container['resources'], 'resources')).sort()).toEqual(['limits', 'requests']);
  });

  /** Seconds a preStop hook of the form `node -e "setTimeout(() => {}, MS)"` waits. */
  function preStopSeconds(name: string): number {
    const lifecycle = obj(mainContainer(name)['lifecycle'], `${name} lifecycle`);
    const command = arr(obj(obj(lifecycle['preStop'], `${name} preStop`)['exec'], `${name} preStop exec`)['command'], 'command').map((c) => text(c, 'command'));
    const ms = /setTimeout\(\(\) => \{\}, (\d+)\)/.exec(command.join(' '));
    if (command[0] !== 'node' || ms === null) throw new Error(`${name}: preStop is not a node sleep: ${command.join(' ')}`);
    return Number(ms[1]) / 1000;
  }

  it('the gateway drains within its grace period: preStop, the drain delay and the longest search fit', () => {
    const pod = podSpecOf(deployment('search-gateway'));
    const grace = Number(pod['terminationGracePeriodSeconds']);
    const preStop = preStopSeconds('search-gateway');
    const delay = Number(configMapValue('search-gateway-config', 'SHUTDOWN_DELAY_MS')) / 1000;
    const bound = Number(configMapValue('search-gateway-config', 'SEARCH_MAX_DURATION_MS')) / 1000;
    const timeout = Number(configMapValue('search-gateway-config', 'PROVIDER_TIMEOUT_MS')) / 1000;
    expect(preStop).toBeGreaterThanOrEqual(3);
    expect(delay).toBeGreaterThan(0);
    expect(bound).toBeGreaterThanOrEqual(timeout);
    // The gateway waits up to 10 s for Redis to answer the last settlements.
    expect(grace).toBeGreaterThan(preStop + delay + bound + 10);
  });

  /**
   * The longest a request of the control plane is handled once it has arrived (the bounded
   * waits on its way): account-admin's call to billing is cut at 15 s; billing's longest is a
   * reconciliation transaction (10 s for a connection, 30 s to run).
   */
  const HANDLING_S: Record<string, number> = { 'account-admin': 15, billing: 40 };
  /** Closing after the listener: account-admin's gRPC server gives its calls 5 s. */
  const CLOSING_S = 5;

  it.each(['account-admin', 'billing'])('%s drains within its grace period: preStop, the drain delay and a request in flight fit', (name) => {
    const grace = Number(podSpecOf(deployment(name))['terminationGracePeriodSeconds']);
    const preStop = preStopSeconds(name);
    const delay = Number(configMapValue(`${name}-config`, 'SHUTDOWN_DELAY_MS')) / 1000;
    // A request that began arriving before the listener closed has this long to arrive.
    const arrival = Number(configMapValue(`${name}-config`, 'HTTP_REQUEST_TIMEOUT_MS')) / 1000;
    expect(preStop).toBeGreaterThanOrEqual(3);
    expect(delay).toBeGreaterThan(0);
    expect(arrival).toBeGreaterThan(0);
    expect(grace).toBeGreaterThan(preStop + delay + arrival + (HANDLING_S[name] ?? Infinity) + CLOSING_S);
  });

  it('the research worker drains within its grace period: the drain delay and a step in flight (one provider call and a settlement) fit', () => {
    const grace = Number(podSpecOf(deployment('research-worker'))['terminationGracePeriodSeconds']);
    const delay = Number(configMapValue('research-worker-config', 'SHUTDOWN_DELAY_MS')) / 1000;
    const call = Number(configMapValue('research-worker-config', 'RESEARCH_CALL_TIMEOUT_MS')) / 1000;
    expect(delay).toBeGreaterThan(0);
    expect(call).toBeGreaterThan(0);
    // A settlement is one transaction: up to 10 s for a connection and 10 s to run (billing's transactions.run).
    expect(grace).toBeGreaterThan(delay + call + 20);
  });

  it('billing (which takes a run\'s hold) and the research worker (which gives runs up) bound a run alike', () => {
    expect(configMapValue('billing-config', 'RESEARCH_RUN_TIMEOUT_MS')).toBe(configMapValue('research-worker-config', 'RESEARCH_RUN_TIMEOUT_MS'));
    expect(Number(configMapValue('research-worker-config', 'RESEARCH_RUN_TIMEOUT_MS'))).toBeGreaterThanOrEqual(3_600_000);
  });

  it.each([['search-gateway', 9464], ['account-admin', 9465], ['billing', 9466], ['billing-worker', 9467], ['research-worker', 9468]] as const)(
    '%s serves metrics on %i, reachable by Prometheus only, through a Service of its own', (name, port) => {
      expect(containerPortNumber(mainContainer(name), 'metrics', name)).toBe(port);
      expect(configMapValue(`${name}-config`, 'METRICS_PORT')).toBe(String(port));
      const svc = service(`${name}-metrics`);
      expect(servicePorts(svc).map((p) => [p['name'], p['port'], p['targetPort']])).toEqual([['metrics', port, 'metrics']]);
      expect(obj(svc.doc['metadata'], 'metadata')['labels']).toMatchObject({ 'svc-platform/metrics': 'true' });
      expect(allowedPeers(podLabelsOf(deployment(name)), port)).toStrictEqual([{
        namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'monitoring' } },
        podSelector: { matchLabels: { 'app.kubernetes.io/name': 'prometheus' } },
      }]);
      // The public Services never carry the metrics port.
      for (const publicService of ['search-gateway', 'account-admin', 'billing', 'billing-operator']) {
        expect(servicePorts(service(publicService)).some((p) => p['port'] === port)).toBe(false);
      }
    },
  );

  it('production talks to the real provider hosts and never to the simulator', () => {
    expect(configMapValue('search-gateway-config', 'BRAVE_BASE_URL')).toBe('https://api.search.brave.com/res/v1');
    expect(configMapValue('search-gateway-config', 'EXA_BASE_URL')).toBe('https://api.exa.ai');
    expect(configMapValue('search-gateway-config', 'TAVILY_BASE_URL')).toBe('https://api.tavily.com');
    expect(configMapValue('research-worker-config', 'EXA_BASE_URL')).toBe('https://api.exa.ai');
    expect(configMapValue('research-worker-config', 'TAVILY_BASE_URL')).toBe('https://api.tavily.com');
    const everything = JSON.stringify([...manifests, ...secrets].map((m) => m.doc));
    expect(everything).not.toMatch(/provider-sim|SIM_BASE_LATENCY_MS|sim-brave-key|sim-exa-key|tvly-sim-key/);
    expect(everything).not.toMatch(/127\.0\.0\.1|localhost/);
  });

  it('production mails through an SMTP relay over TLS, with its credentials in a Secret, and confirms sign-ups by mail', () => {
    expect(configMapValue('account-admin-config', 'SIGNUP_CONFIRMATION')).toBe('required');
    expect(['starttls', 'tls']).toContain(configMapValue('account-admin-config', 'SMTP_TLS'));
    expect(String(configMapValue('account-admin-config', 'MAIL_FROM'))).toMatch(/<[^@\s]+@[^@\s]+>$/);
    const port = String(configMapValue('account-admin-config', 'SMTP_PORT'));
    expect(allowedEgress(podLabelsOf(deployment('account-admin')))).toContain(`${port} public`);
    const template = templateSecrets().find((m) => m.name === 'account-admin-secrets');
    expect(Object.keys(obj(template?.doc['stringData'], 'account-admin-secrets stringData'))).toEqual(expect.arrayContaining(['SMTP_USER', 'SMTP_PASSWORD']));
  });

  it('Redis and PostgreSQL are external: their URLs come only from Secrets', () => {
    for (const configMap of configMaps) {
      const keys = Object.keys(obj(configMap.doc['data'], 'data'));
      expect([configMap.name, keys.filter((k) => k === 'REDIS_URL' || k === 'DATABASE_URL')]).toEqual([configMap.name, []]);
    }
    expect(manifests.filter((m) => m.kind === 'StatefulSet' || m.kind === 'Secret')).toEqual([]);
  });

  it('the Secret template holds placeholders only and says to use a real secret manager', () => {
    expect(secrets.map((s) => s.name).sort()).toEqual(['account-admin-secrets', 'billing-secrets', 'provider-key-kek', 'search-gateway-secrets', 'svc-shared']);
    for (const secret of secrets) {
      expect(secret.doc['data']).toBeUndefined();
      for (const [key, value] of Object.entries(obj(secret.doc['stringData'], `${secret.name} stringData`))) {
        expect([secret.name, key, text(value, key).includes('REPLACE_ME')]).toEqual([secret.name, key, true]);
      }
    }
    const header = readFileSync(join(K8S_DIR, SECRET_TEMPLATE), 'utf8').split('apiVersion:')[0] ?? '';
    expect(header).toMatch(/TEMPLATE ONLY/);
    expect(header).toMatch(/real secret manager/);
  });

  it('every image is pinned by the kustomization', () => {
    const names = arr(loadKustomization()['images'], 'images').map((i) => obj(i, 'image')['name']);
    const images = [...deployments, ...byKind(manifests, 'Job')].flatMap((w) => containersOf(w).map((c) => text(c['image'], 'image').split(':')[0]));
    expect(images.filter((i) => !names.includes(i))).toEqual([]);
  });

  const kubectl = ['/usr/bin/kubectl', '/usr/local/bin/kubectl'].find((p) => existsSync(p));
  (kubectl === undefined ? it.skip : it)('kustomize renders the manifests with the pinned images (kubectl kustomize)', () => {
    const rendered = execFileSync(kubectl ?? 'kubectl', ['kustomize', K8S_DIR], { encoding: 'utf8' });
    expect(rendered).toMatch(/image: registry\.example\.com\/svc\/search-gateway:/);
    expect(rendered).not.toMatch(/kind: Secret\b/);
    expect(rendered.split(/^---$/m).length).toBe(manifests.length);
    expect(existsSync(join(K8S_DIR, 'kustomization.yaml'))).toBe(true);
  });
});
