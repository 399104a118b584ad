import { AppError, ERROR_CODES, errorBody, grpcStatusOf, httpStatusOf } from './index';

describe('error model', () => {
  it.each([
    ['invalid_request', 400], ['unknown_model', 400], ['unknown_provider', 400], ['unsupported_filter', 400], ['unsupported_option', 400],
    ['invalid_api_key', 401], ['key_disabled', 401], ['key_expired', 401],
    ['insufficient_credits', 402], ['key_limit_exceeded', 402], ['wrong_key_type', 403],
    ['ip_not_allowed', 403], ['model_not_allowed', 403],
    ['not_found', 404], ['rate_limited', 429], ['too_many_concurrent_requests', 429],
    ['internal', 500], ['all_providers_failed', 502], ['payment_error', 502],
    ['overloaded', 503], ['byok_disabled', 503], ['payment_disabled', 503],
  ] as const)('maps %s to HTTP %i as the spec table says', (code, status) => {
    expect(httpStatusOf(code)).toBe(status);
  });

  it('has the 18 codes of the spec, unsupported_filter, the key fences\' two and unsupported_option (docs/api.md), each with a gRPC status', () => {
    expect(ERROR_CODES).toHaveLength(22);
    for (const code of ERROR_CODES) expect(grpcStatusOf(code)).toBeGreaterThan(0);
  });

  it('writes needed_usd and attempts only when given, with the request id inside error', () => {
    const body = errorBody(new AppError('insufficient_credits', 'balance too low', { needed_usd: 0.006 }), 'req_x');
    expect(body).toEqual({
      error: { code: 'insufficient_credits', message: 'balance too low', request_id: 'req_x', needed_usd: 0.006 },
    });
    expect(errorBody(new AppError('not_found', 'no such key'), 'req_y').error).not.toHaveProperty('needed_usd');
  });

  it('never echoes the message of an unexpected fault', () => {
    const body = errorBody(new Error('connect ECONNREFUSED 10.0.0.1 password=hunter2'), 'req_z');
    expect(body.error).toEqual({ code: 'internal', message: 'internal error', request_id: 'req_z' });
  });
});
