import { deleteKey } from '../../../operations/keys/deleteKey';
import { object } from '../../../operations/schemas';
import { defineV2Route } from '../route';
import { keyId } from './shapes';

/**
 * keyward's deletion is always v2's `permanent: true`: the record, its hash and what it holds are
 * erased at once. `permanent: false` (the client's default) deletes it the same way, since a
 * soft-deleted key could only be recovered in Unkey's database, never through the API.
 */
export const v2DeleteKey = defineV2Route({
  name: 'keys.deleteKey',
  operation: deleteKey,
  input: object({ keyId, permanent: { type: 'boolean' } }, ['keyId']),
  output: object({}),
  toInput: (body: { keyId: string; permanent?: boolean }) => ({ keyId: body.keyId }),
  toBody: () => ({ data: {} }),
});
