import { createHash, randomBytes } from 'node:crypto';
import { AppError } from '@svc/errors';

/**
 * Client sessions without server state. The initialize response carries a random
 * Mcp-Session-Id; the client sends it on every later request, and any gateway replica
 * accepts any well-formed one, because nothing is stored under it. Its one use is to scope
 * the idempotency of tool calls: JSON-RPC ids repeat across client instances (each counts
 * from 0), so an id alone cannot name a tool call, while (session, id) does.
 */

/** Visible ASCII (0x21 to 0x7E), as the MCP transport requires of session ids, at most 128. */
const SESSION_ID = /^[\x21-\x7e]{1,128}$/;

export function newSessionId(): string {
  return `mcps_${randomBytes(18).toString('base64url')}`;
}

/** The request's session id, null without one; a malformed one is a 400 invalid_request. */
export function sessionIdOf(header: string | string[] | undefined): string | null {
  if (header === undefined) return null;
  if (typeof header !== 'string' || !SESSION_ID.test(header)) {
    throw new AppError('invalid_request', 'Mcp-Session-Id must be 1 to 128 visible ASCII characters');
  }
  return header;
}

/**
 * The idempotency digest of one tool call: the same (session, JSON-RPC id) gives the same
 * digest, so a retried call is answered from the first one's stored outcome and charged
 * once. NUL separators: no Idempotency-Key header (printable ASCII only) hashes to it.
 */
export function toolCallDigest(sessionId: string, jsonRpcId: string | number): string {
  return createHash('sha256').update(`mcp\u0000${sessionId}\u0000${typeof jsonRpcId}\u0000${String(jsonRpcId)}`).digest('hex');
}
