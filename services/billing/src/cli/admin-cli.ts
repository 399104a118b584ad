/**
 * Operator CLI: `npm run admin -- <command>`. Calls the operator HTTP API at OPERATOR_URL
 * (default http://127.0.0.1:8081) with OPERATOR_TOKEN from the environment and prints the
 * JSON answer; on failure prints the error JSON and exits with status 1.
 *
 *   create-account [--email E] [--name N]
 *   grant <account_id> <amount_usd> --reason R [--idempotency-key K]
 *   ledger <account_id> [--limit N] [--cursor C]
 *   reconcile [--account A] [--repair] [--limit N] [--cursor C]
 *   backlog
 *   finance-report
 *   ledger-export [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--account A] [--out FILE]
 *   breakers
 *   breaker <provider> open|closed|auto
 *
 * ledger-export prints the CSV (or writes it to --out and prints where); every other
 * command prints JSON.
 */
import { writeFileSync } from 'node:fs';

const USAGE = `usage: admin <command>
  create-account [--email E] [--name N]
  grant <account_id> <amount_usd> --reason R [--idempotency-key K]
  ledger <account_id> [--limit N] [--cursor C]
  reconcile [--account A] [--repair] [--limit N] [--cursor C]
  backlog
  finance-report            Stripe vs ledger, usage vs ledger, balances vs entries, durable vs spendable
  ledger-export [--from YYYY-MM-DD] [--to YYYY-MM-DD] [--account A] [--out FILE]
                            the ledger of a period as CSV (default the last 30 days)
  breakers                  every provider's breaker (state, forced, reason, cool-down end)
  breaker <provider> open|closed|auto
                            force a provider's breaker open or closed on every gateway, or give it back to its window`;

class UsageError extends Error {}

interface Parsed {
  positional: string[];
  flags: Map<string, string>;
}

function parseArgs(args: string[], known: readonly string[]): Parsed {
  const positional: string[] = [];
  const flags = new Map<string, string>();
  for (let i = 0; i < args.length; i += 1) {
    const arg = args[i] ?? '';
    if (!arg.startsWith('--')) {
      positional.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq === -1 ? undefined : eq);
    if (!known.includes(name)) throw new UsageError(`unknown option --${name}`);
    let value: string | undefined;
    if (eq !== -1) value = arg.slice(eq + 1);
    else {
      i += 1;
      value = args[i];
    }
    if (value === undefined) throw new UsageError(`--${name} needs a value`);
    flags.set(name, value);
  }
  return { positional, flags };
}

/** The flags that were given, as a query string (`?` first; '' when none was): each flag under its parameter's name. */
function queryOf(flags: Map<string, string>, params: readonly (readonly [flag: string, param: string])[]): string {
  const query = new URLSearchParams();
  for (const [flag, param] of params) {
    const value = flags.get(flag);
    if (value !== undefined) query.set(param, value);
  }
  const qs = query.toString();
  return qs === '' ? '' : `?${qs}`;
}

interface Call {
  method: 'GET' | 'POST' | 'PUT';
  path: string;
  body?: Record<string, unknown>;
  headers?: Record<string, string>;
  /** The answer is CSV (printed as is, or written to this file when set); otherwise JSON. */
  csv?: { out: string | null };
}

