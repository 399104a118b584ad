import { findModel } from '@svc/contracts';
import type { KeyRecord, ModelSpec, Provider } from '@svc/contracts';
import pino from 'pino';
import type { Logger } from 'pino';
import { NO_PROVIDER_KEYS } from '../src/byok/provider-key-cache';
import type { ProviderKeySet } from '../src/byok/provider-key-cache';
import { moneyScope } from '../src/money/money.scope';
import type { MoneyScope } from '../src/money/money.scope';
import type { AdmissionVerdict, LeaseRequest, MoneyOp, ReserveRequest, ReserveVerdict, Settlement } from '../src/money/money.ops';
import type { ExtractOutcome, ExtractProvider, ProviderExtractRequest, ProviderOutcome, ProviderSearchRequest } from '../src/providers';
import { claimValue } from '../src/search/idempotency';
import type { SearchCall } from '../src/search/search.result';
import { planAttempts, runningBoundMs } from '../src/search/steps/plan';
import type { SearchContext, SearchMoney, SearchProviders, SearchSettings, SearchSteps } from '../src/search/steps/search-steps';

/**
 * Fakes for the unit tests of the search steps and SearchService: the money port answers
 * from scripted queues and records every round trip with the ops it carried; the providers
 * answer from queues; the logger keeps its lines. Nothing here talks to Redis: the
 * integration tests (test/*.int.spec.ts) cover MoneyRepository on the real one.
 */

export function model(id: string): ModelSpec {
  const found = findModel(id);
  if (found === undefined) throw new Error(`no model ${id}`);
  return found;
}

export const SETTINGS: SearchSettings = {
  providerTimeoutMs: 1_000,
  maxInFlight: { brave: 10, exa: 20, tavily: 30 },
  leaseMarginMs: 500,
  idempotencyPollMs: 1,
  admission: { ratePerSecond: 5, burst: 10, accountCap: 3, leaseTtlMs: 60_000 },
  now: () => Date.UTC(2031, 0, 15, 12),
  hydrationWaitMs: 250,
  byokFeePercent: 5,
};

export const RECORD: KeyRecord = { id: 'key_unit', accountId: 'acc_unit', kind: 'api', disabled: false, expiresAtMs: null, limitMicros: null, limitReset: null, version: 1, deleted: false };

/** One money round trip as the fake saw it. */
export type MoneyCall =
  | { readonly method: 'admitFirst'; readonly ops: readonly MoneyOp[]; readonly lease: LeaseRequest; readonly reserve: ReserveRequest }
  | { readonly method: 'admit'; readonly ops: readonly MoneyOp[]; readonly lease: LeaseRequest; readonly reserve: ReserveRequest; readonly extendLeaseMs: number | undefined }
  | { readonly method: 'lease'; readonly ops: readonly MoneyOp[]; readonly lease: LeaseRequest; readonly extendLeaseMs: number }
  | { readonly method: 'giveBack'; readonly ops: readonly MoneyOp[] }
  | { readonly method: 'finish'; readonly ops: readonly MoneyOp[]; readonly outcome: string | null }
  | { readonly method: 'settle'; readonly ops: readonly MoneyOp[]; readonly settlement: Settlement }
  | { readonly method: 'releaseAccount' }
  | { readonly method: 'requestHydration' }
  | { readonly method: 'isWarm' }
  | { readonly method: 'readIdempotency' };

/** A scripted answer: a value, an Error to reject with, or a promise (to hold a round trip open). */
type Answer<T> = T | Error | Promise<T>;

function next<T>(queue: Answer<T>[], fallback: T): Promise<T> {
  const answer = queue.length > 0 ? queue.shift() : fallback;
  if (answer instanceof Promise) return answer;
  return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer as T);
}

export const admittedOk = (remaining = 9, leased = true): { leased: boolean; admission: AdmissionVerdict } =>
  ({ leased, admission: { kind: 'admitted', remaining, verdict: { kind: 'ok' } } });

/** The money port, scripted: each method answers from its queue, then with a default (admitted, reserved, nothing foreign). */
export class FakeMoney implements SearchMoney {
  saturated = false;
  readonly calls: MoneyCall[] = [];
  readonly admitFirstAnswers: Answer<{ leased: boolean; admission: AdmissionVerdict }>[] = [];
  readonly admitAnswers: Answer<{ leased: boolean; verdict: ReserveVerdict }>[] = [];
  readonly finishAnswers: Answer<{ foreignOutcome: string | null }>[] = [];
  readonly leaseAnswers: Answer<boolean>[] = [];
  readonly settleAnswers: Answer<undefined>[] = [];
  readonly releaseAnswers: Answer<undefined>[] = [];
  readonly hydrationAnswers: Answer<undefined>[] = [];
  readonly warmAnswers: Answer<boolean>[] = [];
  readonly idempotencyAnswers: Answer<string | null>[] = [];
  batchStatus: 'ready' | 'connecting' | 'down' | 'closed' = 'ready';
  closed = false;

