import type { RedisClient as Redis } from '../redis/clients';
import { idPage } from './idPage';
import { execResults } from '../redis/results';
import { resultDecoder } from '../redis/scriptTable';
import type { ApiRecord } from '../domain/records';
import { listingIndexes } from './keyListing';
import { invalidation, isStorableId, legacy, names, type Announce } from './names';
import { apiFromHash } from './records';
import { DEFAULT_AUDIT_MAX_ENTRIES, type AuditEntry } from '../domain/audit';
import { AuditOutbox, appendToOutbox, outboxArgument } from './auditOutbox';
import { noSteps, type StepHook } from './faults';
import { LEGACY_APIS, LegacyLayout } from './legacyLayout';
import { UnfinishedWrites, type Ticket, type UnfinishedWrite } from './unfinishedWrites';

const tombstoneApiOutcome = resultDecoder('tombstoneApi');

type Hash = Record<string, string>;

/**
 * A removed API's record stays this long as a tombstone rather than going at once: a move of the
 * previous layout's record that read it before the deletion writes only where no record is, so
 * it cannot bring the API back while the tombstone is there (and it outlives any such move).
 */
const TOMBSTONE_TTL_MS = 3_600_000;

/** A record hash that reads as an API of this workspace (one marked deleted included). */
function apiOf(hash: Hash, ws: string): ApiRecord | undefined {
  if (hash.removedAt !== undefined) return undefined;
  const api = apiFromHash(hash);
  return api?.workspaceId === ws ? api : undefined;
}

/** Whether a record hash is an API that exists and is not marked deleted. */
function isLive(hash: Hash): boolean {
  return hash.id !== undefined && hash.deletedAt === undefined && hash.removedAt === undefined;
}

/**
 * Moves an API record of the previous layout (under its workspace's tag) to its own tag, unless a
 * record is there already (moved before, perhaps with sequence numbers taken since, or removed):
 * the copy never overwrites, so no sequence number is handed out twice by this release's nodes,
 * which take them only from the current record. The workspace's index did not move. Run twice,
 * or interrupted between its steps and run again, it ends the same.
 */
export async function moveLegacyApi(
  redis: Redis,
  ws: string,
  apiId: string,
  step: StepHook = noSteps,
): Promise<'moved' | 'absent'> {
  if (!isStorableId(apiId)) return 'absent';
  const hash = await redis.hgetall(legacy.api(ws, apiId));
  if (!apiFromHash(hash)) return 'absent';
  // Write-unless-present, whatever the record: the identities' script serves any hash.
  await redis.putRecordV1(names.api(apiId), ...Object.entries(hash).flat());
  step('moveApi:copied');
  await redis.del(legacy.api(ws, apiId));
  return 'moved';
}

/**
 * API records on the primary, each under its own id's tag (names.api) with its audit outbox,
 * listed in its workspace's index under the workspace's tag. A creation and a deletion touch both
 * slots, so they take the steps docs/redis.md lists ("Writes across slots"), recorded in the
 * journal of unfinished writes first; the repair (src/store/keyRepair.ts) finishes them.
 */
export class ApiStore {
  /** Where API writes leave their audit entries for the workspace's log. */
  private readonly outbox: AuditOutbox;
  readonly unfinished: UnfinishedWrites;
  readonly legacy: LegacyLayout;

  constructor(
    private readonly redis: Redis,
    private readonly announce: Announce,
    /** The cap of each workspace's audit log, which the relay trims to. */
    auditMaxEntries: number = DEFAULT_AUDIT_MAX_ENTRIES,
    private readonly step: StepHook = noSteps,
    /** Where the journal and the audit relay write (KeyStore's `bookkeeping` says why). */
    bookkeeping: Redis = redis,
  ) {
    this.outbox = new AuditOutbox(bookkeeping, auditMaxEntries);
    this.unfinished = new UnfinishedWrites(bookkeeping);
    this.legacy = new LegacyLayout(redis, LEGACY_APIS);
  }

