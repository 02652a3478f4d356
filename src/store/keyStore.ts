import type { RedisClient as Redis } from '../redis/clients';
import { execResults } from '../redis/results';
import type { CreditReset } from '../domain/credits';
import type { KeyFields, KeyRecord } from '../domain/key';
import { resultDecoder } from '../redis/scriptTable';
import { DEFAULT_AUDIT_MAX_ENTRIES, type AuditEntry } from '../domain/audit';
import {
  appendToOutbox,
  AuditOutbox,
  outboxArgument,
  outboxArgumentOf,
  outboxFields,
} from './auditOutbox';
import { CreditPools, type CreditState, type CreditsOp, type CreditsUpdate } from './creditPools';
import { noSteps, type StepHook } from './faults';
import { listingIndex, listingIndexes, pageOfIndexes } from './keyListing';
import { moveLegacyApi } from './apiStore';
import { LEGACY_APIS, LegacyLayout } from './legacyLayout';
import { invalidation, isStorableId, legacy, names, type Announce } from './names';
import { keyFieldChanges, keyFromHash } from './records';
import { UnfinishedWrites, type KeyPlacement, type Ticket } from './unfinishedWrites';

/** A live key with an expiry, as the expiring sweep reads it. */
export interface ExpiringKey {
  id: string;
  apiId: string;
  expires: number;
  identityId?: string;
}

export interface NewKey {
  workspaceId: string;
  apiId: string;
  keyId: string;
  hash: string;
  start: string;
  createdAt: number;
  fields: KeyFields;
  /** What the key holds from its creation on (written with its record). */
  permissionIds?: readonly string[];
  roleIds?: readonly string[];
}

export type { CreditState, CreditsOp, CreditsUpdate } from './creditPools';

/** The first record version: a created key's "set remaining" is named after it. */
/** A key's last use outlives its last verification by this long (a deleted key's expires). */
const LAST_USED_TTL_MS = 400 * 86_400_000;

const FIRST_VERSION = '1';

/**
 * A deleted key's tombstone outlives any write that read the key before its deletion (a
 * migration's move, a repair, each bounded by its command timeouts): none can bring it back.
 */
const TOMBSTONE_TTL_MS = 3_600_000;

export type CreateKeyOutcome = 'created' | 'api_not_found' | 'hash_exists';

/** The new key of a reroll: what is not carried over from the old one. */
export type RerolledKey = Pick<NewKey, 'keyId' | 'hash' | 'start' | 'createdAt'>;

/** What a reroll writes, derived from the old key as it is when the write is tried. */
export interface RerollPlan {
  /** The new key's fields (its permissions and roles are the old key's). */
  fields: KeyFields;
  /** The old key's new expiry (unix ms). */
  expires: number;
}

export type RerollOutcome = 'rerolled' | 'not_found' | 'api_not_found' | 'hash_exists';

export interface KeyPage {
  keys: KeyRecord[];
  total: number;
  /** Sequence number of the last key on the page; the next page starts after it. */
  lastSeq?: number;
  /** Keys follow this page. */
  more: boolean;
}

const putKeyOutcome = resultDecoder('putKey');
const commitKeyOutcome = resultDecoder('commitKey');
const discardOutcome = resultDecoder('discardPendingKey');
const nextSeqOutcome = resultDecoder('nextKeySeq');
const updateKeyOutcome = resultDecoder('updateKey');
const tombstoneOutcome = resultDecoder('tombstoneKey');

/** Compare-and-set writes retry this often when concurrent writers keep moving the version. */
const MAX_CAS_ATTEMPTS = 8;

/** The hash fields of a new key record, with its sequence number and first version. */
function recordFields(key: NewKey, seq: number): string[] {
  const record: string[] = [
    'seq',
    String(seq),
    'version',
    FIRST_VERSION,
    'id',
    key.keyId,
    'workspaceId',
    key.workspaceId,
    'apiId',
    key.apiId,
    'hash',
    key.hash,
    'start',
    key.start,
    'createdAt',
    String(key.createdAt),
  ];
  for (const [field, value] of keyFieldChanges(key.fields, FIRST_VERSION, key.createdAt).set) {
    record.push(field, value);
  }
  return record;
}

function placement(key: Pick<NewKey, 'keyId' | 'hash' | 'apiId' | 'fields'>): KeyPlacement {
  const ownerId = key.fields.ownerId ?? undefined;
  return {
    keyId: key.keyId,
    hash: key.hash,
    apiId: key.apiId,
    ...(ownerId !== undefined ? { ownerId } : {}),
  };
}

type StoredHash = Record<string, string>;

