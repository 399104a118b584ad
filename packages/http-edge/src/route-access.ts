import { applyDecorators, Controller, RequestMethod, SetMetadata } from '@nestjs/common';
import type { Type } from '@nestjs/common';
import { GUARDS_METADATA, METHOD_METADATA, PATH_METADATA } from '@nestjs/common/constants';
import type { RequiredKind } from '@svc/contracts';

/**
 * Every route of every service is either public (declared so, here) or guarded: a Nest
 * route by a guard (`@UseGuards`, directly or through a decorator such as account-admin's
 * `@Access`), a Fastify route by an `onRequest`/`preHandler` hook made with `guardHook`.
 * `unguardedNestRoutes` and `isUnguardedFastifyRoute` find the others; test/lint/route-access.spec.ts
 * runs them over the three services in `npm run lint`.
 */
export const PUBLIC_ROUTE = 'svc:public-route';

/** Declares a Nest controller (or one handler) public: anyone may call it, no caller is resolved. */
export const Public = (): ClassDecorator & MethodDecorator => SetMetadata(PUBLIC_ROUTE, true);

/** `@Controller(prefix)` and `@Public()` in one: a controller whose every route anyone may call. */
export function PublicController(prefix?: string): ClassDecorator {
  return applyDecorators(prefix === undefined ? Controller() : Controller(prefix), Public());
}

/**
 * Who may call a guarded route, declared once on its controller (or on one handler, which
 * then overrides the controller's): `key` is the kind of key a route the gateway forwards, or
 * an internal route, needs (`management`, `api` or `either`); a route of the dashboard only
 * (a session) leaves it out. Read by the guard that resolves the caller (account-admin's
 * ActorGuard, billing's InternalAuthGuard), which refuses another kind with 403 wrong_key_type
 * before any pipe or handler runs, and by the route-access check (`undeclaredAccessRoutes`).
 */
export interface RouteAccess {
  key?: RequiredKind;
}

export const ROUTE_ACCESS = 'svc:route-access';

/** Declares a controller's (or one handler's) access rule for the guard that reads it. */
export const DeclareAccess = (rule: RouteAccess): ClassDecorator & MethodDecorator => SetMetadata(ROUTE_ACCESS, rule);

const KEYED_GUARD = 'svc:keyed-guard';

/** Marks a guard class that enforces the route's declared access (so every route behind it must declare one). */
export const KeyedGuard = (): ClassDecorator => SetMetadata(KEYED_GUARD, true);

/** The rule a handler declares, else its controller's. */
export function declaredAccess(controller: Type, handler: unknown): RouteAccess | undefined {
  const own = typeof handler === 'function' ? (Reflect.getMetadata(ROUTE_ACCESS, handler) as RouteAccess | undefined) : undefined;
  return own ?? (Reflect.getMetadata(ROUTE_ACCESS, controller) as RouteAccess | undefined);
}

/** A Fastify route's `config` that declares it public. */
export const PUBLIC_ROUTE_CONFIG = Object.freeze({ access: 'public' as const });

const GUARD_HOOK = Symbol('svc:guard-hook');

/** Marks a Fastify hook as the one that authenticates the caller (401/403 before the handler). */
export function guardHook<T extends (...args: never[]) => unknown>(hook: T): T {
  Object.defineProperty(hook, GUARD_HOOK, { value: true });
  return hook;
}

function isGuardHook(hook: unknown): boolean {
  return typeof hook === 'function' && (hook as unknown as Record<symbol, unknown>)[GUARD_HOOK] === true;
}

/** The fields of Fastify's route options the check reads (what an `onRoute` hook receives). */
export interface RouteOptionsSeen {
  method: string | string[];
  url: string;
  config?: unknown;
  onRequest?: unknown;
  preHandler?: unknown;
}

/** A Fastify route that is neither public (PUBLIC_ROUTE_CONFIG) nor guarded (a guardHook). */
export function isUnguardedFastifyRoute(route: RouteOptionsSeen): boolean {
  const config = route.config as { access?: unknown } | undefined;
  if (config?.access === 'public') return false;
  const hooks = [route.onRequest, route.preHandler].flatMap((hook) => (Array.isArray(hook) ? hook : [hook]));
  return !hooks.some(isGuardHook);
}

/** One route of a Nest controller, as the checks below read it. */
interface NestRoute {
  controller: Type;
  /** The handler's name on the controller. */
  name: string;
  handler: object;
  method: string;
  /** `path` without its leading slash (`v1/keys/:id`). */
  path: string;
  /** Every guard of the route: the controller's, then the handler's. */
  guards: unknown[];
}

/** Every route (each of its paths) of the controllers. */
function nestRoutes(controllers: readonly Type[]): NestRoute[] {
  const routes: NestRoute[] = [];
  for (const controller of controllers) {
    const prefixes = asList(Reflect.getMetadata(PATH_METADATA, controller));
    const classGuards = asList(Reflect.getMetadata(GUARDS_METADATA, controller));
    const proto = controller.prototype as Record<string, unknown>;
    for (const name of Object.getOwnPropertyNames(proto)) {
      const handler = name === 'constructor' ? undefined : proto[name];
      if (typeof handler !== 'function') continue;
      const paths = Reflect.getMetadata(PATH_METADATA, handler) as string | string[] | undefined;
      if (paths === undefined) continue;
      const guards = [...classGuards, ...asList(Reflect.getMetadata(GUARDS_METADATA, handler))];
      const method = RequestMethod[Reflect.getMetadata(METHOD_METADATA, handler) as RequestMethod];
      for (const prefix of prefixes.length === 0 ? [''] : prefixes) {
        for (const path of asList(paths)) {
          routes.push({ controller, name, handler, method, guards, path: [prefix, path].map(String).filter((p) => p !== '' && p !== '/').join('/').replace(/^\/+/, '') });
        }
      }
    }
  }
  return routes;
}

const describeRoute = (route: NestRoute): string => `${route.method} /${route.path} (${route.controller.name}.${route.name})`;

/** `METHOD /path` of each Nest route that is neither @Public() nor behind a guard. */
export function unguardedNestRoutes(controllers: readonly Type[]): string[] {
  return nestRoutes(controllers)
    .filter((route) => route.guards.length === 0 && Reflect.getMetadata(PUBLIC_ROUTE, route.controller) !== true && Reflect.getMetadata(PUBLIC_ROUTE, route.handler) !== true)
    .map(describeRoute);
}

/**
 * `METHOD /path` of each Nest route behind a keyed guard that does not declare its access:
 * no rule at all, or no `key` on a route outside the dashboard's session surface
 * (`dashboard/api/...`), whose caller is always a session.
 */
export function undeclaredAccessRoutes(controllers: readonly Type[]): string[] {
  const found: string[] = [];
  for (const route of nestRoutes(controllers)) {
    if (!route.guards.some((guard) => typeof guard === 'function' && Reflect.getMetadata(KEYED_GUARD, guard) === true)) continue;
    const rule = declaredAccess(route.controller, route.handler);
    if (rule === undefined) found.push(`${describeRoute(route)}: declares no access`);
    else if (rule.key === undefined && !route.path.startsWith('dashboard/api/')) found.push(`${describeRoute(route)}: declares no key kind`);
  }
  return found;
}

function asList(value: unknown): unknown[] {
  if (value === undefined || value === null) return [];
  return Array.isArray(value) ? value : [value];
}
