import { main } from '../src/cli/main';
import type { CliIo } from '../src/cli/main';
import { ScriptedServer, apiError, json, reset, text } from './scripted-server';

/**
 * The `svc` command line in-process (the bin only passes the process's argv, streams and
 * environment to `main`), against a scripted server: what each command sends, what it
 * prints, --help everywhere, and its exit code for each class of outcome.
 */
describe('svc command line', () => {
  const server = ScriptedServer.forSuite();

  interface Run { code: number; stdout: string; stderr: string }

  const run = async (argv: string[], env: Record<string, string | undefined> = {}, stdin?: string): Promise<Run> => {
    let stdout = '';
    let stderr = '';
    const io: CliIo = {
      stdout: (t) => { stdout += t; },
      stderr: (t) => { stderr += t; },
      env: { SVC_BASE_URL: server.url, SVC_API_KEY: 'svc-api', SVC_MANAGEMENT_KEY: 'svc-mgmt-m', ...env },
      readStdin: async () => stdin,
      sleep: async () => undefined,
    };
    const code = await main(argv, io);
    return { code, stdout, stderr };
  };

  const KEY = {
    id: 'key_aaaaaaaaaaaaaaaaaaaaaaaa', name: 'ci', label: 'svc-Ab3x…', limit_usd: 10, limit_reset: 'monthly', limit_remaining_usd: 7.5,
    usage_usd: 2.5, limit_resets_at: '2026-12-01T00:00:00.000Z', usage_total_usd: 40.1, expires_at: null, disabled: false,
    created_at: '2026-11-22T02:59:56.485Z', updated_at: '2026-11-22T02:59:56.485Z', last_used_at: null,
    allowed_models: null, allowed_ips: null,
  };

  describe('help', () => {
    const commands = [
      'search', 'models', 'pricing', 'credits', 'key', 'usage', 'keys list', 'keys get', 'keys create', 'keys update', 'keys disable',
      'keys enable', 'keys delete', 'provider-keys list', 'provider-keys get', 'provider-keys set', 'provider-keys delete', 'checkout', 'audit-log',
      'research', 'research get', 'research wait', 'research list', 'research cancel',
    ];

    it('svc --help lists every command, the environment and the exit codes', async () => {
      const { code, stdout } = await run(['--help']);
      expect(code).toBe(0);
      for (const command of commands) expect(stdout).toContain(`  ${command} `);
      expect(stdout).toContain('SVC_API_KEY');
      expect(stdout).toContain('SVC_MANAGEMENT_KEY');
      expect(stdout).toContain('Exit codes: 0 ok, 2 usage error, 3 401/403, 4 402, 5 429/503');
    });

    it.each(commands)('svc %s --help shows its usage and options, sends nothing, exits 0', async (command) => {
      server.script(json(200, {}));
      const { code, stdout } = await run([...command.split(' '), '--help']);
      expect(code).toBe(0);
      expect(stdout).toMatch(new RegExp(`^Usage: svc ${command}`));
      expect(stdout).toContain('--json');
      expect(server.seen).toHaveLength(0);
    });

    it('svc keys --help and svc provider-keys -h list their subcommands; without a subcommand it is a usage error', async () => {
      expect((await run(['keys', '--help'])).stdout).toContain('Usage: svc keys <list|get|create|update|disable|enable|delete>');
      expect((await run(['provider-keys', '-h'])).stdout).toContain('Usage: svc provider-keys <list|get|set|delete>');
      const bare = await run(['keys']);
      expect(bare.code).toBe(2);
      expect(bare.stderr).toContain('Usage: svc keys');
    });

    it('svc --version prints the version', async () => {
      expect(await run(['--version'])).toEqual({ code: 0, stdout: '0.1.0\n', stderr: '' });
    });
  });

  describe('usage errors exit 2 and send nothing', () => {
    it.each([
      [[], 'Usage: svc <command>'],
      [['nope'], 'unknown command "nope"'],
      [['keys', 'nope'], 'unknown command "nope"; see svc keys --help'],
      [['models', '--nope'], "Unknown option '--nope'"],
      [['search', 'rust'], 'give at least one model'],
      [['search', '-m', 'exa/fast'], 'usage: svc search'],
      [['search', 'rust', '-m', 'exa/fast', '--max', 'five'], '--max must be a whole number'],
      [['keys', 'get'], 'usage: svc keys get <id>'],
      [['keys', 'update', 'key_a'], 'nothing to change'],
      [['keys', 'update', 'key_a', '--disabled', 'yes'], '--disabled takes true or false'],
      [['keys', 'create', '--limit-usd', 'ten'], '--limit-usd must be a number'],
      [['checkout', 'lots'], '<amount_usd> must be a number'],
      [['provider-keys', 'set', 'exa'], 'give the provider key with --key or on standard input'],
      [['models', '--timeout', '0'], 'timeoutMs must be a number above 0'],
      [['models', '--base-url', 'not a url'], 'baseUrl is not a URL'],
    ])('svc %j', async (argv, message) => {
      server.script(json(200, {}));
      const { code, stderr, stdout } = await run(argv);
      expect(code).toBe(2);
      expect(stderr).toContain(message);
      expect(stdout).toBe('');
      expect(server.seen).toHaveLength(0);
    });
  });

  describe('exit codes by class of error', () => {
    it.each([
      [401, 'invalid_api_key', 3],
      [401, 'key_disabled', 3],
      [403, 'wrong_key_type', 3],
      [402, 'insufficient_credits', 4],
      [429, 'rate_limited', 5],
      [503, 'overloaded', 5],
      [503, 'payment_disabled', 5],
      [400, 'invalid_request', 6],
      [400, 'unknown_model', 6],
      [404, 'not_found', 6],
      [500, 'internal', 7],
      [502, 'all_providers_failed', 7],
      [502, 'payment_error', 7],
      [504, 'internal', 7],
    ])('%i %s exits %i, with the status, code, message and request id on stderr', async (status, code, exit) => {
      server.script(apiError(status, code, code === 'all_providers_failed' ? { attempts: [{ model: 'exa/fast', source: 'platform', status: 'error', error: 'provider returned 500' }] } : {}));
      const result = await run(['search', 'rust', '-m', 'exa/fast', '--max-retries', '0']);
      expect(result.code).toBe(exit);
      expect(result.stdout).toBe('');
      expect(result.stderr).toContain(`svc: ${status} ${code}: the server says ${code}`);
      expect(result.stderr).toMatch(/\[request req_/);
      if (code === 'all_providers_failed') expect(result.stderr).toContain('exa/fast error: provider returned 500');
    });

    it('a non-JSON 404 exits 6 and shows the text', async () => {
      server.script(text(404, 'Not Found'));
      const result = await run(['models']);
      expect(result.code).toBe(6);
      expect(result.stderr).toBe('svc: 404: HTTP 404: Not Found\n');
    });

    it('no answer (connection reset on every attempt) exits 8', async () => {
      server.script(reset);
      const result = await run(['credits']);
      expect(result.code).toBe(8);
      expect(server.seen).toHaveLength(3);
      expect(result.stderr).toContain('could not get an answer');
    });

    it('--json writes the error as one JSON line on stderr and nothing on stdout', async () => {
      server.script(apiError(402, 'key_limit_exceeded', { needed_usd: 0.009 }));
      const result = await run(['search', 'rust', '-m', 'exa/fast', '--json']);
      expect(result.code).toBe(4);
      expect(result.stdout).toBe('');
      const error = JSON.parse(result.stderr) as Record<string, unknown>;
      expect(error).toMatchObject({ status: 402, code: 'key_limit_exceeded', retry_after: null });
      expect(error.body).toMatchObject({ error: { needed_usd: 0.009 } });
    });

    it('a 401 without any key in the environment adds a hint', async () => {
      server.script(apiError(401, 'invalid_api_key'));
      const result = await run(['credits'], { SVC_API_KEY: undefined, SVC_MANAGEMENT_KEY: undefined });
      expect(result.code).toBe(3);
      expect(server.seen[0]?.headers.authorization).toBeUndefined();
      expect(result.stderr).toContain('set SVC_API_KEY');
    });
  });

  describe('what the commands send and print', () => {
    it('search: one -m is model, several are models in order; --max is max_results; a table of results', async () => {
      server.script(json(200, {
        request_id: 'req_1', model: 'brave/web', provider: 'brave', source: 'platform', cost_usd: 0.006, latency_ms: 25,
        results: [{ position: 1, title: 'Rust', url: 'https://example.org/rust', snippet: 's', published_at: null, score: null }],
        attempts: [{ model: 'exa/fast', source: 'platform', status: 'error', error: 'provider returned 500' }], cache: { status: 'hit', age_s: 42 },
      }));
      const result = await run(['search', 'rust', 'async', '-m', 'exa/fast', '-m', 'brave/web', '--max', '5']);
      expect(result.code).toBe(0);
      expect(server.bodyOf(0)).toEqual({ query: 'rust async', models: ['exa/fast', 'brave/web'], max_results: 5 });
      expect(server.seen[0]?.headers.authorization).toBe('Bearer svc-api');
      expect(result.stdout).toContain('brave/web (platform) answered with 1 result: cost 0.006 USD, 25 ms, cache hit (42 s old)');
      expect(result.stdout).toContain('before it: exa/fast error: provider returned 500');
      expect(result.stdout).toMatch(/#\s+TITLE\s+URL\n1\s+Rust\s+https:\/\/example.org\/rust\n/);
      server.script(json(200, { ok: true }));
      await run(['search', 'q', '-m', 'exa/fast', '--cache', 'refresh', '--cache-max-age', '60']);
      expect(server.bodyOf(0)).toEqual({ query: 'q', model: 'exa/fast', cache: 'refresh', cache_max_age_s: 60 });
      const bad = await run(['search', 'q', '-m', 'exa/fast', '--cache', 'always']);
      expect([bad.code, bad.stderr]).toEqual([2, expect.stringContaining('--cache must be default, refresh or off')]);
      server.script(json(200, { ok: true }));
      await run(['search', '--idempotency-key', 'k-1', '-m', 'exa/fast', '--', '-negative query']);
      expect(server.bodyOf(0)).toEqual({ query: '-negative query', model: 'exa/fast' });
      expect(server.seen[0]?.headers['idempotency-key']).toBe('k-1');
    });

    it('search --fanout sends strategy fanout (with --fanout-wait-ms and --max-cost) and prints the merged results with their sources', async () => {
      server.script(json(200, {
        request_id: 'req_f', strategy: 'fanout', models: ['exa/fast', 'brave/web'], cost_usd: 0.015, latency_ms: 40, duplicates_removed: 1,
        results: [{ position: 1, title: 'Rust', url: 'https://example.org/rust', snippet: 's', published_at: null, score: 0.0328, sources: [{ model: 'exa/fast', position: 1 }, { model: 'brave/web', position: 2 }] }],
        attempts: [
          { model: 'exa/fast', source: 'platform', status: 'success', results: 1, cost_usd: 0.009, cache: { status: 'off', age_s: 0 } },
          { model: 'brave/web', source: 'platform', status: 'success', results: 2, cost_usd: 0.006, cache: { status: 'off', age_s: 0 } },
          { model: 'tavily/basic', source: 'platform', status: 'skipped', cost_usd: 0, error: 'over max_cost_usd: needs up to 0.01 USD, 0.005 USD of max_cost_usd left' },
        ],
        cache: { status: 'off', age_s: 0 },
      }));
      const result = await run(['search', 'rust', '-m', 'exa/fast', '-m', 'brave/web', '-m', 'tavily/basic', '--fanout', '--fanout-wait-ms', '2000', '--max-cost', '0.02']);
      expect(result.code).toBe(0);
      expect(server.bodyOf(0)).toEqual({ query: 'rust', models: ['exa/fast', 'brave/web', 'tavily/basic'], strategy: 'fanout', fanout_wait_ms: 2000, max_cost_usd: 0.02 });
      expect(result.stdout).toContain('1 result merged from exa/fast, brave/web: cost 0.015 USD, 1 duplicate removed');
      expect(result.stdout).toContain('tavily/basic skipped, 0 USD (over max_cost_usd');
      expect(result.stdout).toMatch(/1\s+Rust\s+https:\/\/example.org\/rust\s+exa\/fast#1 brave\/web#2\n/);
      const bad = await run(['search', 'q', '-m', 'exa/fast', '--fanout-wait-ms', '100']);
      expect([bad.code, bad.stderr]).toEqual([2, expect.stringContaining('--fanout-wait-ms needs --fanout')]);
      server.script(apiError(402, 'max_cost_exceeded', { needed_usd: 0.006, attempts: [] }));
      const capped = await run(['search', 'q', '-m', 'brave/web', '--max-cost', '0.001']);
      expect(capped.code).toBe(4);
      expect(server.bodyOf(0)).toEqual({ query: 'q', model: 'brave/web', max_cost_usd: 0.001 });
      server.script(json(200, { ok: true }));
      await run(['extract', 'https://example.org/a', '-m', 'exa/contents', '--max-cost', '0.5']);
      expect(server.bodyOf(0)).toEqual({ urls: ['https://example.org/a'], model: 'exa/contents', max_cost_usd: 0.5 });
    });

    it('--json prints the API\'s body unchanged', async () => {
      const body = { balance_usd: 12.5, reserved_usd: 0, total_purchased_usd: 0, total_spent_usd: 0, request_id: 'req_2' };
      server.script(json(200, body));
      const result = await run(['credits', '--json']);
      expect(JSON.parse(result.stdout)).toEqual(body);
      server.script(json(200, body));
      expect(JSON.parse((await run(['--json', 'credits'])).stdout)).toEqual(body);
    });

    it('credits prints its fields; --base-url before the command is honoured', async () => {
      server.script(json(200, { balance_usd: 12.5, reserved_usd: 0.03, total_purchased_usd: 10, total_spent_usd: 1.5, request_id: 'req_3' }));
      const result = await run(['--base-url', server.url, 'credits'], { SVC_BASE_URL: 'http://127.0.0.1:9' });
      expect(result.code).toBe(0);
      expect(result.stdout).toBe('balance_usd          12.5\nreserved_usd         0.03\ntotal_purchased_usd  10\ntotal_spent_usd      1.5\n');
    });

    it('keys list walks every page; --json is one array', async () => {
      const page = (ids: string[], next: string | null) => json(200, { data: ids.map((id) => ({ ...KEY, id })), next_cursor: next, request_id: 'r' });
      server.script(page(['key_1', 'key_2'], 'c1'), page(['key_3'], null));
      const result = await run(['keys', 'list', '--page-size', '2']);
      expect(result.code).toBe(0);
      expect(server.seen.map((r) => r.url)).toEqual(['/v1/keys?limit=2', '/v1/keys?limit=2&cursor=c1']);
      expect(server.seen[0]?.headers.authorization).toBe('Bearer svc-mgmt-m');
      expect(result.stdout.split('\n')[0]).toMatch(/^ID\s+NAME\s+LABEL\s+LIMIT_USD\s+RESET\s+USAGE_USD\s+EXPIRES_AT\s+STATE$/);
      expect(result.stdout).toMatch(/key_3\s+ci\s+svc-Ab3x…\s+10\s+monthly\s+2.5\s+-\s+enabled/);
      server.script(page(['key_1'], 'c1'), page(['key_2'], null));
      const asJson = JSON.parse((await run(['keys', 'list', '--json'])).stdout) as { id: string }[];
      expect(asJson.map((k) => k.id)).toEqual(['key_1', 'key_2']);
    });

    it('keys create sends the fields and shows the secret once; keys update maps "none" to null', async () => {
      server.script(json(201, { ...KEY, secret: 'svc-secret-shown-once', request_id: 'r' }));
      const created = await run(['keys', 'create', '--name', 'ci', '--limit-usd', '10', '--limit-reset', 'monthly', '--expires-at', '2030-01-01T00:00:00Z', '--disabled']);
      expect(created.code).toBe(0);
      expect(server.bodyOf(0)).toEqual({ name: 'ci', limit_usd: 10, limit_reset: 'monthly', expires_at: '2030-01-01T00:00:00Z', disabled: true });
      expect(created.stdout).toContain('secret  svc-secret-shown-once');
      server.script(json(200, { ...KEY, request_id: 'r' }));
      await run(['keys', 'update', 'key_a', '--limit-usd', 'none', '--limit-reset', 'none', '--expires-at', 'none', '--disabled', 'false', '--name', 'n']);
      expect(server.seen[0]?.method).toBe('PATCH');
      expect(server.bodyOf(0)).toEqual({ name: 'n', limit_usd: null, limit_reset: null, expires_at: null, disabled: false });
    });

    it('keys create and update send the fences; "none" removes one; the record shows them', async () => {
      server.script(json(201, { ...KEY, allowed_models: ['exa/*', 'brave/web'], allowed_ips: ['10.0.0.0/8'], secret: 'svc-s', request_id: 'r' }));
      const created = await run(['keys', 'create', '--allow-model', 'exa/*', '--allow-model', 'brave/web', '--allow-ip', '10.0.0.0/8']);
      expect(created.code).toBe(0);
      expect(server.bodyOf(0)).toEqual({ allowed_models: ['exa/*', 'brave/web'], allowed_ips: ['10.0.0.0/8'] });
      expect(created.stdout).toMatch(/allowed_models\s+exa\/\*, brave\/web/);
      expect(created.stdout).toMatch(/allowed_ips\s+10\.0\.0\.0\/8/);
      server.script(json(200, { ...KEY, request_id: 'r' }));
      expect((await run(['keys', 'update', 'key_a', '--allow-model', 'none', '--allow-ip', '2001:db8::/32'])).code).toBe(0);
      expect(server.bodyOf(0)).toEqual({ allowed_models: null, allowed_ips: ['2001:db8::/32'] });
    });

    it('audit-log sends the filters, follows the pages up to --max, and prints who changed what', async () => {
      const entry = (id: string) => ({
        id, at: '2026-11-26T17:00:00.000Z', actor: { kind: 'management_key', id: 'mkey_a' }, client_address: '203.0.113.7',
        action: 'api_key.update', target_id: 'key_a', changes: { limit_usd: { before: 5, after: 7 } },
      });
      server.script(json(200, { data: [entry('aud_1'), entry('aud_2')], next_cursor: 'c1', request_id: 'r' }), json(200, { data: [entry('aud_3')], next_cursor: 'c2', request_id: 'r' }));
      const result = await run(['audit-log', '--action', 'api_key.update', '--actor-kind', 'management_key', '--target', 'key_a', '--from', '2026-11-01T00:00:00Z', '--max', '3']);
      expect(result.code).toBe(0);
      expect(server.seen.map((r) => r.url)).toEqual([
        '/v1/audit-log?limit=3&action=api_key.update&actor_kind=management_key&target_id=key_a&from=2026-11-01T00%3A00%3A00Z',
        '/v1/audit-log?limit=3&cursor=c1&action=api_key.update&actor_kind=management_key&target_id=key_a&from=2026-11-01T00%3A00%3A00Z',
      ]);
      expect(result.stdout.split('\n')[0]).toMatch(/^AT\s+ACTOR\s+ADDRESS\s+ACTION\s+TARGET\s+CHANGES$/);
      expect(result.stdout).toMatch(/management_key:mkey_a\s+203\.0\.113\.7\s+api_key\.update\s+key_a\s+limit_usd: 5 -> 7/);
      expect(result.stdout.trim().split('\n')).toHaveLength(4);
    });

    it('keys disable, enable, delete and get address the id', async () => {
      server.script(json(200, { ...KEY, id: 'key_a', request_id: 'r' }));
      expect((await run(['keys', 'disable', 'key_a'])).stdout).toBe('key_a is disabled\n');
      expect((await run(['keys', 'enable', 'key_a'])).stdout).toBe('key_a is enabled\n');
      expect((await run(['keys', 'get', 'key_a'])).stdout).toContain('limit_reset          monthly');
      server.script(json(200, { id: 'key_a', deleted: true, request_id: 'r' }));
      expect((await run(['keys', 'delete', 'key_a'])).stdout).toBe('key_a is deleted\n');
      expect(server.seen.map((r) => `${r.method} ${r.url} ${r.body}`)).toEqual(['DELETE /v1/keys/key_a ']);
    });

    it('provider-keys set reads the key from standard input, or --key; list, get and delete', async () => {
      const record = { provider: 'exa', label: '…1234', created_at: 't', updated_at: 't', request_id: 'r' };
      server.script(json(200, record));
      expect((await run(['provider-keys', 'set', 'exa'], {}, 'exa-secret-1234\n')).stdout).toBe('exa key stored (…1234)\n');
      expect(server.seen[0]?.method).toBe('PUT');
      expect(server.seen[0]?.url).toBe('/v1/provider-keys/exa');
      expect(server.bodyOf(0)).toEqual({ key: 'exa-secret-1234' });
      server.script(json(200, record));
      await run(['provider-keys', 'set', 'exa', '--key', 'k2']);
      expect(server.bodyOf(0)).toEqual({ key: 'k2' });
      server.script(json(200, { data: [record], request_id: 'r' }));
      expect((await run(['provider-keys', 'list'])).stdout).toMatch(/PROVIDER\s+LABEL\s+CREATED_AT\s+UPDATED_AT\nexa\s+…1234/);
      server.script(json(200, { provider: 'exa', deleted: true, request_id: 'r' }));
      expect((await run(['provider-keys', 'delete', 'exa'])).stdout).toBe('exa key deleted\n');
    });

    it('checkout sends amount_usd and prints the payment link on its own line', async () => {
      server.script(json(201, { id: 'chk_1', url: 'http://pay.example/cs_1', amount_usd: 25, expires_at: '2026-11-25T00:00:00.000Z', request_id: 'r' }));
      const result = await run(['checkout', '25', '--success-url', 'https://example.com/ok']);
      expect(server.bodyOf(0)).toEqual({ amount_usd: 25, success_url: 'https://example.com/ok' });
      expect(server.seen[0]?.headers.authorization).toBe('Bearer svc-mgmt-m');
      expect(result.stdout.trimEnd().split('\n').at(-1)).toBe('http://pay.example/cs_1');
    });

    it('usage passes --from, --to, --group-by and --key-id and prints one row per group and the total', async () => {
      server.script(json(200, {
        from: '2026-11-01', to: '2026-11-30', request_id: 'r',
        data: [{ model: 'brave/web', searches: 2, failed_attempts: 0, cost_usd: 0.012, byok_fee_usd: 0 }], total: { searches: 2, cost_usd: 0.012, byok_fee_usd: 0 },
      }));
      const result = await run(['usage', '--from', '2026-11-01', '--to', '2026-11-30', '--group-by', 'model', '--key-id', 'key_a']);
      expect(server.seen[0]?.url).toBe('/v1/usage?from=2026-11-01&to=2026-11-30&group_by=model&key_id=key_a');
      expect(result.stdout).toMatch(/MODEL\s+SEARCHES\s+FAILED_ATTEMPTS\s+COST_USD\nbrave\/web\s+2\s+0\s+0.012\n/);
      expect(result.stdout).toContain('total: 2 searches, 0.012 USD');
    });

    it('models, pricing and key print tables and fields', async () => {
      server.script(json(200, { data: [{ id: 'exa/fast', provider: 'exa', variant: 'fast', description: 'd', max_results: 100, pricing: { base_usd: 0.009, included_results: 10, per_result_usd: 0.00125, cache_price_usd: 0.0009 }, available: true }], request_id: 'r' }));
      expect((await run(['models'])).stdout).toMatch(/exa\/fast\s+exa\s+100\s+0.009\s+10\s+0.00125\s+0.0009\s+yes/);
      expect(server.seen[0]?.headers.authorization).toBeUndefined();
      server.script(json(200, { currency: 'USD', models: [{ id: 'brave/web', base_usd: 0.006, included_results: null, per_result_usd: 0 }], purchase: { min_usd: 5, max_usd: 10000 }, byok: { enabled: true, fee_percent: 5 }, request_id: 'r' }));
      const pricing = (await run(['pricing'])).stdout;
      expect(pricing).toMatch(/brave\/web\s+0.006\s+-\s+0/);
      expect(pricing).toContain('from 5 to 10000 USD');
      server.script(json(200, { kind: 'api', ...KEY, rate_limit: { requests_per_second: 20, burst: 40 }, request_id: 'r' }));
      const key = (await run(['key'])).stdout;
      expect(key).toMatch(/^kind\s+api$/m);
      expect(key).toMatch(/^rate_limit\s+20\/s, bursts of 40$/m);
    });
  });
});
