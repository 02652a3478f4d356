import { NotFoundError } from '../../errors';
import { defineOperation } from '../operation';
import {
  empty,
  environment,
  expires,
  id,
  meta,
  nullable,
  ratelimit,
  refill,
  remaining,
  text,
} from '../schemas';
import { toKeyFields, type KeyFieldsInput } from './fields';
import { loadKey } from './loadKey';

export const updateKey = defineOperation({
  name: 'keys.updateKey',
  method: 'POST',
  plane: 'management',
  summary: 'Changes a key: an absent field is unchanged, null clears it.',
  permission: { resource: 'api', action: 'update_key', scope: 'resource' },
  input: {
    type: 'object',
    required: ['keyId'],
    properties: {
      keyId: id,
      name: nullable(text),
      ownerId: nullable(text),
      externalId: nullable(text),
      meta: nullable(meta),
      expires: nullable(expires),
      environment: nullable(environment),
      ratelimit: { ...ratelimit, type: ['object', 'null'] },
      // 0 is allowed here, as updateRemaining's `set 0` is: a key can be used up on purpose.
      remaining: nullable({ ...remaining, minimum: 0 }),
      refill: { ...refill, type: ['object', 'null'] },
      enabled: { type: 'boolean' },
    },
  },
  output: empty,
  uses: ['keys', 'directory', 'now'],
  async handle(
    deps,
    caller,
    input: KeyFieldsInput & { keyId: string },
  ): Promise<Record<string, never>> {
    const key = await loadKey(deps, caller, input.keyId, 'update_key');
    const now = deps.now();
    const fields = toKeyFields(input, now, key.credits !== undefined);
    // One atomic record write, a new `remaining` included (the credits hash applies it when next
    // used); a hash left behind by `remaining: null` is merely tidied up afterwards.
    const updated = await deps.keys.update(key.workspaceId, key.id, fields, now);
    if (!updated) throw new NotFoundError(`key ${input.keyId} not found`);
    if (input.remaining === null) await deps.keys.deleteCredits(key.id);
    return {};
  },
});
