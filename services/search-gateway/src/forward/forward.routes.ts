import { isProvider, keyFactsHeaders, OAUTH_PATHS } from '@svc/contracts';
import { injectTraceHeaders } from '@svc/tracing';
import type { RequiredKind } from '@svc/contracts';
import { AppError } from '@svc/errors';
import { guardHook, PUBLIC_ROUTE_CONFIG } from '@svc/http-edge';
import type { FastifyInstance, FastifyReply, FastifyRequest, HTTPMethods } from 'fastify';
import type { Logger } from 'pino';
import type { AuthChain } from '../auth/auth-chain';
import { authError } from '../auth/auth-chain';
import { clientResponseHeaders, upstreamRequestHeaders } from './forward-headers';
import type { ForwardIdentity } from './forward-headers';
import type { UpstreamClient } from './upstream.client';

export type Upstream = 'account-admin' | 'billing';

export interface ForwardRoute {
  methods: HTTPMethods[];
  url: string;
  upstream: Upstream;
  /** The key the route needs, or 'none' (dashboard session, Stripe signature). */
  key: RequiredKind | 'none';
  /** A check of the path after authentication. */
  checkParams?: (params: Record<string, string>) => AppError | undefined;
  /** Send the key's limit and model fence too (a route where billing reserves money for the key: research runs). */
  keyFacts?: boolean;
}

const providerParam = (params: Record<string, string>): AppError | undefined =>
  isProvider(params.provider) ? undefined : new AppError('unknown_provider', 'provider must be one of brave, exa, tavily');

