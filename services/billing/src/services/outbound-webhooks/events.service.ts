import type { EventRow, EventsRepository } from '../../stores/events.repository';
import type { HistoryPage } from '../../common/pages';

/** The account's events as GET /v1/events reads them (newest first). */
export class EventsService {
  constructor(private readonly events: EventsRepository) {}

  /** One page (`page.limit`, after `page.after`), and whether more follow. */
  async list(accountId: string, page: HistoryPage, type: string | null): Promise<{ rows: EventRow[]; more: boolean }> {
    const rows = await this.events.list(accountId, page.limit + 1, page.after, type);
    return { rows: rows.slice(0, page.limit), more: rows.length > page.limit };
  }

  get(accountId: string, id: string): Promise<EventRow | null> {
    return this.events.get(accountId, id);
  }
}