/** A record hash that reads as a key: committed, not deleted, of this workspace. */
function liveKey(hash: StoredHash, ws: string): KeyRecord | undefined {
  if (hash.pending !== undefined || hash.deletedAt !== undefined) return undefined;
  const record = keyFromHash(hash);
  return record?.workspaceId === ws ? record : undefined;
}

/** A record with the ids of what it holds, sorted (absent when it holds nothing of a kind). */
function withLinks(
  record: KeyRecord | undefined,
  permissionIds: string[],
  roleIds: string[],
): KeyRecord | undefined {
  if (!record) return undefined;
  if (permissionIds.length > 0) record.permissionIds = permissionIds.sort();
  if (roleIds.length > 0) record.roleIds = roleIds.sort();
  return record;
}

/** What a creation's commit did, and the id of its audit entry in the key's outbox when it did. */
export interface Commit {
  outcome: 'committed' | 'committed_before' | 'gone';
  entryId: string;
}

/**
 * An outbox a write's last steps relay: its name (read it all), or the one entry the write's
 * commit appended to a key's fresh outbox, relayed without reading the outbox first.
 */
type OutboxRelay = string | { outbox: string; id: string; fields: readonly string[] };

function relayOf(keyId: string, commit: Commit, fields: readonly string[]): OutboxRelay {
  const outbox = names.auditOutbox(keyId);
  return commit.outcome === 'committed' ? { outbox, id: commit.entryId, fields } : outbox;
}

/**
 * Key records and their indexes on the primary. A key lives under its own id's tag
 * (names.key), found from its hash through an entry under the hash's tag and listed in a shard
 * of its API's listing: a write that touches several of them takes the steps docs/redis.md
 * lists ("Writes across slots"), each recorded in the journal of unfinished writes first, so
 * that a repair (src/store/keyRepair.ts) can finish or undo what a node that died left behind.
 */
export class KeyStore {
  /** Where key writes leave their audit entries for the workspace's stream. */
  private readonly outbox: AuditOutbox;
  private readonly pools: CreditPools;
  readonly unfinished: UnfinishedWrites;
  readonly legacy: LegacyLayout;
  /** Whether API records of the previous layout may remain (ApiStore's own tells the same). */
  private readonly legacyApis: LegacyLayout;

  constructor(
    private readonly redis: Redis,
    private readonly announce: Announce,
    /** The cap of each workspace's audit log, which the relay trims to. */
    auditMaxEntries: number = DEFAULT_AUDIT_MAX_ENTRIES,
    private readonly step: StepHook = noSteps,
    /**
     * Where the journal and the audit relay write: a connection that does not wait for replicas
     * under replicated durability. Each is bookkeeping around a write whose own step waits, and
     * on one master that WAIT covers them too; a 503 then always means the write itself was
     * applied, never only its bookkeeping.
     */
    bookkeeping: Redis = redis,
  ) {
    this.outbox = new AuditOutbox(bookkeeping, auditMaxEntries);
    this.pools = new CreditPools(redis, this.outbox);
    this.unfinished = new UnfinishedWrites(bookkeeping);
    this.legacy = new LegacyLayout(redis);
    this.legacyApis = new LegacyLayout(redis, LEGACY_APIS);
  }

  async create(key: NewKey, audit: AuditEntry): Promise<CreateKeyOutcome> {
    const outcome = await this.createKeys(key.workspaceId, [key], () => audit);
    return outcome === 'created' ? 'created' : outcome.failure;
  }

  /**
   * Creates keys of one workspace all together or not at all (migrations.createKeys). On failure
   * says which item (0-based) stopped the batch.
   */
  async importKeys(
    ws: string,
    keys: readonly NewKey[],
    /** Each key's entry, in the order of `keys`. */
    audit: (key: NewKey) => AuditEntry,
  ): Promise<'imported' | { failure: Exclude<CreateKeyOutcome, 'created'>; index: number }> {
    const outcome = await this.createKeys(ws, keys, audit);
    return outcome === 'created' ? 'imported' : outcome;
  }

