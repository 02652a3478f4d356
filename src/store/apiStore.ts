import type { RedisClient as Redis } from '../redis/clients';
import { execResults } from '../redis/results';
import { resultDecoder } from '../redis/scriptTable';
import type { ApiRecord } from '../domain/records';
import { invalidation, isStorableId, names, type Announce } from './names';
import { apiFromHash } from './records';

const tombstoneApiOutcome = resultDecoder('tombstoneApi');

/** API records on the primary. */
export class ApiStore {
  constructor(
    private readonly redis: Redis,
    private readonly announce: Announce,
  ) {}

  async create(api: ApiRecord): Promise<void> {
    const ws = api.workspaceId;
    execResults(
      await this.redis
        .multi()
        .hset(names.api(ws, api.id), {
          id: api.id,
          workspaceId: ws,
          name: api.name,
          createdAt: String(api.createdAt),
          keySeq: '0',
        })
        // Score 0: the index pages by id, and ids sort by creation time.
        .zadd(names.apis(ws), 0, api.id)
        .exec(),
    );
  }

  /** The record, including one marked deleted whose keys are still being purged. */
  async get(ws: string, apiId: string): Promise<ApiRecord | undefined> {
    if (!isStorableId(apiId)) return undefined;
    return apiFromHash(await this.redis.hgetall(names.api(ws, apiId)));
  }

  /** A page of the workspace's live APIs in id (creation) order, after `afterId`. */
  async list(
    ws: string,
    options: { limit: number; afterId?: string },
  ): Promise<{ apis: ApiRecord[]; total: number; next?: string }> {
    const index = names.apis(ws);
    const min = options.afterId === undefined ? '-' : `(${options.afterId}`;
    const [ids, total] = execResults(
      await this.redis
        .multi()
        .zrangebylex(index, min, '+', 'LIMIT', 0, options.limit + 1)
        .zcard(index)
        .exec(),
    ) as [string[], number];
    const page = ids.slice(0, options.limit);
    const records = await Promise.all(page.map((id) => this.get(ws, id)));
    return {
      apis: records.filter(
        (api): api is ApiRecord => api !== undefined && api.deletedAt === undefined,
      ),
      total,
      // Where the next page starts: the last id read, live or not, so a page of APIs being
      // deleted cannot end the listing early.
      ...(ids.length > options.limit ? { next: page[page.length - 1] as string } : {}),
    };
  }

  /** Marks the API deleted; false when it does not exist. */
  async markDeleted(ws: string, apiId: string, now: number): Promise<boolean> {
    if (!isStorableId(apiId)) return false;
    const result = await this.redis.tombstoneApiV1(
      names.api(ws, apiId),
      names.apis(ws),
      String(now),
      names.invalidationChannel,
      invalidation.api(ws, apiId),
    );
    if (tombstoneApiOutcome(result) !== 'deleted') return false;
    this.announce({ kind: 'api', workspaceId: ws, apiId });
    return true;
  }

  /** The last step of a deletion, once no key is left. */
  async remove(ws: string, apiId: string): Promise<void> {
    execResults(
      await this.redis.multi().del(names.api(ws, apiId)).del(names.apiKeys(ws, apiId)).exec(),
    );
  }
}
