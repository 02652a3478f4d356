import { getKey } from '../../../operations/keys/getKey';
import { object } from '../../../operations/schemas';
import { defineV2Route } from '../route';
import { v2Key } from '../shapes';
import { keyId } from './shapes';

export const v2GetKey = defineV2Route({
  name: 'keys.getKey',
  operation: getKey,
  input: object({ keyId, decrypt: { type: 'boolean' } }, ['keyId']),
  output: { type: 'object' },
  toInput: (body: { keyId: string; decrypt?: boolean }) => ({
    keyId: body.keyId,
    ...(body.decrypt !== undefined ? { decrypt: body.decrypt } : {}),
  }),
  toBody: (view) => ({ data: v2Key(view) }),
});
