import { CACHE_STATUSES, isCanonicalFilters, isProvider, isSettlementRecord, RECORD_KINDS } from '@svc/contracts';
import type { SettledAttempt, SettlementRecord } from '@svc/contracts';

/**
 * A stream entry's outcome: a record billing can write, or why it cannot. `dropped`: what was
 * left out of a record that is still written (its filters, when they are not well formed: they
 * only describe the search, so they never keep its charge out of the ledger).
 */
export type ParsedSettlement = { ok: true; record: SettlementRecord; dropped?: string } | { ok: false; reason: string };

const SOURCES = new Set(['platform', 'byok']);
const STATUSES = new Set(['success', 'error', 'skipped']);
const CACHE_STATUS_SET: ReadonlySet<string> = new Set(CACHE_STATUSES);

function isCount(value: unknown): value is number {
  return typeof value === 'number' && Number.isSafeInteger(value) && value >= 0;
}

function attemptProblem(value: unknown, position: number): string | null {
  if (typeof value !== 'object' || value === null) return `attempt ${position} is not an object`;
  const a = value as Partial<Record<keyof SettledAttempt, unknown>>;
  if (a.index !== position) return `attempt ${position} has index ${String(a.index)}`;
  if (typeof a.model !== 'string' || a.model === '') return `attempt ${position} has no model`;
  if (!isProvider(a.provider)) return `attempt ${position} has an unknown provider`;
  if (typeof a.source !== 'string' || !SOURCES.has(a.source)) return `attempt ${position} has an unknown source`;
  if (typeof a.status !== 'string' || !STATUSES.has(a.status)) return `attempt ${position} has an unknown status`;
  if (a.error !== null && typeof a.error !== 'string') return `attempt ${position} has a bad error`;
  if (!isCount(a.reservedMicros) || !isCount(a.chargedMicros)) return `attempt ${position} has a bad amount`;
  if (typeof a.timedOut !== 'boolean') return `attempt ${position} has a bad timedOut`;
  if (!isCount(a.results)) return `attempt ${position} has a bad results count`;
  // Written by gateways with the result cache; absent from older records.
  if (a.cache !== undefined && (typeof a.cache !== 'string' || !CACHE_STATUS_SET.has(a.cache))) return `attempt ${position} has an unknown cache status`;
  if (a.savedMicros !== undefined && !isCount(a.savedMicros)) return `attempt ${position} has a bad savedMicros`;
  return null;
}

/**
 * Parses the JSON of one stream entry and checks it completely: a record that is written
 * must be exactly what the gateway charged. `accountId` is the stream's account; a record
 * of another account in it is refused rather than billed to the wrong account.
 */
export function parseSettlement(json: string | undefined, accountId: string): ParsedSettlement {
  if (json === undefined) return { ok: false, reason: 'entry has no record field' };
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return { ok: false, reason: 'record is not JSON' };
  }
  if (!isSettlementRecord(value)) return { ok: false, reason: 'record does not have the SettlementRecord shape' };
  if (value.accountId !== accountId) return { ok: false, reason: 'record belongs to another account' };
  if (value.requestId === '' || value.requestId.length > 255) return { ok: false, reason: 'record has a bad requestId' };
  if (value.keyId === '') return { ok: false, reason: 'record has no keyId' };
  if (!isCount(value.settledAtMs) || Number.isNaN(new Date(value.settledAtMs).getTime())) return { ok: false, reason: 'record has a bad settledAtMs' };
  if (!isCount(value.chargedMicros)) return { ok: false, reason: 'record has a bad chargedMicros' };
  let sum = 0;
  for (const [position, attempt] of value.attempts.entries()) {
    const problem = attemptProblem(attempt, position);
    if (problem !== null) return { ok: false, reason: problem };
    sum += (attempt as SettledAttempt).chargedMicros;
  }
  if (sum !== value.chargedMicros) return { ok: false, reason: 'chargedMicros is not the sum of the attempts' };
  // Written by gateways with extracts, on an extract's record only: absent, it is a search's.
  if (value.kind !== undefined && !(RECORD_KINDS as readonly unknown[]).includes(value.kind)) return { ok: false, reason: 'record has an unknown kind' };
  // Written by gateways with filters, only for a search that had some.
  if (value.filters !== undefined && !isCanonicalFilters(value.filters)) {
    const { filters: _dropped, ...rest } = value;
    return { ok: true, record: rest, dropped: 'its filters are not canonical search filters; written without them' };
  }
  return { ok: true, record: value };
}

/** The request id in an entry's JSON when it has one (for an entry that failed parseSettlement). */
export function requestIdOfEntry(json: string | undefined): string | null {
  if (json === undefined) return null;
  try {
    const parsed: unknown = JSON.parse(json);
    if (typeof parsed === 'object' && parsed !== null && 'requestId' in parsed && typeof parsed.requestId === 'string') return parsed.requestId;
  } catch {
    return null;
  }
  return null;
}