  /** Moves an API record of the previous layout (moveLegacyApi), halting where the node would. */
  moveLegacy(ws: string, apiId: string): Promise<'moved' | 'absent'> {
    return moveLegacyApi(this.redis, ws, apiId, this.step);
  }

  /**
   * A new API (docs/redis.md, "Creating an API"):
   *   1. the journal entry;
   *   2. the record and its audit entry in its outbox, in one MULTI: the point of no return (a
   *      repair finishes a creation whose record is there);
   *   3. the index entry, the listing's only way to it;
   *   4. the audit entry relayed, the journal entry removed.
   */
  async create(api: ApiRecord, audit: AuditEntry): Promise<void> {
    const { workspaceId: ws, id } = api;
    const outbox = names.auditOutbox(id);
    const ticket = await this.unfinished.begin({ op: 'createApi', ws, apiId: id });
    this.step('createApi:journaled');
    const multi = this.redis.multi().hset(names.api(id), {
      id,
      workspaceId: ws,
      name: api.name,
      createdAt: String(api.createdAt),
      keySeq: '0',
    });
    execResults(await appendToOutbox(multi, outbox, ws, audit).exec());
    this.step('createApi:written');
    // Created from here: the index entry is what is left, which the repair adds should it fail.
    await this.finish(ticket, outbox, () => this.index(ws, id));
  }

  /**
   * The record, including one marked deleted whose keys are still being purged; undefined for
   * another workspace's. One of the previous layout is moved by this read.
   */
  async get(ws: string, apiId: string): Promise<ApiRecord | undefined> {
    if (!isStorableId(apiId)) return undefined;
    const hash = await this.redis.hgetall(names.api(apiId));
    if (hash.id !== undefined || hash.removedAt !== undefined) return apiOf(hash, ws);
    if (!(await this.legacy.mayRemain())) return undefined;
    if ((await this.moveLegacy(ws, apiId)) !== 'moved') return undefined;
    return apiOf(await this.redis.hgetall(names.api(apiId)), ws);
  }

  /** A page of the workspace's live APIs in id (creation) order, after `afterId`. */
  async list(
    ws: string,
    options: { limit: number; afterId?: string },
  ): Promise<{ apis: ApiRecord[]; total: number; next?: string }> {
    const [{ page, total, more }, legacyMayRemain] = await Promise.all([
      idPage(this.redis, names.apis(ws), options),
      this.legacy.mayRemain(),
    ]);
    const records = await Promise.all(
      page.map((id) => this.readForListing(ws, id, legacyMayRemain)),
    );
    return {
      // One created or deleted between the two reads (index entry and record) is not listed.
      apis: records.filter(
        (api): api is ApiRecord => api !== undefined && api.deletedAt === undefined,
      ),
      total,
      // Where the next page starts: the last id read, live or not, so a page of APIs being
      // deleted cannot end the listing early.
      ...(more ? { next: page[page.length - 1] as string } : {}),
    };
  }

  /**
   * A listed API's record, wherever it lives. The previous layout's is read after the current
   * one was not found, and the current one again after that was not either: a move (copy, then
   * drop) between the first two reads would otherwise hide an API that exists.
   */
  private async readForListing(
    ws: string,
    apiId: string,
    legacyMayRemain: boolean,
  ): Promise<ApiRecord | undefined> {
    const hash = await this.redis.hgetall(names.api(apiId));
    if (hash.id !== undefined || hash.removedAt !== undefined || !legacyMayRemain) {
      return apiOf(hash, ws);
    }
    const old = await this.redis.hgetall(legacy.api(ws, apiId));
    if (old.id !== undefined) return apiOf(old, ws);
    return apiOf(await this.redis.hgetall(names.api(apiId)), ws);
  }

