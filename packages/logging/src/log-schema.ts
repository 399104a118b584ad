import Ajv from 'ajv';
import type { ValidateFunction } from 'ajv';

/**
 * Field names that say the same as a schema field in other words, or that could carry a
 * secret or a query string: never used on a log line.
 */
export const FORBIDDEN_FIELDS = [
  'requestId', 'reqId', 'req_id', 'req', 'res', 'accountId', 'account', 'keyId', 'key', 'error', 'error_message', 'errorMessage',
  'duration', 'elapsed_ms', 'latency_ms', 'responseTime', 'statusCode', 'status_code', 'cost', 'costUsd', 'cost_micros',
  'url', 'path', 'query', 'querystring', 'headers', 'body', 'authorization', 'password', 'secret', 'token', 'cookie', 'api_key', 'apiKey', 'name',
];

/**
 * The JSON schema of a log line of every service. The fields named here have one meaning
 * and one type everywhere; any other field is a snake_case name of a plain value (string,
 * number, boolean, null, or a list or small object of them), never one of FORBIDDEN_FIELDS.
 */
export const LOG_SCHEMA = {
  type: 'object',
  required: ['level', 'time', 'service', 'msg'],
  properties: {
    level: { type: 'integer' },
    time: { type: 'integer' },
    pid: { type: 'integer' },
    hostname: { type: 'string' },
    service: { enum: ['search-gateway', 'account-admin', 'billing', 'ledger-worker'] },
    msg: { type: 'string' },
    component: { type: 'string' },
    listener: { type: 'string' },
    request_id: { type: 'string', minLength: 1 },
    trace_id: { type: 'string', pattern: '^[0-9a-f]{32}$' },
    account_id: { type: 'string', minLength: 1 },
    key_id: { type: 'string', minLength: 1 },
    method: { type: 'string' },
    /** The route pattern (`/v1/keys/:id`), null when no route matched: never a path with a query. */
    route: { type: ['string', 'null'], pattern: '^/[^?]*$' },
    status: { type: ['integer', 'null'] },
    duration_ms: { type: 'number', minimum: 0 },
    /** The model that answered (null: none did). */
    model: { type: ['string', 'null'] },
    /** Every model a search tried or skipped, in order. */
    models: { type: 'array', items: { type: 'string' } },
    outcome: { type: 'string' },
    /** Money in decimal USD; amounts in micro-USD use fields ending in _micros. */
    cost_usd: { type: 'number', minimum: 0 },
    err: { type: 'string' },
    provider: { enum: ['brave', 'exa', 'tavily'] },
  },
  propertyNames: { pattern: '^[a-z][a-z0-9_]*$', not: { enum: FORBIDDEN_FIELDS } },
  additionalProperties: {
    anyOf: [
      { type: ['string', 'number', 'boolean', 'null'] },
      { type: 'array', items: { type: ['string', 'number', 'boolean', 'null'] } },
      { type: 'object', additionalProperties: { type: ['string', 'number', 'boolean', 'null'] } },
    ],
  },
} as const;

let compiled: ValidateFunction | undefined;

/** Null when the line is a JSON object that follows LOG_SCHEMA, else what is wrong with it. */
export function checkLogLine(line: string): string | null {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch {
    return 'not JSON';
  }
  // Compiled on first use: the services import this package for the logger, never the schema.
  compiled ??= new Ajv({ allErrors: true, allowUnionTypes: true }).compile(LOG_SCHEMA);
  const validate = compiled;
  if (validate(value)) return null;
  return (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? ''}${e.params === undefined ? '' : ` ${JSON.stringify(e.params)}`}`).join('; ');
}
