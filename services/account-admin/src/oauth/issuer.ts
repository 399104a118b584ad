import { OAUTH_PATHS } from '@svc/contracts';

/** The authorization server's issuer (the public base URL, no path) and its one protected resource. */
export interface Issuer {
  issuer: string;
  resource: string;
}

export function issuerOf(publicBaseUrl: string): Issuer {
  const issuer = publicBaseUrl.replace(/\/+$/, '');
  return { issuer, resource: issuer + OAUTH_PATHS.resource };
}

/** `redirectUri` with `params` set in its query (the ones undefined left out). */
export function redirectWith(redirectUri: string, params: Record<string, string | undefined>): string {
  const url = new URL(redirectUri);
  for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(name, value);
  return url.toString();
}

/** The host a redirect URI returns to, as the consent and Connected apps pages show it. */
export function hostOf(uri: string): string {
  try {
    const url = new URL(uri);
    return url.host === '' ? url.protocol.replace(/:$/, '') : url.host;
  } catch {
    return uri;
  }
}
