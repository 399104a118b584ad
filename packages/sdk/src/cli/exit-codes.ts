import { SearchGatewayConnectionError, SearchGatewayError } from '../errors.js';

/** The exit codes of `svc`, by class of outcome. */
export const EXIT = {
  /** Success. */
  ok: 0,
  /** Anything else: an unexpected failure, or a 2xx whose body is not JSON. */
  other: 1,
  /** The command line is wrong (unknown command or option, missing or malformed argument); nothing was sent. */
  usage: 2,
  /** 401 or 403: no key, a wrong, disabled or expired key, or the wrong kind of key. */
  auth: 3,
  /** 402: not enough credits, the key's credit limit, or the request's max_cost_usd. */
  payment: 4,
  /** 429 or 503: rate, concurrency, capacity, or a feature off on this deployment. */
  unavailable: 5,
  /** Any other 4xx: invalid request, unknown model or provider, not found, 405. */
  invalid: 6,
  /** 500, 502 (all providers failed, payment processor failed) and every other 5xx. */
  server: 7,
  /** No answer: the connection failed or the timeout passed. */
  connection: 8,
} as const;

export type ExitCode = (typeof EXIT)[keyof typeof EXIT];

/** An error of the command line itself. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

export function exitCodeForStatus(status: number): ExitCode {
  if (status === 401 || status === 403) return EXIT.auth;
  if (status === 402) return EXIT.payment;
  if (status === 429 || status === 503) return EXIT.unavailable;
  if (status >= 400 && status <= 499) return EXIT.invalid;
  if (status >= 500 && status <= 599) return EXIT.server;
  return EXIT.other;
}

export function exitCodeFor(error: unknown): ExitCode {
  if (error instanceof UsageError) return EXIT.usage;
  if (SearchGatewayError.is(error)) return exitCodeForStatus(error.status);
  if (SearchGatewayConnectionError.is(error)) return EXIT.connection;
  return EXIT.other;
}
