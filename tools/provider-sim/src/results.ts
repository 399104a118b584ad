import { createHash } from 'node:crypto';

/** One deterministic result; each provider route shapes it into its own wire format. */
export interface SimResult {
  readonly title: string;
  /** As this provider gives it: a shared page's URL carries the provider's own spelling (see SHARED_PERCENT). */
  readonly url: string;
  /** The page's own URL, which its text is derived from (pageFor): the same for every provider that returns it. */
  readonly pageUrl: string;
  readonly snippet: string;
  readonly extraSnippets: readonly string[];
  readonly publishedAt: Date;
  readonly author: string;
  /** In (0, 1), strictly decreasing with the result's rank. */
  readonly score: number;
}

const WORDS = [
  'guide', 'overview', 'analysis', 'report', 'notes', 'history', 'review', 'primer', 'study', 'update',
  'reference', 'explained', 'handbook', 'insights', 'summary', 'faq', 'tutorial', 'timeline', 'data', 'facts',
];
const DOMAINS = ['example.com', 'example.org', 'example.net', 'news.example.com', 'docs.example.org', 'blog.example.net'];
const AUTHORS = ['A. Writer', 'B. Reporter', 'C. Analyst', 'D. Editor', 'E. Scholar'];
const EPOCH = Date.UTC(2024, 0, 1);
const DAY_MS = 86_400_000;

function digest(seed: string): Buffer {
  return createHash('sha256').update(seed).digest();
}

function slugOf(query: string): string {
  const slug = query.toLowerCase().replace(/[^a-z0-9]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 40);
  return slug === '' ? 'page' : slug;
}

function topicOf(query: string): string {
  const trimmed = query.trim();
  return trimmed === '' ? 'Untitled' : trimmed.charAt(0).toUpperCase() + trimmed.slice(1);
}

/**
 * What a request's filters ask of the results, as the simulator honours them: every URL's
 * hostname inside an included domain (or a subdomain of one) and outside every excluded one,
 * every publication time inside [fromMs, toMs].
 */
export interface ResultConstraints {
  readonly includeDomains?: readonly string[];
  readonly excludeDomains?: readonly string[];
  readonly fromMs?: number;
  readonly toMs?: number;
}

const SUBDOMAINS = ['', 'www.', 'docs.', 'news.'];

function matches(hostname: string, domain: string): boolean {
  const d = domain.toLowerCase();
  return hostname === d || hostname.endsWith(`.${d}`);
}

function domainFor(bytes: Buffer, constraints: ResultConstraints): string {
  const include = constraints.includeDomains ?? [];
  const exclude = constraints.excludeDomains ?? [];
  const allowed = (hostname: string): boolean => !exclude.some((domain) => matches(hostname, domain));
  if (include.length > 0) {
    const base = (include[(bytes[2] ?? 0) % include.length] ?? 'example.com').toLowerCase();
    const host = `${SUBDOMAINS[(bytes[3] ?? 0) % SUBDOMAINS.length] ?? ''}${base}`;
    return allowed(host) ? host : base;
  }
  const candidates = DOMAINS.filter(allowed);
  if (candidates.length > 0) return candidates[(bytes[2] ?? 0) % candidates.length] ?? 'example.com';
  for (let n = 0; ; n += 1) {
    const host = `site${n}.sim-results.test`;
    if (allowed(host)) return host;
  }
}

function publishedAt(bytes: Buffer, constraints: ResultConstraints): Date {
  if (constraints.fromMs === undefined && constraints.toMs === undefined) {
    const days = bytes.readUInt16BE(12) % 730;
    const seconds = bytes.readUInt16BE(14) % 86_400;
    return new Date(EPOCH + days * DAY_MS + seconds * 1000);
  }
  const to = constraints.toMs ?? Date.now();
  const from = constraints.fromMs ?? to - 730 * DAY_MS;
  // Whole seconds inside the range (the wire formats carry seconds).
  const first = Math.ceil(from / 1000) * 1000;
  const last = Math.floor(to / 1000) * 1000;
  if (last < first) return new Date(from);
  return new Date(first + (bytes.readUInt32BE(12) % ((last - first) / 1000 + 1)) * 1000);
}

