import { Body, Get, HttpCode, Inject, Param, Post, Query, Req } from '@nestjs/common';
import { findResearchModel, LIMITS, parseKeyFacts } from '@svc/contracts';
import type { ResearchStatus } from '@svc/contracts';
import { AppError } from '@svc/errors';
import { DeclareAccess } from '@svc/http-edge';
import { isId } from '@svc/ids';
import { usdToMicros } from '@svc/money';
import type { FastifyRequest } from 'fastify';
import { ResearchService } from '../../services/research/research.service';
import { researchRunView, researchSummaryView } from '../../services/research/research-view';
import { encodeCursor, toHistoryPage } from '../../common/pages';
import { Caller, InternalAuthController } from '../internal-auth.guard';
import type { CallerIdentity } from '../internal-auth.guard';
import { CreateResearchDto, ResearchListQueryDto } from './research.dto';

const IDEMPOTENCY_KEY = /^[\x20-\x7e]{1,255}$/;

/** `model` then `models`, each a research model once. */
function requestedModels(body: CreateResearchDto): string[] {
  const ids = [...(body.model === undefined ? [] : [body.model]), ...(body.models ?? [])];
  if (ids.length === 0) throw new AppError('invalid_request', 'model or models is required');
  if (ids.length > LIMITS.researchModels.max) throw new AppError('invalid_request', `at most ${LIMITS.researchModels.max} research models may be given`);
  for (const id of ids) {
    if (findResearchModel(id) === undefined) throw new AppError('unknown_model', `${JSON.stringify(id.slice(0, 64))} is not a research model (GET /v1/models lists them with kind "research")`);
  }
  if (new Set(ids).size !== ids.length) throw new AppError('invalid_request', 'a model is given twice');
  return ids;
}

/**
 * Research runs (docs/api.md, "Research runs"): created with an API key (the gateway forwards
 * it with the key's limit and fence), read and cancelled with either key (and by the
 * dashboard's session through account-admin). A run is the account's, whichever of its keys made it.
 */
@InternalAuthController('v1/research', { key: 'either' })
export class ResearchController {
  constructor(@Inject(ResearchService) private readonly research: ResearchService) {}

  /** 202 with the run (a repeat with the same Idempotency-Key and body: the first run, again 202). */
  @Post()
  @HttpCode(202)
  @DeclareAccess({ key: 'api' })
  async create(@Caller() caller: CallerIdentity, @Body() body: CreateResearchDto, @Req() request: FastifyRequest): Promise<object> {
    const facts = parseKeyFacts(request.headers);
    if (facts === null) throw new Error('the gateway sent malformed key facts');
    const header = request.headers['idempotency-key'];
    if (header !== undefined && (typeof header !== 'string' || !IDEMPOTENCY_KEY.test(header) || header.trim() === '')) {
      throw new AppError('invalid_request', 'Idempotency-Key must be 1 to 255 printable ASCII characters');
    }
    const created = await this.research.create({
      accountId: caller.accountId, keyId: caller.keyId, facts, input: body.input.trim(), models: requestedModels(body),
      maxCostMicros: usdToMicros(body.max_cost_usd), outputSchema: body.output_schema ?? null, metadata: body.metadata ?? null,
      idempotencyKey: typeof header === 'string' ? header : null,
    });
    if (!created.repeated) request.log.info({ account_id: caller.accountId, run_id: created.run.id, held_micros: created.run.heldMicros }, 'research run created');
    return { ...researchRunView(created.run), request_id: request.id };
  }

  @Get()
  async list(@Caller() caller: CallerIdentity, @Query() query: ResearchListQueryDto, @Req() request: FastifyRequest): Promise<object> {
    const page = await this.research.list(caller.accountId, toHistoryPage({ limit: query.limit, cursor: query.cursor }), (query.status ?? null) as ResearchStatus | null);
    const last = page.rows[page.rows.length - 1];
    return { data: page.rows.map(researchSummaryView), next_cursor: page.more && last !== undefined ? encodeCursor(last.mark) : null, request_id: request.id };
  }

  @Get(':id')
  async get(@Caller() caller: CallerIdentity, @Param('id') id: string, @Req() request: FastifyRequest): Promise<object> {
    if (!isId('researchRun', id)) throw new AppError('not_found', 'no such research run');
    return { ...researchRunView(await this.research.get(caller.accountId, id)), request_id: request.id };
  }

  /** 200 with the run: cancel_requested_at set while it still has to end; a run that had ended comes back unchanged (nothing changes). */
  @Post(':id/cancel')
  @HttpCode(200)
  async cancel(@Caller() caller: CallerIdentity, @Param('id') id: string, @Req() request: FastifyRequest): Promise<object> {
    if (!isId('researchRun', id)) throw new AppError('not_found', 'no such research run');
    const { run, accepted } = await this.research.cancel(caller.accountId, id);
    if (accepted) request.log.info({ account_id: caller.accountId, run_id: id }, 'research run cancel requested');
    return { ...researchRunView(run), request_id: request.id };
  }
}