  admitFirst(_scope: MoneyScope, ops: readonly MoneyOp[], lease: LeaseRequest, reserve: ReserveRequest): Promise<{ leased: boolean; admission: AdmissionVerdict }> {
    this.calls.push({ method: 'admitFirst', ops: [...ops], lease, reserve });
    return next(this.admitFirstAnswers, admittedOk());
  }

  admit(_scope: MoneyScope, ops: readonly MoneyOp[], lease: LeaseRequest, reserve: ReserveRequest, extendLeaseMs?: number): Promise<{ leased: boolean; verdict: ReserveVerdict }> {
    this.calls.push({ method: 'admit', ops: [...ops], lease, reserve, extendLeaseMs });
    return next(this.admitAnswers, { leased: true, verdict: { kind: 'ok' } });
  }

  lease(_scope: MoneyScope, ops: readonly MoneyOp[], lease: LeaseRequest, extendLeaseMs: number): Promise<boolean> {
    this.calls.push({ method: 'lease', ops: [...ops], lease, extendLeaseMs });
    return next(this.leaseAnswers, true);
  }

  giveBack(_scope: MoneyScope, ops: readonly MoneyOp[]): void {
    this.calls.push({ method: 'giveBack', ops: [...ops] });
  }

  finish(_scope: MoneyScope, ops: readonly MoneyOp[], outcome: string | null): Promise<{ foreignOutcome: string | null }> {
    this.calls.push({ method: 'finish', ops: [...ops], outcome });
    return next(this.finishAnswers, { foreignOutcome: null });
  }

  settle(_scope: MoneyScope, ops: readonly MoneyOp[], settlement: Settlement): Promise<void> {
    this.calls.push({ method: 'settle', ops: [...ops], settlement });
    return next(this.settleAnswers, undefined);
  }

  releaseAccount(): Promise<void> {
    this.calls.push({ method: 'releaseAccount' });
    return next(this.releaseAnswers, undefined);
  }

  requestHydration(): Promise<void> {
    this.calls.push({ method: 'requestHydration' });
    return next(this.hydrationAnswers, undefined);
  }

  isWarm(): Promise<boolean> {
    this.calls.push({ method: 'isWarm' });
    return next(this.warmAnswers, false);
  }

  readIdempotency(): Promise<string | null> {
    this.calls.push({ method: 'readIdempotency' });
    return next(this.idempotencyAnswers, null);
  }

  // What SearchService uses beside the steps' port.
  drainSettlements(): Promise<boolean> {
    return Promise.resolve(true);
  }

  close(): void {
    this.closed = true;
  }

  /** The methods called, in order. */
  get methods(): string[] {
    return this.calls.map((call) => call.method);
  }
}

/** Providers answering from queues (default: one result; an extract: every URL fetched), with the platform keys given. */
export class FakeProviders implements SearchProviders {
  readonly requests: (ProviderSearchRequest & { provider: Provider })[] = [];
  readonly answers: Partial<Record<Provider, (ProviderOutcome | Error | Promise<ProviderOutcome>)[]>> = {};
  readonly extractRequests: (ProviderExtractRequest & { provider: Provider })[] = [];
  readonly extractAnswers: Partial<Record<Provider, ((request: ProviderExtractRequest) => ExtractOutcome | Promise<ExtractOutcome>)[]>> = {};

  constructor(private readonly keys: Partial<Record<Provider, string>> = { brave: 'pk-brave', exa: 'pk-exa', tavily: 'pk-tavily' }) {}

  adapter(provider: Provider): { search(request: ProviderSearchRequest): Promise<ProviderOutcome> } {
    return {
      search: (request) => {
        this.requests.push({ ...request, provider });
        const answer = this.answers[provider]?.shift() ?? success(1);
        if (answer instanceof Promise) return answer;
        return answer instanceof Error ? Promise.reject(answer) : Promise.resolve(answer);
      },
    };
  }

