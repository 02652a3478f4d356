import type { IdentityChanges } from '../../domain/identity';
import { invalidField, PreconditionFailedError } from '../../errors';
import { auditEntry } from '../audit';
import { creditSpend } from '../keys/credits';
import { remainingAnswer, type RemainingAnswer } from '../keys/updateRemaining';
import { defineOperation } from '../operation';
import { LIMIT_MAX, object } from '../schemas';
import { poolChanges } from './credits';
import {
  exactlyOneIdentity,
  identityNotFound,
  loadIdentity,
  type IdentityHandle,
} from './loadIdentity';
import { identityHandles } from './schemas';

export type UpdatePoolInput = IdentityHandle & {
  op: 'set' | 'increment' | 'decrement' | 'decrementToZero';
  /** null (`set` only): the pool is dropped and its keys spend only their own credits. */
  value: number | null;
};

/**
 * keyward's own (Unkey's users asked for it, unkeyed/unkey#4106): sets, increments or decrements
 * an identity's credit pool, atomically with the verifications of its keys, as keys.updateRemaining
 * does a key's credits. `set` gives an identity without a pool one.
 */
export const updateCredits = defineOperation({
  name: 'identities.updateCredits',
  method: 'POST',
  plane: 'management',
  summary:
    "Sets, increments or decrements an identity's pool of usage credits, which its keys spend from, atomically with verifications.",
  permission: { resource: 'identity', action: 'update_identity', scope: 'resource' },
  input: object(
    {
      ...identityHandles,
      op: { type: 'string', enum: ['increment', 'decrement', 'set'] },
      value: { type: 'integer', minimum: 0, maximum: LIMIT_MAX },
    },
    ['op', 'value'],
  ),
  output: object({ remaining: { type: ['integer', 'null'] }, refill: { type: 'object' } }, [
    'remaining',
  ]),
  uses: ['identities', 'now'],
  check(input: UpdatePoolInput) {
    exactlyOneIdentity(input);
    if (input.value === null && input.op !== 'set') {
      throw invalidField(['value'], 'is required to increment or decrement');
    }
  },
  async handle(deps, caller, input: UpdatePoolInput): Promise<RemainingAnswer> {
    const ws = caller.rootKey.workspaceId;
    const identity = await loadIdentity(deps, caller, input, 'update_identity');
    const now = deps.now();
    const audit = auditEntry(caller, 'identities.updateCredits', 'identity', identity.id, {
      externalId: identity.externalId,
      op: input.op,
      value: input.value,
    });
    const spend = creditSpend(now, identity, 0);
    if (input.value === null || !spend) {
      if (input.value !== null && input.op !== 'set') {
        throw new PreconditionFailedError(
          `identity ${identity.id} has no credit pool: set one before incrementing or decrementing it`,
        );
      }
      // Dropping the pool, or giving one: a write of the record and the pool in one step.
      const credits: IdentityChanges['credits'] =
        input.value === null ? null : poolChanges({ remaining: input.value }, identity, now);
      if (credits === undefined) return { remaining: null };
      const updated = await deps.identities.update(ws, identity.id, { credits }, now, audit);
      if (!updated) throw identityNotFound(input);
      return input.value === null ? { remaining: null } : { remaining: input.value };
    }
    const result = await deps.identities.updateCredits(
      ws,
      identity.id,
      input.op,
      input.value,
      spend.refill,
      spend.reset,
      audit,
    );
    return remainingAnswer(result, identity.credits?.refill);
  },
});
