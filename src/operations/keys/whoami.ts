import { isGranted, permissionFor } from '../../auth/permissions';
import { NotFoundError } from '../../errors';
import { checksumVerdict } from '../../keys/keyFormat';
import { hashKey } from '../../keys/keyMaterial';
import { defineOperation } from '../operation';
import { keyOutput, object, plaintextKey } from '../schemas';
import type { KeyView } from '../views';
import { viewWithCredits } from './credits';

/**
 * The key a plaintext belongs to, as keys.getKey shows it. A key the root key may not read is
 * not found, like one that does not exist: the answer must not tell a guesser which it was.
 */
export const whoami = defineOperation({
  name: 'keys.whoami',
  method: 'POST',
  plane: 'management',
  summary: 'The key a plaintext belongs to, as keys.getKey shows it.',
  permission: { resource: 'api', action: 'read_key', scope: 'resource' },
  input: object({ key: plaintextKey }, ['key']),
  output: keyOutput,
  uses: ['keys', 'directory', 'now'],
  async handle(deps, caller, input: { key: string }): Promise<KeyView> {
    const ws = caller.rootKey.workspaceId;
    // A wrong checksum is no key keyward issued: the same 404, without reading the primary.
    const key =
      checksumVerdict(input.key) === 'wrong'
        ? undefined
        : await deps.keys.findByHash(ws, hashKey(input.key), { lastUse: true });
    if (
      !key ||
      !(await deps.directory.liveApi(ws, key.apiId)) ||
      !isGranted(caller.rootKey.permissions, permissionFor('api', key.apiId, 'read_key'))
    ) {
      throw new NotFoundError('key', 'key not found');
    }
    caller.logFields.keyId = key.id;
    return viewWithCredits(deps, key);
  },
});