  /**
   * The steps of a creation, in four round trips (docs/redis.md, "Writes across slots"):
   *   1. the journal entry, and the sequence numbers from each API;
   *   2. pending records (with their sets), hash entries (SET NX: the uniqueness check) and
   *      listing entries, all at once: none of them makes a key read as existing;
   *   3. (a batch: the journal says "committing", then) the commits: from here a key verifies,
   *      every node hears of it, and its audit entry is in its outbox;
   *   4. the audit entries relayed, then the journal entry removed.
   * Before the commits a failure undoes everything; a repair does the same for a node that died.
   */
  private async createKeys(
    ws: string,
    keys: readonly NewKey[],
    audit: (key: NewKey) => AuditEntry,
  ): Promise<'created' | { failure: Exclude<CreateKeyOutcome, 'created'>; index: number }> {
    const unstorable = keys.findIndex((key) => !isStorableId(key.apiId));
    if (unstorable >= 0) return { failure: 'api_not_found', index: unstorable };
    const legacyTaken = await this.firstLegacyHash(ws, keys);
    if (legacyTaken >= 0) return { failure: 'hash_exists', index: legacyTaken };
    const placements = keys.map(placement);
    const fields = keys.map((key) => outboxFields(ws, audit(key)));
    const entries = fields.map(outboxArgumentOf);
    const [journaled, seqs] = await Promise.all([
      this.unfinished.begin({ op: 'createKeys', ws, keys: placements }),
      this.takeSequenceNumbers(keys),
    ]);
    let ticket = journaled;
    this.step('createKeys:journaled');
    if (typeof seqs === 'number') {
      await this.unfinished.end(ticket);
      return { failure: 'api_not_found', index: seqs };
    }
    const prepared = await Promise.all(
      keys.map((key, i) => this.prepare(ws, key, seqs[i] as number, placements[i]!)),
    );
    const lost = prepared.indexOf('hash_exists');
    if (lost >= 0) {
      // Another write took the hash (or the batch names it twice): the batch is undone whole.
      await Promise.all(placements.map((key) => this.undoCreation(ws, key)));
      await this.unfinished.end(ticket);
      return { failure: 'hash_exists', index: lost };
    }
    this.step('createKeys:prepared');
    if (keys.length > 1) {
      ticket = await this.unfinished.advance(ticket, {
        op: 'createKeys',
        ws,
        keys: placements,
        committing: true,
        audit: entries,
      });
      this.step('createKeys:committing');
    }
    const commits = await Promise.all(
      keys.map((key, i) => this.commit(ws, key.keyId, key.hash, entries[i] as string)),
    );
    if (commits.some((committed) => committed.outcome === 'gone')) {
      // Only a repair that took this write for dead undoes a creation under way.
      throw new Error('key creation: undone by a repair before it could commit');
    }
    this.step('createKeys:committed');
    for (const key of keys) {
      this.announce({ kind: 'key', workspaceId: ws, hash: key.hash, created: true });
    }
    await this.finish(
      ticket,
      keys.map((key, i) => relayOf(key.keyId, commits[i]!, fields[i]!)),
    );
    return 'created';
  }

  /**
   * The first key whose hash a key of the previous layout has already, or -1; the current
   * layout's hash entries are claimed with SET NX as the key is prepared.
   */
  private async firstLegacyHash(ws: string, keys: readonly NewKey[]): Promise<number> {
    if (!(await this.legacy.mayRemain())) return -1;
    const taken = await Promise.all(
      keys.map(async (key) => (await this.redis.hexists(legacy.keyHashes(ws), key.hash)) === 1),
    );
    return taken.indexOf(true);
  }

  /** Each key's sequence number in its API, or the index of the first key whose API is gone. */
  private async takeSequenceNumbers(keys: readonly NewKey[]): Promise<number[] | number> {
    const perApi = new Map<string, number[]>();
    keys.forEach((key, i) => perApi.set(key.apiId, [...(perApi.get(key.apiId) ?? []), i]));
    const seqs: number[] = new Array<number>(keys.length);
    let missing = -1;
    await Promise.all(
      [...perApi].map(async ([apiId, items]) => {
        const ws = (keys[items[0] as number] as NewKey).workspaceId;
        const take = () => this.redis.nextKeySeqV2(names.api(apiId), items.length, ws);
        let last = await take();
        // An API of the previous layout is moved, then asked again: its old record never hands
        // out a number on this release's nodes.
        if (
          nextSeqOutcome(last) === 'api_not_found' &&
          (await this.legacyApis.mayRemain()) &&
          (await moveLegacyApi(this.redis, ws, apiId)) === 'moved'
        ) {
          last = await take();
        }
        if (nextSeqOutcome(last) === 'api_not_found') {
          missing = missing < 0 ? (items[0] as number) : Math.min(missing, items[0] as number);
          return;
        }
        items.forEach((item, n) => (seqs[item] = last - items.length + 1 + n));
      }),
    );
    return missing >= 0 ? missing : seqs;
  }

  /** A key's listing entries: its API's shard, and its owner's index when it has one. */
  private async index(key: KeyPlacement, seq: number): Promise<void> {
    const writes = [this.redis.zadd(listingIndex(key.apiId, key.keyId), seq, key.keyId)];
    if (key.ownerId !== undefined) {
      writes.push(this.redis.zadd(names.ownerKeyIndex(key.apiId, key.ownerId), seq, key.keyId));
    }
    await Promise.all(writes);
  }

