import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { BlockList, isIPv4, isIPv6 } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { K8S_DIR, arr, byKind, deployedManifests, isObject, loadKustomization, localConfig, obj, optArr, storesCidr, text } from './deploy-kit';
import type { Json } from './deploy-kit';

/**
 * The stores' network of the egress policies is one value the user sets
 * (deploy/k8s/stores-network.yaml, `data.cidr`; docs/operations.md "Network"): it must be a
 * private network in CIDR form, and kustomize's `replacements` must copy it into exactly the
 * egress rules that reach PostgreSQL (5432) or Redis (6379), every one of them.
 */
const STORE_PORTS = [5432, 6379];
/** The private ranges (the ones the public 443 rules exclude). */
const PRIVATE = new BlockList();
for (const [net, prefix] of [['10.0.0.0', 8], ['172.16.0.0', 12], ['192.168.0.0', 16], ['100.64.0.0', 10]] as const) PRIVATE.addSubnet(net, prefix, 'ipv4');
PRIVATE.addSubnet('fc00::', 7, 'ipv6');

/** Why `value` is not a private network in CIDR form, or undefined when it is one. */
function cidrProblem(value: string): string | undefined {
  const match = /^([^/]+)\/(\d{1,3})$/.exec(value);
  if (match === null) return 'not <address>/<prefix>';
  const [, address = '', prefixText = ''] = match;
  const prefix = Number(prefixText);
  const family = isIPv4(address) ? 'ipv4' : isIPv6(address) ? 'ipv6' : undefined;
  if (family === undefined) return 'not an IP address';
  const bits = family === 'ipv4' ? 32 : 128;
  if (prefix > bits) return `prefix above /${bits}`;
  // The network address itself: no host bits set (the address is the first of its subnet).
  if (family === 'ipv4' && !aligned(address, prefix)) return 'host bits set';
  if (!PRIVATE.check(address, family)) return 'not in a private range';
  // The whole subnet inside the private ranges: its last address too.
  if (family === 'ipv4' && !PRIVATE.check(ipv4Last(address, prefix), 'ipv4')) return 'reaches outside the private ranges';
  if (family === 'ipv6' && prefix < 7) return 'wider than a private range';
  return undefined;
}

function ipv4Number(address: string): number {
  return address.split('.').reduce((n, octet) => n * 256 + Number(octet), 0);
}

function ipv4Text(n: number): string {
  return [24, 16, 8, 0].map((shift) => Math.floor(n / 2 ** shift) % 256).join('.');
}

function aligned(address: string, prefix: number): boolean {
  return ipv4Number(address) % 2 ** (32 - prefix) === 0;
}

function ipv4Last(address: string, prefix: number): string {
  return ipv4Text(ipv4Number(address) + 2 ** (32 - prefix) - 1);
}

/** The egress rules (policy name, rule index) that reach a store port through an ipBlock. */
function storeRules(policies: readonly { name: string; doc: Json }[]): { policy: string; index: number; cidr: string }[] {
  const out: { policy: string; index: number; cidr: string }[] = [];
  for (const policy of policies) {
    const spec = obj(policy.doc['spec'], `${policy.name} spec`);
    for (const [index, rule] of optArr(spec['egress'], `${policy.name} egress`).entries()) {
      const r = obj(rule, `${policy.name} egress[${index}]`);
      const ports = optArr(r['ports'], 'ports').map((p) => obj(p, 'port')['port']);
      if (!ports.some((p) => STORE_PORTS.includes(Number(p)))) continue;
      for (const peer of optArr(r['to'], 'to')) {
        const ip = obj(peer, 'to')['ipBlock'];
        if (isObject(ip)) out.push({ policy: policy.name, index, cidr: text(ip['cidr'], 'cidr') });
      }
    }
  }
  return out;
}