  extractor(provider: Provider): ExtractProvider | undefined {
    if (provider === 'brave') return undefined;
    return {
      provider,
      close: () => Promise.resolve(),
      extract: (request) => {
        this.extractRequests.push({ ...request, provider });
        const answer = this.extractAnswers[provider]?.shift() ?? pagesOf();
        return Promise.resolve(answer(request));
      },
    };
  }

  /** Queues what the provider's next extract calls answer (a function of the call). */
  answerExtract(provider: Provider, ...answers: ((request: ProviderExtractRequest) => ExtractOutcome | Promise<ExtractOutcome>)[]): this {
    (this.extractAnswers[provider] ??= []).push(...answers);
    return this;
  }

  platformKey(provider: Provider): string | undefined {
    return this.keys[provider];
  }

  answer(provider: Provider, ...outcomes: (ProviderOutcome | Error | Promise<ProviderOutcome>)[]): this {
    (this.answers[provider] ??= []).push(...outcomes);
    return this;
  }
}

export function success(results: number): ProviderOutcome {
  return {
    ok: true,
    results: Array.from({ length: results }, (_, i) => ({ position: i + 1, title: `t${i}`, url: `https://example.com/${i}`, snippet: '', published_at: null, score: null })),
  };
}

/** An extract answer: every URL of the call fetched (a page of 100 characters) but those in `failing`, which fail at the pages. */
export function pagesOf(...failing: string[]): (request: ProviderExtractRequest) => ExtractOutcome {
  return (request) => ({
    ok: true,
    pages: request.urls.filter((url) => !failing.includes(url)).map((url) => ({ url, title: `title of ${url}`, text: 'x'.repeat(100), published_at: null, truncated: false })),
    failed: request.urls.filter((url) => failing.includes(url)).map((url) => ({ url, error: 'page not found (404)' })),
  });
}

export function failure(kind: 'timeout' | 'server_error' | 'bad_key' | 'rate_limited', status: number | null = 500): ProviderOutcome {
  return { ok: false, kind, error: `provider ${kind}`, status };
}

/** A logger whose lines (parsed) are kept. */
export function capturingLogger(): { log: Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const log = pino({ level: 'debug' }, { write: (line: string) => lines.push(JSON.parse(line) as Record<string, unknown>) });
  return { log, lines };
}

export function messages(lines: readonly Record<string, unknown>[]): unknown[] {
  return lines.map((line) => line.msg);
}

export interface Harness {
  readonly steps: SearchSteps;
  readonly money: FakeMoney;
  readonly providers: FakeProviders;
  readonly lines: Record<string, unknown>[];
  readonly failures: string[];
}

export function harness(settings: SearchSettings = SETTINGS, providers = new FakeProviders()): Harness {
  const money = new FakeMoney();
  const { log, lines } = capturingLogger();
  const failures: string[] = [];
  const steps: SearchSteps = { money, providers, settings, metrics: { countFailure: (provider, kind) => failures.push(`${provider}:${kind}`) }, log };
  return { steps, money, providers, lines, failures };
}

export interface CallOptions {
  readonly models?: readonly string[];
  readonly maxResults?: number;
  readonly idempotency?: { keyDigest: string; bodyDigest: string } | null;
  readonly elapsedMs?: number;
  readonly requestId?: string;
  readonly record?: KeyRecord;
}

export function searchCall(options: CallOptions = {}): SearchCall {
  const elapsed = options.elapsedMs ?? 5;
  return {
    record: options.record ?? RECORD,
    requestId: options.requestId ?? 'req_unit',
    request: { query: 'unit', models: (options.models ?? ['exa/fast']).map(model), maxResults: options.maxResults ?? 10, cache: 'default', cacheMaxAgeS: null, contents: 'none', maxCharsPerResult: 5_000, maxTotalChars: null },
    idempotency: options.idempotency ?? null,
    elapsedMs: () => elapsed,
  };
}

/** A search's context as SearchService makes it. */
export function searchContext(steps: SearchSteps, call: SearchCall = searchCall(), accountKeys: ProviderKeySet = NO_PROVIDER_KEYS): SearchContext {
  const plan = planAttempts(steps, call.request, accountKeys);
  const boundMs = runningBoundMs(steps.settings, plan.length);
  const idempotency = call.idempotency;
  return {
    call,
    scope: moneyScope(call.record, call.requestId, idempotency?.keyDigest ?? null, Date.UTC(2031, 0, 15, 12), boundMs),
    plan,
    boundMs,
    claim: idempotency === null ? undefined : { value: claimValue(call.requestId, idempotency.bodyDigest), ttlMs: boundMs },
  };
}
