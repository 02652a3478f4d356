import { defineOperation } from '../operation';
import { keyOutput } from '../schemas';
import type { KeyView } from '../views';
import { viewWithCredits } from './credits';
import { keyIdInput, loadKey } from './loadKey';

export const getKey = defineOperation({
  name: 'keys.getKey',
  method: 'GET',
  plane: 'management',
  summary: 'A key as clients see it: never its plaintext or hash.',
  permission: { resource: 'api', action: 'read_key', scope: 'resource' },
  input: keyIdInput,
  output: keyOutput,
  uses: ['keys', 'directory', 'now'],
  async handle(deps, caller, input: { keyId: string }): Promise<KeyView> {
    return viewWithCredits(deps, await loadKey(deps, caller, input.keyId, 'read_key'));
  },
});
