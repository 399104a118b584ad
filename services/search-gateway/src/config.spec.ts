import { ConfigError } from '@svc/config';
import { parseGatewayConfig } from './config';

const KEK = Buffer.alloc(32, 3).toString('base64');
const base = { INTERNAL_TOKEN: 'x'.repeat(16), PROVIDER_KEY_KEK: KEK, PROVIDER_KEY_KEK_ID: 'k1' };

describe('gateway config', () => {
  it('has the documented defaults', () => {
    const config = parseGatewayConfig(base);
    expect(config).toMatchObject({
      PORT: 8080, HOST: '0.0.0.0', ACCOUNT_ADMIN_GRPC_URL: '127.0.0.1:50051', ACCOUNT_ADMIN_HTTP_URL: 'http://127.0.0.1:3001',
      BILLING_HTTP_URL: 'http://127.0.0.1:3002', KEY_CACHE_TTL_MS: 5000, KEY_CACHE_MAX_ENTRIES: 100_000,
      KEY_PROPAGATION_MAX_MS: 15_000, KEY_CLOCK_SKEW_MS: 1000, KEY_CHANGES_SUBSCRIBE: true, RATE_LIMIT_PER_SECOND: 20, RATE_LIMIT_BURST: 40,
      BYOK_ENABLED: true, BYOK_FEE_PERCENT: 5, BRAVE_API_KEY: undefined, EXA_BASE_URL: 'https://api.exa.ai',
    });
  });

  it('has the result cache on by default: 10 % price, one hour, news ten minutes, in REDIS_URL', () => {
    const config = parseGatewayConfig(base);
    expect(config).toMatchObject({ CACHE_ENABLED: true, CACHE_PRICE_PERCENT: 10, CACHE_TTL_S: 3_600, CACHE_REDIS_URL: undefined, CACHE_MAX_ENTRY_BYTES: 262_144 });
    expect([...config.CACHE_TTL_BY_MODEL]).toEqual([['brave/news', 600]]);
    expect([...parseGatewayConfig({ ...base, CACHE_TTL_BY_MODEL: ' exa/fast=60 , tavily/basic=7200' }).CACHE_TTL_BY_MODEL]).toEqual([['exa/fast', 60], ['tavily/basic', 7_200]]);
  });

  it('runs without V8\'s allocation-site pretenuring unless V8_PRETENURING turns it on', () => {
    expect(parseGatewayConfig(base).V8_PRETENURING).toBe(false);
    expect(parseGatewayConfig({ ...base, V8_PRETENURING: 'true' }).V8_PRETENURING).toBe(true);
    expect(() => parseGatewayConfig({ ...base, V8_PRETENURING: 'sometimes' })).toThrow(/V8_PRETENURING/);
  });

  it('names a bad CACHE_TTL_BY_MODEL entry', () => {
    expect(() => parseGatewayConfig({ ...base, CACHE_TTL_BY_MODEL: 'exa/neural=60' })).toThrow(/CACHE_TTL_BY_MODEL names an unknown model "exa\/neural"/);
    expect(() => parseGatewayConfig({ ...base, CACHE_TTL_BY_MODEL: 'exa/fast' })).toThrow(/CACHE_TTL_BY_MODEL must be model=seconds/);
    expect(() => parseGatewayConfig({ ...base, CACHE_TTL_BY_MODEL: 'exa/fast=0' })).toThrow(/seconds must be from 1/);
    expect(() => parseGatewayConfig({ ...base, CACHE_PRICE_PERCENT: '101' })).toThrow(/CACHE_PRICE_PERCENT/);
  });

  it('refuses a key cache that outlives the propagation bound', () => {
    expect(() => parseGatewayConfig({ ...base, KEY_CACHE_TTL_MS: '20000' })).toThrow(ConfigError);
    expect(() => parseGatewayConfig({ ...base, KEY_CACHE_TTL_MS: '3000', KEY_PROPAGATION_MAX_MS: '2000' })).toThrow(/KEY_CACHE_TTL_MS/);
  });

  it('bounds a search at 45 s by default, never below one provider timeout, and drains 5 s after SIGTERM', () => {
    expect(parseGatewayConfig(base)).toMatchObject({ SEARCH_MAX_DURATION_MS: 45_000, SHUTDOWN_DELAY_MS: 5_000, METRICS_PORT: 9464 });
    expect(() => parseGatewayConfig({ ...base, SEARCH_MAX_DURATION_MS: '10000' })).toThrow(/SEARCH_MAX_DURATION_MS/);
    // At its least: one provider timeout after the longest a request may take to arrive.
    expect(parseGatewayConfig({ ...base, SEARCH_MAX_DURATION_MS: '10000', PROVIDER_TIMEOUT_MS: '9000', HTTP_REQUEST_TIMEOUT_MS: '1000' }).SEARCH_MAX_DURATION_MS).toBe(10_000);
  });

  it('refuses timeouts that contradict each other, naming all three: a request that took HTTP_REQUEST_TIMEOUT_MS to arrive must still leave its first attempt the whole PROVIDER_TIMEOUT_MS within SEARCH_MAX_DURATION_MS', () => {
    const named = /SEARCH_MAX_DURATION_MS \(45000\) must be at least HTTP_REQUEST_TIMEOUT_MS \(40000\) \+ PROVIDER_TIMEOUT_MS \(15000\)/;
    expect(() => parseGatewayConfig({ ...base, HTTP_REQUEST_TIMEOUT_MS: '40000' })).toThrow(named);
    expect(() => parseGatewayConfig({ ...base, HTTP_REQUEST_TIMEOUT_MS: '40000' })).toThrow(ConfigError);
    expect(() => parseGatewayConfig({ ...base, SEARCH_MAX_DURATION_MS: '20000', PROVIDER_TIMEOUT_MS: '10000', HTTP_REQUEST_TIMEOUT_MS: '10001' })).toThrow(/HTTP_REQUEST_TIMEOUT_MS \(10001\) \+ PROVIDER_TIMEOUT_MS \(10000\)/);
    expect(() => parseGatewayConfig({ ...base, SEARCH_MAX_DURATION_MS: '20000', PROVIDER_TIMEOUT_MS: '10000', HTTP_REQUEST_TIMEOUT_MS: '10000' })).not.toThrow();
    // The defaults fit exactly: 30 s to arrive and 15 s for the first call in a 45 s search.
    expect(parseGatewayConfig(base)).toMatchObject({ HTTP_REQUEST_TIMEOUT_MS: 30_000, PROVIDER_TIMEOUT_MS: 15_000, SEARCH_MAX_DURATION_MS: 45_000 });
  });

  it('refuses to start with BYOK enabled and no KEK, naming the variable and never the value', () => {
    expect(() => parseGatewayConfig({ INTERNAL_TOKEN: 'x'.repeat(16) })).toThrow(/PROVIDER_KEY_KEK is required when BYOK_ENABLED is true/);
    expect(parseGatewayConfig({ INTERNAL_TOKEN: 'x'.repeat(16), BYOK_ENABLED: 'false' }).kekRing).toBeNull();
    expect(() => parseGatewayConfig({ ...base, PROVIDER_KEY_KEK_ID: undefined })).toThrow(/PROVIDER_KEY_KEK_ID/);
    expect(() => parseGatewayConfig({ ...base, PROVIDER_KEY_KEK: 'dG9vIHNob3J0' })).toThrow(/PROVIDER_KEY_KEK must be 32 bytes/);
    expect(() => parseGatewayConfig({ ...base, PROVIDER_KEY_KEK_PREVIOUS: `bad${KEK}` })).not.toThrow(new RegExp(KEK.slice(0, 10)));
  });

  it('names a bad clock skew', () => {
    expect(() => parseGatewayConfig({ ...base, KEY_CLOCK_SKEW_MS: '-1' })).toThrow(/KEY_CLOCK_SKEW_MS/);
  });

  it('refuses a short internal token without echoing it', () => {
    expect(() => parseGatewayConfig({ INTERNAL_TOKEN: 'short-secret' })).toThrow(/INTERNAL_TOKEN/);
    expect(() => parseGatewayConfig({ INTERNAL_TOKEN: 'short-secret' })).not.toThrow(/short-secret/);
  });
});
