import type { AuditChange } from '@svc/contracts';
import { AppError } from '@svc/errors';
import { microsToUsd } from '@svc/money';
import type { Micros } from '@svc/money';
import type { Transactions } from '../../db/transactions';
import type { AuditActor, AuditRepository } from '../../stores/audit.repository';
import type { AutoTopupRepository, AutoTopupState } from '../../stores/auto-topups.repository';
import type { AutoTopupChange, OwnerSettings, SettingsRepository, SettingsRow } from '../../stores/settings.repository';

export type { AutoTopupChange, AutoTopupState, SettingsRow };

/** A validated PATCH /v1/billing/settings in micro-USD: absent fields stay; a null threshold turns balance.low off. */
export interface SettingsChange {
  lowBalanceThresholdMicros?: Micros | null;
  autoTopup?: AutoTopupChange;
}

export interface SettingsStores {
  transactions: Transactions;
  settings: SettingsRepository;
  autoTopups: AutoTopupRepository;
  audit: AuditRepository;
}

const usd = (micros: Micros | null): number | null => (micros === null ? null : microsToUsd(micros));

/** The refusal of a merged automatic top-up that could never top up (checked under the row's lock). */
function checkAutoTopup(change: AutoTopupChange, current: OwnerSettings['autoTopup']): void {
  const enabled = change.enabled ?? current.enabled;
  const amount = change.amountMicros ?? current.amountMicros;
  const cap = change.monthlyCapMicros ?? current.monthlyCapMicros;
  const threshold = change.thresholdMicros ?? current.thresholdMicros;
  if (amount !== null && cap !== null && cap < amount) throw new AppError('invalid_request', 'auto_topup.monthly_cap_usd must be at least auto_topup.amount_usd');
  if (enabled) {
    if (threshold === null || amount === null || cap === null) {
      throw new AppError('invalid_request', 'auto_topup needs threshold_usd, amount_usd and monthly_cap_usd to be enabled');
    }
    if (!current.hasCard) {
      throw new AppError('invalid_request', 'auto_topup needs a saved card to be enabled: save one first (the dashboard\'s billing settings, "Save a card")');
    }
  }
}

/** The owner's fields that differ, in the API's terms (`auto_topup.amount_usd`, ...): what the audit entry records. */
function changesOf(before: OwnerSettings, change: SettingsChange): Record<string, AuditChange> {
  const changes: Record<string, AuditChange> = {};
  const note = (name: string, was: number | boolean | null, now: number | boolean | null): void => {
    if (was !== now) changes[name] = { before: was, after: now };
  };
  if (change.lowBalanceThresholdMicros !== undefined) note('low_balance_threshold_usd', usd(before.lowBalanceThresholdMicros), usd(change.lowBalanceThresholdMicros));
  const auto = change.autoTopup;
  if (auto !== undefined) {
    if (auto.enabled !== undefined) note('auto_topup.enabled', before.autoTopup.enabled, auto.enabled);
    if (auto.thresholdMicros !== undefined) note('auto_topup.threshold_usd', usd(before.autoTopup.thresholdMicros), usd(auto.thresholdMicros));
    if (auto.amountMicros !== undefined) note('auto_topup.amount_usd', usd(before.autoTopup.amountMicros), usd(auto.amountMicros));
    if (auto.monthlyCapMicros !== undefined) note('auto_topup.monthly_cap_usd', usd(before.autoTopup.monthlyCapMicros), usd(auto.monthlyCapMicros));
  }
  return changes;
}

/**
 * GET and PATCH /v1/billing/settings: the low-balance threshold and automatic top-up. A change
 * is checked, written and audited (`billing_settings.update`, the fields that changed) in one
 * transaction under the account's settings row lock.
 */
export class SettingsService {
  constructor(
    private readonly stores: SettingsStores,
    /** Whether automatic top-up can run at all (a Stripe secret key is set). */
    private readonly autoTopupAvailable: boolean,
  ) {}

  async get(accountId: string): Promise<{ settings: SettingsRow; autoTopup: AutoTopupState }> {
    return { settings: await this.stores.settings.get(accountId), autoTopup: await this.stores.autoTopups.state(accountId) };
  }

  async update(accountId: string, change: SettingsChange, actor: AuditActor): Promise<void> {
    const auto = change.autoTopup;
    if (change.lowBalanceThresholdMicros === undefined && auto === undefined) return;
    const { transactions, settings, audit } = this.stores;
    await transactions.run(async (tx) => {
      const before = await settings.lockForChange(tx, accountId);
      if (auto !== undefined) {
        checkAutoTopup(auto, before.autoTopup);
        if (auto.enabled === true && !this.autoTopupAvailable) throw new AppError('payment_disabled', 'automatic top-up is not available on this deployment');
        await settings.updateAutoTopup(tx, accountId, auto);
      }
      if (change.lowBalanceThresholdMicros !== undefined) await settings.setLowBalanceThreshold(tx, accountId, change.lowBalanceThresholdMicros);
      const changes = changesOf(before, change);
      if (Object.keys(changes).length > 0) await audit.append(tx, { accountId, actor, action: 'billing_settings.update', targetId: accountId, changes });
    });
  }
}
