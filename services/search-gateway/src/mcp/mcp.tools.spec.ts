import Ajv from 'ajv';
import { Ajv2020 } from 'ajv/dist/2020';
import { newId } from '@svc/ids';
import type { ProviderSuccess } from '../providers';
import { buildReply } from '../search/steps/reply';
import type { AttemptResult } from '../search/search.outcome';
import { model, success } from '../../test/search-steps.fakes';
import { AppError } from '@svc/errors';
import { idempotencyDigest } from '../search/idempotency';
import { SEARCH_BODY_SCHEMA } from '../search/search.schema';
import { newSessionId, sessionIdOf, toolCallDigest } from './mcp.session';
import { modelsData } from '../catalog/catalog.service';
import { errorResult, fetchText, IDEMPOTENCY_KEY_SCHEMA, LIST_MODELS_OUTPUT_SCHEMA, modelsText, searchText, TOOLS, WEB_FETCH_INPUT_SCHEMA, WEB_FETCH_OUTPUT_SCHEMA, WEB_SEARCH_INPUT_SCHEMA, WEB_SEARCH_OUTPUT_SCHEMA } from './mcp.tools';
import { EXTRACT_BODY_SCHEMA } from '../search/extract.schema';
import { buildExtractReply } from '../search/steps/extract-reply';
import { findExtractModel } from '@svc/contracts';
import type { ExtractContext } from '../search/steps/extract';

describe('mcp tools', () => {
  it('web_search\'s output schema accepts the 200 the search builds (an MCP client checks structuredContent against it), and refuses a fractional latency', () => {
    const validate = new Ajv2020({ strict: false }).compile(WEB_SEARCH_OUTPUT_SCHEMA);
    const results = (success(3) as ProviderSuccess).results;
    const timedOut: AttemptResult = { status: 'error', model: model('exa/auto'), source: 'platform', kind: 'timeout', error: 'provider timed out', reservedMicros: 9_000, chargedMicros: 9_000 };
    const answered: AttemptResult = { status: 'success', model: model('exa/fast'), source: 'byok', results, reservedMicros: 450, chargedMicros: 450 };
    // A latency of 12.6 ms: the answer states it rounded.
    const body = JSON.parse(buildReply(newId('request'), [timedOut, answered], 12.6, undefined).body) as Record<string, unknown>;
    expect(validate(body) ? [] : validate.errors).toEqual([]);
    expect(validate({ ...body, latency_ms: 12.6 })).toBe(false);
    expect(validate({ ...body, surprise: true })).toBe(false);
  });

  it('web_search takes exactly the body schema of POST /v1/search plus idempotency_key, with a description on each field', () => {
    const { idempotency_key: idempotencyKey, ...searchFields } = WEB_SEARCH_INPUT_SCHEMA.properties;
    expect(idempotencyKey).toBe(IDEMPOTENCY_KEY_SCHEMA);
    const stripped = {
      ...WEB_SEARCH_INPUT_SCHEMA,
      properties: Object.fromEntries(Object.entries(searchFields).map(([name, rules]) => {
        const { description, ...rest } = rules as { description: string };
        expect(description.length).toBeGreaterThan(10);
        return [name, rest];
      })),
    };
    expect(stripped).toEqual(SEARCH_BODY_SCHEMA);
    expect(TOOLS.find((tool) => tool.name === 'web_search')?.inputSchema).toBe(WEB_SEARCH_INPUT_SCHEMA);
  });

  it('web_fetch takes exactly the body schema of POST /v1/extract plus idempotency_key; its output schema accepts the 200 an extract builds', () => {
    const { idempotency_key: idempotencyKey, ...fetchFields } = WEB_FETCH_INPUT_SCHEMA.properties;
    expect(idempotencyKey).toBe(IDEMPOTENCY_KEY_SCHEMA);
    const stripped = {
      ...WEB_FETCH_INPUT_SCHEMA,
      properties: Object.fromEntries(Object.entries(fetchFields).map(([name, rules]) => {
        const { description, ...rest } = rules as { description: string };
        expect(description.length).toBeGreaterThan(10);
        return [name, rest];
      })),
    };
    expect(stripped).toEqual(EXTRACT_BODY_SCHEMA);
    const exa = findExtractModel('exa/contents');
    if (exa === undefined) throw new Error('no exa/contents');
    const ctx = { call: { requestId: newId('request'), request: { urls: ['https://a.test/1', 'https://a.test/2'], maxTotalChars: null } } } as unknown as ExtractContext;
    const attempts: AttemptResult[] = [{
      status: 'success', model: exa, source: 'platform', reservedMicros: 2_500, chargedMicros: 1_250, cache: { status: 'miss', ageS: 0, savedMicros: 0 },
      results: [{ url: 'https://a.test/1', title: 'One', text: 'text', published_at: null, truncated: false, cache: { status: 'miss', ageS: 0 } }],
      extract: { urls: 2, failed: [{ url: 'https://a.test/2', error: 'page not found (404)' }] },
    }];
    const body = JSON.parse(buildExtractReply(ctx, attempts, 7.2, undefined).body) as Record<string, unknown>;
    const validate = new Ajv2020({ strict: false }).compile(WEB_FETCH_OUTPUT_SCHEMA);
    expect(validate(body) ? [] : validate.errors).toEqual([]);
    expect(validate({ ...body, surprise: true })).toBe(false);
    const text = fetchText(body as unknown as Parameters<typeof fetchText>[0]);
    expect(text).toContain('1 page read (cost 0.00125 USD');
    expect(text).toContain('- https://a.test/2: page not found (404)');
  });

  it('idempotency_key\'s schema accepts exactly what the Idempotency-Key header accepts', () => {
    const valid = new Ajv().compile(IDEMPOTENCY_KEY_SCHEMA);
    const headerAccepts = (value: string): boolean => {
      try {
        return idempotencyDigest(value) !== null;
      } catch {
        return false;
      }
    };
    const samples = ['a', ' a ', 'retry-1', 'x'.repeat(255), 'x'.repeat(256), '', ' ', '   ', 'tab\there', 'caf\u00e9', 'new\nline', '~!@#$%^&*()', '\u007f'];
    for (const sample of samples) expect({ sample, schema: valid(sample) }).toEqual({ sample, schema: headerAccepts(sample) });
  });

  it('reads a search answer as numbered results with the model, cost, request id and earlier attempts', () => {
    const text = searchText({
      request_id: 'req_1', model: 'brave/web', cost_usd: 0.006,
      attempts: [{ model: 'exa/fast', status: 'error', error: 'provider did not answer within 15000 ms', cost_usd: 0.009 }],
      results: [
        { position: 1, title: 'One', url: 'https://a.example/1', snippet: 'first', published_at: '2024-01-02T03:04:05Z' },
        { position: 2, title: 'Two', url: 'https://a.example/2', snippet: '', published_at: null },
      ],
    });
    expect(text.split('\n')).toEqual([
      '2 results from brave/web (cost 0.006 USD, request req_1)',
      'Tried before it:',
      '- exa/fast: error (provider did not answer within 15000 ms, kept 0.009 USD)',
      '', '1. One', '   https://a.example/1', '   published 2024-01-02T03:04:05Z', '   first',
      '', '2. Two', '   https://a.example/2',
    ]);
  });

  it('a tool error carries the code, message and details as text and the platform error body as JSON', () => {
    const result = errorResult({ error: { code: 'rate_limited', message: 'slow down', request_id: 'req_2' } }, 3);
    expect(result.isError).toBe(true);
    const [text, json] = result.content.map((block) => (block.type === 'text' ? block.text : ''));
    expect(text).toBe('Error rate_limited: slow down\nretry after 3 s\nrequest req_2');
    expect(JSON.parse(json ?? '')).toEqual({ error: { code: 'rate_limited', message: 'slow down', request_id: 'req_2', retry_after_seconds: 3 } });
    const poor = errorResult({ error: { code: 'insufficient_credits', message: 'too poor', request_id: 'req_3', needed_usd: 0.01 } }, undefined);
    expect(poor.content[0]).toEqual({ type: 'text', text: 'Error insufficient_credits: too poor\nneeded_usd: 0.01 (the least one of the requested models needs)\nrequest req_3' });
  });
});

