import { Get, Inject, Req, Res } from '@nestjs/common';
import { AppError, routeNotFoundBody } from '@svc/errors';
import { PublicController } from '@svc/http-edge';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DashboardAssets } from './dashboard-assets.adapter';

/** Only the app's own files; inline scripts and styles are refused, nothing loads from elsewhere. */
export const DASHBOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

export const DASHBOARD_ASSETS = Symbol('DASHBOARD_ASSETS');

/** The web app's client-side pages under /dashboard (web/src/app.tsx lists the same). */
export const DASHBOARD_PAGES = ['keys', 'management-keys', 'provider-keys', 'credits', 'usage', 'activity', 'research', 'audit-log', 'status', 'connected-apps', 'oauth/consent', 'webhooks', 'billing-settings', 'notifications', 'login', 'signup', 'confirm', 'forgot-password', 'reset-password'] as const;

/**
 * The dashboard web app: /dashboard and each of its pages answer index.html;
 * /dashboard/assets/* the built files. Any other path under /dashboard (the JSON API's
 * included) is the edge's ordinary 404 or 405.
 */
@PublicController('dashboard')
export class DashboardWebController {
  constructor(@Inject(DASHBOARD_ASSETS) private readonly assets: DashboardAssets) {}

  @Get(['', ...DASHBOARD_PAGES])
  index(@Res() reply: FastifyReply): FastifyReply {
    const index = this.assets.file('index.html');
    if (index === undefined) throw new AppError('not_found', 'the dashboard web app is not built (npm run build)');
    return reply
      .header('content-type', index.contentType)
      .header('content-security-policy', DASHBOARD_CSP)
      .header('cache-control', 'no-store')
      .header('x-content-type-options', 'nosniff')
      .header('referrer-policy', 'same-origin')
      .send(index.body);
  }

  @Get('assets/*')
  file(@Req() req: FastifyRequest, @Res() reply: FastifyReply): FastifyReply {
    const path = req.url.split('?')[0] ?? '';
    const asset = this.assets.file(path.slice('/dashboard/'.length));
    if (asset === undefined) {
      return reply.code(404).type('application/json; charset=utf-8').send(routeNotFoundBody(req.method, path.length > 200 ? `${path.slice(0, 200)}…` : path, req.id));
    }
    return reply
      .header('content-type', asset.contentType)
      .header('cache-control', asset.immutable ? 'public, max-age=31536000, immutable' : 'no-cache')
      .header('x-content-type-options', 'nosniff')
      .send(asset.body);
  }
}
