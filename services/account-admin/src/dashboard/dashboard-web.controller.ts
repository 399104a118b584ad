import { Controller, Get, Inject, NotFoundException, Req, Res } from '@nestjs/common';
import { AppError } from '@svc/errors';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DashboardAssets } from './dashboard-assets';

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

/**
 * The dashboard web app: /dashboard and its client-side pages (/dashboard/keys, ...) answer
 * index.html; /dashboard/assets/* the built files. /dashboard/api/* is the JSON API, never this.
 */
@Controller('dashboard')
export class DashboardWebController {
  constructor(@Inject(DASHBOARD_ASSETS) private readonly assets: DashboardAssets) {}

  @Get()
  index(@Res() reply: FastifyReply): FastifyReply {
    return this.page(reply);
  }

  @Get('*')
  file(@Req() req: FastifyRequest, @Res() reply: FastifyReply): FastifyReply {
    const path = req.url.split('?')[0] ?? '';
    let rel: string;
    try {
      rel = decodeURIComponent(path.slice('/dashboard/'.length));
    } catch {
      throw new NotFoundException();
    }
    // An unknown API path is the ordinary unmatched route (404 "no route ...", or 405 on a known path).
    if (rel === 'api' || rel.startsWith('api/')) throw new NotFoundException();
    const asset = this.assets.file(rel);
    if (asset !== undefined && rel !== 'index.html') {
      return reply
        .header('content-type', asset.contentType)
        .header('cache-control', asset.immutable ? 'public, max-age=31536000, immutable' : 'no-cache')
        .header('x-content-type-options', 'nosniff')
        .send(asset.body);
    }
    // A client-side page (no file extension) gets the app; a missing file is 404.
    if (/\.[A-Za-z0-9]+$/.test(rel)) throw new NotFoundException();
    return this.page(reply);
  }

  private page(reply: FastifyReply): FastifyReply {
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
}
