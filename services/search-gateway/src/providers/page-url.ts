/** Control characters and lone UTF-16 surrogates (no UTF-8 text can hold one). */
const NOT_URL_TEXT = /[\p{Cc}\p{Cs}]/u;

/**
 * A page URL's one normal form (docs/decisions/0043 and 0058): what an extract's provider
 * receives is what its cache key is made of. The WHATWG URL parser's serialisation (scheme and
 * host in lower case, an internationalised host in punycode, the default port and `.`/`..`
 * segments removed, a root path as `/`, characters outside the URL code points
 * percent-encoded), without the fragment, which never reaches a server. Null for what is not
 * an http or https URL, or carries credentials (a user or a password: never sent on to a
 * provider), or holds a control character or a lone UTF-16 surrogate: the parser would drop
 * the first silently and turn the second into U+FFFD, a different page than the one asked for.
 */
export function normaliseUrl(raw: string): string | null {
  const url = pageUrl(raw);
  return url === null ? null : url.href;
}

/** The parsed page URL of normaliseUrl's rules (its fragment removed), or null. */
function pageUrl(raw: string): URL | null {
  if (NOT_URL_TEXT.test(raw)) return null;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    return null;
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return null;
  if (url.username !== '' || url.password !== '') return null;
  url.hash = '';
  return url;
}

/**
 * Query parameters that only say where a visit came from (advertising and analytics click ids),
 * matched without regard to case; every parameter whose name starts with `utm_` is one too. They
 * never change the page, so a result's identity leaves them out.
 */
export const TRACKING_PARAMETERS: readonly string[] = [
  'gclid', 'gclsrc', 'dclid', 'gbraid', 'wbraid', 'fbclid', 'msclkid', 'yclid', 'twclid', 'ttclid', 'li_fat_id', 'igshid',
  'mc_cid', 'mc_eid', '_ga', '_gl', '_hsenc', '_hsmi', 'mkt_tok', 'oly_anon_id', 'oly_enc_id', 'vero_id', 'rb_clickid', 's_cid',
];
const TRACKING = new Set(TRACKING_PARAMETERS);
const TRACKING_PREFIX = 'utm_';

/**
 * A search result's identity (docs/api.md, "Fan-out", and docs/decisions/0066): what makes two
 * results of a fan-out the same page, so the merge keeps one. The rule, written only here:
 * 1. the page URL's normal form (normaliseUrl): scheme and host in lower case, the default port
 *    (80 for http, 443 for https) and the fragment removed, `.`/`..` segments resolved;
 * 2. without tracking parameters (TRACKING_PARAMETERS and every `utm_*`, any case); the other
 *    parameters keep their order and their bytes, and a query left empty goes with its `?`;
 * 3. without trailing slashes on the path, except the root path `/` itself
 *    (`https://a.example/docs/` is `https://a.example/docs`; `https://a.example/` stays).
 * The scheme stays part of it (http and https are two pages), and so does the path's case. A URL
 * that is not an http or https URL by normaliseUrl's rules is its own identity, as sent.
 */
export function resultIdentity(raw: string): string {
  const url = pageUrl(raw);
  if (url === null) return raw;
  if (url.search !== '') {
    const kept = url.search.slice(1).split('&').filter((pair) => pair !== '' && !isTracking(pair));
    url.search = kept.length === 0 ? '' : `?${kept.join('&')}`;
  }
  const path = url.pathname;
  if (path.length > 1 && path.endsWith('/')) url.pathname = path.replace(/\/+$/, '') || '/';
  return url.href;
}

/** Whether a query's `name=value` pair is a tracking parameter. */
function isTracking(pair: string): boolean {
  const equals = pair.indexOf('=');
  const name = (equals < 0 ? pair : pair.slice(0, equals)).toLowerCase();
  return name.startsWith(TRACKING_PREFIX) || TRACKING.has(name);
}
