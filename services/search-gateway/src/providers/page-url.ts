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
  return url.href;
}
