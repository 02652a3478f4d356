import type { RefillConfig } from '../../domain/credits';
import { invalidField, NotFoundError, PreconditionFailedError } from '../../errors';
import { defineOperation } from '../operation';
import { id, LIMIT_MAX, object } from '../schemas';
import { creditSpend } from './credits';
import { loadKey } from './loadKey';
import { auditEntry } from '../audit';
import type { CreditsOp, CreditsUpdate } from '../../store/keyStore';

export interface RemainingAnswer {
  /** null: unlimited usage (only a `set` to null answers it). */
  remaining: number | null;
  /** The key's refill, beside the count (Unkey v2's credits answer shows both; v1's did not). */
  refill?: RefillConfig;
}

/**
 * v1's schema takes the first three ops and a number. Unkey v2's updateCredits also reaches
 * `decrementToZero` (a decrement past zero leaves zero) and `set` to null (unlimited usage),
 * which its route's schema allows (src/dialects/v2/keys/updateRemaining.ts).
 */
export interface UpdateRemainingInput {
  keyId: string;
  op: CreditsOp;
  value: number | null;
}

export const updateRemaining = defineOperation({
  name: 'keys.updateRemaining',
  method: 'POST',
  plane: 'management',
  summary: "Sets, increments or decrements a key's usage credits, atomically with verifications.",
  permission: { resource: 'api', action: 'update_key', scope: 'resource' },
  input: object(
    {
      keyId: id,
      op: { type: 'string', enum: ['increment', 'decrement', 'set'] },
      value: { type: 'integer', minimum: 0, maximum: LIMIT_MAX },
    },
    ['keyId', 'op', 'value'],
  ),
  output: object({ remaining: { type: ['integer', 'null'] }, refill: { type: 'object' } }, [
    'remaining',
  ]),
  uses: ['keys', 'directory', 'now'],
  // Only `set` can mean "unlimited": judged before the permission, in both dialects.
  check(input: UpdateRemainingInput) {
    if (input.value === null && input.op !== 'set') {
      throw invalidField(['value'], 'is required to increment or decrement');
    }
  },
  async handle(deps, caller, input: UpdateRemainingInput): Promise<RemainingAnswer> {
    const key = await loadKey(deps, caller, input.keyId, 'update_key');
    const now = deps.now();
    const spend = creditSpend(now, key, 0);
    const audit = auditEntry(caller, 'keys.updateRemaining', 'key', key.id, {
      op: input.op,
      value: input.value,
    });
    if (input.value === null) {
      // Unlimited usage, the refill gone with the count: updateKey's `remaining: null`.
      if (!(await deps.keys.update(key.workspaceId, key.id, { credits: null }, now, audit))) {
        throw new NotFoundError('key', `key ${key.id} not found`);
      }
      return { remaining: null };
    }
    if (!spend) {
      if (input.op !== 'set') {
        throw new PreconditionFailedError(
          `key ${key.id} has unlimited usage: set remaining before incrementing or decrementing it`,
        );
      }
      // "set" gives a key with unlimited usage its credits: one record write, as updateKey does.
      const fields = { credits: { resetTo: input.value } };
      if (!(await deps.keys.update(key.workspaceId, key.id, fields, now, audit))) {
        throw new NotFoundError('key', `key ${key.id} not found`);
      }
      return { remaining: input.value };
    }
    const result = await deps.keys.updateCredits(
      key.workspaceId,
      key.id,
      input.op,
      input.value,
      spend.refill,
      spend.reset,
      audit,
    );
    return remainingAnswer(result, key.credits?.refill);
  },
});

/**
 * What a change of credits answers (a key's, or an identity's pool): the new count beside the
 * refill, or the 400 of a decrement below zero, which changed nothing.
 */
export function remainingAnswer(
  result: CreditsUpdate,
  refill: RefillConfig | undefined,
): RemainingAnswer {
  if (result === 'would_go_negative') {
    throw invalidField(['value'], 'decrementing by this much would make remaining negative');
  }
  return refill ? { remaining: result, refill } : { remaining: result };
}
