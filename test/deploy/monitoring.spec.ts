import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { ROOT, arr, byKind, deployedManifests, obj, text } from './deploy-kit';
import type { Json } from './deploy-kit';

const DIR = join(ROOT, 'deploy', 'monitoring');

function load(file: string): Json[] {
  return parseAllDocuments(readFileSync(join(DIR, file), 'utf8')).map((d) => d.toJSON() as Json).filter((d) => d !== null);
}

/** Every metric name the services define (prom-client `name:` in their sources). */
function definedMetrics(): Set<string> {
  const names = new Set<string>();
  const walk = (dir: string): void => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      if (entry.name === 'node_modules' || entry.name === 'dist' || entry.name === 'generated') continue;
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts')) {
        for (const match of readFileSync(path, 'utf8').matchAll(/name: '([a-z_][a-z0-9_]*)'/g)) names.add(match[1] ?? '');
        // Gauges made by a helper: backlogGauge('name', ...), reconcile('name', ...).
        for (const match of readFileSync(path, 'utf8').matchAll(/(?:backlogGauge|reconcile)\('([a-z_][a-z0-9_]*)'/g)) names.add(match[1] ?? '');
      }
    }
  };
  for (const root of ['packages/metrics/src', 'services/search-gateway/src', 'services/billing/src', 'services/account-admin/src']) walk(join(ROOT, root));
  return names;
}

const KEYWORDS = new Set(['by', 'without', 'on', 'ignoring', 'group_left', 'group_right', 'and', 'or', 'unless', 'bool', 'offset']);

/** The metric names a PromQL expression reads (labels, strings, functions and keywords removed). */
function metricsOf(expr: string): string[] {
  const stripped = expr
    .replace(/"(?:[^"\\]|\\.)*"/g, '""')
    .replace(/\{[^}]*\}/g, '')
    .replace(/\b(by|without|on|ignoring)\s*\([^)]*\)/g, '')
    .replace(/\[[^\]]*\]/g, '')
    .replace(/(^|[^a-zA-Z0-9_:])\d+(\.\d+)?(e[+-]?\d+)?/gi, '$1');
  const names: string[] = [];
  for (const match of stripped.matchAll(/([a-zA-Z_:][a-zA-Z0-9_:]*)(\s*\()?/g)) {
    const [, name = '', call] = match;
    if (call !== undefined || KEYWORDS.has(name) || name.includes(':') || /^\d/.test(name)) continue;
    names.push(name);
  }
  return names;
}

function known(name: string, defined: Set<string>): boolean {
  if (name === 'up' || name.startsWith('nodejs_') || name.startsWith('process_')) return true;
  const base = name.replace(/_(bucket|count|sum)$/, '');
  return defined.has(name) || defined.has(base);
}

