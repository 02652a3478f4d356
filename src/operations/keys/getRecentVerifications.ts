import type { RecentVerification } from '../../observability/recentVerifications';
import { defineOperation } from '../operation';
import { object } from '../schemas';
import { keyIdInput, loadKey } from './loadKey';

/**
 * keyward's own addition: the last verifications of a key as this node saw them (dashboard).
 * Counts over time, from every node, are keys.getVerifications (Unkey v1's name for them).
 */
export const getRecentVerifications = defineOperation({
  name: 'keys.getRecentVerifications',
  method: 'GET',
  plane: 'management',
  summary: "keyward's own: the last verifications of a key as this node saw them.",
  permission: { resource: 'api', action: 'read_key', scope: 'resource' },
  input: keyIdInput,
  output: object(
    {
      verifications: {
        type: 'array',
        items: object({ at: { type: 'integer' }, code: { type: 'string' } }, ['at', 'code']),
      },
      scope: { const: 'node' },
    },
    ['verifications', 'scope'],
  ),
  uses: ['keys', 'directory', 'recent'],
  async handle(
    deps,
    caller,
    input: { keyId: string },
  ): Promise<{ verifications: RecentVerification[]; scope: 'node' }> {
    const key = await loadKey(deps, caller, input.keyId, 'read_key');
    return { verifications: deps.recent.of(key.id), scope: 'node' };
  },
});
