import { DEFAULT_AUDIT_MAX_ENTRIES, type AuditEntry } from '../domain/audit';
import type { IdentityChanges, IdentityRecord } from '../domain/identity';
import type { CreditReset } from '../domain/credits';
import type { KeyCredits } from '../domain/key';
import type { NamedLimit } from '../domain/namedLimits';
import { newId } from '../keys/ids';
import type { RedisClient as Redis } from '../redis/clients';
import { resultDecoder } from '../redis/scriptTable';
import { AuditOutbox, outboxArgument } from './auditOutbox';
import { CreditPools, type CreditState, type CreditsOp, type CreditsUpdate } from './creditPools';
import { noSteps, type StepHook } from './faults';
import { idPageOfIndexes } from './idPage';
import { KEY_LISTING_SHARDS, listingShard } from './keyListing';
import { LEGACY_IDENTITIES, LegacyLayout } from './legacyLayout';
import { invalidation, isStorableId, legacy, names, type Announce } from './names';
import { UnfinishedWrites, type Ticket, type UnfinishedWrite } from './unfinishedWrites';

const putOutcome = resultDecoder('putRecord');
const commitOutcome = resultDecoder('commitIdentity');
const discardOutcome = resultDecoder('discardPendingIdentity');
const updateOutcome = resultDecoder('updateIdentity');
const tombstoneOutcome = resultDecoder('tombstoneIdentity');
const renameOutcome = resultDecoder('renameIdentity');

type Hash = Record<string, string>;

type RenameWrite = Extract<UnfinishedWrite, { op: 'renameIdentity' }>;

/**
 * How often upsertByExternalId looks again when the identity it found was deleted before it could
 * read it. Each retry creates it anew unless yet another call did.
 */
const MAX_UPSERT_ATTEMPTS = 3;

/**
 * The hash of a new record: flat fields that `redis-cli HGETALL` shows as they are, `meta` and
 * `ratelimits` as JSON text, and only when not empty.
 */
export function identityFields(identity: IdentityRecord): string[] {
  const fields = [
    'id',
    identity.id,
    'workspaceId',
    identity.workspaceId,
    'externalId',
    identity.externalId,
    'createdAt',
    String(identity.createdAt),
  ];
  for (const [field, value] of changedFields(recordChanges(identity)).set) {
    fields.push(field, value);
  }
  if (identity.updatedAt !== undefined) fields.push('updatedAt', String(identity.updatedAt));
  return fields;
}

/** Hash writes of an update: an empty `meta` or `ratelimits` removes the field. */
export function changedFields(changes: IdentityChanges): {
  set: [string, string][];
  del: string[];
} {
  const set: [string, string][] = [];
  const del: string[] = [];
  if (changes.meta !== undefined) {
    if (Object.keys(changes.meta).length > 0) set.push(['meta', JSON.stringify(changes.meta)]);
    else del.push('meta');
  }
  if (changes.ratelimits !== undefined) {
    if (changes.ratelimits.length > 0) {
      set.push(['ratelimits', JSON.stringify(changes.ratelimits)]);
    } else del.push('ratelimits');
  }
  if (changes.formerExternalIds !== undefined && changes.formerExternalIds.length > 0) {
    set.push(['formerExternalIds', JSON.stringify(changes.formerExternalIds)]);
  }
  if (changes.credits === null) del.push('credits');
  else if (changes.credits) set.push(['credits', JSON.stringify(changes.credits.record)]);
  return { set, del };
}

/** The record's own pool as an update writes it (`identityFields` writes a new one's). */
function recordChanges(identity: IdentityRecord): IdentityChanges {
  const { credits, ...rest } = identity;
  return credits ? { ...rest, credits: { record: credits } } : rest;
}

