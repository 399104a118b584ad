import { Inject, Injectable } from '@nestjs/common';
import { DatabaseRepository } from '../db/database.repository';
import { clientRow } from './oauth-rows';
import type { ClientKind, ClientRow } from './oauth-rows';

/** OAuth clients: registered dynamically, or known by their Client ID Metadata Document. */
@Injectable()
export class ClientsRepository {
  constructor(@Inject(DatabaseRepository) private readonly db: DatabaseRepository) {}

  async createClient(client: { id: string; kind: ClientKind; name: string; redirectUris: string[]; fetchedAt: Date | null }): Promise<ClientRow> {
    return clientRow(await this.db.client.oAuthClient.create({ data: client }));
  }

  /** A metadata-document client, inserted or refreshed from its latest fetch. */
  async upsertDocumentClient(id: string, name: string, redirectUris: string[], fetchedAt: Date): Promise<ClientRow> {
    const model = await this.db.client.oAuthClient.upsert({
      where: { id },
      create: { id, kind: 'metadata_document', name, redirectUris, fetchedAt },
      update: { name, redirectUris, fetchedAt },
    });
    return clientRow(model);
  }

  async findClient(id: string): Promise<ClientRow | null> {
    const model = await this.db.client.oAuthClient.findUnique({ where: { id } });
    return model === null ? null : clientRow(model);
  }
}
