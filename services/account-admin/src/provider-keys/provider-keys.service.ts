import type { AuditActor } from '../audit/audit';
import { Inject, Injectable } from '@nestjs/common';
import { isProvider } from '@svc/contracts';
import type { Provider } from '@svc/contracts';
import { AppError } from '@svc/errors';
import { encryptProviderKey, providerKeyLabel } from '@svc/keys';
import type { KekRing, ProviderKeyEnvelope } from '@svc/keys';
import { APP_CONFIG } from '../config';
import type { AppConfig } from '../config';
import { KeyCacheRepository } from '../key-cache/key-cache.repository';
import { LOGGER } from '../logging/logger';
import type { Logger } from '../logging/logger';
import { ProviderKeysRepository } from './provider-keys.repository';
import type { ProviderKeyRow } from './provider-keys.repository';

/** A provider key as the API shows it: never the key, only its label. */
export interface ProviderKeyView {
  provider: Provider;
  label: string;
  created_at: string;
  updated_at: string;
}

export function providerKeyView(row: ProviderKeyRow): ProviderKeyView {
  return { provider: row.provider, label: row.label, created_at: row.createdAt.toISOString(), updated_at: row.updatedAt.toISOString() };
}

/** A change's answer and the account whose provider keys changed (the gateway drops its copy). */
export interface ProviderKeyChange<T> {
  value: T;
  changedAccountId: string | null;
}

/**
 * The provider-key rules of /v1/provider-keys and the dashboard's mirror: the provider is one
 * of the three (400 unknown_provider), the deployment allows BYOK (503 byok_disabled), the
 * key is stored only as an envelope under the current KEK, and a change is announced to
 * every gateway after it committed.
 */
@Injectable()
export class ProviderKeysService {
  constructor(
    @Inject(ProviderKeysRepository) private readonly repository: ProviderKeysRepository,
    @Inject(KeyCacheRepository) private readonly cache: KeyCacheRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(LOGGER) private readonly logger: Logger,
  ) {}

  /** The checks every endpoint makes, in this order, before it touches anything. */
  private gate(provider: string | undefined): { provider: Provider; ring: KekRing } {
    if (!isProvider(provider)) throw new AppError('unknown_provider', 'provider must be one of brave, exa, tavily');
    const ring = this.ring();
    return { provider, ring };
  }

  private ring(): KekRing {
    const ring = this.config.kekRing;
    if (!this.config.BYOK_ENABLED || ring === null) throw new AppError('byok_disabled', 'provider keys cannot be stored on this deployment');
    return ring;
  }

  async put(accountId: string, rawProvider: string | undefined, key: string, actor?: AuditActor): Promise<ProviderKeyChange<ProviderKeyView>> {
    const { provider, ring } = this.gate(rawProvider);
    const envelope = encryptProviderKey(ring, accountId, provider, key);
    const { row, created } = await this.repository.upsert(accountId, provider, envelope, providerKeyLabel(key), actor);
    this.logger.info({ account_id: accountId, provider, kek_id: envelope.kekId, created }, created ? 'provider key stored' : 'provider key replaced');
    await this.announce(accountId);
    return { value: providerKeyView(row), changedAccountId: accountId };
  }

  async get(accountId: string, rawProvider: string | undefined): Promise<ProviderKeyView> {
    const { provider } = this.gate(rawProvider);
    const row = await this.repository.find(accountId, provider);
    if (row === null) throw new AppError('not_found', `no ${provider} provider key is stored for this account`);
    return providerKeyView(row);
  }

  async list(accountId: string): Promise<{ data: ProviderKeyView[]; next_cursor: null }> {
    this.ring();
    const rows = await this.repository.list(accountId);
    return { data: rows.map(providerKeyView), next_cursor: null };
  }

  async remove(accountId: string, rawProvider: string | undefined, actor?: AuditActor): Promise<ProviderKeyChange<{ provider: Provider; deleted: true }>> {
    const { provider } = this.gate(rawProvider);
    if (!(await this.repository.remove(accountId, provider, actor))) throw new AppError('not_found', `no ${provider} provider key is stored for this account`);
    this.logger.info({ account_id: accountId, provider }, 'provider key deleted');
    await this.announce(accountId);
    return { value: { provider, deleted: true }, changedAccountId: accountId };
  }

  /** The account's envelopes for the gateway (gRPC GetProviderKeys): ciphertext only; empty when BYOK is off. */
  async envelopes(accountId: string): Promise<{ provider: Provider; envelope: ProviderKeyEnvelope }[]> {
    if (!this.config.BYOK_ENABLED) return [];
    const rows = await this.repository.list(accountId);
    return rows.map((row) => ({ provider: row.provider, envelope: row.envelope }));
  }

  /** After commit: every gateway drops its copy (a lost message is bounded by the gateway's cache lifetime). */
  private async announce(accountId: string): Promise<void> {
    try {
      await this.cache.publishProviderKeyChange({ v: 1, accountId });
    } catch (error) {
      this.logger.warn({ account_id: accountId, err: error instanceof Error ? error.message : String(error) }, 'provider key change not published; gateways see it when their copy expires');
    }
  }
}
