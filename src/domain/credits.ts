export type RefillInterval = 'daily' | 'monthly';

/** When a key's usage credits are reset to `amount` (src/limiter/credits.ts computes it). */
export interface RefillConfig {
  interval: RefillInterval;
  amount: number;
  /** Monthly refills only: 1–31, default 1. */
  refillDay?: number;
}

/** The latest "set remaining" of a key record: its version (the nonce), value and time. */
export interface CreditReset {
  nonce: string;
  value: number;
  at: number;
}
