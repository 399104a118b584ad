import { auditActorOf } from '../audit-actor';
import { Body, HttpCode, Inject, Post, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { Caller, InternalAuthController } from '../internal-auth.guard';
import type { CallerIdentity } from '../internal-auth.guard';
import { CheckoutBodyDto, checkoutView, toCheckoutBody } from './checkout.dto';
import type { CheckoutView } from './checkout.dto';
import { CheckoutService } from '../../services/purchases/checkout.service';

/** POST /v1/credits/checkout, forwarded by the gateway for management keys. */
@InternalAuthController('v1/credits', { key: 'management' })
export class CheckoutController {
  constructor(@Inject(CheckoutService) private readonly checkout: CheckoutService) {}

  @Post('checkout')
  @HttpCode(201)
  async create(@Caller() caller: CallerIdentity, @Body() body: CheckoutBodyDto, @Req() request: FastifyRequest): Promise<CheckoutView> {
    // Validated before Stripe is asked: a bad amount is 400 on every deployment.
    const input = toCheckoutBody(body);
    const created = await this.checkout.create(caller.accountId, input, auditActorOf(caller, request));
    request.log.info({ account_id: caller.accountId, checkout_id: created.id, credit_micros: created.creditMicros }, 'checkout session created');
    return checkoutView(created, request.id);
  }
}
