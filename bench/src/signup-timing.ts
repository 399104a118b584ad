/**
 * Whether the time of an answer tells a registered address from an unknown one
 * (docs/decisions/0055): through the gateway, on a stack with SIGNUP_CONFIRMATION=required
 * sending to a local SMTP server, the latency of
 *   - POST /dashboard/api/signup: a registered address against a new one;
 *   - POST /dashboard/api/login with a wrong password: a registered address against an unknown one;
 *   - POST /dashboard/api/password-reset: a registered address against an unknown one.
 * Each pair runs in alternating rounds (one side first in odd rounds, the other in even ones),
 * one request at a time. Per pair it reports each side's median and p90, the difference of the
 * medians, and the same difference between two halves of one side's own requests (an A/A of
 * the registered side), the noise the difference is to be read against. Prints Markdown and
 * writes bench/results/signup-timing.json.
 *
 * Env: ROUNDS (10), PER_ROUND (10 requests of each side per round), ACCOUNTS (10 registered
 * addresses, used in turn).
 */
import { MailCatcher, smtpEnv, startStack } from '@svc/test-kit';
import { BENCH_REDIS_DB } from './lib-stack';
import { alternatingRounds, median, writeResult } from './lib-results';
import { runBench } from './lib-run';
import { percentile } from './stats';

const ROUNDS = Number(process.env.ROUNDS ?? 10);
const PER_ROUND = Number(process.env.PER_ROUND ?? 10);
const ACCOUNTS = Number(process.env.ACCOUNTS ?? 10);
const PASSWORD = 'bench password of enough length';
const LIFTED = '1000000';

interface Side {
  label: string;
  /** One request; resolves with its status. */
  send(i: number): Promise<number>;
  expect: number;
}

interface Pair {
  name: string;
  registered: Side;
  other: Side;
}

async function post(url: string, body: unknown): Promise<number> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  await response.arrayBuffer();
  return response.status;
}

/** `count` requests of one side, one at a time; each one's milliseconds. */
async function timed(side: Side, count: number, offset: number): Promise<number[]> {
  const out: number[] = [];
  for (let i = 0; i < count; i++) {
    const start = process.hrtime.bigint();
    const status = await side.send(offset + i);
    out.push(Number(process.hrtime.bigint() - start) / 1e6);
    if (status !== side.expect) throw new Error(`${side.label}: ${status}, expected ${side.expect}`);
  }
  return out;
}

const round2 = (ms: number): number => Math.round(ms * 100) / 100;

runBench(async (started) => {
  const catcher = await MailCatcher.start({ httpPort: null, keep: 50 });
  started.push(catcher);
  const stack = await startStack({
    name: 'bench_signup', redisDb: BENCH_REDIS_DB, logLevel: 'warn',
    accountAdminEnv: {
      ...smtpEnv(catcher), SIGNUP_CONFIRMATION: 'required',
      SIGN_IN_ATTEMPTS_PER_EMAIL: LIFTED, SIGN_IN_ATTEMPTS_PER_ADDRESS: LIFTED, SIGNUP_MAILS_PER_EMAIL: LIFTED, SIGNUP_MAILS_PER_ADDRESS: LIFTED,
      PASSWORD_RESETS_PER_EMAIL: LIFTED, PASSWORD_RESETS_PER_ADDRESS: LIFTED,
    },
  });
  started.push(stack);
  const api = `${stack.gateways[0]?.url ?? ''}/dashboard/api`;
  const run = Date.now().toString(36);

  // Registered addresses, made the way owners make them: sign up, then the mailed link.
  const registered: string[] = [];
  for (let i = 0; i < ACCOUNTS; i++) {
    const email = `bench-known-${run}-${i}@example.com`;
    if ((await post(`${api}/signup`, { email, password: PASSWORD })) !== 202) throw new Error('sign-up refused');
    const mail = await catcher.waitFor((m) => m.envelope.to.includes(email));
    const token = /#token=([A-Za-z0-9_-]{43})/.exec(mail.text)?.[1] ?? '';
    if ((await post(`${api}/signup/confirm`, { token })) !== 200) throw new Error('confirmation refused');
    registered.push(email);
  }
  const known = (i: number): string => registered[i % registered.length] ?? '';
  let fresh = 0;
  const unknown = (): string => `bench-new-${run}-${(fresh += 1)}@example.com`;

  const pairs: Pair[] = [
    {
      name: 'sign-up',
      registered: { label: 'registered address', expect: 202, send: (i) => post(`${api}/signup`, { email: known(i), password: PASSWORD }) },
      other: { label: 'new address', expect: 202, send: () => post(`${api}/signup`, { email: unknown(), password: PASSWORD }) },
    },
    {
      name: 'sign-in, wrong password',
      registered: { label: 'registered address', expect: 400, send: (i) => post(`${api}/login`, { email: known(i), password: 'not the password at all' }) },
      other: { label: 'unknown address', expect: 400, send: () => post(`${api}/login`, { email: unknown(), password: 'not the password at all' }) },
    },
    {
      name: 'password reset',
      registered: { label: 'registered address', expect: 202, send: (i) => post(`${api}/password-reset`, { email: known(i) }) },
      other: { label: 'unknown address', expect: 202, send: () => post(`${api}/password-reset`, { email: unknown() }) },
    },
  ];

  const results = [];
  for (const pair of pairs) {
    // Warm-up, not counted.
    await timed(pair.registered, 3, 0);
    await timed(pair.other, 3, 0);
    const a: number[] = [];
    const b: number[] = [];
    let offset = 0;
    await alternatingRounds(ROUNDS, () => timed(pair.registered, PER_ROUND, (offset += PER_ROUND)), () => timed(pair.other, PER_ROUND, 0), (round) => {
      a.push(...round.a);
      b.push(...round.b);
    });
    // A/A: the registered side's even-numbered requests against its odd-numbered ones.
    const aa = median(a.filter((_, i) => i % 2 === 0)) - median(a.filter((_, i) => i % 2 === 1));
    results.push({
      pair: pair.name,
      requests_per_side: a.length,
      registered: { label: pair.registered.label, p50_ms: round2(median(a)), p90_ms: round2(percentile(a, 90)) },
      other: { label: pair.other.label, p50_ms: round2(median(b)), p90_ms: round2(percentile(b, 90)) },
      difference_of_medians_ms: round2(median(a) - median(b)),
      a_a_difference_ms: round2(aa),
    });
  }

  console.log(`\nSign-up, sign-in and reset timing through the gateway (${ROUNDS} alternating rounds of ${PER_ROUND} requests a side, one at a time)\n`);
  console.log('| request | registered p50 / p90 ms | other side | other p50 / p90 ms | difference of medians ms | A/A of the registered side ms |');
  console.log('|---|---|---|---|---|---|');
  for (const r of results) {
    console.log(`| ${r.pair} | ${r.registered.p50_ms} / ${r.registered.p90_ms} | ${r.other.label} | ${r.other.p50_ms} / ${r.other.p90_ms} | ${r.difference_of_medians_ms} | ${r.a_a_difference_ms} |`);
  }
  const file = writeResult('signup-timing', { rounds: ROUNDS, per_round: PER_ROUND, accounts: ACCOUNTS, results });
  console.log(`\nwritten to ${file}`);
});