describe('deploy/monitoring: scrape config, alerts and dashboard', () => {
  const defined = definedMetrics();
  const kustomization = load('kustomization.yaml')[0] ?? {};

  it('the kustomization applies every file of the folder', () => {
    const resources = arr(kustomization['resources'], 'resources').map((r) => text(r, 'resource'));
    const generated = arr(kustomization['configMapGenerator'], 'configMapGenerator').flatMap((g) => arr(obj(g, 'generator')['files'], 'files').map((f) => text(f, 'file')));
    expect([...resources, ...generated, 'kustomization.yaml'].sort()).toEqual(readdirSync(DIR).sort());
    expect(kustomization['namespace']).toBe('svc-platform');
  });

  it('the ServiceMonitor scrapes /metrics on the port named metrics of every <service>-metrics Service', () => {
    const monitors = load('service-monitor.yaml');
    expect(monitors.map((m) => m['kind'])).toEqual(['ServiceMonitor']);
    const spec = obj(monitors[0]?.['spec'], 'spec');
    const selector = obj(obj(spec['selector'], 'selector')['matchLabels'], 'matchLabels');
    expect(arr(spec['endpoints'], 'endpoints').map((e) => [obj(e, 'endpoint')['port'], obj(e, 'endpoint')['path']])).toEqual([['metrics', '/metrics']]);
    const selected = byKind(deployedManifests(), 'Service').filter((s) => Object.entries(selector).every(([k, v]) => obj(obj(s.doc['metadata'], 'metadata')['labels'], 'labels')[k] === v));
    expect(selected.map((s) => s.name).sort()).toEqual(['account-admin-metrics', 'billing-metrics', 'billing-worker-metrics', 'research-worker-metrics', 'search-gateway-metrics']);
  });

  const rules = load('prometheus-rules.yaml');
  const groups = arr(obj(rules[0]?.['spec'], 'spec')['groups'], 'groups').map((g) => obj(g, 'group'));
  const allRules = groups.flatMap((g) => arr(g['rules'], 'rules').map((r) => obj(r, 'rule')));
  const alerts = allRules.filter((r) => r['alert'] !== undefined);

  it('alerts on 5xx rate, search p99, provider errors, ledger backlog age, drift and webhook failures, each with its runbook', () => {
    expect(alerts.map((a) => a['alert'])).toEqual(expect.arrayContaining([
      'SvcHigh5xxRate', 'SvcSearchLatencyP99High', 'SvcProviderErrorRate', 'SvcLedgerBacklogOld', 'SvcReconciliationDrift', 'SvcStripeWebhookFailures',
    ]));
    const operations = readFileSync(join(ROOT, 'docs', 'operations.md'), 'utf8');
    for (const alert of alerts) {
      const name = text(alert['alert'], 'alert');
      const annotations = obj(alert['annotations'], `${name} annotations`);
      expect(annotations['runbook']).toBe(`docs/operations.md#${name.toLowerCase()}`);
      expect([name, operations.includes(`#### ${name}`)]).toEqual([name, true]);
      expect(['page', 'warn']).toContain(obj(alert['labels'], 'labels')['severity']);
    }
  });

  it('every rule and dashboard panel reads metrics the services really export', () => {
    const records = new Set(allRules.map((r) => r['record']).filter((r): r is string => typeof r === 'string'));
    const exprs = allRules.map((r) => text(r['expr'], 'expr'));
    const dashboard = JSON.parse(readFileSync(join(DIR, 'grafana-dashboard.json'), 'utf8')) as { uid: string; panels: { id: number; targets: { expr: string }[] }[] };
    expect(dashboard.uid).toBe('svc-platform');
    expect(new Set(dashboard.panels.map((p) => p.id)).size).toBe(dashboard.panels.length);
    for (const panel of dashboard.panels) {
      expect(panel.targets.length).toBeGreaterThan(0);
      exprs.push(...panel.targets.map((t) => t.expr));
    }
    const unknown = exprs.flatMap((expr) => metricsOf(expr).filter((name) => !records.has(name) && !known(name, defined)).map((name) => `${name} in ${expr}`));
    expect(unknown).toEqual([]);
    expect(metricsOf('sum by (le) (rate(gateway_search_duration_seconds_bucket{outcome="ok"}[5m]))')).toEqual(['gateway_search_duration_seconds_bucket']);
    expect(known('gateway_no_such_metric_total', defined)).toBe(false);
  });

  const kubectl = ['/usr/bin/kubectl', '/usr/local/bin/kubectl'].find((p) => existsSync(p));
  (kubectl === undefined ? it.skip : it)('kustomize renders it (kubectl kustomize)', () => {
    const rendered = execFileSync(kubectl ?? 'kubectl', ['kustomize', DIR], { encoding: 'utf8' });
    expect(rendered).toMatch(/kind: ServiceMonitor/);
    expect(rendered).toMatch(/kind: PrometheusRule/);
    expect(rendered).toMatch(/grafana_dashboard: "1"/);
  });
});
