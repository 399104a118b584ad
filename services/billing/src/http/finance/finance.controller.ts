import { Get, Inject, Query, Req, Res } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { OperatorAuthController } from '../operator-auth.guard';
import { CSV_HEADER, csvLine, exportFileName, ExportQueryDto, financeReportView, toExportQuery } from './finance.dto';
import { FinanceService } from '../../services/finance/finance.service';

/** Finance's operator routes (OPERATOR_PORT only). Both only read. */
@OperatorAuthController('operator')
export class FinanceController {
  constructor(@Inject(FinanceService) private readonly finance: FinanceService) {}

  /** Stripe vs ledger, usage vs ledger, balance = sum of entries, durable vs spendable: see docs/finance.md. */
  @Get('finance/reconciliation')
  async reconciliation(@Req() request: FastifyRequest): Promise<Record<string, unknown>> {
    return financeReportView(await this.finance.report(), request.id);
  }

  /** The ledger of a period as CSV, one row per entry, amounts in USD with 6 decimals. */
  @Get('ledger/export')
  async export(@Query() query: ExportQueryDto, @Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<string> {
    const parsed = toExportQuery(query);
    let csv = CSV_HEADER;
    let rows = 0;
    for await (const row of this.finance.exportEntries(parsed)) {
      csv += csvLine(row);
      rows += 1;
    }
    request.log.info({ rows, account_id: parsed.accountId }, 'ledger exported');
    void reply.header('content-type', 'text/csv; charset=utf-8').header('content-disposition', `attachment; filename="${exportFileName(parsed)}"`);
    return csv;
  }
}