  /**
   * The last steps of a key write, once it took effect: what is left of its own steps, its
   * audit entries relayed from the keys' outboxes to the workspace's log, then its journal
   * entry removed. The journal entry stands in for the outboxes' registration: should a step
   * fail, or the node die, it stays, and the repair does what is left. The write itself is done
   * either way, so a failure here is no error to answer.
   */
  private async finish(
    ticket: Ticket,
    relays: readonly OutboxRelay[],
    /** Steps of the write's own that are left once it took effect (index entries). */
    cleanup: () => Promise<void> = async () => undefined,
  ): Promise<void> {
    try {
      await cleanup();
      await Promise.all(
        relays.map((relay) =>
          typeof relay === 'string'
            ? this.outbox.relay(relay)
            : this.outbox.relayKnown(relay.outbox, relay.id, relay.fields),
        ),
      );
      await this.unfinished.end(ticket);
    } catch {
      // Left to the repair, which finds the journal entry.
    }
  }

  /** Commits a pending key: from here it verifies. */
  async commit(ws: string, keyId: string, hash: string, outboxEntry: string): Promise<Commit> {
    const result = await this.redis.commitKeyV1(
      names.key(keyId),
      names.auditOutbox(keyId),
      names.invalidationChannel,
      invalidation.keyCreated(ws, hash),
      outboxEntry,
    );
    return { outcome: commitKeyOutcome(result) ?? 'committed', entryId: result };
  }

  /** Relays what a key's outbox holds to its workspace's audit log (a repair's commit). */
  async relayAudit(keyId: string): Promise<void> {
    await this.outbox.relay(names.auditOutbox(keyId));
  }

  /**
   * Undoes a creation that did not commit: the pending record and its sets, then its index
   * entries (only those that are its own). A committed key is left as it is.
   */
  async undoCreation(ws: string, key: KeyPlacement): Promise<void> {
    const discarded = discardOutcome(
      await this.redis.discardPendingKeyV1(
        names.key(key.keyId),
        names.keyPermissions(key.keyId),
        names.keyRoles(key.keyId),
      ),
    );
    if (discarded === 'kept') return;
    await this.unindexKey(ws, key);
  }

  /** Takes a key's entries out of the hash index and the listings (a deletion's last steps). */
  async unindexKey(ws: string, key: KeyPlacement): Promise<void> {
    const removals: Promise<unknown>[] = [
      this.redis.deleteIfEqualV1(names.keyByHash(ws, key.hash), key.keyId),
      this.redis.zrem(listingIndex(key.apiId, key.keyId), key.keyId),
    ];
    if (key.ownerId !== undefined) {
      removals.push(this.redis.zrem(names.ownerKeyIndex(key.apiId, key.ownerId), key.keyId));
    }
    await Promise.all(removals);
  }

  /**
   * Notes each key's latest verification on its live record, never moving it back (a node's
   * LastUseRecorder flush). Keys live in slots of their own: one script call each, at once.
   */
  async touch(lastUses: ReadonlyMap<string, number>): Promise<void> {
    const calls = [...lastUses].map(([keyId, at]) =>
      this.redis.touchKeyV1(names.key(keyId), names.lastUsed(keyId), at, LAST_USED_TTL_MS),
    );
    const outcomes = await Promise.allSettled(calls);
    const failed = outcomes.find((outcome) => outcome.status === 'rejected');
    if (failed) throw failed.reason;
  }

  readCredits(keyId: string): Promise<CreditState | undefined> {
    return this.pools.read(keyId);
  }

  async deleteCredits(keyId: string): Promise<void> {
    await this.redis.del(names.credits(keyId));
  }

  /**
   * An audit entry of a read that must be on record (a recoverable key decrypted), through the
   * key's outbox like its writes' entries. Answered once appended: a read whose entry could not
   * be written fails, rather than reveal a key off the record.
   */
  async recordRead(ws: string, keyId: string, audit: AuditEntry): Promise<void> {
    const outbox = names.auditOutbox(keyId);
    await this.outbox.register(outbox);
    execResults(await appendToOutbox(this.redis.multi(), outbox, ws, audit).exec());
    await this.outbox.relayAfterWrite(outbox);
  }

  /**
   * set / increment / decrement (or decrementToZero, which stops at zero rather than refusing),
   * atomic with verifications, after any refill point passed. The
   * credits are in the key's slot, not the workspace's: the entry goes through the key's audit
   * outbox (src/store/auditOutbox.ts), appended by the script that changes them.
   */
  updateCredits(
    ws: string,
    keyId: string,
    op: CreditsOp,
    value: number,
    refill: { boundary: number; amount: number } | undefined,
    reset: CreditReset,
    audit: AuditEntry,
  ): Promise<CreditsUpdate> {
    return this.pools.update(ws, keyId, op, value, refill, reset, audit);
  }

