/** Micro-USD in one cent: Stripe charges whole cents, billing counts micro-USD. */
export const MICROS_PER_CENT = 10_000;
