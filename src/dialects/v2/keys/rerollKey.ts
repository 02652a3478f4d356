import { MAX_EXPIRATION, rerollKey, type RerollKeyInput } from '../../../operations/keys/rerollKey';
import { object } from '../../../operations/schemas';
import { defineV2Route, open } from '../route';

/** keys.rerollKey speaks v2's shape in both dialects: the v2 route only wraps its answer. */
export const v2RerollKey = defineV2Route({
  name: 'keys.rerollKey',
  operation: rerollKey,
  // Unkey's spec leaves this body open: other fields are accepted and not read.
  input: open(
    object(
      {
        keyId: { type: 'string', minLength: 3, maxLength: 255, pattern: '^[a-zA-Z0-9_]+$' },
        expiration: { type: 'integer', minimum: 0, maximum: MAX_EXPIRATION },
      },
      ['keyId', 'expiration'],
    ),
  ),
  output: object({ keyId: { type: 'string' }, key: { type: 'string' } }, ['keyId', 'key']),
  toInput: (body: RerollKeyInput): RerollKeyInput => ({
    keyId: body.keyId,
    expiration: body.expiration,
  }),
  toBody: (rerolled) => ({ data: { keyId: rerolled.keyId, key: rerolled.key } }),
});
