import { int } from '@svc/config';

/** Recovery settings of the ledger worker: part of its environment (LEDGER_WORKER_ENV), read once with it. */
export const HYDRATION_ENV = {
  /** How long after the epoch was (re)created a cold account with history waits before it is rebuilt (gateways re-send retained records meanwhile; they check every 500 ms). */
  HYDRATION_GRACE_MS: int({ default: 3_000, min: 0, max: 600_000 }),
  /** How often the worker reads the epoch and hydrates wanted accounts. */
  HYDRATION_INTERVAL_MS: int({ default: 250, min: 10, max: 60_000 }),
};
