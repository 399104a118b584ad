import { Get, HttpCode, Inject, Post, Query, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { BacklogService, backlogView } from '../../services/backlog/backlog.service';
import { financeReportView } from './finance.dto';
import { FinanceService } from '../../services/finance/finance.service';
import { OperatorAuthController } from '../operator-auth.guard';
import { accountReportView, encodeAccountCursor, ReconciliationQueryDto, toReconciliationQuery } from './reconciliation.dto';
import { REPORT_ONLY, ReconciliationService } from '../../services/reconciliation/reconciliation.service';
import type { RepairOptions } from '../../services/reconciliation/reconciliation.service';

interface ReportBody {
  data: Record<string, unknown>[];
  next_cursor: string | null;
  /** With `include=finance`: Stripe vs purchases, settlements vs usage and ledger, balances vs entries. */
  finance?: Record<string, unknown>;
  request_id: string;
}

/**
 * Operator routes (OPERATOR_PORT only) of reconciliation and the settlement backlog.
 * GET reports and never writes; POST .../repair releases stale reservations and corrects
 * a drift confirmed by two consecutive locked reads.
 */
@OperatorAuthController('operator')
export class ReconciliationController {
  constructor(
    @Inject(ReconciliationService) private readonly reconciliation: ReconciliationService,
    @Inject(BacklogService) private readonly backlog: BacklogService,
    @Inject(FinanceService) private readonly finance: FinanceService,
  ) {}

  @Get('reconciliation')
  async report(@Query() query: ReconciliationQueryDto, @Req() request: FastifyRequest): Promise<ReportBody> {
    return this.run(query, REPORT_ONLY, request);
  }

  @Post('reconciliation/repair')
  @HttpCode(200)
  async repair(@Query() query: ReconciliationQueryDto, @Req() request: FastifyRequest): Promise<ReportBody> {
    const body = await this.run(query, { releaseStale: true, correctDrift: true }, request);
    request.log.info({ accounts: body.data.length }, 'operator reconciliation repair');
    return body;
  }

  @Get('ledger/backlog')
  async ledgerBacklog(@Req() request: FastifyRequest): Promise<Record<string, unknown>> {
    return { ...backlogView(await this.backlog.measure()), request_id: request.id };
  }

  private async run(query: ReconciliationQueryDto, options: RepairOptions, request: FastifyRequest): Promise<ReportBody> {
    const parsed = toReconciliationQuery(query);
    let body: ReportBody;
    if (parsed.accountId !== null) {
      const report = await this.reconciliation.reconcileAccount(parsed.accountId, options);
      body = { data: [accountReportView(report)], next_cursor: null, request_id: request.id };
    } else {
      const page = await this.reconciliation.reconcilePage(parsed.limit, parsed.afterId, options);
      body = {
        data: page.reports.map(accountReportView),
        next_cursor: page.nextAfterId === null ? null : encodeAccountCursor(page.nextAfterId),
        request_id: request.id,
      };
    }
    if (parsed.includeFinance) {
      const { request_id: _requestId, ...finance } = financeReportView(await this.finance.report(), request.id);
      body.finance = finance;
    }
    return body;
  }
}
