import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { AppError } from '@svc/errors';
import { AuditLogQueryDto, validateDto } from '@svc/http-edge';
import { repoRoot } from '@svc/test-kit';
import { KeyBodyDto, ListQueryDto } from '../../services/account-admin/src/keys/keys.dto';
import { ManagementKeyCreateDto, ManagementKeyUpdateDto } from '../../services/account-admin/src/keys/management-keys.dto';
import { PutProviderKeyDto } from '../../services/account-admin/src/provider-keys/provider-keys.dto';
import { ConfirmSignupDto, LoginDto, PasswordResetDto, PasswordResetRequestDto, SignupDto } from '../../services/account-admin/src/sessions/sessions.dto';
import { NotificationSettingDto } from '../../services/account-admin/src/notifications/notifications.dto';
import { CheckoutBodyDto } from '../../services/billing/src/http/checkout/checkout.dto';
import { ExportQueryDto, toExportQuery } from '../../services/billing/src/http/finance/finance.dto';
import { CreateAccountDto, GrantDto, LedgerListQueryDto } from '../../services/billing/src/http/operator/operator.dto';
import { ReconciliationQueryDto, toReconciliationQuery } from '../../services/billing/src/http/finance/reconciliation.dto';
import { DayRangeQueryDto, toUsageQuery, UsageQueryDto } from '../../services/billing/src/http/usage/usage.dto';

/**
 * What every DTO of account-admin and billing answers to a fixed set of good and bad values
 * of each field (the validation pipe, then the handler's conversion where it checks more),
 * pinned in dto-answers.golden.json. The file was written from the DTOs as
 * they were before their fields were declared through @svc/http-edge's field decorators
 * (decision 0020), so a change to any status message shows here. Rewrite it on purpose only:
 * DTO_ANSWERS_WRITE=1 npx jest test/lint/dto-answers.spec.ts
 */
const GOLDEN = join(repoRoot(), 'test/lint/dto-answers.golden.json');

const ID24 = 'A1b2C3d4E5f6G7h8I9j0K1l2';
const BODY_VALUES: unknown[] = [
  null, 0, 5, -1, 0.0000001, 0.000001, 0.5, 4.99, 10, 12.345, 10000, 10000.01, 1e9, 1e9 + 1, 1e6 + 1, Number.MAX_VALUE, true, false, [], {},
  '', ' ', 'x', 'a'.repeat(12), 'a'.repeat(100), 'a'.repeat(101), 'a'.repeat(200), 'a'.repeat(201), 'a'.repeat(254), 'a'.repeat(255), 'a'.repeat(500), 'a'.repeat(501), 'a'.repeat(512), 'a'.repeat(513), 'a'.repeat(1024), 'a'.repeat(1025), 'a'.repeat(2049),
  'daily', 'yearly', '2001-01-01T00:00:00Z', '2999-01-01T00:00:00Z', 'tomorrow', 'a@b', 'a@b.co', `${'a'.repeat(250)}@b.co`, 'http://localhost/ok', 'https://example.com/x', 'ftp://example.com', 'sk live', 'sk_live\n', 'é',
];
const QUERY_VALUES: string[] = [
  '', '0', '1', '20', '100', '101', 'x', '-1', '1.5', 'A'.repeat(513), 'abc_-', '2026-02-30', '2026-02-01', '2026-13-01', '2025-01-01', 'day', 'model', 'key', 'week',
  `key_${ID24}`, 'key_short', `key_${ID24}x`, `acct_${ID24}`, 'acct_short', `acct_${'a'.repeat(65)}`, 'finance', 'other',
];

interface Case {
  dto: new () => object;
  where: 'body' | 'query';
  base: Record<string, unknown>;
  fields: string[];
  /** The conversion the handler applies to the validated DTO, where it can refuse it too. */
  convert?: (dto: never) => unknown;
}

const NOW = new Date('2026-06-01T12:00:00Z');