export function identityFromHash(hash: Hash): IdentityRecord | undefined {
  if (!hash.id || hash.externalId === undefined) return undefined;
  return {
    id: hash.id,
    workspaceId: hash.workspaceId ?? '',
    externalId: hash.externalId,
    ...(hash.meta !== undefined ? { meta: JSON.parse(hash.meta) as Record<string, unknown> } : {}),
    ...(hash.ratelimits !== undefined
      ? { ratelimits: JSON.parse(hash.ratelimits) as NamedLimit[] }
      : {}),
    ...(hash.formerExternalIds !== undefined
      ? { formerExternalIds: JSON.parse(hash.formerExternalIds) as string[] }
      : {}),
    ...(hash.credits !== undefined ? { credits: JSON.parse(hash.credits) as KeyCredits } : {}),
    createdAt: Number(hash.createdAt),
    ...(hash.updatedAt !== undefined ? { updatedAt: Number(hash.updatedAt) } : {}),
  };
}

/**
 * A deleted identity's tombstone outlives any write that read it before its deletion (a
 * migration's move, a repair, each bounded by its command timeouts): none can bring it back.
 */
const TOMBSTONE_TTL_MS = 3_600_000;

/**
 * How often a creation tries to claim an externalId whose entry it found stale (it named an
 * identity being deleted) or whose owner it had to commit first; each try frees or settles one.
 */
const MAX_CLAIM_ATTEMPTS = 4;

/** The shard of a workspace's identity listing that holds this identity (as keys are sharded). */
export function identityListingIndex(ws: string, identityId: string): string {
  return names.identityShard(ws, listingShard(identityId));
}

export function identityListingIndexes(ws: string): string[] {
  return Array.from({ length: KEY_LISTING_SHARDS }, (_, shard) => names.identityShard(ws, shard));
}

/** A record hash that reads as an identity: committed, not deleted, of this workspace. */
function liveIdentity(hash: Hash, ws: string): IdentityRecord | undefined {
  if (hash.pending !== undefined || hash.deletedAt !== undefined) return undefined;
  const identity = identityFromHash(hash);
  return identity?.workspaceId === ws ? identity : undefined;
}

type RecordState = 'live' | 'pending' | 'gone';

function stateOf(hash: Hash): RecordState {
  if (hash.id === undefined || hash.deletedAt !== undefined) return 'gone';
  return hash.pending !== undefined ? 'pending' : 'live';
}

/**
 * Identities on the primary, each under its own id's tag (names.identity), found from its
 * externalId through an entry tagged by workspace and externalId, and listed in one of 16 shards
 * of its workspace's listing. A creation and a deletion touch three slots, so they take the steps
 * docs/redis.md lists ("Writes across slots"), recorded in the journal of unfinished writes
 * first; the repair (src/store/keyRepair.ts) finishes or undoes what a node that died left.
 */
