-- AlterEnum
ALTER TYPE "ledger_entry_kind" ADD VALUE 'byok_fee';
