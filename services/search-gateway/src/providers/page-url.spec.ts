import fc from 'fast-check';
import { normaliseUrl, resultIdentity, TRACKING_PARAMETERS } from './page-url';

describe('resultIdentity: when two search results are the same page (the one rule)', () => {
  it.each([
    ['scheme and host in lower case', 'HTTPS://Docs.EXAMPLE.org/Guide', 'https://docs.example.org/Guide'],
    ['the default port removed', 'https://example.org:443/a', 'https://example.org/a'],
    ['http\'s default port removed too', 'http://example.org:80/a', 'http://example.org/a'],
    ['another port kept', 'https://example.org:8443/a', 'https://example.org:8443/a'],
    ['the fragment removed', 'https://example.org/a#section-2', 'https://example.org/a'],
    ['utm_* removed, any case', 'https://example.org/a?UTM_Source=x&utm_medium=y&utm_campaign=z', 'https://example.org/a'],
    ['click ids removed', 'https://example.org/a?gclid=1&fbclid=2&msclkid=3', 'https://example.org/a'],
    ['other parameters kept, in their order and bytes', 'https://example.org/a?b=2&utm_source=x&a=%41', 'https://example.org/a?b=2&a=%41'],
    ['one trailing slash removed', 'https://example.org/docs/', 'https://example.org/docs'],
    ['every trailing slash removed', 'https://example.org/docs//', 'https://example.org/docs'],
    ['the root path stays', 'https://example.org/', 'https://example.org/'],
    ['no path is the root path', 'https://example.org', 'https://example.org/'],
    ['the path\'s case kept', 'https://example.org/Docs', 'https://example.org/Docs'],
    ['not an http URL: itself', 'ftp://example.org/a/', 'ftp://example.org/a/'],
    ['not a URL: itself', 'not a url', 'not a url'],
  ])('%s', (_what, url, identity) => {
    expect(resultIdentity(url)).toBe(identity);
  });

  it('http and https are two pages', () => {
    expect(resultIdentity('http://example.org/a')).not.toBe(resultIdentity('https://example.org/a'));
  });

  it('lists the documented tracking parameters', () => {
    expect(TRACKING_PARAMETERS).toEqual(expect.arrayContaining(['gclid', 'fbclid', 'msclkid', 'dclid']));
  });

  const host = fc.constantFrom('example.org', 'docs.example.com', 'news.example.net');
  const segment = fc.stringMatching(/^[a-z0-9-]{1,8}$/);
  const param = fc.tuple(fc.stringMatching(/^[a-z]{1,5}$/), fc.stringMatching(/^[a-z0-9]{0,5}$/)).filter(([name]) => !name.startsWith('utm_') && !TRACKING_PARAMETERS.includes(name)).map(([name, value]) => `${name}=${value}`);
  const page = fc.record({ host, path: fc.array(segment, { maxLength: 3 }), params: fc.array(param, { maxLength: 3 }) })
    .map(({ host: h, path, params }) => `https://${h}/${path.join('/')}${params.length > 0 ? `?${params.join('&')}` : ''}`);

  it('a page spelled with tracking parameters, another case of host, a trailing slash, its default port or a fragment is the same page', () => {
    fc.assert(fc.property(page, fc.constantFrom('utm_source=a', 'gclid=b', 'fbclid=c', 'UTM_CAMPAIGN=d'), fc.boolean(), fc.boolean(), fc.boolean(), (url, tracking, upper, slash, fragment) => {
      const parsed = new URL(url);
      const path = slash && parsed.pathname !== '/' ? `${parsed.pathname}/` : parsed.pathname;
      const query = parsed.search === '' ? `?${tracking}` : `${parsed.search}&${tracking}`;
      const spelled = `https://${upper ? parsed.hostname.toUpperCase() : parsed.hostname}:443${path}${query}${fragment ? '#top' : ''}`;
      expect(resultIdentity(spelled)).toBe(resultIdentity(url));
    }));
  });

  it('is its own identity (applying it again changes nothing), and never less than the page URL\'s normal form says', () => {
    fc.assert(fc.property(fc.oneof(page, fc.webUrl({ withQueryParameters: true, withFragments: true })), (url) => {
      const identity = resultIdentity(url);
      expect(resultIdentity(identity)).toBe(identity);
      const normal = normaliseUrl(url);
      if (normal !== null) expect(resultIdentity(normal)).toBe(identity);
    }));
  });
});
