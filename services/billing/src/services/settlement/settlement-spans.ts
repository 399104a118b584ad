import type { SettlementRecord } from '@svc/contracts';
import { contextFromTraceparent, tracer } from '@svc/tracing';

const NONE = { end: (): void => undefined };

/**
 * Spans of the ledger write of each traced settlement record (children of the search's span
 * in the gateway, named by the record's traceparent); nothing when tracing is off or no
 * record carries one.
 */
export function settlementSpans(records: readonly SettlementRecord[]): { end(): void } {
  const t = tracer();
  if (t === null) return NONE;
  const spans = records
    .filter((record) => record.traceparent !== undefined)
    .map((record) => t.startSpan('ledger write settlement', { attributes: { 'svc.request_id': record.requestId } }, contextFromTraceparent(record.traceparent)));
  if (spans.length === 0) return NONE;
  return { end: () => spans.forEach((span) => span.end()) };
}
