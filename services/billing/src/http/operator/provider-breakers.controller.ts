import { Body, Get, HttpCode, Inject, Param, Put, Req } from '@nestjs/common';
import { BREAKER_MODES, PROVIDERS, isProvider } from '@svc/contracts';
import type { BreakerMode, Provider } from '@svc/contracts';
import { AppError } from '@svc/errors';
import { IsDefined, IsIn } from 'class-validator';
import type { FastifyRequest } from 'fastify';
import { ProviderBreakers } from '../../services/provider-breakers/provider-breakers';
import type { BreakerView } from '../../services/provider-breakers/provider-breakers';
import { OperatorAuthController } from '../operator-auth.guard';

/** PUT /operator/providers/{provider}/breaker: `{"mode": "open" | "closed" | "auto"}`. */
export class BreakerModeDto {
  @IsDefined({ message: 'mode must be one of open, closed, auto' })
  @IsIn(BREAKER_MODES as unknown as string[], { message: 'mode must be one of open, closed, auto' })
  mode!: BreakerMode;
}

function providerOf(raw: string): Provider {
  if (!isProvider(raw)) throw new AppError('unknown_provider', `unknown provider "${raw}"; one of ${PROVIDERS.join(', ')}`);
  return raw;
}

/** Operator routes (OPERATOR_PORT only) of the providers' breakers. */
@OperatorAuthController('operator/providers')
export class ProviderBreakersController {
  constructor(@Inject(ProviderBreakers) private readonly breakers: ProviderBreakers) {}

  @Get()
  async list(@Req() request: FastifyRequest): Promise<{ data: BreakerView[]; request_id: string }> {
    return { data: await this.breakers.list(), request_id: request.id };
  }

  @Put(':provider/breaker')
  @HttpCode(200)
  async set(@Param('provider') raw: string, @Body() body: BreakerModeDto, @Req() request: FastifyRequest): Promise<BreakerView & { request_id: string }> {
    const provider = providerOf(raw);
    const view = await this.breakers.set(provider, body.mode);
    request.log.warn({ provider, mode: body.mode }, 'operator set a provider breaker');
    return { ...view, request_id: request.id };
  }
}
