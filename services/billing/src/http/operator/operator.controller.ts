import { operatorActorOf } from '../audit-actor';
import { Body, Get, Headers, HttpCode, Inject, Param, Post, Query, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { OperatorAuthController } from '../operator-auth.guard';
import { LedgerService } from '../../services/ledger/ledger.service';
import { CreateAccountDto, encodeCursor, GrantDto, LedgerListQueryDto, ledgerEntryView, parseIdempotencyKey, toCreateAccountBody, toGrantBody, toListQuery } from './operator.dto';
import type { LedgerEntryView } from './operator.dto';

/**
 * The operator API (docs/api.md section 12), served only on OPERATOR_PORT. Reconciliation
 * and the settlement backlog are in reconciliation/reconciliation.controller.ts.
 */
@OperatorAuthController('operator')
export class OperatorController {
  constructor(@Inject(LedgerService) private readonly ledger: LedgerService) {}

  @Post('accounts')
  @HttpCode(201)
  async createAccount(@Body() body: CreateAccountDto, @Req() request: FastifyRequest): Promise<{ account_id: string; request_id: string }> {
    const input = toCreateAccountBody(body);
    const created = await this.ledger.createAccount(input);
    request.log.info({ account_id: created.accountId }, 'operator created an account');
    return { account_id: created.accountId, request_id: request.id };
  }

  @Post('accounts/:account_id/grants')
  @HttpCode(201)
  async grant(
    @Param('account_id') accountId: string,
    @Body() body: GrantDto,
    @Headers('idempotency-key') idempotencyKey: string | undefined,
    @Req() request: FastifyRequest,
  ): Promise<LedgerEntryView & { request_id: string }> {
    const input = toGrantBody(body);
    const key = parseIdempotencyKey(idempotencyKey);
    const entry = await this.ledger.grant({ accountId, ...input, idempotencyKey: key, requestId: request.id, audit: operatorActorOf(request) });
    request.log.info({ account_id: accountId, ledger_entry_id: entry.id, amount_micros: input.amountMicros }, 'operator grant');
    return { ...ledgerEntryView(entry), request_id: request.id };
  }

  @Get('accounts/:account_id/ledger')
  async ledgerOf(
    @Param('account_id') accountId: string,
    @Query() query: LedgerListQueryDto,
    @Req() request: FastifyRequest,
  ): Promise<{ data: LedgerEntryView[]; next_cursor: string | null; request_id: string }> {
    const { limit, afterId } = toListQuery(query);
    const page = await this.ledger.listLedger(accountId, limit, afterId);
    return {
      data: page.entries.map(ledgerEntryView),
      next_cursor: page.nextAfterId === null ? null : encodeCursor(page.nextAfterId),
      request_id: request.id,
    };
  }
}
