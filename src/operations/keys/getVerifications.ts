import { CREDITS } from '../../domain/usage';
import { permissionFor } from '../../auth/permissions';
import type { KeyRecord } from '../../domain/key';
import { BadRequestError, invalidField, NotFoundError } from '../../errors';
import { defineOperation, requirePermission, type Caller } from '../operation';
import { id, object } from '../schemas';
import type { Services } from '../services';
import { loadKey } from './loadKey';

export interface GetVerificationsInput {
  keyId?: string;
  ownerId?: string;
  start?: number;
  end?: number;
  granularity?: 'day';
}

export interface DailyVerifications {
  time: number;
  success: number;
  rateLimited: number;
  usageExceeded: number;
  /** The credits the day's verifications spent (a keyward addition to Unkey v1's answer). */
  spentCredits: number;
}

const DAY = 86_400_000;
/** The keys of one owner read at most: a larger owner is asked about key by key. */
const MAX_OWNER_KEYS = 1000;

/**
 * Unkey v1's keys.getVerifications: a key's (or an owner's keys') verifications per day, from
 * every node, out of usage analytics. `success` counts VALID; the other outcomes are in
 * analytics.getVerifications.
 */
export const getVerifications = defineOperation({
  name: 'keys.getVerifications',
  method: 'GET',
  plane: 'management',
  summary:
    "A key's verifications per day (or an owner's keys'): success, rate limited, usage exceeded, credits spent.",
  permission: { resource: 'api', action: 'read_key', scope: 'resource' },
  input: object({
    keyId: id,
    ownerId: { type: 'string', minLength: 1, maxLength: 256 },
    start: { type: 'integer', minimum: 0 },
    end: { type: 'integer', minimum: 0 },
    granularity: { enum: ['day'] },
  }),
  output: object(
    {
      verifications: {
        type: 'array',
        items: object(
          {
            time: { type: 'integer' },
            success: { type: 'integer' },
            rateLimited: { type: 'integer' },
            usageExceeded: { type: 'integer' },
            spentCredits: { type: 'integer' },
          },
          ['time', 'success', 'rateLimited', 'usageExceeded'],
        ),
      },
    },
    ['verifications'],
  ),
  check(input: GetVerificationsInput) {
    if (input.keyId === undefined && input.ownerId === undefined) {
      throw new BadRequestError('keyId or ownerId must be provided');
    }
  },
  uses: ['keys', 'apis', 'directory', 'usageCounts', 'now'],
  async handle(
    deps,
    caller,
    input: GetVerificationsInput,
  ): Promise<{ verifications: DailyVerifications[] }> {
    const ws = caller.rootKey.workspaceId;
    const keys =
      input.keyId !== undefined
        ? [await loadKey(deps, caller, input.keyId, 'read_key')]
        : await ownerKeys(deps, caller, input.ownerId!);
    if (keys.length === 0) throw new NotFoundError('key', 'No keys were found to match your query');
    const now = deps.now();
    const range = { start: input.start ?? now - DAY, end: input.end ?? now, now };
    const byApi = new Map<string, Set<string>>();
    for (const key of keys) {
      let ids = byApi.get(key.apiId);
      if (!ids) byApi.set(key.apiId, (ids = new Set()));
      ids.add(key.id);
    }
    const days = new Map<number, DailyVerifications>();
    for (const [apiId, ids] of byApi) {
      const rows = await deps.usageCounts.verifications(ws, apiId, 'day', range, ids);
      for (const row of rows) {
        if (!ids.has(row.keyId)) continue;
        let day = days.get(row.time);
        if (!day) {
          day = { time: row.time, success: 0, rateLimited: 0, usageExceeded: 0, spentCredits: 0 };
          days.set(row.time, day);
        }
        if (row.outcome === 'VALID') day.success += row.count;
        else if (row.outcome === 'RATE_LIMITED') day.rateLimited += row.count;
        else if (row.outcome === 'USAGE_EXCEEDED') day.usageExceeded += row.count;
        else if (row.outcome === CREDITS) day.spentCredits += row.count;
      }
    }
    return { verifications: [...days.values()].sort((a, b) => a.time - b.time) };
  },
});

/** The owner's keys in every API of the workspace; the caller needs read_key on each one's API. */
async function ownerKeys(
  deps: Pick<Services, 'keys' | 'apis'>,
  caller: Caller,
  ownerId: string,
): Promise<KeyRecord[]> {
  const ws = caller.rootKey.workspaceId;
  const found: KeyRecord[] = [];
  let afterId: string | undefined;
  do {
    const page = await deps.apis.list(ws, { limit: 100, ...(afterId ? { afterId } : {}) });
    for (const api of page.apis) {
      const keys = await deps.keys.list(ws, api.id, { limit: MAX_OWNER_KEYS, ownerId });
      found.push(...keys.keys);
      if (found.length > MAX_OWNER_KEYS) {
        throw invalidField(
          ['ownerId'],
          `more than ${MAX_OWNER_KEYS} keys; ask for them one keyId at a time`,
        );
      }
    }
    afterId = page.next;
  } while (afterId !== undefined);
  for (const apiId of new Set(found.map((key) => key.apiId))) {
    requirePermission(caller, permissionFor('api', apiId, 'read_key'));
  }
  return found;
}