describe('deploy/k8s: the stores\' network is one value the user sets', () => {
  it('is set once, in a local-config ConfigMap that is never applied, as a private network in CIDR form', () => {
    const configs = localConfig();
    expect(configs.map((m) => [m.kind, m.name])).toEqual([['ConfigMap', 'stores-network']]);
    expect(deployedManifests().some((m) => m.name === 'stores-network')).toBe(false);
    expect(cidrProblem(storesCidr())).toBeUndefined();
    const header = readFileSync(join(K8S_DIR, 'stores-network.yaml'), 'utf8').split('apiVersion:')[0] ?? '';
    expect(header).toMatch(/THE ONE VALUE TO SET/);
  });

  it('the CIDR check refuses what is not a private network', () => {
    for (const bad of ['0.0.0.0/0', '10.0.0.0', '10.0.0.1/8', '8.8.8.0/24', '10.0.0.0/33', '172.16.0.0/8', 'stores', '192.168.1.0/24/1', 'fd00::/129', '2001:db8::/32'])
      expect([bad, cidrProblem(bad)]).toEqual([bad, expect.any(String)]);
    for (const good of ['10.0.0.0/8', '10.20.30.0/24', '172.16.0.0/12', '192.168.1.10/32', '100.64.0.0/16', 'fd12:3456::/48'])
      expect([good, cidrProblem(good)]).toEqual([good, undefined]);
  });

  it('the replacements target exactly the egress rules that reach PostgreSQL or Redis, and those hold the value', () => {
    const policies = byKind(deployedManifests(), 'NetworkPolicy');
    const rules = storeRules(policies);
    // The gateway, account-admin, billing, the ledger worker and the research worker.
    expect(rules.length).toBe(5);
    for (const rule of rules) expect(rule.cidr).toBe(storesCidr());
    const replacements = arr(loadKustomization()['replacements'], 'replacements').map((r) => obj(r, 'replacement'));
    expect(replacements).toHaveLength(1);
    const [replacement] = replacements;
    expect(obj(replacement?.['source'], 'source')).toEqual({ kind: 'ConfigMap', name: 'stores-network', fieldPath: 'data.cidr' });
    const targeted = arr(replacement?.['targets'], 'targets').flatMap((t) => {
      const target = obj(t, 'target');
      const select = obj(target['select'], 'select');
      expect(select['kind']).toBe('NetworkPolicy');
      return arr(target['fieldPaths'], 'fieldPaths').map((path) => {
        const m = /^spec\.egress\.(\d+)\.to\.(\d+)\.ipBlock\.cidr$/.exec(text(path, 'fieldPath'));
        if (m === null) throw new Error(`a replacement path of another shape: ${String(path)}`);
        return `${text(select['name'], 'name')} ${m[1]}`;
      });
    });
    expect(targeted.sort()).toEqual(rules.map((r) => `${r.policy} ${r.index}`).sort());
  });

  const kubectl = ['/usr/bin/kubectl', '/usr/local/bin/kubectl'].find((p) => existsSync(p));
  (kubectl === undefined ? it.skip : it)('kustomize renders a value the user set into every store rule, and nothing else (kubectl kustomize)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'svc-k8s-'));
    try {
      cpSync(K8S_DIR, dir, { recursive: true });
      const file = join(dir, 'stores-network.yaml');
      writeFileSync(file, readFileSync(file, 'utf8').replace(/cidr: .*/, 'cidr: 10.20.30.0/24'));
      const rendered = parseAllDocuments(execFileSync(kubectl ?? 'kubectl', ['kustomize', dir], { encoding: 'utf8' }))
        .map((d) => d.toJS() as Json).filter((d) => isObject(d));
      const policies = rendered.filter((d) => d['kind'] === 'NetworkPolicy').map((doc) => ({ name: text(obj(doc['metadata'], 'metadata')['name'], 'name'), doc }));
      expect(storeRules(policies).map((r) => r.cidr)).toEqual(Array.from({ length: 5 }, () => '10.20.30.0/24'));
      expect(rendered.some((d) => obj(d['metadata'], 'metadata')['name'] === 'stores-network')).toBe(false);
      // The other ipBlocks (the public 443 rules) are untouched.
      const cidrs = JSON.stringify(policies).match(/"cidr":"[^"]+"/g) ?? [];
      const publicRules = (readFileSync(join(K8S_DIR, 'network-policies.yaml'), 'utf8').match(/cidr: 0\.0\.0\.0\/0/g) ?? []).length;
      expect(publicRules).toBeGreaterThan(0);
      expect(cidrs.filter((c) => !c.includes('10.20.30.0/24'))).toEqual(Array.from({ length: publicRules }, () => '"cidr":"0.0.0.0/0"'));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