  /**
   * Marks the API deleted (docs/redis.md, "Deleting an API"); false when there is none. The
   * mark is the point of no return: its keys stop verifying and none can be added; the index
   * entry goes after it. True for one marked before, so that a deletion cut short is resumed.
   */
  async markDeleted(ws: string, apiId: string, now: number, audit: AuditEntry): Promise<boolean> {
    // Writes change only the current layout: one of the previous is moved by this read first.
    if (!(await this.get(ws, apiId))) return false;
    const outbox = names.auditOutbox(apiId);
    const ticket = await this.unfinished.begin({ op: 'deleteApi', ws, apiId });
    const outcome = tombstoneApiOutcome(
      await this.redis.tombstoneApiV3(
        names.api(apiId),
        outbox,
        ws,
        String(now),
        names.invalidationChannel,
        invalidation.api(ws, apiId),
        outboxArgument(ws, audit),
      ),
    );
    if (outcome === 'not_found') {
      await this.unfinished.end(ticket);
      return false;
    }
    if (outcome === 'deleted') this.announce({ kind: 'api', workspaceId: ws, apiId });
    this.step('deleteApi:tombstoned');
    // Deleted from here: the index entry is cleanup, which the repair finishes should it fail.
    await this.finish(ticket, outbox, () => this.unindex(ws, apiId));
    return true;
  }

  /**
   * The last step of a deletion, once no key is left: the listing's shards (empty by now, but
   * for entries whose records were gone), the index entry (should the deletion's own have
   * failed), then the record, which stays a while as a tombstone (TOMBSTONE_TTL_MS says why).
   */
  async remove(ws: string, apiId: string): Promise<void> {
    await Promise.all(listingIndexes(apiId).map((shard) => this.redis.del(shard)));
    await this.unindex(ws, apiId);
    execResults(
      await this.redis
        .multi()
        .hset(names.api(apiId), 'removedAt', String(Date.now()))
        .pexpire(names.api(apiId), TOMBSTONE_TTL_MS)
        .exec(),
    );
    await this.redis.del(legacy.apiKeys(ws, apiId), legacy.api(ws, apiId));
  }

  /**
   * Brings an API write a node left in the journal to an end (the repair's part), then relays
   * its audit entry. Whether the record is live decides both: a creation whose record is there
   * is finished, one whose record is not (or is deleted since) has no index entry to keep; a
   * deletion whose record is still live never happened. Every step is idempotent.
   */
  async repair(write: Extract<UnfinishedWrite, { op: 'createApi' | 'deleteApi' }>): Promise<void> {
    const { ws, apiId } = write;
    const live = isLive(await this.redis.hgetall(names.api(apiId)));
    if (live && write.op === 'createApi') await this.index(ws, apiId);
    else if (!live) await this.unindex(ws, apiId);
    await this.outbox.relay(names.auditOutbox(apiId));
  }

  /**
   * The API's index entry, then its record read again: a deletion that marked it meanwhile may
   * have taken the entry out before this added it, so it is taken out again here.
   */
  private async index(ws: string, apiId: string): Promise<void> {
    // Score 0: the index pages by id, and ids sort by creation time.
    await this.redis.zadd(names.apis(ws), 0, apiId);
    if (!isLive(await this.redis.hgetall(names.api(apiId)))) await this.unindex(ws, apiId);
  }

  private async unindex(ws: string, apiId: string): Promise<void> {
    await this.redis.zrem(names.apis(ws), apiId);
  }

  /**
   * The last steps of a write that took effect: its cleanup, its audit entry relayed, its journal
   * entry removed (which stands in for the outbox's registration). Should any fail, the journal
   * entry stays and the repair does what is left; the write is done either way, so a failure
   * here is no error to answer.
   */
  private async finish(ticket: Ticket, outbox: string, cleanup: () => Promise<void>) {
    try {
      await cleanup();
      await this.outbox.relay(outbox);
      await this.unfinished.end(ticket);
    } catch {
      // Left to the repair, which finds the journal entry.
    }
  }
}