/**
 * The share of each answer (in percent of its ranks) drawn from one pool of pages per query that
 * every provider and variant draws from, so that providers overlap as real ones do: which ranks
 * of an answer are shared is decided per seed and rank (about this share of them), and the
 * shared ranks take the pool's pages in the pool's order (the first shared rank its first page,
 * and so on). A shared page keeps its own title, date, author and text everywhere (its snippet and
 * score say where it ranks), and each provider spells its URL its own way (providerSpelling).
 */
export const SHARED_PERCENT = 40;

/**
 * How a provider writes a shared page's URL: Brave adds tracking parameters (`utm_source`,
 * `utm_medium`), Exa writes the host in capitals and adds a trailing slash, Tavily adds a click id
 * (`gclid`) and a fragment. The same page, as a merge that normalises URLs recognises.
 */
export function providerSpelling(provider: string, url: string): string {
  const parsed = new URL(url);
  switch (provider) {
    case 'brave':
      return `${url}?utm_source=brave&utm_medium=search`;
    case 'exa':
      return `https://${parsed.hostname.toUpperCase()}${parsed.pathname}/`;
    case 'tavily':
      return `${url}?gclid=sim-tavily#overview`;
    default:
      return url;
  }
}

/** Whether rank `rank` of `seed`'s answer to `query` is a shared page. */
function sharedAt(seed: string, query: string, rank: number): boolean {
  const bytes = digest(`shared\u0000${seed}\u0000${query}\u0000${rank}`);
  return (bytes.readUInt16BE(0) % 100) < SHARED_PERCENT;
}

/** One result made from a digest: a page of its own (`bytes` of seed, query and rank) or of the shared pool. */
function resultOf(bytes: Buffer, query: string, rank: number, constraints: ResultConstraints): Omit<SimResult, 'url' | 'pageUrl'> & { readonly url: string } {
  const topic = topicOf(query);
  const word = (n: number): string => WORDS[(bytes[n] ?? 0) % WORDS.length] ?? 'page';
  const domain = domainFor(bytes, constraints);
  const id = bytes.subarray(8, 12).toString('hex');
  const score = Math.round((0.99 - rank * 0.009 - (bytes[16] ?? 0) / 100_000) * 10_000) / 10_000;
  return {
    title: `${topic}: ${word(0)} ${word(1)}`,
    url: `https://${domain}/${slugOf(query)}-${id}`,
    snippet: `${topic} ${word(3)} and ${word(4)}, result ${rank + 1} of the simulator.`,
    extraSnippets: [`More about ${topic}: ${word(5)}.`, `${topic} ${word(6)} in brief.`],
    publishedAt: publishedAt(bytes, constraints),
    author: AUTHORS[(bytes[7] ?? 0) % AUTHORS.length] ?? 'A. Writer',
    score: Math.max(0.0001, score),
  };
}

/**
 * Results `offset .. offset+count-1` for a query: the same seed and query always give the
 * same results. `seed` (`<provider>/<variant>`) separates providers and variants, except for the
 * shared pages (SHARED_PERCENT), which every seed draws from one pool per query; `constraints`
 * are the request's filters, which every result honours.
 */
export function resultsFor(seed: string, query: string, count: number, offset = 0, constraints: ResultConstraints = {}): SimResult[] {
  const out: SimResult[] = [];
  const provider = seed.split('/')[0] ?? seed;
  // The pool's pages taken by the ranks before `offset` (a later page of Brave's answer goes on from there).
  let pooled = 0;
  for (let rank = 0; rank < offset; rank += 1) if (sharedAt(seed, query, rank)) pooled += 1;
  for (let i = 0; i < count; i += 1) {
    const rank = offset + i;
    if (sharedAt(seed, query, rank)) {
      const page = resultOf(digest(`pool\u0000${query}\u0000${pooled}`), query, rank, constraints);
      pooled += 1;
      out.push({ ...page, url: providerSpelling(provider, page.url), pageUrl: page.url });
      continue;
    }
    const own = resultOf(digest(`${seed}\u0000${query}\u0000${rank}`), query, rank, constraints);
    out.push({ ...own, pageUrl: own.url });
  }
  return out;
}
