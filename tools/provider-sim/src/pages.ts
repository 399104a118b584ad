import { createHash } from 'node:crypto';
import type { SimProvider } from './directives';

/**
 * The pages behind URLs, as the simulator's extract endpoints (Exa `/contents`, Tavily
 * `/extract`) and its search results' contents serve them: deterministic text derived from
 * the URL alone, so every provider returns the same page for the same URL and a test can
 * know its length. Words in a URL's path steer it (see the README, "Pages"):
 * - `sim-chars-<n>`: the page's text is exactly `n` characters (at most 1,000,000);
 * - `sim-fail-<provider>`: that provider cannot fetch it (its own per-URL failure shape);
 * - `sim-fail-all`: no provider can.
 */

export interface SimPage {
  readonly url: string;
  readonly title: string;
  /** The page as plain text: paragraphs separated by blank lines. */
  readonly text: string;
  /** The same page as markdown: a heading, the paragraphs, a list. */
  readonly markdown: string;
  readonly publishedAt: Date;
  readonly author: string;
}

const WORDS = [
  'gateway', 'latency', 'cache', 'provider', 'ranking', 'index', 'crawler', 'agent', 'budget', 'fallback',
  'token', 'query', 'result', 'page', 'content', 'search', 'model', 'request', 'answer', 'source',
  'network', 'server', 'client', 'stream', 'record', 'ledger', 'balance', 'credit', 'price', 'limit',
];
const AUTHORS = ['A. Writer', 'B. Reporter', 'C. Analyst', 'D. Editor', 'E. Scholar'];
const EPOCH = Date.UTC(2024, 0, 1);
const DAY_MS = 86_400_000;
/** The most characters `sim-chars-<n>` may ask for. */
export const MAX_PAGE_CHARS = 1_000_000;

function digest(seed: string): Buffer {
  return createHash('sha256').update(seed).digest();
}

/** The path of a URL (empty when it does not parse). */
function pathOf(url: string): string {
  try {
    return new URL(url).pathname;
  } catch {
    return '';
  }
}

/** Whether `provider` cannot fetch `url`: its path holds `sim-fail-<provider>` or `sim-fail-all`. */
export function failsAt(url: string, provider: SimProvider): boolean {
  const path = pathOf(url);
  return path.includes('sim-fail-all') || path.includes(`sim-fail-${provider}`);
}

/** `sim-chars-<n>` in the URL's path, or undefined. */
function askedLength(url: string): number | undefined {
  const match = /sim-chars-(\d{1,7})/.exec(pathOf(url));
  if (match === null) return undefined;
  return Math.min(MAX_PAGE_CHARS, Number(match[1]));
}

/** One sentence of the page, from its seed and its number. */
function sentence(seed: string, n: number): string {
  const bytes = digest(`${seed}\u0000s${n}`);
  const words: string[] = [];
  const count = 8 + ((bytes[0] ?? 0) % 9);
  for (let i = 0; i < count; i++) words.push(WORDS[(bytes[i + 1] ?? 0) % WORDS.length] ?? 'page');
  const first = words[0] ?? 'page';
  words[0] = first.charAt(0).toUpperCase() + first.slice(1);
  return `${words.join(' ')}.`;
}

/** Paragraphs of about `length` characters in all (at least one sentence). */
function paragraphs(seed: string, length: number): string[] {
  const out: string[] = [];
  let total = 0;
  let n = 0;
  while (total < length) {
    const sentences: string[] = [];
    for (let i = 0; i < 4; i++) sentences.push(sentence(seed, n++));
    const paragraph = sentences.join(' ');
    out.push(paragraph);
    total += paragraph.length + 2;
  }
  return out;
}

function titleOf(url: string): string {
  const segment = pathOf(url).split('/').filter((part) => part !== '').pop() ?? '';
  const words = segment.replace(/\.[a-z0-9]+$/i, '').split(/[-_]+/).filter((word) => word !== '' && !/^sim$/.test(word));
  if (words.length === 0) return 'Home page';
  const text = words.slice(0, 8).join(' ');
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/** The page behind `url` (the same for every provider and every call). */
export function pageFor(url: string): SimPage {
  const bytes = digest(url);
  const asked = askedLength(url);
  const length = asked ?? 1_500 + (bytes.readUInt16BE(0) % 6_000);
  const body = paragraphs(url, length);
  const plain = body.join('\n\n');
  const text = asked === undefined ? plain : plain.slice(0, asked);
  const title = titleOf(url);
  const markdown = `# ${title}\n\n${body.slice(0, -1).join('\n\n')}\n\n- ${WORDS[(bytes[2] ?? 0) % WORDS.length] ?? 'item'}\n- ${WORDS[(bytes[3] ?? 0) % WORDS.length] ?? 'item'}\n\n${body[body.length - 1] ?? ''}`;
  return {
    url,
    title,
    text,
    markdown: asked === undefined ? markdown : markdown.slice(0, asked),
    publishedAt: new Date(EPOCH + (bytes.readUInt16BE(4) % 730) * DAY_MS + (bytes.readUInt16BE(6) % 86_400) * 1000),
    author: AUTHORS[(bytes[8] ?? 0) % AUTHORS.length] ?? 'A. Writer',
  };
}

/**
 * The page's passages most relevant to `query` (the sentences sharing the most of its words,
 * in the page's order), at most `maxChars` characters in all; without a query, its first
 * sentences. At least one passage, cut to `maxChars` if it alone is longer.
 */
export function passagesOf(page: SimPage, query: string | undefined, maxChars: number, most = 5): string[] {
  const sentences = page.text.split(/(?<=\.)\s+/).filter((s) => s !== '');
  const words = new Set((query ?? '').toLowerCase().split(/[^a-z0-9]+/).filter((word) => word.length > 2));
  const ranked = sentences
    .map((text, index) => ({ text, index, score: words.size === 0 ? 0 : text.toLowerCase().split(/[^a-z0-9]+/).filter((word) => words.has(word)).length }))
    .sort((a, b) => b.score - a.score || a.index - b.index)
    .slice(0, most)
    .sort((a, b) => a.index - b.index);
  const out: string[] = [];
  let total = 0;
  for (const passage of ranked) {
    if (total + passage.text.length > maxChars) {
      if (out.length === 0) out.push(passage.text.slice(0, maxChars));
      break;
    }
    out.push(passage.text);
    total += passage.text.length;
  }
  return out;
}
