import type { AuditEntry } from '../domain/audit';
import type { CreditReset } from '../domain/credits';
import type { RedisClient as Redis } from '../redis/clients';
import { resultDecoder } from '../redis/scriptTable';
import { outboxArgument, type AuditOutbox } from './auditOutbox';
import { names } from './names';

/** The credits hash as stored: what is left, and which record "set remaining" it has applied. */
export interface CreditState {
  remaining: number;
  /** The refill point last applied (or when the last "set remaining" was applied). */
  lastRefillAt: number;
  appliedReset?: string;
}

export type CreditsUpdate = number | 'would_go_negative';
export type CreditsOp = 'set' | 'increment' | 'decrement' | 'decrementToZero';

const updateCreditsOutcome = resultDecoder('updateCredits');

/**
 * The credits hashes of keys and of identities' pools (names.credits(owner), tagged by the
 * owner's id like its record): read, and changed atomically with the verifications that spend
 * them, with the write's audit entry in the owner's outbox.
 */
export class CreditPools {
  constructor(
    private readonly redis: Redis,
    private readonly outbox: AuditOutbox,
  ) {}

  async read(owner: string): Promise<CreditState | undefined> {
    const [remaining, lastRefillAt, appliedReset] = await this.redis.hmget(
      names.credits(owner),
      'remaining',
      'lastRefillAt',
      'appliedReset',
    );
    if (remaining === null) return undefined;
    return {
      remaining: Number(remaining),
      lastRefillAt: Number(lastRefillAt ?? 0),
      ...(appliedReset !== null ? { appliedReset } : {}),
    };
  }

  /** After the record's latest "set remaining" and a passed refill point (update-credits-2.lua). */
  async update(
    ws: string,
    owner: string,
    op: CreditsOp,
    value: number,
    refill: { boundary: number; amount: number } | undefined,
    reset: CreditReset,
    audit: AuditEntry,
  ): Promise<CreditsUpdate> {
    const outbox = names.auditOutbox(owner);
    await this.outbox.register(outbox);
    const result = await this.redis.updateCreditsV2(
      names.credits(owner),
      outbox,
      op,
      value,
      refill?.boundary ?? '',
      refill?.amount ?? '',
      reset.nonce,
      reset.value,
      reset.at,
      outboxArgument(ws, audit),
    );
    const outcome = updateCreditsOutcome(result);
    if (outcome !== undefined) return outcome;
    await this.outbox.relayAfterWrite(outbox);
    // Any other answer is the new remaining.
    return result;
  }
}