  /**
   * A key's record and the ids of what it holds, in one round trip (they share a tag in either
   * layout): this layout's unless `ws` is given, then the previous layout's under that workspace.
   */
  private async readWithLinks(
    keyId: string,
    ws?: string,
    /** Its last use too (a view's read; the verification path's reads leave it out). */
    lastUse = false,
  ): Promise<[StoredHash, string[], string[]]> {
    const [record, permissions, roles] =
      ws === undefined
        ? [names.key(keyId), names.keyPermissions(keyId), names.keyRoles(keyId)]
        : [legacy.key(ws, keyId), legacy.keyPermissions(ws, keyId), legacy.keyRoles(ws, keyId)];
    const pipeline = this.redis.pipeline().hgetall(record).smembers(permissions).smembers(roles);
    // A key of the previous layout has no last use of its own: it is read to be moved.
    if (lastUse && ws === undefined) pipeline.get(names.lastUsed(keyId));
    const [hash, permissionIds, roleIds, lastUsed] = execResults(await pipeline.exec()) as [
      StoredHash,
      string[],
      string[],
      (string | null)?,
    ];
    // Read as a field of the record, which it is not stored as (lua/touch-key-2.lua says why).
    if (typeof lastUsed === 'string' && hash.id !== undefined) hash.lastUsedAt = lastUsed;
    return [hash, permissionIds, roleIds];
  }

  /**
   * The record and the ids of what it holds, in one round trip. A key of the previous layout is
   * moved to the current one on the way (moveLegacyKey), so that every write, which
   * reads its key first, works on the current layout.
   */
  async get(
    ws: string,
    keyId: string,
    /** Read its `lastUsedAt` too: what a view shows; a write or a verification needs it not. */
    options: { lastUse?: boolean } = {},
  ): Promise<KeyRecord | undefined> {
    if (!isStorableId(keyId)) return undefined;
    const [hash, permissionIds, roleIds] = await this.readWithLinks(
      keyId,
      undefined,
      options.lastUse,
    );
    if (hash.id === undefined) {
      if (!(await this.legacy.mayRemain())) return undefined;
      return (await this.moveLegacyKey(ws, keyId)) === 'moved'
        ? this.get(ws, keyId, options)
        : undefined;
    }
    return withLinks(liveKey(hash, ws), permissionIds, roleIds);
  }

  async findByHash(
    ws: string,
    hash: string,
    options: { lastUse?: boolean } = {},
  ): Promise<KeyRecord | undefined> {
    let keyId = await this.redis.get(names.keyByHash(ws, hash));
    if (keyId === null && (await this.legacy.mayRemain())) {
      keyId = await this.redis.hget(legacy.keyHashes(ws), hash);
    }
    if (keyId === null) return undefined;
    const record = await this.get(ws, keyId, options);
    // A deletion takes the record first, the hash entry after: a mismatch is one under way.
    return record?.hash === hash ? record : undefined;
  }

