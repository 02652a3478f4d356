export type RatelimitType = 'fast' | 'consistent';

/** The stored, canonical form of a key's rate limit. */
export interface RatelimitConfig {
  type: RatelimitType;
  limit: number;
  refillRate: number;
  refillInterval: number;
}