describe('list_models', () => {
  const data = modelsData({ brave: true, exa: true, tavily: false }) as Parameters<typeof modelsText>[0];

  it('its output schema accepts the catalog, search and research models alike', () => {
    const validate = new Ajv2020({ strict: false }).compile(LIST_MODELS_OUTPUT_SCHEMA);
    expect(validate({ data, request_id: newId('request') }) ? [] : validate.errors).toEqual([]);
  });

  it('reads a research model as its metering, most cost per run and least cap, not as a search', () => {
    const lines = modelsText(data).split('\n');
    expect(lines.find((line) => line.startsWith('exa/agent-auto '))).toBe(
      'exa/agent-auto (deep_research): Exa Agent run, automatic effort (metered; the run\'s cap is given to Exa as its budget); 1.25 USD per USD the provider reports, ' +
      'at most 125 USD a run; runs on a max_cost_usd of at least 1.25 USD.',
    );
    expect(lines.find((line) => line.startsWith('tavily/research-mini '))).toContain('0.01 USD per provider credit, at most 1.1 USD a run; runs on a max_cost_usd of at least 1.1 USD. Not available on this deployment.');
    expect(lines.find((line) => line.startsWith('exa/auto:'))).toContain('USD per search');
  });
});

describe('mcp sessions', () => {
  it('names a tool call by session and JSON-RPC id: the same pair gives the same digest, anything else another', () => {
    const session = newSessionId();
    expect(sessionIdOf(session)).toBe(session);
    expect(toolCallDigest(session, 7)).toBe(toolCallDigest(session, 7));
    const others = [toolCallDigest(session, 8), toolCallDigest(session, '7'), toolCallDigest(newSessionId(), 7)];
    expect(new Set([toolCallDigest(session, 7), ...others]).size).toBe(4);
  });

  it('takes no session id as none and refuses a malformed one with invalid_request', () => {
    expect(sessionIdOf(undefined)).toBeNull();
    for (const bad of ['', 'has space', 'x'.repeat(129), ['a', 'b']]) {
      expect(() => sessionIdOf(bad)).toThrow(AppError);
    }
  });
});
