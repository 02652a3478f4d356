import { invalidField, PreconditionFailedError } from '../../../errors';
import {
  updateRemaining,
  type RemainingAnswer,
  type UpdateRemainingInput,
} from '../../../operations/keys/updateRemaining';
import { LIMIT_MAX, object } from '../../../operations/schemas';
import { defineV2Route, widen } from '../route';
import { refillOf } from '../shapes';
import { keyId } from './shapes';

interface V2UpdateCreditsBody {
  keyId: string;
  operation: 'set' | 'increment' | 'decrement';
  value?: number | null;
}

/**
 * keyward's updateRemaining as Unkey v2 answers it: `set` to null (or without a value) makes
 * usage unlimited and drops the refill, a decrement past zero leaves zero, and incrementing or
 * decrementing a key without credits is a 400 (keyward's v1 answers 412).
 */
export const v2UpdateCredits = defineV2Route({
  name: 'keys.updateCredits',
  operation: updateRemaining,
  coreInput: widen(updateRemaining.input, {
    op: { enum: ['increment', 'decrement', 'set', 'decrementToZero'] },
    value: { type: ['integer', 'null'] },
  }),
  input: object(
    {
      keyId,
      operation: { type: 'string', enum: ['set', 'increment', 'decrement'] },
      value: { type: ['integer', 'null'], minimum: 0, maximum: LIMIT_MAX },
    },
    ['keyId', 'operation'],
  ),
  output: object({ remaining: { type: ['integer', 'null'] }, refill: { type: 'object' } }, [
    'remaining',
  ]),
  toInput(body: V2UpdateCreditsBody): UpdateRemainingInput {
    const value = body.value ?? null;
    const op = body.operation === 'decrement' ? 'decrementToZero' : body.operation;
    return { keyId: body.keyId, op, value };
  },
  refusal: (error) =>
    error instanceof PreconditionFailedError ? invalidField(['operation'], error.message) : error,
  toBody: (answer: RemainingAnswer) => {
    const { remaining, refill } = answer;
    return { data: { remaining, ...(refill ? { refill: refillOf(refill) } : {}) } };
  },
});
