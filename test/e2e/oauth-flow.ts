import { createHash, randomBytes } from 'node:crypto';
import { OAUTH_PATHS } from '@svc/contracts';
import { call } from '@svc/test-kit';
import type { JsonResponse } from '@svc/test-kit';

/** The OAuth client's side of the connector flow, by hand over HTTP (RFC 6749, 7636, 7591, 7009), for the e2e suites. */

export interface Pkce {
  verifier: string;
  challenge: string;
}

export function pkce(): Pkce {
  const verifier = randomBytes(48).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

export async function register(gw: string, name: string, redirectUris: string[]): Promise<JsonResponse> {
  return call('POST', gw + OAUTH_PATHS.register, { body: { client_name: name, redirect_uris: redirectUris, token_endpoint_auth_method: 'none', grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], software_id: 'ignored-field' } });
}

/** GET /oauth/authorize without following redirects: the status and Location. */
export async function authorize(gw: string, params: Record<string, string | undefined>): Promise<{ status: number; location: string | null; text: string }> {
  const url = new URL(gw + OAUTH_PATHS.authorize);
  for (const [name, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(name, value);
  const response = await fetch(url, { redirect: 'manual' });
  return { status: response.status, location: response.headers.get('location'), text: await response.text() };
}

export async function form(gw: string, path: string, fields: Record<string, string | undefined>): Promise<JsonResponse> {
  const body = new URLSearchParams();
  for (const [name, value] of Object.entries(fields)) if (value !== undefined) body.set(name, value);
  return call('POST', gw + path, { raw: body.toString(), headers: { 'content-type': 'application/x-www-form-urlencoded' } });
}

/** The authorize request's id from the consent page URL it redirected to. */
export function requestIdOf(location: string | null): string {
  const id = location === null ? null : new URL(location).searchParams.get('request');
  if (id === null) throw new Error(`no consent redirect: ${location}`);
  return id;
}

/** Authorize (PKCE S256, a state) and land on the consent page; answers the request id and the verifier. */
export async function startAuthorization(gw: string, clientId: string, redirectUri: string, state = randomBytes(8).toString('hex')): Promise<{ requestId: string; pkce: Pkce; state: string; location: string }> {
  const p = pkce();
  const answer = await authorize(gw, {
    response_type: 'code', client_id: clientId, redirect_uri: redirectUri, code_challenge: p.challenge, code_challenge_method: 'S256', state, resource: gw + OAUTH_PATHS.resource,
  });
  if (answer.status !== 302) throw new Error(`authorize answered ${answer.status}: ${answer.text}`);
  return { requestId: requestIdOf(answer.location), pkce: p, state, location: answer.location ?? '' };
}

export async function approve(gw: string, session: Record<string, string>, requestId: string, body: Record<string, unknown> = { limit_usd: 1, limit_reset: 'daily', expires_at: null }): Promise<JsonResponse> {
  return call('POST', `${gw}/dashboard/api/oauth/requests/${requestId}/approve`, { body, headers: session });
}

export function codeOf(redirectTo: string): { code: string; state: string | null; iss: string | null } {
  const url = new URL(redirectTo);
  const code = url.searchParams.get('code');
  if (code === null) throw new Error(`no code in ${redirectTo}`);
  return { code, state: url.searchParams.get('state'), iss: url.searchParams.get('iss') };
}

export async function exchange(gw: string, clientId: string, code: string, redirectUri: string, verifier: string | undefined): Promise<JsonResponse> {
  return form(gw, OAUTH_PATHS.token, { grant_type: 'authorization_code', code, redirect_uri: redirectUri, client_id: clientId, code_verifier: verifier });
}

export async function refresh(gw: string, clientId: string, refreshToken: string): Promise<JsonResponse> {
  return form(gw, OAUTH_PATHS.token, { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: clientId });
}