function buildCall(argv: string[]): Call {
  const [command, ...rest] = argv;
  switch (command) {
    case 'create-account': {
      const { positional, flags } = parseArgs(rest, ['email', 'name']);
      if (positional.length > 0) throw new UsageError('create-account takes no positional arguments');
      const body: Record<string, unknown> = {};
      const email = flags.get('email');
      const name = flags.get('name');
      if (email !== undefined) body.email = email;
      if (name !== undefined) body.name = name;
      return { method: 'POST', path: '/operator/accounts', body };
    }
    case 'grant': {
      const { positional, flags } = parseArgs(rest, ['reason', 'idempotency-key']);
      const [accountId, amount] = positional;
      if (accountId === undefined || amount === undefined || positional.length !== 2) {
        throw new UsageError('grant needs <account_id> <amount_usd>');
      }
      const reason = flags.get('reason');
      if (reason === undefined) throw new UsageError('grant needs --reason');
      // Sent as a JSON number exactly as typed, so the server judges its decimals.
      if (!/^\d+(\.\d+)?$/.test(amount)) throw new UsageError('amount_usd must be a positive decimal number');
      const key = flags.get('idempotency-key');
      return {
        method: 'POST',
        path: `/operator/accounts/${encodeURIComponent(accountId)}/grants`,
        body: { amount_usd: Number(amount), reason },
        headers: key === undefined ? {} : { 'idempotency-key': key },
      };
    }
    case 'ledger': {
      const { positional, flags } = parseArgs(rest, ['limit', 'cursor']);
      const [accountId] = positional;
      if (accountId === undefined || positional.length !== 1) throw new UsageError('ledger needs <account_id>');
      const query = queryOf(flags, [['limit', 'limit'], ['cursor', 'cursor']]);
      return { method: 'GET', path: `/operator/accounts/${encodeURIComponent(accountId)}/ledger${query}` };
    }
    case 'reconcile': {
      // --repair is a switch (no value): the repairing form is POST .../repair.
      const repair = rest.includes('--repair');
      const { positional, flags } = parseArgs(rest.filter((arg) => arg !== '--repair'), ['account', 'limit', 'cursor']);
      if (positional.length > 0) throw new UsageError('reconcile takes no positional arguments');
      const query = queryOf(flags, [['account', 'account_id'], ['limit', 'limit'], ['cursor', 'cursor']]);
      return { method: repair ? 'POST' : 'GET', path: `/operator/reconciliation${repair ? '/repair' : ''}${query}` };
    }
    case 'backlog': {
      if (rest.length > 0) throw new UsageError('backlog takes no arguments');
      return { method: 'GET', path: '/operator/ledger/backlog' };
    }
    case 'finance-report': {
      if (rest.length > 0) throw new UsageError('finance-report takes no arguments');
      return { method: 'GET', path: '/operator/finance/reconciliation' };
    }
    case 'ledger-export': {
      const { positional, flags } = parseArgs(rest, ['from', 'to', 'account', 'out']);
      if (positional.length > 0) throw new UsageError('ledger-export takes no positional arguments');
      const query = queryOf(flags, [['from', 'from'], ['to', 'to'], ['account', 'account_id']]);
      return { method: 'GET', path: `/operator/ledger/export${query}`, csv: { out: flags.get('out') ?? null } };
    }
    case 'breakers': {
      if (rest.length > 0) throw new UsageError('breakers takes no arguments');
      return { method: 'GET', path: '/operator/providers' };
    }
    case 'breaker': {
      const { positional } = parseArgs(rest, []);
      const [provider, mode] = positional;
      if (provider === undefined || mode === undefined || positional.length !== 2) throw new UsageError('breaker needs <provider> open|closed|auto');
      if (!['open', 'closed', 'auto'].includes(mode)) throw new UsageError('the mode is one of open, closed, auto');
      return { method: 'PUT', path: `/operator/providers/${encodeURIComponent(provider)}/breaker`, body: { mode } };
    }
    default:
      throw new UsageError(command === undefined ? 'no command given' : `unknown command ${command}`);
  }
}

function fail(error: unknown): never {
  process.stdout.write(`${JSON.stringify(error, null, 2)}\n`);
  process.exit(1);
}

async function main(): Promise<void> {
  let call: Call;
  try {
    call = buildCall(process.argv.slice(2));
  } catch (error) {
    if (error instanceof UsageError) {
      process.stderr.write(`${USAGE}\n`);
      fail({ error: { code: 'usage', message: error.message } });
    }
    throw error;
  }
  const token = process.env.OPERATOR_TOKEN;
  if (token === undefined || token === '') fail({ error: { code: 'usage', message: 'OPERATOR_TOKEN is not set' } });
  const base = (process.env.OPERATOR_URL ?? 'http://127.0.0.1:8081').replace(/\/+$/, '');
  let response: Response;
  try {
    response = await fetch(base + call.path, {
      method: call.method,
      headers: {
        authorization: `Bearer ${token}`,
        ...(call.body === undefined ? {} : { 'content-type': 'application/json' }),
        ...call.headers,
      },
      body: call.body === undefined ? undefined : JSON.stringify(call.body),
    });
  } catch (error) {
    fail({ error: { code: 'unreachable', message: `cannot reach ${base}: ${error instanceof Error ? error.message : String(error)}` } });
  }
  const text = await response.text();
  if (response.ok && call.csv !== undefined) {
    if (call.csv.out === null) {
      process.stdout.write(text);
      return;
    }
    try {
      writeFileSync(call.csv.out, text);
    } catch (error) {
      fail({ error: { code: 'write_failed', message: `cannot write ${call.csv.out}: ${error instanceof Error ? error.message : String(error)}` } });
    }
    const rows = text.split('\n').filter((line) => line !== '').length - 1;
    process.stdout.write(`${JSON.stringify({ file: call.csv.out, rows }, null, 2)}\n`);
    return;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = { error: { code: 'bad_response', message: `HTTP ${response.status} with a non-JSON body` } };
  }
  if (!response.ok) fail(parsed);
  process.stdout.write(`${JSON.stringify(parsed, null, 2)}\n`);
}

main().catch((error: unknown) => fail({ error: { code: 'internal', message: error instanceof Error ? error.message : String(error) } }));
