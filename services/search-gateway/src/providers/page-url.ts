/**
 * A page URL's one normal form (docs/decisions/0043 and 0058): what an extract's provider
 * receives is what its cache key is made of. The WHATWG URL parser's serialisation (scheme and
 * host in lower case, an internationalised host in punycode, the default port and `.`/`..`
 * segments removed, a root path as `/`, characters outside the URL code points
 * percent-encoded), without the fragment, which never reaches a server. Null for what is not
 * an http or https URL, or carries credentials (a user or a password: never sent on to a
 * provider).
 */
export function normaliseUrl(raw: string): string | null {
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