export class IdentityStore {
  /** Where identity writes leave their audit entries for the workspace's stream. */
  private readonly outbox: AuditOutbox;
  private readonly pools: CreditPools;
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
    this.pools = new CreditPools(redis, this.outbox);
    this.unfinished = new UnfinishedWrites(bookkeeping);
    this.legacy = new LegacyLayout(redis, LEGACY_IDENTITIES);
  }

  /** The new identity, unless its externalId is taken in the workspace (then nothing is written). */
  async create(
    identity: IdentityRecord,
    audit: AuditEntry,
  ): Promise<'created' | 'external_id_taken'> {
    const found = await this.ensure(identity, audit);
    return found === identity.id ? 'created' : 'external_id_taken';
  }

  /**
   * The identity with this externalId, created without meta or limits when there is none.
   * Concurrent calls for one externalId make one identity: the SET NX of its entry decides, not
   * this process. A creation is audited as `audit` (the key write that asked for it) with the
   * identity as its target.
   */
  async upsertByExternalId(
    ws: string,
    externalId: string,
    now: number,
    audit: AuditEntry,
  ): Promise<IdentityRecord> {
    const fresh: IdentityRecord = {
      id: newId('id', now),
      workspaceId: ws,
      externalId,
      createdAt: now,
    };
    for (let attempt = 0; attempt < MAX_UPSERT_ATTEMPTS; attempt++) {
      const found = await this.ensure(fresh, {
        ...audit,
        targetType: 'identity',
        targetId: fresh.id,
        summary: { externalId },
      });
      if (found === fresh.id) return fresh;
      // The one a lookup found is answered as read; one that won a race is read now.
      const identity = typeof found === 'string' ? await this.byId(ws, found) : found;
      if (identity) return identity;
    }
    throw new Error(
      `upsertByExternalId: the identity was deleted before it could be read, ${MAX_UPSERT_ATTEMPTS} times`,
    );
  }

  /**
   * The live identity of this workspace with this id. Its record alone, as before the move (a
   * warm verification reads it from the node's cache; a cold one pays one HGETALL).
   */
  async byId(ws: string, identityId: string): Promise<IdentityRecord | undefined> {
    if (!isStorableId(identityId)) return undefined;
    const hash = await this.redis.hgetall(names.identity(identityId));
    if (hash.id !== undefined) return liveIdentity(hash, ws);
    if (!(await this.legacy.mayRemain())) return undefined;
    if ((await this.moveLegacyIdentity(ws, identityId)) !== 'moved') return undefined;
    return liveIdentity(await this.redis.hgetall(names.identity(identityId)), ws);
  }

  async byExternalId(ws: string, externalId: string): Promise<IdentityRecord | undefined> {
    let identityId = await this.redis.get(names.identityByExternalId(ws, externalId));
    if (identityId === null && (await this.legacy.mayRemain())) {
      identityId = await this.redis.hget(legacy.identityNames(ws), externalId);
    }
    if (identityId === null) return undefined;
    const found = await this.byId(ws, identityId);
    // A deletion takes the record first and the entry after: a mismatch is one under way.
    return found?.externalId === externalId ? found : undefined;
  }

  /** A page of the workspace's identities in id (creation) order, after `afterId`. */
  async list(
    ws: string,
    options: { limit: number; afterId?: string },
  ): Promise<{ identities: IdentityRecord[]; total: number; next?: string }> {
    const indexes = identityListingIndexes(ws);
    const legacyMayRemain = await this.legacy.mayRemain();
    if (legacyMayRemain) indexes.push(legacy.identities(ws));
    const { page, total, more } = await idPageOfIndexes(this.redis, indexes, options);
    const records = await Promise.all(
      page.map((id) => this.readForListing(ws, id, legacyMayRemain)),
    );
    return {
      // One pending, deleted or gone between the two reads is simply not listed.
      identities: records.filter((identity): identity is IdentityRecord => identity !== undefined),
      total,
      // The last id read, listed or not, so a deletion cannot end the listing early.
      ...(more ? { next: page[page.length - 1] as string } : {}),
    };
  }

  /** A listed identity's record, wherever it lives; undefined unless live. */
  private async readForListing(
    ws: string,
    identityId: string,
    legacyMayRemain: boolean,
  ): Promise<IdentityRecord | undefined> {
    const hash = await this.redis.hgetall(names.identity(identityId));
    if (hash.id !== undefined || !legacyMayRemain) return liveIdentity(hash, ws);
    // Only an identity of the previous layout is listed without a record under its own tag.
    return liveIdentity(await this.redis.hgetall(legacy.identity(ws, identityId)), ws);
  }

  /**
   * Replaces what `changes` names; undefined when there is no such identity. One slot (the
   * record and its outbox): the outbox is registered first, so that the sweep relays the entry
   * should this node die before its relay.
   */
  async update(
    ws: string,
    identityId: string,
    changes: IdentityChanges,
    now: number,
    audit: AuditEntry,
  ): Promise<IdentityRecord | undefined> {
    if (!isStorableId(identityId)) return undefined;
    const { set, del } = changedFields(changes);
    set.push(['updatedAt', String(now)]);
    const outbox = names.auditOutbox(identityId);
    await this.outbox.register(outbox);
    const pool = changes.credits;
    const write = () =>
      this.redis.updateIdentityV4(
        names.identity(identityId),
        outbox,
        names.credits(identityId),
        ws,
        names.invalidationChannel,
        invalidation.identity(ws, identityId),
        outboxArgument(ws, audit),
        pool === null ? 'delete' : pool?.set ? 'set' : '',
        pool?.set ? String(pool.set.remaining) : '',
        pool?.set ? String(pool.set.from) : '',
        set.length,
        ...set.flat(),
        ...del,
      );
    let outcome = updateOutcome(await write());
    // Writes change only the current layout: one of the previous is moved, then written.
    if (outcome === 'not_found' && (await this.byId(ws, identityId))) {
      outcome = updateOutcome(await write());
    }
    if (outcome === 'not_found') return undefined;
    this.announce({ kind: 'identity', workspaceId: ws, identityId });
    await this.outbox.relayAfterWrite(outbox);
    return this.byId(ws, identityId);
  }

  /**
   * Deletes the identity (docs/redis.md, "Deleting an identity"): the record first (a
   * tombstone: from here no read finds it, and every node hears of it), then its externalId
   * entry if it still names it, then its listing entry. False when there was none.
   */
  async delete(ws: string, identityId: string, audit: AuditEntry): Promise<boolean> {
    const current = await this.byId(ws, identityId);
    if (!current) return false;
    const { externalId } = current;
    const outbox = names.auditOutbox(identityId);
    const ticket = await this.unfinished.begin({
      op: 'deleteIdentity',
      ws,
      identityId,
      externalId,
    });
    const outcome = tombstoneOutcome(
      await this.redis.tombstoneIdentityV1(
        names.identity(identityId),
        outbox,
        ws,
        names.invalidationChannel,
        invalidation.identity(ws, identityId),
        outboxArgument(ws, audit),
        String(Date.now()),
        String(TOMBSTONE_TTL_MS),
      ),
    );
    if (outcome !== 'deleted') {
      await this.unfinished.end(ticket);
      return false;
    }
    this.announce({ kind: 'identity', workspaceId: ws, identityId });
    this.step('deleteIdentity:tombstoned');
    // Deleted from here: what follows is cleanup, which the repair finishes should it fail.
    await this.finish(ticket, outbox, () => this.unindex(ws, identityId, externalId));
    return true;
  }

  /**
   * The identity with this externalId as its lookup read it, or its id when a creation that lost
   * the race found it: this one's id when this call created it (docs/redis.md, "Creating an
   * identity"):
   *   1. the journal entry;
   *   2. the pending record (its audit entry in it) and its listing entry, at once;
   *   3. the externalId entry claimed with SET NX: the point of no return, and what decides
   *      between concurrent creations of one externalId;
   *   4. the commit: from here it reads, every node hears of it, its audit entry is in its outbox;
   *   5. the audit entry relayed, the journal entry removed.
   * A creation that loses the claim undoes its own step 2 and answers the winner.
   */
  private async ensure(
    identity: IdentityRecord,
    audit: AuditEntry,
  ): Promise<string | IdentityRecord> {
    const { workspaceId: ws, id, externalId } = identity;
    // The common case of a key linked to an existing identity reads, and writes nothing. One of
    // the previous layout is moved by this read, so that the claim below finds it.
    const existing = await this.byExternalId(ws, externalId);
    if (existing) return existing;
    const ticket = await this.unfinished.begin({
      op: 'createIdentity',
      ws,
      identityId: id,
      externalId,
    });
    this.step('createIdentity:journaled');
    const [written] = await Promise.all([
      this.redis.putRecordV1(
        names.identity(id),
        ...identityFields(identity),
        'pending',
        '1',
        'pendingAudit',
        outboxArgument(ws, audit),
      ),
      this.redis.zadd(identityListingIndex(ws, id), 0, id),
    ]);
    // Identity ids are new: a record there means an id was reused, which must never pass.
    if (putOutcome(written) !== 'written') throw new Error(`identity ${id} exists`);
    this.step('createIdentity:prepared');
    const found = await this.claim(ws, externalId, id);
    if (found !== id) {
      await this.undoCreation(ws, id);
      await this.unfinished.end(ticket);
      return found;
    }
    this.step('createIdentity:claimed');
    if ((await this.commit(ws, id)) === 'gone') {
      // Only a repair that took this write for dead undoes a creation under way: what it left
      // of ours is taken back, and the caller told.
      await this.unindex(ws, id, externalId);
      throw new Error('identity creation: undone by a repair before it could commit');
    }
    await this.finish(ticket, names.auditOutbox(id));
    return id;
  }

  /**
   * Gives the identity a new externalId, with `changes` to its other fields, as one audited write
   * (docs/redis.md, "Renaming an identity"). The new name's entry is in another slot, so:
   *   1. the journal entry (with the write's audit entry and fields, for a repair that finishes);
   *   2. the record marked `renamingTo` (only while it is still named `from`);
   *   3. the new name's entry claimed with SET NX: the point of no return, decided against any
   *      creation or rename to the same name;
   *   4. the commit on the record: the new name and fields, every node told, the audit entry in
   *      its outbox (only while still named `from` and marked for `to`);
   *   5. the old name's entry freed, the audit entry relayed, the journal entry removed.
   * A rename that loses the claim unmarks the record and answers `external_id_taken`; one whose
   * identity was renamed otherwise meanwhile answers `changed`; undefined: no such identity.
   */
  async rename(
    ws: string,
    identityId: string,
    from: string,
    to: string,
    changes: IdentityChanges,
    now: number,
    audit: AuditEntry,
  ): Promise<IdentityRecord | 'external_id_taken' | 'changed' | undefined> {
    const { set, del } = changedFields(changes);
    set.push(['updatedAt', String(now)]);
    const write: RenameWrite = {
      op: 'renameIdentity',
      ws,
      identityId,
      from,
      to,
      audit: outboxArgument(ws, audit),
      set,
      del,
    };
    const ticket = await this.unfinished.begin(write);
    this.step('renameIdentity:journaled');
    const marked = renameOutcome(await this.renameStep('mark', write));
    if (marked !== 'done') {
      await this.unfinished.end(ticket);
      return marked === 'not_found' ? undefined : 'changed';
    }
    this.step('renameIdentity:marked');
    if ((await this.claim(ws, to, identityId)) !== identityId) {
      await this.renameStep('unmark', write);
      await this.unfinished.end(ticket);
      return 'external_id_taken';
    }
    this.step('renameIdentity:claimed');
    const outbox = names.auditOutbox(identityId);
    await this.outbox.register(outbox);
    const committed = renameOutcome(await this.renameStep('commit', write));
    if (committed !== 'done') {
      // Renamed otherwise or deleted meanwhile: the claim goes back, nothing else was written.
      await this.release(ws, to, identityId);
      await this.unfinished.end(ticket);
      return committed === 'not_found' ? undefined : 'changed';
    }
    this.announce({ kind: 'identity', workspaceId: ws, identityId });
    this.step('renameIdentity:committed');
    await this.finish(ticket, outbox, () => this.release(ws, from, identityId));
    return this.byId(ws, identityId);
  }

  private renameStep(mode: 'mark' | 'commit' | 'unmark', write: RenameWrite): Promise<number> {
    const { ws, identityId, from, to } = write;
    return this.redis.renameIdentityV1(
      names.identity(identityId),
      names.auditOutbox(identityId),
      mode,
      ws,
      names.invalidationChannel,
      invalidation.identity(ws, identityId),
      from,
      to,
      ...(mode === 'commit'
        ? [write.audit, write.set.length, ...write.set.flat(), ...write.del]
        : ['']),
    );
  }

  /** The pool's count as stored (before a refill point not yet applied). */
  readCredits(identityId: string): Promise<CreditState | undefined> {
    return this.pools.read(identityId);
  }

  /** Sets, increments or decrements the pool's count atomically with verifications. */
  updateCredits(
    ws: string,
    identityId: string,
    op: CreditsOp,
    value: number,
    refill: { boundary: number; amount: number } | undefined,
    reset: CreditReset,
    audit: AuditEntry,
  ): Promise<CreditsUpdate> {
    return this.pools.update(ws, identityId, op, value, refill, reset, audit);
  }

  /** Frees an externalId's entry if it still names this identity. */
  private async release(ws: string, externalId: string, identityId: string): Promise<void> {
    await this.redis.deleteIfEqualV1(names.identityByExternalId(ws, externalId), identityId);
  }

  /**
   * Claims the externalId entry for `id`, or answers the live identity that holds it. An entry
   * that names a pending identity is that creation's claim, past its point of no return: it is
   * committed here (its audit entry is in its record) rather than waited for. One that names a
   * tombstone or nothing is the leftover of a deletion past its first step: it is freed, as the
   * deletion itself or the repair would.
   */
  private async claim(ws: string, externalId: string, id: string): Promise<string> {
    const entry = names.identityByExternalId(ws, externalId);
    for (let attempt = 0; attempt < MAX_CLAIM_ATTEMPTS; attempt++) {
      if ((await this.redis.set(entry, id, 'NX')) === 'OK') return id;
      const holder = await this.redis.get(entry);
      if (holder === id) return id;
      if (holder === null) continue;
      const hash = await this.redis.hgetall(names.identity(holder));
      const state = stateOf(hash);
      // A live holder named otherwise, and not being renamed to it, left the entry behind when
      // it was renamed away (its last step, or the repair, frees it): it is freed here too.
      if (state === 'live' && (hash.externalId === externalId || hash.renamingTo === externalId)) {
        return holder;
      }
      if (state === 'pending' && (await this.commit(ws, holder)) !== 'gone') return holder;
      await this.redis.deleteIfEqualV1(entry, holder);
    }
    throw new Error(
      `identity creation: externalId entry kept changing over ${MAX_CLAIM_ATTEMPTS} tries`,
    );
  }

  /** Commits a pending identity whose externalId entry names it: from here it reads. */
  async commit(ws: string, identityId: string): Promise<'committed' | 'committed_before' | 'gone'> {
    const outcome = commitOutcome(
      await this.redis.commitIdentityV1(
        names.identity(identityId),
        names.auditOutbox(identityId),
        names.invalidationChannel,
        invalidation.identity(ws, identityId),
      ),
    );
    if (outcome === 'committed') this.announce({ kind: 'identity', workspaceId: ws, identityId });
    return outcome;
  }

  /**
   * Undoes a creation that did not claim its externalId: the pending record, then its listing
   * entry. A committed identity is left as it is.
   */
  private async undoCreation(ws: string, identityId: string): Promise<void> {
    const discarded = discardOutcome(
      await this.redis.discardPendingIdentityV1(names.identity(identityId)),
    );
    if (discarded === 'kept') return;
    await this.redis.zrem(identityListingIndex(ws, identityId), identityId);
  }

  /**
   * An identity's entries in other slots, taken back in a deletion's order: the externalId entry
   * (only while it names this identity: it may be another's since), then the listing entry.
   */
  private async unindex(ws: string, identityId: string, externalId: string): Promise<void> {
    await this.release(ws, externalId, identityId);
    await this.redis.zrem(identityListingIndex(ws, identityId), identityId);
    // Its credit pool, in the record's slot: nothing spends from a deleted identity.
    await this.redis.del(names.credits(identityId));
  }

  /**
   * The last steps of a write that took effect: its cleanup, its audit entry relayed, its journal
   * entry removed. Should any fail, the journal entry stays and the repair does what is left; the
   * write is done either way, so a failure here is no error to answer.
   */
  private async finish(
    ticket: Ticket,
    outbox: string,
    cleanup: () => Promise<void> = async () => undefined,
  ): Promise<void> {
    try {
      await cleanup();
      await this.outbox.relay(outbox);
      await this.unfinished.end(ticket);
    } catch {
      // Left to the repair, which finds the journal entry.
    }
  }

  /**
   * Brings an identity write a node left in the journal to an end (the repair's part), then
   * relays its audit entry. A creation whose externalId entry names it passed its point of no
   * return and is committed; any other is undone. A deletion whose record is no longer live is
   * finished; one whose record is live never happened. Every step is idempotent.
   */
  async repair(
    write: Extract<UnfinishedWrite, { op: 'createIdentity' | 'deleteIdentity' | 'renameIdentity' }>,
  ): Promise<void> {
    if (write.op === 'renameIdentity') {
      await this.repairRename(write);
      return;
    }
    const { ws, identityId, externalId } = write;
    if (write.op === 'createIdentity') {
      const holder = await this.redis.get(names.identityByExternalId(ws, externalId));
      if (holder !== identityId) await this.undoCreation(ws, identityId);
      else if ((await this.commit(ws, identityId)) === 'gone') {
        await this.unindex(ws, identityId, externalId);
      }
    } else {
      const hash = await this.redis.hgetall(names.identity(identityId));
      if (stateOf(hash) !== 'live') await this.unindex(ws, identityId, externalId);
    }
    await this.outbox.relay(names.auditOutbox(identityId));
  }

  /**
   * A rename a node left: one that claimed its new name passed its point of no return and is
   * finished (committed with its own audit entry, the old name freed); any other is undone (its
   * claim, if it made one, freed and the record unmarked). Every step is idempotent.
   */
  private async repairRename(write: RenameWrite): Promise<void> {
    const { ws, identityId, from, to } = write;
    const hash = await this.redis.hgetall(names.identity(identityId));
    const live = stateOf(hash) === 'live' && hash.workspaceId === ws;
    const claimed = (await this.redis.get(names.identityByExternalId(ws, to))) === identityId;
    let renamed = live && hash.externalId === to;
    if (!renamed && claimed && live && hash.externalId === from && hash.renamingTo === to) {
      renamed = renameOutcome(await this.renameStep('commit', write)) === 'done';
      if (renamed) this.announce({ kind: 'identity', workspaceId: ws, identityId });
    }
    if (renamed) await this.release(ws, from, identityId);
    else {
      if (claimed) await this.release(ws, to, identityId);
      if (live) await this.renameStep('unmark', write);
    }
    await this.outbox.relay(names.auditOutbox(identityId));
  }

  /**
   * Moves an identity of the previous layout to the current one: its record under its own tag
   * (unless a record is there: moved before, or deleted since, whose tombstone wins), its
   * externalId entry and listing entry (when that record is live), then the legacy record and
   * its entries go. Every step is idempotent, so a move run twice, or interrupted and run again,
   * ends the same; no journal entry is needed.
   */
  async moveLegacyIdentity(ws: string, identityId: string): Promise<'moved' | 'absent'> {
    const hash = await this.redis.hgetall(legacy.identity(ws, identityId));
    const identity = identityFromHash(hash);
    if (!identity) return 'absent';
    await this.redis.putRecordV1(names.identity(identityId), ...Object.entries(hash).flat());
    if (liveIdentity(await this.redis.hgetall(names.identity(identityId)), ws)) {
      await this.redis.set(names.identityByExternalId(ws, identity.externalId), identityId, 'NX');
      await this.redis.zadd(identityListingIndex(ws, identityId), 0, identityId);
    }
    this.step('moveIdentity:copied');
    await this.redis.dropLegacyIdentityV1(
      legacy.identity(ws, identityId),
      legacy.identityNames(ws),
      legacy.identities(ws),
      identityId,
      identity.externalId,
    );
    return 'moved';
  }
}
