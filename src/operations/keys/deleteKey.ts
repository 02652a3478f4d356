import { NotFoundError } from '../../errors';
import { defineOperation } from '../operation';
import { empty } from '../schemas';
import { keyIdInput, loadKey } from './loadKey';
import { auditEntry } from '../audit';

export const deleteKey = defineOperation({
  name: 'keys.deleteKey',
  method: 'POST',
  plane: 'management',
  summary: 'Deletes a key: it stops verifying on every node within 100 ms.',
  permission: { resource: 'api', action: 'delete_key', scope: 'resource' },
  input: keyIdInput,
  output: empty,
  uses: ['keys', 'directory'],
  async handle(deps, caller, input: { keyId: string }): Promise<Record<string, never>> {
    const key = await loadKey(deps, caller, input.keyId, 'delete_key');
    if (
      !(await deps.keys.delete(
        key.workspaceId,
        key.id,
        auditEntry(caller, 'keys.deleteKey', 'key', key.id, { apiId: key.apiId }),
      ))
    ) {
      throw new NotFoundError('key', `key ${input.keyId} not found`);
    }
    return {};
  },
});
