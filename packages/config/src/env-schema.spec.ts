import { ConfigError, bool, int, oneOf, parseEnv, secret, str, url, redisUrls } from './env-schema';

describe('environment schema', () => {
  const schema = {
    PORT: int({ default: 8080, min: 0, max: 65535 }),
    REDIS_URL: url({ default: 'redis://127.0.0.1:6379', protocols: ['redis', 'rediss'] }),
    NAME: str({ optional: true }),
    BYOK_ENABLED: bool({ default: true }),
    MODE: oneOf(['a', 'b'] as const, { default: 'a' }),
    OPERATOR_TOKEN: secret({ minLength: 16 }),
  };

  it('applies defaults and parses values', () => {
    const env = parseEnv(schema, { PORT: '9000', OPERATOR_TOKEN: 'x'.repeat(16), BYOK_ENABLED: 'false' });
    expect(env).toEqual({
      PORT: 9000, REDIS_URL: 'redis://127.0.0.1:6379', NAME: undefined, BYOK_ENABLED: false, MODE: 'a',
      OPERATOR_TOKEN: 'x'.repeat(16),
    });
  });

  it('names the bad variable', () => {
    expect(() => parseEnv(schema, { PORT: 'eighty', OPERATOR_TOKEN: 'x'.repeat(16) })).toThrow(
      new ConfigError('PORT', 'must be an integer (got "eighty")'),
    );
    expect(() => parseEnv(schema, { PORT: '70000', OPERATOR_TOKEN: 'x'.repeat(16) })).toThrow(/PORT must be an integer from 0 to 65535/);
    expect(() => parseEnv(schema, { REDIS_URL: 'http://x', OPERATOR_TOKEN: 'x'.repeat(16) })).toThrow(/REDIS_URL must use one of redis, rediss/);
    expect(() => parseEnv(schema, {})).toThrow(/OPERATOR_TOKEN is required/);
  });

  it('never echoes a secret value', () => {
    try {
      parseEnv(schema, { OPERATOR_TOKEN: 'short-secret' });
      throw new Error('expected a ConfigError');
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      expect((error as Error).message).toContain('OPERATOR_TOKEN');
      expect((error as Error).message).not.toContain('short-secret');
    }
  });
});

describe('redisUrls', () => {
  const schema = { REDIS_URL: redisUrls({ default: 'redis://127.0.0.1:6379' }) };

  it('takes one URL or a comma-separated list of seed nodes', () => {
    expect(parseEnv(schema, {}).REDIS_URL).toBe('redis://127.0.0.1:6379');
    expect(parseEnv(schema, { REDIS_URL: 'redis://10.0.0.1:7000/, rediss://10.0.0.2:7001' }).REDIS_URL).toBe('redis://10.0.0.1:7000,rediss://10.0.0.2:7001');
  });

  it('names the bad entry without echoing the value', () => {
    expect(() => parseEnv(schema, { REDIS_URL: 'redis://a:7000,http://u:hunter2@b' })).toThrow(/REDIS_URL must use one of redis, rediss \(entry 2\)/);
    expect(() => parseEnv(schema, { REDIS_URL: 'redis://a:7000,http://u:hunter2@b' })).not.toThrow(/hunter2/);
    expect(() => parseEnv(schema, { REDIS_URL: ' , ' })).toThrow(/REDIS_URL names no Redis/);
  });
});
