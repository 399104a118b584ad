/**
 * Test directives carried in a query: `sim:<provider>=<behaviour>` or `sim:*=<behaviour>`,
 * each a word between ASCII spaces. They are stripped before the query is used; a
 * provider-specific directive wins over `*`. The rest of the query is kept exactly as it
 * arrived, as a real provider reads it: no other whitespace is a separator, nothing is
 * collapsed or normalised, so two texts a person reads alike (`best vpn`, `best\u00a0vpn`,
 * `café` composed and decomposed) are two queries with their own results.
 */

export const SIM_PROVIDERS = ['brave', 'exa', 'tavily'] as const;
export type SimProvider = (typeof SIM_PROVIDERS)[number];

export type Behaviour =
  | { readonly kind: 'ok' }
  | { readonly kind: 'error500' }
  | { readonly kind: 'error429' }
  | { readonly kind: 'quota' }
  | { readonly kind: 'badkey' }
  | { readonly kind: 'timeout' }
  | { readonly kind: 'slow'; readonly ms: number }
  /** The first request of this query (per provider) waits `ms` and answers 500; every later one answers normally. */
  | { readonly kind: 'failfirst'; readonly ms: number }
  | { readonly kind: 'empty' }
  /** 200 with results as if no domain or date filter had been sent (a provider that does not honour them). */
  | { readonly kind: 'unfiltered' }
  | { readonly kind: 'malformed' };

export const MAX_SLOW_MS = 600_000;

export type ParsedQuery =
  | { readonly ok: true; readonly query: string; readonly behaviour: Behaviour }
  | { readonly ok: false; readonly problem: string };

const DIRECTIVE = /^sim:([^=\s]+)=(\S*)$/;
const SIMPLE = ['ok', 'error500', 'error429', 'quota', 'badkey', 'timeout', 'empty', 'malformed', 'unfiltered'] as const;

function parseBehaviour(raw: string): Behaviour | undefined {
  if ((SIMPLE as readonly string[]).includes(raw)) return { kind: raw as (typeof SIMPLE)[number] };
  const slow = /^slow(\d{1,7})$/.exec(raw);
  if (slow !== null) {
    const ms = Number(slow[1]);
    if (ms <= MAX_SLOW_MS) return { kind: 'slow', ms };
  }
  const failFirst = /^failfirst(\d{1,7})$/.exec(raw);
  if (failFirst !== null) {
    const ms = Number(failFirst[1]);
    if (ms <= MAX_SLOW_MS) return { kind: 'failfirst', ms };
  }
  return undefined;
}

/** Strips every directive word from the query (the rest kept as it is) and returns the behaviour that applies to `provider`. */
export function parseQuery(raw: string, provider: SimProvider): ParsedQuery {
  let specific: string | undefined;
  let wildcard: string | undefined;
  const words: string[] = [];
  for (const word of raw.split(' ')) {
    const match = DIRECTIVE.exec(word);
    if (match === null) {
      words.push(word);
      continue;
    }
    const [, target, behaviour] = match as unknown as [string, string, string];
    if (target === provider) specific = behaviour;
    else if (target === '*') wildcard = behaviour;
    else if (!(SIM_PROVIDERS as readonly string[]).includes(target)) {
      return { ok: false, problem: `unknown simulator directive target "${target}"` };
    }
  }
  const chosen = specific ?? wildcard ?? 'ok';
  const behaviour = parseBehaviour(chosen);
  if (behaviour === undefined) return { ok: false, problem: `unknown simulator behaviour "${chosen}"` };
  return { ok: true, query: words.join(' '), behaviour };
}
