import { AppError } from '@svc/errors';
import { EXTRACT_BODY_SCHEMA, toExtractRequest } from './extract.schema';
import type { ExtractBody } from './extract.schema';
import { formatSearchBodyErrors, searchValidatorCompiler } from './search.schema';

const validate = searchValidatorCompiler({ schema: EXTRACT_BODY_SCHEMA, method: 'POST', url: '/v1/extract', httpPart: 'body' }) as ((data: unknown) => boolean) & { errors?: Parameters<typeof formatSearchBodyErrors>[0] | null };

/** The body as the route takes it: the schema (defaults applied), then toExtractRequest. */
function parse(body: Record<string, unknown>): ReturnType<typeof toExtractRequest> {
  const copy = JSON.parse(JSON.stringify(body)) as Record<string, unknown>;
  if (validate(copy) !== true) throw new AppError('invalid_request', `body ${formatSearchBodyErrors(validate.errors ?? []).message}`);
  return toExtractRequest(copy as unknown as ExtractBody);
}

function refusal(body: Record<string, unknown>): { code: string; message: string } {
  try {
    parse(body);
  } catch (error) {
    if (error instanceof AppError) return { code: error.code, message: error.message };
    throw error;
  }
  throw new Error('accepted');
}

describe('POST /v1/extract body', () => {
  it('takes each URL in its one normal form (what the provider receives and the cache key is made of), each once, in order', () => {
    const request = parse({ urls: ['HTTPS://Example.COM:443/a/./b/../c?q=1#frag', 'https://example.com/a/c?q=1', 'http://bücher.example/x y', 'https://example.org'], model: 'exa/contents' });
    expect(request.urls).toEqual(['https://example.com/a/c?q=1', 'http://xn--bcher-kva.example/x%20y', 'https://example.org/']);
  });

  it('applies the defaults and keeps the options sent', () => {
    expect(parse({ urls: ['https://a.test'], models: ['tavily/extract', 'exa/contents', 'tavily/extract'] })).toEqual({
      kind: 'extract', urls: ['https://a.test/'], models: [expect.objectContaining({ id: 'tavily/extract' }), expect.objectContaining({ id: 'exa/contents' })],
      format: 'text', maxCharsPerUrl: 20_000, query: null, maxAgeS: null, maxTotalChars: null, cache: 'default', cacheMaxAgeS: null,
    });
    const sent = parse({ urls: ['https://a.test'], model: 'exa/contents', query: '  rust\u00a0 async  ', max_age_s: 600, cache_max_age_s: 3_600, max_total_chars: 500, format: 'text' });
    expect(sent).toMatchObject({ query: 'rust async', maxAgeS: 600, cacheMaxAgeS: 600, maxTotalChars: 500 });
  });

  it.each([
    [{ urls: ['ftp://a.test/x'], model: 'exa/contents' }, 'invalid_request', 'urls.0 must be an http or https URL'],
    [{ urls: ['https://a.test', 'javascript:alert(1)'], model: 'exa/contents' }, 'invalid_request', 'urls.1 must be an http or https URL'],
    [{ urls: ['https://user:secret@a.test/'], model: 'exa/contents' }, 'invalid_request', 'without a user or password'],
    [{ urls: ['not a url'], model: 'exa/contents' }, 'invalid_request', 'urls.0'],
    [{ urls: [`https://a.test/${'\u00e9'.repeat(400)}`], model: 'exa/contents' }, 'invalid_request', 'longer than 2048 characters in its normal form'],
    [{ urls: ['https://a.test/\ud800'], model: 'exa/contents' }, 'invalid_request', 'urls.0 must be an http or https URL without a user or password, control characters or lone surrogates'],
    [{ urls: [], model: 'exa/contents' }, 'invalid_request', 'urls must NOT have fewer than 1 items'],
    [{ urls: Array.from({ length: 21 }, (_, i) => `https://a.test/${i}`), model: 'exa/contents' }, 'invalid_request', 'urls must NOT have more than 20 items'],
    [{ urls: [`https://a.test/${'a'.repeat(2_048)}`], model: 'exa/contents' }, 'invalid_request', 'urls.0 must NOT have more than 2048 characters'],
    [{ urls: ['https://a.test'] }, 'invalid_request', 'give a model or models'],
    [{ urls: ['https://a.test'], model: 'exa/fast' }, 'unknown_model', 'unknown extract model "exa/fast"'],
    [{ urls: ['https://a.test'], model: 'exa/contents', query: '   ' }, 'invalid_request', 'query must not be empty'],
    [{ urls: ['https://a.test'], model: 'exa/contents', query: 'q'.repeat(401) }, 'invalid_request', 'query must be at most 400 characters'],
    [{ urls: ['https://a.test'], model: 'exa/contents', max_chars_per_url: 99 }, 'invalid_request', 'max_chars_per_url must be >= 100'],
    [{ urls: ['https://a.test'], model: 'exa/contents', format: 'html' }, 'invalid_request', 'format must be equal to one of the allowed values'],
    [{ urls: ['https://a.test'], model: 'exa/contents', max_results: 3 }, 'invalid_request', 'unknown field "max_results"'],
  ] as const)('refuses %j: %s', (body, code, message) => {
    const refused = refusal(JSON.parse(JSON.stringify(body)) as Record<string, unknown>);
    expect(refused.code).toBe(code);
    expect(refused.message).toContain(message);
  });

  it('refuses a prototype key as an unknown field (nothing hostile reaches the handler)', () => {
    for (const key of ['__proto__', 'constructor', 'prototype']) {
      const body = JSON.parse(`{"urls":["https://a.test"],"model":"exa/contents","${key}":{"x":1}}`) as Record<string, unknown>;
      expect(refusal(body)).toEqual({ code: 'invalid_request', message: `body has an unknown field "${key}"` });
    }
  });
});
