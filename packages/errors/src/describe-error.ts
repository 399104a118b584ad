/**
 * A caught error as one line for a log field: `Name: message` (`Error: connection refused`),
 * or the thrown value as a string. Never a stack; the message is the error's own (callers
 * log what their own code or a client library threw, never a request's data).
 */
export function describeError(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
