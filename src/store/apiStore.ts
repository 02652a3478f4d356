import type { RedisClient as Redis } from '../redis/clients';
import { idPage } from './idPage';
import { execResults } from '../redis/results';
import { resultDecoder } from '../redis/scriptTable';
import type { ApiRecord } from '../domain/records';
import { listingIndexes } from './keyListing';
import { invalidation, isStorableId, legacy, names, type Announce } from './names';
import { apiFromHash } from './records';
import { DEFAULT_AUDIT_MAX_ENTRIES, type AuditEntry } from '../domain/audit';
import { appendAudit, auditArgument } from './auditLog';

const tombstoneApiOutcome = resultDecoder('tombstoneApi');

/** API records on the primary. */
export class ApiStore {
  constructor(
    private readonly redis: Redis,
    private readonly announce: Announce,
    /** The cap of each workspace's audit log, which every write here appends to. */
    private readonly auditMaxEntries: number = DEFAULT_AUDIT_MAX_ENTRIES,
  ) {}

  /** The record, its place in the index and its audit entry, in one MULTI. */
  async create(api: ApiRecord, audit: AuditEntry): Promise<void> {
    const ws = api.workspaceId;
    const multi = this.redis
      .multi()
      .hset(names.api(ws, api.id), {
        id: api.id,
        workspaceId: ws,
        name: api.name,
        createdAt: String(api.createdAt),
        keySeq: '0',
      })
      // Score 0: the index pages by id, and ids sort by creation time.
      .zadd(names.apis(ws), 0, api.id);
    execResults(await appendAudit(multi, ws, audit, this.auditMaxEntries).exec());
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
    const { page, total, more } = await idPage(this.redis, names.apis(ws), options);
    const records = await Promise.all(page.map((id) => this.get(ws, id)));
    return {
      apis: records.filter(
        (api): api is ApiRecord => api !== undefined && api.deletedAt === undefined,
      ),
      total,
      // Where the next page starts: the last id read, live or not, so a page of APIs being
      // deleted cannot end the listing early.
      ...(more ? { next: page[page.length - 1] as string } : {}),
    };
  }

  /** Marks the API deleted; false when it does not exist. */
  async markDeleted(ws: string, apiId: string, now: number, audit: AuditEntry): Promise<boolean> {
    if (!isStorableId(apiId)) return false;
    const result = await this.redis.tombstoneApiV2(
      names.api(ws, apiId),
      names.apis(ws),
      names.audit(ws),
      String(now),
      names.invalidationChannel,
      invalidation.api(ws, apiId),
      auditArgument(audit, this.auditMaxEntries),
    );
    if (tombstoneApiOutcome(result) !== 'deleted') return false;
    this.announce({ kind: 'api', workspaceId: ws, apiId });
    return true;
  }

  /**
   * The last step of a deletion, once no key is left: the listing's shards (empty by now, but
   * for entries whose records were gone), then the record.
   */
  async remove(ws: string, apiId: string): Promise<void> {
    await Promise.all(listingIndexes(apiId).map((shard) => this.redis.del(shard)));
    execResults(
      await this.redis.multi().del(names.api(ws, apiId)).del(legacy.apiKeys(ws, apiId)).exec(),
    );
  }
}
