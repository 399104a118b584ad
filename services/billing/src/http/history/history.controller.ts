import { Get, Inject, Query, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { Caller, InternalAuthController } from '../internal-auth.guard';
import type { CallerIdentity } from '../internal-auth.guard';
import { DayRangeQueryDto, toRange } from '../usage/usage.dto';
import { PageQueryDto } from '@svc/http-edge';
import { toHistoryPage } from '../../common/pages';
import { HistoryService } from '../../services/history/history.service';
import type { ActivityView, DailySpendView, Page, PurchaseView } from '../../services/history/history.service';

/**
 * The account's history for the dashboard. Called by account-admin for a signed-in user
 * (docs/decisions/0015-dashboard-reaches-billing.md); the gateway does not forward these paths.
 */
@InternalAuthController('internal', { key: 'management' })
export class HistoryController {
  constructor(@Inject(HistoryService) private readonly history: HistoryService) {}

  @Get('activity')
  async activity(@Caller() caller: CallerIdentity, @Query() query: PageQueryDto, @Req() request: FastifyRequest): Promise<Page<ActivityView> & { request_id: string }> {
    const page = toHistoryPage(query);
    return { ...(await this.history.activity(caller.accountId, page)), request_id: request.id };
  }

  @Get('daily-spend')
  async dailySpend(@Caller() caller: CallerIdentity, @Query() query: DayRangeQueryDto, @Req() request: FastifyRequest): Promise<DailySpendView & { request_id: string }> {
    const range = toRange(query, new Date());
    return { ...(await this.history.dailySpend(caller.accountId, range)), request_id: request.id };
  }

  @Get('purchases')
  async purchases(@Caller() caller: CallerIdentity, @Query() query: PageQueryDto, @Req() request: FastifyRequest): Promise<Page<PurchaseView> & { request_id: string }> {
    const page = toHistoryPage(query);
    return { ...(await this.history.purchases(caller.accountId, page)), request_id: request.id };
  }
}
