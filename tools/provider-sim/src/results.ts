import { createHash } from 'node:crypto';

/** One deterministic result; each provider route shapes it into its own wire format. */
export interface SimResult {
  readonly title: string;
  readonly url: string;
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
 * Results `offset .. offset+count-1` for a query: the same seed and query always give the
 * same results. `seed` separates providers and variants; `constraints` are the request's
 * filters, which every result honours.
 */
export function resultsFor(seed: string, query: string, count: number, offset = 0, constraints: ResultConstraints = {}): SimResult[] {
  const out: SimResult[] = [];
  const topic = topicOf(query);
  for (let i = 0; i < count; i += 1) {
    const rank = offset + i;
    const bytes = digest(`${seed}\u0000${query}\u0000${rank}`);
    const word = (n: number): string => WORDS[(bytes[n] ?? 0) % WORDS.length] ?? 'page';
    const domain = domainFor(bytes, constraints);
    const id = bytes.subarray(8, 12).toString('hex');
    const score = Math.round((0.99 - rank * 0.009 - (bytes[16] ?? 0) / 100_000) * 10_000) / 10_000;
    out.push({
      title: `${topic}: ${word(0)} ${word(1)}`,
      url: `https://${domain}/${slugOf(query)}-${id}`,
      snippet: `${topic} ${word(3)} and ${word(4)}, result ${rank + 1} of the simulator.`,
      extraSnippets: [`More about ${topic}: ${word(5)}.`, `${topic} ${word(6)} in brief.`],
      publishedAt: publishedAt(bytes, constraints),
      author: AUTHORS[(bytes[7] ?? 0) % AUTHORS.length] ?? 'A. Writer',
      score: Math.max(0.0001, score),
    });
  }
  return out;
}
