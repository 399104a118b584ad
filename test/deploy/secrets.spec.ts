import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { ROOT, findRealLookingSecrets, readText } from './deploy-kit';

/** Every file that describes a deployment, relative to the repository root. */
function deploymentFiles(): string[] {
  const walk = (dir: string): string[] =>
    readdirSync(dir).flatMap((entry) => {
      const path = join(dir, entry);
      return statSync(path).isDirectory() ? walk(path) : [relative(ROOT, path)];
    });
  return ['docker-compose.yml', '.env.example', 'Dockerfile', '.dockerignore', 'docs/operations.md', ...walk(join(ROOT, 'deploy'))];
}

describe('no real-looking secret in the deployment files', () => {
  it.each(deploymentFiles().map((f) => [f] as const))('%s holds placeholders only', (file) => {
    expect(findRealLookingSecrets(readText(file))).toEqual([]);
  });

  it('the detector recognises each kind of real credential (so the scan above can fail)', () => {
    const tail = 'a1B2c3D4e5F6g7H8i9J0kLmNoPqRsTuV';
    const samples: [string, string][] = [
      ['Stripe secret or restricted key', ['sk', 'live', tail].join('_')],
      ['Stripe secret or restricted key', ['sk', 'test', tail].join('_')],
      ['Stripe webhook secret', ['whsec', tail].join('_')],
      ['Tavily key', ['tvly', 'dev', tail].join('-')],
      ['Brave key', `BSA${tail}`],
      ['UUID-shaped key (Exa)', '3f2b8c1e-9d4a-4b7e-8c2f-1a6d5e9b0c7d'],
      ['platform API or management key', `svc-${tail}${tail.slice(0, 11)}`],
      ['password in a URL', 'postgresql://billing:n0t-a-placeholder@db.internal:5432/svc_billing'],
    ];
    for (const [what, sample] of samples) expect([sample, findRealLookingSecrets(`KEY=${sample}\n`)]).toEqual([sample, [what]]);
  });

  it('placeholders and interpolations are not mistaken for secrets', () => {
    expect(findRealLookingSecrets([
      'STRIPE_SECRET_KEY=sk_test_...',
      'DATABASE_URL: postgresql://billing:REPLACE_ME@postgres.example.internal:5432/svc_billing',
      'DATABASE_URL: postgresql://postgres:${POSTGRES_PASSWORD}@postgres:5432/svc_billing',
      'TAVILY_API_KEY: ${TAVILY_API_KEY:-tvly-sim-key}',
    ].join('\n'))).toEqual([]);
  });
});