  /** Applies a patch; `undefined` when the key does not exist. */
  async update(
    ws: string,
    keyId: string,
    fields: KeyFields,
    now: number,
    audit: AuditEntry,
  ): Promise<KeyRecord | undefined> {
    const outbox = names.auditOutbox(keyId);
    for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
      const current = await this.get(ws, keyId);
      if (!current) return undefined;
      // A "set remaining" is named after the version this write creates: unique for the key.
      const changes = keyFieldChanges(fields, String(current.version + 1), now);
      changes.set.push(['updatedAt', String(now)]);
      const newOwner =
        fields.ownerId === undefined ? current.ownerId : (fields.ownerId ?? undefined);
      const owners = [current.ownerId, newOwner].filter((o): o is string => o !== undefined);
      const moving = newOwner !== current.ownerId;
      const ticket = await this.unfinished.begin({
        op: 'updateKey',
        ws,
        keyId,
        apiId: current.apiId,
        owners: moving ? owners : [],
      });
      const fieldArgs: string[] = [];
      for (const [field, value] of changes.set) fieldArgs.push(field, value);
      fieldArgs.push(...changes.del);
      const outcome = updateKeyOutcome(
        await this.redis.updateKeyV3(
          names.key(keyId),
          outbox,
          String(current.version),
          names.invalidationChannel,
          invalidation.key(ws, current.hash),
          outboxArgument(ws, audit),
          String(changes.set.length),
          ...fieldArgs,
        ),
      );
      if (outcome !== 'updated') {
        await this.unfinished.end(ticket);
        if (outcome === 'not_found') return undefined;
        continue;
      }
      this.announce({ kind: 'key', workspaceId: ws, hash: current.hash, created: false });
      if (moving) this.step('updateKey:recorded');
      await this.finish(ticket, [outbox], async () => {
        if (moving) {
          await this.placeInOwnerIndexes(keyId, current.apiId, current.seq, newOwner, owners);
        }
      });
      return this.get(ws, keyId);
    }
    throw new Error(`updateKey ${keyId}: version kept changing over ${MAX_CAS_ATTEMPTS} attempts`);
  }

  /**
   * A key whose owner changed joins its new owner's index before it leaves the old one: a
   * listing by owner checks each record's owner, so an entry left behind is never answered.
   */
  async placeInOwnerIndexes(
    keyId: string,
    apiId: string,
    seq: number,
    ownerId: string | undefined,
    owners: readonly string[],
  ): Promise<void> {
    if (ownerId !== undefined) {
      await this.redis.zadd(names.ownerKeyIndex(apiId, ownerId), seq, keyId);
    }
    await Promise.all(
      owners
        .filter((owner) => owner !== ownerId)
        .map((owner) => this.redis.zrem(names.ownerKeyIndex(apiId, owner), keyId)),
    );
  }

  /**
   * Creates `rerolled` with the old key's settings and sets the old key's expiry. The new key is
   * prepared (pending, indexed) first; the old key's compare-and-set then decides: it names the
   * new key (`rerolledTo`), and a repair that finds the journal entry commits the new key exactly
   * when the old one names it. `plan` derives the writes from the old key as read; should the
   * key change before the compare-and-set, the new key is undone and the whole is tried again.
   */
  async reroll(
    ws: string,
    keyId: string,
    rerolled: RerolledKey,
    plan: (current: KeyRecord) => Promise<RerollPlan>,
    audit: AuditEntry,
  ): Promise<RerollOutcome> {
    for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
      const current = await this.get(ws, keyId);
      if (!current) return 'not_found';
      if (!isStorableId(current.apiId)) return 'api_not_found';
      const { fields, expires } = await plan(current);
      const key: NewKey = {
        ...rerolled,
        workspaceId: ws,
        apiId: current.apiId,
        fields,
        ...(current.permissionIds ? { permissionIds: current.permissionIds } : {}),
        ...(current.roleIds ? { roleIds: current.roleIds } : {}),
      };
      if ((await this.firstLegacyHash(ws, [key])) === 0) return 'hash_exists';
      const where = placement(key);
      const entryFields = outboxFields(ws, audit);
      const entry = outboxArgumentOf(entryFields);
      const [ticket, seqs] = await Promise.all([
        this.unfinished.begin({ op: 'reroll', ws, oldKeyId: keyId, key: where, audit: entry }),
        this.takeSequenceNumbers([key]),
      ]);
      if (typeof seqs === 'number') {
        await this.unfinished.end(ticket);
        return 'api_not_found';
      }
      const prepared = await this.prepare(ws, key, seqs[0] as number, where);
      if (prepared !== 'prepared') {
        await this.unfinished.end(ticket);
        return prepared;
      }
      this.step('rerollKey:prepared');
      const outcome = updateKeyOutcome(
        await this.redis.updateKeyV3(
          names.key(keyId),
          names.auditOutbox(keyId),
          String(current.version),
          names.invalidationChannel,
          invalidation.key(ws, current.hash),
          '',
          '3',
          'expires',
          String(expires),
          'updatedAt',
          String(rerolled.createdAt),
          'rerolledTo',
          rerolled.keyId,
        ),
      );
      if (outcome !== 'updated') {
        await this.undoCreation(ws, where);
        await this.unfinished.end(ticket);
        if (outcome === 'not_found') return 'not_found';
        continue;
      }
      this.announce({ kind: 'key', workspaceId: ws, hash: current.hash, created: false });
      this.step('rerollKey:expired');
      const committed = await this.commit(ws, rerolled.keyId, rerolled.hash, entry);
      this.announce({ kind: 'key', workspaceId: ws, hash: rerolled.hash, created: true });
      await this.finish(ticket, [relayOf(rerolled.keyId, committed, entryFields)]);
      return 'rerolled';
    }
    throw new Error(`rerollKey ${keyId}: version kept changing over ${MAX_CAS_ATTEMPTS} attempts`);
  }

  /**
   * One key's pending record, hash entry and listing entries, sent at once: a hash entry or a
   * listing entry whose record is missing or pending reads as no key. When the hash is taken,
   * whatever of the key was written is undone.
   */
  private async prepare(
    ws: string,
    key: NewKey,
    seq: number,
    where: KeyPlacement,
  ): Promise<'prepared' | 'hash_exists'> {
    const [written, claimed] = await Promise.all([
      this.redis.putKeyV1(
        names.key(key.keyId),
        names.keyPermissions(key.keyId),
        names.keyRoles(key.keyId),
        key.permissionIds?.length ?? 0,
        key.roleIds?.length ?? 0,
        ...(key.permissionIds ?? []),
        ...(key.roleIds ?? []),
        ...recordFields(key, seq),
        'pending',
        '1',
      ),
      this.redis.set(names.keyByHash(ws, key.hash), key.keyId, 'NX'),
      this.index(where, seq),
    ]);
    // Key ids are new: a record there means an id was reused, which must never pass.
    if (putKeyOutcome(written) !== 'written') throw new Error(`key ${key.keyId} exists`);
    if (claimed !== 'OK') {
      await this.undoCreation(ws, where);
      return 'hash_exists';
    }
    return 'prepared';
  }

  /**
   * Deletes the key: the record first (a tombstone, with its sets and credits: from here it
   * verifies nowhere, and every node hears of it), then its hash entry and listing entries.
   * False when it did not exist.
   */
  async delete(ws: string, keyId: string, audit: AuditEntry): Promise<boolean> {
    const outbox = names.auditOutbox(keyId);
    for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
      const current = await this.get(ws, keyId);
      if (!current) return false;
      const where = placement({ ...current, keyId, fields: { ownerId: current.ownerId ?? null } });
      const ticket = await this.unfinished.begin({ op: 'deleteKey', ws, key: where });
      const outcome = tombstoneOutcome(
        await this.redis.tombstoneKeyV1(
          names.key(keyId),
          names.keyPermissions(keyId),
          names.keyRoles(keyId),
          names.credits(keyId),
          outbox,
          String(current.version),
          names.invalidationChannel,
          invalidation.key(ws, current.hash),
          outboxArgument(ws, audit),
          String(Date.now()),
          String(TOMBSTONE_TTL_MS),
        ),
      );
      if (outcome !== 'deleted') {
        await this.unfinished.end(ticket);
        if (outcome === 'not_found') return false;
        continue;
      }
      this.announce({ kind: 'key', workspaceId: ws, hash: current.hash, created: false });
      this.step('deleteKey:tombstoned');
      // The key is deleted from here: what follows is cleanup, which the repair finishes should
      // it fail, never a reason to answer the deletion with an error (a retry would be a 404).
      await this.finish(ticket, [outbox], () => this.unindexKey(ws, where));
      return true;
    }
    throw new Error(`deleteKey ${keyId}: version kept changing over ${MAX_CAS_ATTEMPTS} attempts`);
  }

  /** One page of an API's keys in creation order, after `afterSeq`, with the total. */
  async list(
    ws: string,
    apiId: string,
    options: {
      limit: number;
      afterSeq?: number;
      ownerId?: string;
      /**
       * The keys an identity owns, made under any of these names (its externalId first, then those
       * it had before a rename) and linked to it; instead of `ownerId`.
       */
      owners?: { names: readonly string[]; identityId: string };
    },
  ): Promise<KeyPage> {
    const { owners } = options;
    const ownerIds =
      owners?.names ?? (options.ownerId === undefined ? undefined : [options.ownerId]);
    const indexes =
      ownerIds === undefined
        ? listingIndexes(apiId)
        : ownerIds.map((owner) => names.ownerKeyIndex(apiId, owner));
    if (await this.legacy.mayRemain()) {
      if (ownerIds === undefined) indexes.push(legacy.apiKeys(ws, apiId));
      else indexes.push(...ownerIds.map((owner) => legacy.ownerKeys(ws, apiId, owner)));
    }
    const { ids, total, more } = await pageOfIndexes(this.redis, indexes, options);
    if (ids.length === 0) return { keys: [], total, more: false };
    const records = await Promise.all(ids.map(({ id }) => this.readForListing(ws, id)));
    const keys = records.filter(
      (record): record is KeyRecord =>
        record !== undefined &&
        record.apiId === apiId &&
        (ownerIds === undefined || ownerIds.includes(record.ownerId ?? '')) &&
        (owners === undefined ||
          record.identityId === owners.identityId ||
          // A key made under the current name before keys were linked to identities.
          (record.identityId === undefined && record.ownerId === owners.names[0])),
    );
    return { keys, total, lastSeq: (ids[ids.length - 1] as { seq: number }).seq, more };
  }

  /**
   * One page of one shard of an API's listing (0 to KEY_LISTING_SHARDS - 1), as its live keys
   * that have an `expires`, with only what key.expiring says of them: what the expiring sweep
   * reads (src/webhooks/expiringSweep.ts). A shard at a time, so that a walk reads each id once
   * (a page of the whole listing reads a page from every shard to keep creation order). One
   * HMGET a key, all at once. A key of the previous layout not moved yet is not read.
   */
  async expiryPage(
    ws: string,
    apiId: string,
    shard: number,
    options: { limit: number; afterSeq?: number },
  ): Promise<{ keys: ExpiringKey[]; lastSeq?: number; more: boolean }> {
    const index = names.apiKeyShard(apiId, shard);
    const { ids, more } = await pageOfIndexes(this.redis, [index], options);
    const fields = ['id', 'workspaceId', 'apiId', 'pending', 'deletedAt', 'expires', 'identityId'];
    const read = await Promise.all(ids.map(({ id }) => this.redis.hmget(names.key(id), ...fields)));
    const keys: ExpiringKey[] = [];
    for (const [id, workspaceId, keyApiId, pending, deletedAt, expires, identityId] of read) {
      if (!id || workspaceId !== ws || keyApiId !== apiId) continue;
      if (pending !== null || deletedAt !== null || !expires) continue;
      keys.push({ id, apiId, expires: Number(expires), ...(identityId ? { identityId } : {}) });
    }
    const last = ids[ids.length - 1];
    return { keys, ...(last ? { lastSeq: last.seq } : {}), more };
  }

  /**
   * The record under the key's own tag (without its sets) when it is live: committed, not
   * deleted, of this workspace. What a listing and the repair read.
   */
  async liveRecord(ws: string, keyId: string): Promise<KeyRecord | undefined> {
    return liveKey(await this.redis.hgetall(names.key(keyId)), ws);
  }

  /**
   * A listed key's record with the ids of what it holds, wherever it lives; undefined unless
   * live. The record and its two sets share the key's tag: one round trip, as `get`.
   */
  private async readForListing(ws: string, keyId: string): Promise<KeyRecord | undefined> {
    const [hash, permissionIds, roleIds] = await this.readWithLinks(keyId, undefined, true);
    if (hash.id !== undefined) return withLinks(liveKey(hash, ws), permissionIds, roleIds);
    // Only a key of the previous layout can be listed without a record under its own tag.
    const [legacyHash, legacyPermissionIds, legacyRoleIds] = await this.readWithLinks(keyId, ws);
    return withLinks(keyFromHash(legacyHash), legacyPermissionIds, legacyRoleIds);
  }

  /** Removes an id from the API's listing when its record is gone. */
  async unindex(ws: string, apiId: string, keyId: string): Promise<void> {
    await Promise.all([
      this.redis.zrem(listingIndex(apiId, keyId), keyId),
      this.redis.zrem(legacy.apiKeys(ws, apiId), keyId),
    ]);
  }

  /** Ids of up to `count` keys of an API: the batches of an API purge. */
  async firstKeyIds(ws: string, apiId: string, count: number): Promise<string[]> {
    const indexes = [...listingIndexes(apiId), legacy.apiKeys(ws, apiId)];
    const found = await Promise.all(indexes.map((index) => this.redis.zrange(index, 0, count - 1)));
    return [...new Set(found.flat())].slice(0, count);
  }

  /**
   * Moves a key of the previous layout to the current one: its record and sets under its own
   * tag (unless a record is there: moved before, or deleted since, whose tombstone wins), its
   * hash entry and listing entries, then the legacy record and its entries go. Every step is
   * idempotent, so a move run twice, or interrupted and run again, ends the same.
   */
  async moveLegacyKey(ws: string, keyId: string): Promise<'moved' | 'absent'> {
    const [hash, permissionIds, roleIds] = await this.readWithLinks(keyId, ws);
    const record = keyFromHash(hash);
    if (!record) return 'absent';
    const fields: string[] = [];
    for (const [field, value] of Object.entries(hash)) fields.push(field, value);
    await this.redis.putKeyV1(
      names.key(keyId),
      names.keyPermissions(keyId),
      names.keyRoles(keyId),
      permissionIds.length,
      roleIds.length,
      ...permissionIds,
      ...roleIds,
      ...fields,
    );
    const current = await this.redis.hgetall(names.key(keyId));
    const where = placement({ ...record, keyId, fields: { ownerId: record.ownerId ?? null } });
    if (liveKey(current, ws)) {
      await this.redis.set(names.keyByHash(ws, record.hash), keyId, 'NX');
      await this.index(where, record.seq);
    }
    this.step('moveKey:copied');
    await this.redis.dropLegacyKeyV1(
      legacy.key(ws, keyId),
      legacy.keyPermissions(ws, keyId),
      legacy.keyRoles(ws, keyId),
      legacy.keyHashes(ws),
      legacy.apiKeys(ws, record.apiId),
      legacy.ownerKeys(ws, record.apiId, record.ownerId ?? ''),
      keyId,
      record.hash,
    );
    return 'moved';
  }
}
