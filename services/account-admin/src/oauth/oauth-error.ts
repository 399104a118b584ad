/**
 * An OAuth error response (RFC 6749 section 5.2; RFC 7591 section 3.2.2): its own shape, not the
 * platform's. `retryAfterSeconds` (a rate limit's 429) becomes the Retry-After header.
 */
export class OAuthError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
    readonly status = 400,
    readonly retryAfterSeconds: number | null = null,
  ) {
    super(description);
  }

  body(): { error: string; error_description: string } {
    return { error: this.error, error_description: this.description };
  }
}
