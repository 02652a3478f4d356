import type { AuditEntry } from '../../domain/audit';
import type { Services } from '../services';

/** Keys deleted per round trip while an API's keys are purged. */
const PURGE_BATCH = 100;

/**
 * Deletes every key of an API, a batch at a time, and says how many it deleted. Each deletion
 * announces itself, so the keys stop verifying on every node as the invalidations arrive.
 */
export async function purgeKeys(
  deps: Pick<Services, 'keys'>,
  ws: string,
  apiId: string,
  /** Each deletion's audit entry. */
  audit: (keyId: string) => AuditEntry,
): Promise<number> {
  let deleted = 0;
  for (;;) {
    const keyIds = await deps.keys.firstKeyIds(ws, apiId, PURGE_BATCH);
    if (keyIds.length === 0) return deleted;
    const outcomes = await Promise.all(
      keyIds.map(async (keyId) => {
        if (await deps.keys.delete(ws, keyId, audit(keyId))) return 1;
        // An index entry whose record is gone would otherwise be listed here forever.
        await deps.keys.unindex(ws, apiId, keyId);
        return 0;
      }),
    );
    for (const outcome of outcomes) deleted += outcome;
  }
}
