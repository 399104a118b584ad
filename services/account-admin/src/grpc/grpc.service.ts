import { Inject, Injectable } from '@nestjs/common';
import { AppError } from '@svc/errors';
import { isId } from '@svc/ids';
import type { KeyLookup, LimitReset } from '@svc/contracts';
import { AccountsRepository } from '../accounts/accounts.repository';
import type { AccountRow } from '../accounts/accounts.repository';
import { APP_CONFIG } from '../config';
import type { AppConfig } from '../config';
import { KeyCacheService } from '../key-cache/key-cache.service';
import { KeysRepository } from '../keys/keys.repository';
import { toKeyRecord } from '../key-cache/key-record';
import { LOGGER } from '../logging/logger';
import { ProviderKeysService } from '../provider-keys/provider-keys.service';
import { TokensService } from '../oauth/tokens.service';
import type { Provider } from '@svc/contracts';
import type { ProviderKeyEnvelope } from '@svc/keys';
import type { Logger } from '../logging/logger';

const KEY_HASH = /^[0-9a-f]{64}$/;

/** The rules behind the gRPC methods; the transport lives in grpc-server.adapter.ts. */
@Injectable()
export class AccountAdminRpcService {
  constructor(
    @Inject(KeysRepository) private readonly keys: KeysRepository,
    @Inject(AccountsRepository) private readonly accounts: AccountsRepository,
    @Inject(KeyCacheService) private readonly cache: KeyCacheService,
    @Inject(ProviderKeysService) private readonly providerKeys: ProviderKeysService,
    @Inject(TokensService) private readonly oauthTokens: TokensService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** Postgres is the truth; the answer (record or miss marker) is written to Redis, version-checked. */
  async lookupKey(keyHash: string): Promise<KeyLookup> {
    if (!KEY_HASH.test(keyHash)) throw new AppError('invalid_request', 'key_hash must be 64 lowercase hex characters');
    const readAtMs = Date.now();
    const row = await this.keys.findByHash(keyHash);
    if (row === null) {
      // Not a key: an OAuth access token resolves to its grant's key (decision 0029); cached the same way.
      const token = await this.oauthTokens.lookupAccessToken(keyHash);
      if (token !== null && token.found) {
        await this.cache.fill(keyHash, token.record, readAtMs).catch((error: unknown) => this.fillFailed(error));
        return token;
      }
      await this.cache.fillMiss(keyHash, this.config.KEY_MISS_TTL_SECONDS, readAtMs).catch((error: unknown) => this.fillFailed(error));
      return { found: false };
    }
    const record = toKeyRecord(row);
    await this.cache.fill(keyHash, record, readAtMs).catch((error: unknown) => this.fillFailed(error));
    return { found: true, record };
  }

  async createAccount(email: string | null, name: string | null): Promise<AccountRow> {
    if (email !== null && email.length > 254) throw new AppError('invalid_request', 'email is too long');
    if (name !== null && name.length > 200) throw new AppError('invalid_request', 'name is too long');
    return this.accounts.create(email, name);
  }

  async getAccount(accountId: string): Promise<AccountRow> {
    const account = isId('account', accountId) ? await this.accounts.find(accountId) : null;
    if (account === null) throw new AppError('not_found', 'no such account');
    return account;
  }

  /** The account's provider-key envelopes (ciphertext only). An unknown account has none. */
  async getProviderKeys(accountId: string): Promise<{ provider: Provider; envelope: ProviderKeyEnvelope }[]> {
    if (!isId('account', accountId)) throw new AppError('invalid_request', 'account_id is not an account id');
    return this.providerKeys.envelopes(accountId);
  }

  /** Sets last_used_at from settled searches, at most once a minute per key (billing's ledger worker). */
  async markKeysUsed(uses: readonly { keyId: string; usedAtMs: number }[]): Promise<number> {
    if (uses.length > 10_000) throw new AppError('invalid_request', 'at most 10,000 uses per call');
    const valid = uses.filter((use) => isId('apiKey', use.keyId) && Number.isSafeInteger(use.usedAtMs) && use.usedAtMs > 0);
    return this.keys.markUsed(valid);
  }

  /** The limits of live API keys (billing's ledger worker evaluates key.limit.threshold with them). */
  async getKeyLimits(keyIds: readonly string[]): Promise<{ id: string; accountId: string; limitMicros: number; limitReset: LimitReset | null }[]> {
    if (keyIds.length > 10_000) throw new AppError('invalid_request', 'at most 10,000 key ids per call');
    return this.keys.limitsOf(keyIds.filter((id) => isId('apiKey', id)));
  }

  private fillFailed(error: unknown): void {
    this.logger.warn({ err: error instanceof Error ? error.message : String(error) }, 'key cache fill failed; answering from Postgres');
  }
}