/** The control-plane paths the public edge forwards (docs/development.md, docs/api.md section 6). */
export const FORWARD_ROUTES: readonly ForwardRoute[] = [
  { methods: ['GET', 'POST'], url: '/v1/keys', upstream: 'account-admin', key: 'management' },
  { methods: ['GET', 'PATCH', 'DELETE'], url: '/v1/keys/:id', upstream: 'account-admin', key: 'management' },
  { methods: ['GET'], url: '/v1/key', upstream: 'account-admin', key: 'either' },
  { methods: ['GET'], url: '/v1/provider-keys', upstream: 'account-admin', key: 'management' },
  { methods: ['GET'], url: '/v1/audit-log', upstream: 'account-admin', key: 'management' },
  { methods: ['GET', 'PUT', 'DELETE'], url: '/v1/provider-keys/:provider', upstream: 'account-admin', key: 'management', checkParams: providerParam },
  { methods: ['GET'], url: '/dashboard', upstream: 'account-admin', key: 'none' },
  // The web app's files and client-side pages (/dashboard/assets/*, /dashboard/keys, ...).
  { methods: ['GET'], url: '/dashboard/*', upstream: 'account-admin', key: 'none' },
  { methods: ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'], url: '/dashboard/api/*', upstream: 'account-admin', key: 'none' },
  { methods: ['GET'], url: '/v1/credits', upstream: 'billing', key: 'either' },
  { methods: ['POST'], url: '/v1/credits/checkout', upstream: 'billing', key: 'management' },
  { methods: ['GET'], url: '/v1/usage', upstream: 'billing', key: 'either' },
  { methods: ['POST'], url: '/v1/credits/webhook', upstream: 'billing', key: 'none' },
  // The OAuth authorization server of the connector URL (decision 0029): public, account-admin's.
  { methods: ['GET'], url: OAUTH_PATHS.serverMetadata, upstream: 'account-admin', key: 'none' },
  { methods: ['POST'], url: OAUTH_PATHS.register, upstream: 'account-admin', key: 'none' },
  { methods: ['GET'], url: OAUTH_PATHS.authorize, upstream: 'account-admin', key: 'none' },
  { methods: ['POST'], url: OAUTH_PATHS.token, upstream: 'account-admin', key: 'none' },
  { methods: ['POST'], url: OAUTH_PATHS.revoke, upstream: 'account-admin', key: 'none' },
  // Events, webhook endpoints and billing settings (docs/decisions/0028).
  { methods: ['GET'], url: '/v1/events', upstream: 'billing', key: 'management' },
  { methods: ['GET'], url: '/v1/events/:id', upstream: 'billing', key: 'management' },
  { methods: ['GET', 'POST'], url: '/v1/webhook-endpoints', upstream: 'billing', key: 'management' },
  { methods: ['GET', 'PATCH', 'DELETE'], url: '/v1/webhook-endpoints/:id', upstream: 'billing', key: 'management' },
  { methods: ['POST'], url: '/v1/webhook-endpoints/:id/rotate-secret', upstream: 'billing', key: 'management' },
  { methods: ['GET'], url: '/v1/webhook-endpoints/:id/deliveries', upstream: 'billing', key: 'management' },
  { methods: ['POST'], url: '/v1/webhook-endpoints/:id/deliveries/:delivery/redeliver', upstream: 'billing', key: 'management' },
  { methods: ['GET', 'PATCH'], url: '/v1/billing/settings', upstream: 'billing', key: 'management' },
  { methods: ['POST'], url: '/v1/billing/auto-topup/setup', upstream: 'billing', key: 'management' },
  // Research runs (docs/decisions/0062): billing holds the cap for the key, so it is told the key's limit and fence.
  { methods: ['POST'], url: '/v1/research', upstream: 'billing', key: 'api', keyFacts: true },
  { methods: ['GET'], url: '/v1/research', upstream: 'billing', key: 'either' },
  { methods: ['GET'], url: '/v1/research/:id', upstream: 'billing', key: 'either' },
  { methods: ['POST'], url: '/v1/research/:id/cancel', upstream: 'billing', key: 'either' },
];

/**
 * Forwards control-plane paths: authenticate (when the route needs a key), pass the raw
 * body bytes and the query string unchanged, and pass the reply back. A reply naming a
 * changed key drops that key from the cache before the caller sees the reply.
 */
export class ForwardService {
  constructor(
    private readonly auth: AuthChain,
    private readonly upstreams: Readonly<Record<Upstream, UpstreamClient>>,
    private readonly internalToken: string,
    private readonly log: Logger,
    /** Dropped per account when account-admin answers a provider-key change: it applies at once here. */
    private readonly providerKeys?: { invalidate(accountId: string): void },
  ) {}

  /**
   * Registers every forwarded route on a scope whose body parser yields raw Buffers. A route
   * that needs a key authenticates it in its preHandler (after the body is read, before the
   * handler); a route with key 'none' is public here (its upstream guards it).
   */
  register(scope: FastifyInstance, routes: readonly ForwardRoute[] = FORWARD_ROUTES): void {
    const identities = new WeakMap<FastifyRequest, ForwardIdentity>();
    for (const route of routes) {
      const key = route.key;
      scope.route({
        method: route.methods,
        url: route.url,
        ...(key === 'none'
          ? { config: PUBLIC_ROUTE_CONFIG }
          : {
              preHandler: guardHook(async (request: FastifyRequest) => {
                const outcome = await this.auth.authenticate(request.headers.authorization, key, request);
                if (!outcome.ok) throw authError(outcome);
                identities.set(request, {
                  accountId: outcome.record.accountId, keyId: outcome.record.id, kind: outcome.record.kind,
                  ...(route.keyFacts === true ? { facts: keyFactsHeaders(outcome.record) } : {}),
                });
              }),
            }),
        handler: (request, reply) => this.forward(route, request, reply, identities.get(request) ?? null),
      });
    }
  }

  private async forward(route: ForwardRoute, request: FastifyRequest, reply: FastifyReply, identity: ForwardIdentity | null): Promise<FastifyReply> {
    if (route.key !== 'none' && identity === null) throw new Error('forward handler reached without authentication');
    const problem = route.checkParams?.(request.params as Record<string, string>);
    if (problem !== undefined) throw problem;

    const headers = upstreamRequestHeaders(request.headers, {
      internalToken: this.internalToken,
      requestId: request.id,
      identity,
      clientIp: request.ip,
      clientAddress: this.auth.clientAddress(request),
    });
    injectTraceHeaders(headers);
    const body = Buffer.isBuffer(request.body) ? request.body : undefined;
    let response;
    try {
      response = await this.upstreams[route.upstream].send({ method: request.method, path: request.url, headers, body });
    } catch (error) {
      this.log.error(
        { request_id: request.id, upstream: route.upstream, err: error instanceof Error ? `${error.name}: ${error.message}` : String(error) },
        'forwarding failed',
      );
      throw new AppError('internal', 'internal error');
    }
    const passed = clientResponseHeaders(response.headers);
    if (route.upstream === 'account-admin') {
      for (const keyHash of passed.changedKeyHashes) this.auth.invalidate(keyHash);
      if (passed.changedProviderKeysAccount !== null) this.providerKeys?.invalidate(passed.changedProviderKeysAccount);
    }
    reply.code(response.status).headers(passed.headers);
    return response.body.length === 0 ? reply.send() : reply.send(response.body);
  }
}