const CASES: Record<string, Case> = {
  KeyBodyDto: { dto: KeyBodyDto, where: 'body', base: {}, fields: ['name', 'limit_usd', 'limit_reset', 'expires_at', 'disabled', 'allowed_models', 'allowed_ips'] },
  AuditLogQueryDto: { dto: AuditLogQueryDto, where: 'query', base: {}, fields: ['limit', 'cursor', 'action', 'actor_kind', 'actor_id', 'target_id', 'from', 'to'] },
  ListQueryDto: { dto: ListQueryDto, where: 'query', base: {}, fields: ['limit', 'cursor'] },
  ManagementKeyCreateDto: { dto: ManagementKeyCreateDto, where: 'body', base: {}, fields: ['name'] },
  ManagementKeyUpdateDto: { dto: ManagementKeyUpdateDto, where: 'body', base: {}, fields: ['name', 'disabled'] },
  PutProviderKeyDto: { dto: PutProviderKeyDto, where: 'body', base: { key: 'abc' }, fields: ['key'] },
  SignupDto: { dto: SignupDto, where: 'body', base: { email: 'a@b.co', password: 'a'.repeat(12) }, fields: ['email', 'password'] },
  LoginDto: { dto: LoginDto, where: 'body', base: { email: 'a@b.co', password: 'p' }, fields: ['email', 'password'] },
  ConfirmSignupDto: { dto: ConfirmSignupDto, where: 'body', base: { token: 'a'.repeat(43) }, fields: ['token'] },
  PasswordResetRequestDto: { dto: PasswordResetRequestDto, where: 'body', base: { email: 'a@b.co' }, fields: ['email'] },
  PasswordResetDto: { dto: PasswordResetDto, where: 'body', base: { token: 'a'.repeat(43), password: 'a'.repeat(12) }, fields: ['token', 'password'] },
  NotificationSettingDto: { dto: NotificationSettingDto, where: 'body', base: { email: true }, fields: ['email'] },
  CheckoutBodyDto: { dto: CheckoutBodyDto, where: 'body', base: { amount_usd: 10 }, fields: ['amount_usd', 'success_url', 'cancel_url'] },
  DayRangeQueryDto: { dto: DayRangeQueryDto, where: 'query', base: {}, fields: ['from', 'to'] },
  UsageQueryDto: { dto: UsageQueryDto, where: 'query', base: {}, fields: ['from', 'to', 'group_by', 'key_id'], convert: (dto: UsageQueryDto) => toUsageQuery(dto, NOW) },
  ExportQueryDto: { dto: ExportQueryDto, where: 'query', base: {}, fields: ['from', 'to', 'account_id'], convert: (dto: ExportQueryDto) => toExportQuery(dto, NOW) },
  CreateAccountDto: { dto: CreateAccountDto, where: 'body', base: {}, fields: ['email', 'name'] },
  GrantDto: { dto: GrantDto, where: 'body', base: { amount_usd: 1, reason: 'r' }, fields: ['amount_usd', 'reason'] },
  LedgerListQueryDto: { dto: LedgerListQueryDto, where: 'query', base: {}, fields: ['limit', 'cursor'] },
  ReconciliationQueryDto: { dto: ReconciliationQueryDto, where: 'query', base: {}, fields: ['limit', 'cursor', 'account_id', 'include'], convert: (dto: ReconciliationQueryDto) => toReconciliationQuery(dto) },
};

async function answer({ dto, where, convert }: Case, value: Record<string, unknown>): Promise<string> {
  try {
    const valid = await validateDto(dto, value, where);
    convert?.(valid as never);
    return 'ok';
  } catch (error) {
    if (error instanceof AppError) return `${error.code}: ${error.message}`;
    throw error;
  }
}

async function answers(): Promise<Record<string, Record<string, string>>> {
  const out: Record<string, Record<string, string>> = {};
  for (const [name, one] of Object.entries(CASES)) {
    const { where, base, fields } = one;
    const table: Record<string, string> = {};
    table['(base)'] = await answer(one, base);
    table['(unknown field)'] = await answer(one, { ...base, colour: where === 'body' ? 1 : 'red' });
    for (const field of fields) {
      const { [field]: _omitted, ...without } = base;
      table[`${field} absent`] = await answer(one, without);
      for (const value of where === 'body' ? BODY_VALUES : QUERY_VALUES) {
        table[`${field}=${JSON.stringify(value)}`] = await answer(one, { ...base, [field]: value });
      }
    }
    out[name] = table;
  }
  return out;
}

describe('the DTOs answer every value as pinned', () => {
  it('matches dto-answers.golden.json', async () => {
    const actual = await answers();
    if (process.env.DTO_ANSWERS_WRITE === '1') writeFileSync(GOLDEN, `${JSON.stringify(actual, null, 1)}\n`);
    expect(actual).toEqual(JSON.parse(readFileSync(GOLDEN, 'utf8')));
  });
});
