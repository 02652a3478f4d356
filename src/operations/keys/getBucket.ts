import { defineOperation } from '../operation';
import { object } from '../schemas';
import { creditSpend } from './credits';
import { keyIdInput, loadKey } from './loadKey';

interface BucketState {
  ratelimit?: { type: string; limit: number; remaining: number; reset: number };
  remaining?: number;
}

/**
 * keyward's own addition: the live bucket and credits of a key, read without spending. A fast
 * bucket is the one in this node's local Redis.
 */
export const getBucket = defineOperation({
  name: 'keys.getBucket',
  method: 'GET',
  plane: 'management',
  summary: "keyward's own: a key's live bucket and credits, read without spending.",
  permission: { resource: 'api', action: 'read_key', scope: 'resource' },
  input: keyIdInput,
  output: object({
    ratelimit: object(
      {
        type: { type: 'string', enum: ['fast', 'consistent'] },
        limit: { type: 'integer' },
        remaining: { type: 'integer' },
        reset: { type: 'integer' },
      },
      ['type', 'limit', 'remaining', 'reset'],
    ),
    remaining: { type: 'integer' },
  }),
  uses: ['keys', 'directory', 'limiter', 'now'],
  async handle(deps, caller, input: { keyId: string }): Promise<BucketState> {
    const key = await loadKey(deps, caller, input.keyId, 'read_key');
    if (!key.ratelimit && !key.credits) return {};
    const decision = await deps.limiter.check(
      key.id,
      key.ratelimit,
      0,
      creditSpend(deps.now(), key, 0),
    );
    return {
      ...(key.ratelimit
        ? {
            ratelimit: {
              type: key.ratelimit.type,
              limit: decision.limit,
              remaining: decision.remaining,
              reset: decision.reset,
            },
          }
        : {}),
      ...(decision.creditsRemaining !== undefined ? { remaining: decision.creditsRemaining } : {}),
    };
  },
});
