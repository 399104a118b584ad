import { Inject, Injectable } from '@nestjs/common';
import { newId } from '@svc/ids';
import { DatabaseRepository } from '../db/database.repository';

export interface AccountRow {
  id: string;
  email: string | null;
  name: string | null;
  createdAt: Date;
}

@Injectable()
export class AccountsRepository {
  constructor(@Inject(DatabaseRepository) private readonly db: DatabaseRepository) {}

  async create(email: string | null, name: string | null): Promise<AccountRow> {
    return this.db.client.account.create({ data: { id: newId('account'), email, name } });
  }

  async find(id: string): Promise<AccountRow | null> {
    return this.db.client.account.findUnique({ where: { id } });
  }
}
