/** An event as GET /v1/events answers it and as a webhook delivers it (the same JSON). */
export interface EventView {
  id: string;
  object: 'event';
  type: string;
  account_id: string;
  created_at: string;
  data: unknown;
}

export function eventView(row: { id: string; accountId: string; type: string; data: unknown; createdAt: Date }): EventView {
  return { id: row.id, object: 'event', type: row.type, account_id: row.accountId, created_at: row.createdAt.toISOString(), data: row.data };
}
