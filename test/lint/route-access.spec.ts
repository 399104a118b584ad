import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { randomBytes } from 'node:crypto';
import { Controller, Get, Post, UseGuards } from '@nestjs/common';
import Fastify from 'fastify';
import type { RouteOptions } from 'fastify';
import pino from 'pino';
import { guardHook, isUnguardedFastifyRoute, Public, PUBLIC_ROUTE_CONFIG, unguardedNestRoutes } from '@svc/http-edge';
import { repoRoot } from '@svc/test-kit';
import { nestControllers, routeAccessViolations } from './route-rules';
import { GatewayHttp } from '../../services/search-gateway/src/http/gateway.http';
import { ForwardService } from '../../services/search-gateway/src/forward/forward.routes';
import { McpEndpoint } from '../../services/search-gateway/src/mcp/mcp.endpoint';

/**
 * Every route of every service is declared public or guarded (docs/decisions/0020-actor-guard-and-one-source.md),
 * and every keyed route declares the kind of key it needs once, on its controller or handler,
 * never by a check inside a handler (docs/decisions/0039). Part of `npm run lint`
 * (check:routes). The Nest services' controllers are found by reading their sources (every
 * file with `@Controller(` or a house `@…Controller(`; route-rules.ts), so a new controller
 * cannot slip past; the gateway's Fastify routes are those GatewayHttp registers on a bare
 * Fastify instance.
 */

const NEST_SERVICES = ['services/account-admin/src', 'services/billing/src'];

/** The gateway's routes as GatewayHttp registers them (its dependencies are never called while registering). */
async function gatewayRoutes(): Promise<RouteOptions[]> {
  const log = pino({ level: 'silent' });
  const fastify = Fastify();
  const routes: RouteOptions[] = [];
  fastify.addHook('onRoute', (route) => {
    routes.push(route);
  });
  const unused = {} as never;
  const forward = new ForwardService(unused, unused, 'token', log);
  const mcp = new McpEndpoint(unused);
  new GatewayHttp(unused, forward, unused, log, { auth: unused, service: unused, rateLimit: { limit: 1, remaining: 1 } as never }, undefined, undefined, mcp).install(fastify);
  await fastify.ready();
  await fastify.close();
  return routes;
}

const describeRoute = (route: RouteOptions): string => `${[route.method].flat().join(',')} ${route.url}`;

describe('every route is declared public or guarded', () => {
  it('account-admin and billing (the public API, the operator API and the worker): every Nest route', async () => {
    const controllers = await nestControllers(NEST_SERVICES);
    // The scan found the services' controllers (a broken scan must not pass by finding none);
    // billing's HealthController is also the worker's (its health listener).
    expect(controllers.map((c) => c.controller.name)).toEqual(expect.arrayContaining(['KeysController', 'ProviderKeysController', 'OperatorController', 'StripeWebhookController']));
    expect(controllers.map((c) => `${c.file} ${c.controller.name}`)).toContain('services/billing/src/http/health/health.controller.ts HealthController');
    expect(controllers.flatMap(({ file, controller }) => unguardedNestRoutes([controller]).map((route) => `${file}: ${route}`))).toEqual([]);
  });

  it('account-admin and billing: every keyed route declares its key kind once, and no handler checks one itself', async () => {
    expect(await routeAccessViolations(NEST_SERVICES)).toEqual([]);
  });

  it('refuses a planted controller whose handlers check the key kind themselves, and passes one that declares it', async () => {
    // A folder of its own inside billing's sources (so it imports as billing's code does), removed after.
    const folder = `services/billing/src/lint-planted-${randomBytes(4).toString('hex')}`;
    const dir = join(repoRoot(), folder);
    mkdirSync(dir);
    try {
      writeFileSync(join(dir, 'planted.controller.ts'), [
        "import { Controller, Get, UseGuards } from '@nestjs/common';",
        "import { AppError } from '@svc/errors';",
        "import { Caller, InternalAuthController, InternalAuthGuard } from '../http/internal-auth.guard';",
        "import type { CallerIdentity } from '../http/internal-auth.guard';",
        '',
        "@Controller('v1/planted')",
        '@UseGuards(InternalAuthGuard)',
        'export class PlantedController {',
        '  @Get()',
        '  list(@Caller() caller: CallerIdentity): object {',
        "    if (caller.keyKind !== 'management') throw new AppError('wrong_key_type', 'listing needs a management key');",
        '    return {};',
        '  }',
        '}',
        '',
        "@InternalAuthController('v1/declared', { key: 'management' })",
        'export class DeclaredController {',
        '  @Get()',
        '  list(@Caller() caller: CallerIdentity): object {',
        '    return { account: caller.accountId };',
        '  }',
        '}',
        '',
      ].join('\n'));
      const violations = await routeAccessViolations([folder]);
      expect(violations).toEqual([
        `${folder}/planted.controller.ts: GET /v1/planted (PlantedController.list): declares no access`,
        `${folder}/planted.controller.ts:11: a handler checks the key kind itself (declare it on the controller or route instead)`,
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('the gateway: every Fastify route', async () => {
    const routes = await gatewayRoutes();
    expect(routes.map(describeRoute)).toEqual(expect.arrayContaining(['POST /v1/search', 'POST /mcp', 'GET /v1/models', 'GET,POST /v1/keys', 'POST /v1/credits/webhook']));
    expect(routes.filter(isUnguardedFastifyRoute).map(describeRoute)).toEqual([]);
  });

  it('finds a Nest route that is neither (so the check can fail)', () => {
    class SomeGuard {
      canActivate(): boolean {
        return true;
      }
    }
    @Controller('planted')
    class PlantedController {
      @Get('open')
      open(): string {
        return 'x';
      }

      @Post(['a', 'b'])
      @Public()
      declared(): string {
        return 'x';
      }

      @Get('guarded')
      @UseGuards(SomeGuard)
      guarded(): string {
        return 'x';
      }
    }
    expect(unguardedNestRoutes([PlantedController])).toEqual(['GET /planted/open (PlantedController.open)']);
  });

  it('finds a Fastify route that is neither (so the check can fail)', async () => {
    const fastify = Fastify();
    const routes: RouteOptions[] = [];
    fastify.addHook('onRoute', (route) => {
      routes.push(route);
    });
    fastify.get('/open', () => 'x');
    fastify.get('/declared', { config: PUBLIC_ROUTE_CONFIG }, () => 'x');
    fastify.get('/guarded', { onRequest: guardHook(async () => undefined) }, () => 'x');
    fastify.get('/hooked', { onRequest: async () => undefined }, () => 'x');
    await fastify.ready();
    await fastify.close();
    expect(routes.filter(isUnguardedFastifyRoute).map(describeRoute)).toEqual(['GET /open', 'HEAD /open', 'GET /hooked', 'HEAD /hooked']);
  });
});
