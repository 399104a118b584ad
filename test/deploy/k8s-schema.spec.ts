import { execFileSync } from 'node:child_process';
import { join } from 'node:path';
import { ROOT, deployedManifests, templateSecrets } from './deploy-kit';
import type { Json } from './deploy-kit';

/**
 * Every manifest of deploy/k8s against the Kubernetes API's schemas: kubernetes-models
 * (generated from the Kubernetes OpenAPI definitions, one compiled JSON-schema validator per
 * kind). The package ships ES modules only, so the check runs as a Node ES module
 * (k8s-schema-check.mjs) in a child process.
 */
interface Problem {
  kind: string;
  name: string;
  error: string;
}

function validate(docs: readonly Json[]): Problem[] {
  const output = execFileSync(process.execPath, [join(ROOT, 'test/deploy/k8s-schema-check.mjs')], { cwd: ROOT, input: JSON.stringify(docs), encoding: 'utf8' });
  return JSON.parse(output) as Problem[];
}

describe('deploy/k8s against the Kubernetes schemas', () => {
  it('every deployed manifest and the secrets template validate', () => {
    const docs = [...deployedManifests(), ...templateSecrets()].map((m) => m.doc);
    expect(docs.length).toBeGreaterThan(20);
    expect(validate(docs)).toEqual([]);
  });

  it('the check refuses what the API server would (a wrong type, an unknown kind)', () => {
    const deployment = deployedManifests().find((m) => m.kind === 'Deployment');
    if (deployment === undefined) throw new Error('no Deployment');
    const broken = structuredClone(deployment.doc);
    (broken['spec'] as Json)['replicas'] = 'three';
    const policy = structuredClone(deployedManifests().find((m) => m.kind === 'NetworkPolicy')?.doc ?? {});
    (policy['spec'] as Json)['policyTypes'] = 'Egress';
    const problems = validate([broken, policy, { apiVersion: 'apps/v1', kind: 'Deploymnt', metadata: { name: 'typo' } }]);
    expect(problems.map((p) => [p.kind, p.name])).toEqual([['Deployment', deployment.name], ['NetworkPolicy', String((policy['metadata'] as Json)['name'])], ['Deploymnt', 'typo']]);
    expect(problems[0]?.error).toMatch(/replicas/);
  });
});
