import { Headers, HttpCode, Inject, Post, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { PublicController } from '@svc/http-edge';
import { StripeWebhookService } from '../../services/purchases/stripe-webhook.service';
import { rawBodyOf } from '../raw-body';

/** POST /v1/credits/webhook: no key (public); Stripe's signature on the raw body is the authentication. */
@PublicController('v1/credits')
export class StripeWebhookController {
  constructor(@Inject(StripeWebhookService) private readonly webhooks: StripeWebhookService) {}

  @Post('webhook')
  @HttpCode(200)
  async receive(
    @Headers('stripe-signature') signature: string | undefined,
    @Req() request: FastifyRequest,
  ): Promise<{ received: true; event_id: string; request_id: string }> {
    const result = await this.webhooks.handle(rawBodyOf(request), signature, request.id);
    return { received: true, event_id: result.eventId, request_id: request.id };
  }
}
