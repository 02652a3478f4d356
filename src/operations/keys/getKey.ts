import { defineOperation } from '../operation';
import { keyOutput } from '../schemas';
import type { KeyView } from '../views';
import { viewWithCredits } from './credits';
import { keyIdInput, loadKey } from './loadKey';
import { openKey, vaultToOpen } from './recoverable';

interface GetKeyInput {
  keyId: string;
  /** Answer a recoverable key's plaintext too (`api.<apiId>.decrypt_key`). */
  decrypt?: boolean;
}

export const getKey = defineOperation({
  name: 'keys.getKey',
  method: 'GET',
  plane: 'management',
  summary:
    'A key as clients see it: never its hash; its plaintext only with `decrypt`, for a recoverable key.',
  permission: { resource: 'api', action: 'read_key', scope: 'resource' },
  input: {
    ...keyIdInput,
    properties: { ...keyIdInput.properties, decrypt: { type: 'boolean' } },
  },
  output: keyOutput,
  uses: ['keys', 'directory', 'now', 'vault', 'metrics'],
  async handle(deps, caller, input: GetKeyInput): Promise<KeyView> {
    const key = await loadKey(deps, caller, input.keyId, 'read_key', { lastUse: true });
    const vault = input.decrypt ? vaultToOpen(deps, caller, key.apiId) : undefined;
    const view = await viewWithCredits(deps, key);
    if (!vault) return view;
    const plaintext = await openKey(deps, vault, caller, key, 'keys.getKey');
    return plaintext === undefined ? view : { ...view, plaintext };
  },
});
