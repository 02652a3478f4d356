import { RECENT_PER_KEY, type RecentVerification } from '../../observability/recentVerifications';
import { defineOperation } from '../operation';
import { object } from '../schemas';
import { keyIdInput, loadKey } from './loadKey';

/**
 * keyward's own addition: the last verifications of a key (dashboard). With ClickHouse, from
 * every node, with the region that answered, the tags and (when KEYWARD_LOG_CLIENT_IP keeps it)
 * the client's address: `scope: every-node`. Without it, as this node saw them: `scope: node`.
 * Counts over time, from every node, are keys.getVerifications (Unkey v1's name for them).
 */
export const getRecentVerifications = defineOperation({
  name: 'keys.getRecentVerifications',
  method: 'GET',
  plane: 'management',
  summary:
    "keyward's own: the last verifications of a key, from every node with ClickHouse, else as this node saw them.",
  permission: { resource: 'api', action: 'read_key', scope: 'resource' },
  input: keyIdInput,
  output: object(
    {
      verifications: {
        type: 'array',
        items: object(
          {
            at: { type: 'integer' },
            code: { type: 'string' },
            region: { type: 'string' },
            tags: { type: 'array', items: { type: 'string' } },
            ip: { type: 'string' },
          },
          ['at', 'code'],
        ),
      },
      scope: { enum: ['node', 'every-node'] },
    },
    ['verifications', 'scope'],
  ),
  uses: ['keys', 'directory', 'recent', 'verificationLog'],
  async handle(
    deps,
    caller,
    input: { keyId: string },
  ): Promise<{ verifications: RecentVerification[]; scope: 'node' | 'every-node' }> {
    const key = await loadKey(deps, caller, input.keyId, 'read_key');
    if (deps.verificationLog) {
      return {
        verifications: await deps.verificationLog.latest(
          caller.rootKey.workspaceId,
          key.apiId,
          key.id,
          RECENT_PER_KEY,
        ),
        scope: 'every-node',
      };
    }
    return { verifications: deps.recent.of(key.id), scope: 'node' };
  },
});
