import { invalidField, PreconditionFailedError } from '../../../errors';
import type { RemainingAnswer } from '../../../operations/keys/updateRemaining';
import { updateCredits, type UpdatePoolInput } from '../../../operations/identities/updateCredits';
import { LIMIT_MAX, object, text } from '../../../operations/schemas';
import { defineV2Route, widen } from '../route';
import { refillOf } from '../shapes';
import { identityHandle } from './shapes';

interface V2UpdatePoolBody {
  identity: string;
  operation: 'set' | 'increment' | 'decrement';
  value?: number | null;
}

/**
 * keyward's own identities.updateCredits in v2's terms, as v2's keys.updateCredits is a key's:
 * `set` to null drops the pool, a decrement past zero leaves zero, and incrementing or
 * decrementing an identity without a pool is a 400.
 */
export const v2UpdateIdentityCredits = defineV2Route({
  name: 'identities.updateCredits',
  operation: updateCredits,
  coreInput: widen(updateCredits.input, {
    op: { enum: ['increment', 'decrement', 'set', 'decrementToZero'] },
    value: { type: ['integer', 'null'] },
  }),
  input: object(
    {
      identity: text,
      operation: { type: 'string', enum: ['set', 'increment', 'decrement'] },
      value: { type: ['integer', 'null'], minimum: 0, maximum: LIMIT_MAX },
    },
    ['identity', 'operation'],
  ),
  output: object({ remaining: { type: ['integer', 'null'] }, refill: { type: 'object' } }, [
    'remaining',
  ]),
  toInput(body: V2UpdatePoolBody): UpdatePoolInput {
    const value = body.value ?? null;
    const op = body.operation === 'decrement' ? 'decrementToZero' : body.operation;
    return { ...identityHandle(body.identity), op, value };
  },
  refusal: (error) =>
    error instanceof PreconditionFailedError ? invalidField(['operation'], error.message) : error,
  toBody: (answer: RemainingAnswer) => {
    const { remaining, refill } = answer;
    return { data: { remaining, ...(refill ? { refill: refillOf(refill) } : {}) } };
  },
});
