import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from '@svc/test-kit';

/**
 * The gateway refuses to start with settings that contradict each other, as a process: it
 * exits with status 1 and names them on stderr, before it opens any port or connection
 * (docs/operations.md, "Timeouts"; docs/decisions/0044).
 */
describe('the gateway process at start', () => {
  function start(env: Record<string, string>): Promise<{ code: number | null; stderr: string; stdout: string }> {
    return new Promise((resolve, reject) => {
      const child = spawn(process.execPath, [join(repoRoot(), 'services/search-gateway/dist/main.js')], {
        // Nothing of this process's environment: only what the test gives (no secret echoed back either).
        env: { PATH: process.env.PATH ?? '', INTERNAL_TOKEN: 'startup-test-internal-token', BYOK_ENABLED: 'false', PORT: '0', METRICS_PORT: '0', ...env },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      let stdout = '';
      child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
      child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`the gateway did not exit: ${stdout}${stderr}`));
      }, 20_000);
      child.on('exit', (code) => {
        clearTimeout(timer);
        resolve({ code, stderr, stdout });
      });
    });
  }

  it('exits with status 1, naming the timeouts that contradict each other (a request that took HTTP_REQUEST_TIMEOUT_MS to arrive would leave its first attempt less than PROVIDER_TIMEOUT_MS)', async () => {
    const exited = await start({ HTTP_REQUEST_TIMEOUT_MS: '40000', PROVIDER_TIMEOUT_MS: '15000', SEARCH_MAX_DURATION_MS: '45000' });
    expect(exited.code).toBe(1);
    expect(exited.stderr).toContain('search-gateway: invalid environment: SEARCH_MAX_DURATION_MS (45000) must be at least HTTP_REQUEST_TIMEOUT_MS (40000) + PROVIDER_TIMEOUT_MS (15000)');
    expect(exited.stdout).not.toContain('listening');
  });

  it('...and for a search bound below one provider call', async () => {
    const exited = await start({ HTTP_REQUEST_TIMEOUT_MS: '1000', PROVIDER_TIMEOUT_MS: '20000', SEARCH_MAX_DURATION_MS: '15000' });
    expect(exited.code).toBe(1);
    expect(exited.stderr).toMatch(/SEARCH_MAX_DURATION_MS \(15000\) must be at least HTTP_REQUEST_TIMEOUT_MS \(1000\) \+ PROVIDER_TIMEOUT_MS \(20000\)/);
  });
});
