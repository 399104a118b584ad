import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { Controller, Get, Post, UseGuards } from '@nestjs/common';
import type { Type } from '@nestjs/common';
import { PATH_METADATA } from '@nestjs/common/constants';
import Fastify from 'fastify';
import type { RouteOptions } from 'fastify';
import pino from 'pino';
import { guardHook, isUnguardedFastifyRoute, Public, PUBLIC_ROUTE_CONFIG, unguardedNestRoutes } from '@svc/http-edge';
import { repoRoot } from '@svc/test-kit';
import { GatewayHttp } from '../../services/search-gateway/src/http/gateway.http';
import { ForwardService } from '../../services/search-gateway/src/forward/forward.routes';
import { McpEndpoint } from '../../services/search-gateway/src/mcp/mcp.endpoint';

/**
 * Every route of every service is declared public or guarded (docs/decisions/0020-actor-guard-and-one-source.md).
 * Part of `npm run lint` (check:routes). The Nest services' controllers are found by reading
 * their sources (every file with `@Controller(` or a house `@…Controller(`), so a new controller cannot slip past; the
 * gateway's Fastify routes are those GatewayHttp registers on a bare Fastify instance.
 */

const NEST_SERVICES = ['services/account-admin/src', 'services/billing/src'];
/** `@Controller(` or a house decorator that includes it (`@PublicController(`, `@AccessController(`, …). */
const CONTROLLER_DECORATOR = /@\w*Controller\(/;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    if (name === 'node_modules' || name === 'dist' || name === 'generated') return [];
    if (statSync(path).isDirectory()) return sourceFiles(path);
    return name.endsWith('.ts') && !name.endsWith('.spec.ts') ? [path] : [];
  });
}

async function nestControllers(): Promise<{ file: string; controller: Type }[]> {
  const found: { file: string; controller: Type }[] = [];
  for (const root of NEST_SERVICES) {
    for (const file of sourceFiles(join(repoRoot(), root))) {
      if (!CONTROLLER_DECORATOR.test(readFileSync(file, 'utf8'))) continue;
      const module = (await import(file)) as Record<string, unknown>;
      for (const value of Object.values(module)) {
        if (typeof value === 'function' && Reflect.getMetadata(PATH_METADATA, value) !== undefined) found.push({ file: relative(repoRoot(), file), controller: value as Type });
      }
    }
  }
  return found;
}

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
    const controllers = await nestControllers();
    // The scan found the services' controllers (a broken scan must not pass by finding none);
    // billing's HealthController is also the worker's (its health listener).
    expect(controllers.map((c) => c.controller.name)).toEqual(expect.arrayContaining(['KeysController', 'ProviderKeysController', 'OperatorController', 'StripeWebhookController']));
    expect(controllers.map((c) => `${c.file} ${c.controller.name}`)).toContain('services/billing/src/http/health/health.controller.ts HealthController');
    expect(controllers.flatMap(({ file, controller }) => unguardedNestRoutes([controller]).map((route) => `${file}: ${route}`))).toEqual([]);
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
