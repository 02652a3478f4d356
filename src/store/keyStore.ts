import type { RedisClient as Redis } from '../redis/clients';
import { execResults } from '../redis/results';
import type { CreditReset } from '../domain/credits';
import type { KeyFields, KeyRecord } from '../domain/key';
import { resultDecoder } from '../redis/scriptTable';
import { DEFAULT_AUDIT_MAX_ENTRIES, type AuditEntry } from '../domain/audit';
import { auditArgument } from './auditLog';
import { AuditOutbox, outboxArgument } from './auditOutbox';
import { invalidation, isStorableId, names, type Announce } from './names';
import { keyFieldChanges, keyFromHash } from './records';

export interface NewKey {
  workspaceId: string;
  apiId: string;
  keyId: string;
  hash: string;
  start: string;
  createdAt: number;
  fields: KeyFields;
}

/** The credits hash as stored: what is left, and which record "set remaining" it has applied. */
export interface CreditState {
  remaining: number;
  /** The refill point last applied (or when the last "set remaining" was applied). */
  lastRefillAt: number;
  appliedReset?: string;
}

export type CreditsUpdate = number | 'would_go_negative';

/** The first record version: a created key's "set remaining" is named after it. */
const FIRST_VERSION = '1';

export type CreateKeyOutcome = 'created' | 'api_not_found' | 'hash_exists';

/** The new key of a reroll: what is not carried over from the old one. */
export type RerolledKey = Pick<NewKey, 'keyId' | 'hash' | 'start' | 'createdAt'>;

/** What a reroll writes, derived from the old key as it is when the write is tried. */
export interface RerollPlan {
  /** The new key's fields (its permissions and roles are copied by the script). */
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

const createKeyOutcome = resultDecoder('createKey');
const importKeysOutcome = resultDecoder('importKeys');
const updateCreditsOutcome = resultDecoder('updateCredits');
const updateKeyOutcome = resultDecoder('updateKey');
const deleteKeyOutcome = resultDecoder('deleteKey');
const rerollKeyOutcome = resultDecoder('rerollKey');

/** Compare-and-set writes retry this often when concurrent writers keep moving the version. */
const MAX_CAS_ATTEMPTS = 8;

const ownerIndexArgs = (ws: string, apiId: string, ownerId: string | undefined) =>
  // A key without an owner still needs a KEYS slot in the script; the name is never written.
  names.ownerKeys(ws, apiId, ownerId ?? '');

/** The hash fields of a new key record (the scripts add `seq` and `version`). */
function recordFields(key: NewKey): string[] {
  const record: string[] = [
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

/** Key records and their indexes on the primary. */
export class KeyStore {
  /** Where credit changes, in the key's slot, leave their entries for the workspace's stream. */
  private readonly outbox: AuditOutbox;

  constructor(
    private readonly redis: Redis,
    private readonly announce: Announce,
    /** The cap of each workspace's audit log, which every write here appends to. */
    private readonly auditMaxEntries: number = DEFAULT_AUDIT_MAX_ENTRIES,
  ) {
    this.outbox = new AuditOutbox(redis, auditMaxEntries);
  }

  async create(key: NewKey, audit: AuditEntry): Promise<CreateKeyOutcome> {
    const { workspaceId: ws, apiId, keyId, hash } = key;
    if (!isStorableId(apiId)) return 'api_not_found';
    const ownerId = key.fields.ownerId ?? undefined;
    const result = await this.redis.createKeyV2(
      names.api(ws, apiId),
      names.key(ws, keyId),
      names.keyHashes(ws),
      names.apiKeys(ws, apiId),
      ownerIndexArgs(ws, apiId, ownerId),
      names.audit(ws),
      keyId,
      hash,
      names.invalidationChannel,
      ownerId === undefined ? '0' : '1',
      invalidation.keyCreated(ws, hash),
      auditArgument(audit, this.auditMaxEntries),
      ...recordFields(key),
    );
    // Any other answer is the new key's sequence number.
    const outcome = createKeyOutcome(result) ?? 'created';
    if (outcome === 'created') this.announce({ kind: 'key', workspaceId: ws, hash, created: true });
    return outcome;
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
    const unstorable = keys.findIndex((key) => !isStorableId(key.apiId));
    if (unstorable >= 0) return { failure: 'api_not_found', index: unstorable };
    const keyNames: string[] = [names.keyHashes(ws), names.audit(ws)];
    const args: (string | number)[] = [names.invalidationChannel, keys.length];
    for (const key of keys) {
      const ownerId = key.fields.ownerId ?? undefined;
      keyNames.push(
        names.api(ws, key.apiId),
        names.key(ws, key.keyId),
        names.apiKeys(ws, key.apiId),
        ownerIndexArgs(ws, key.apiId, ownerId),
      );
      const fields = recordFields(key);
      args.push(
        key.keyId,
        key.hash,
        ownerId === undefined ? '0' : '1',
        invalidation.keyCreated(ws, key.hash),
        auditArgument(audit(key), this.auditMaxEntries),
        fields.length / 2,
        ...fields,
      );
    }
    const [code, item] = await this.redis.importKeysV2(keyNames.length, ...keyNames, ...args);
    const outcome = importKeysOutcome(code as number);
    if (outcome === 'imported') {
      for (const key of keys) {
        this.announce({ kind: 'key', workspaceId: ws, hash: key.hash, created: true });
      }
      return outcome;
    }
    return { failure: outcome, index: (item as number) - 1 };
  }

  async readCredits(keyId: string): Promise<CreditState | undefined> {
    const [remaining, lastRefillAt, appliedReset] = await this.redis.hmget(
      names.credits(keyId),
      'remaining',
      'lastRefillAt',
      'appliedReset',
    );
    if (remaining === null) return undefined;
    return {
      remaining: Number(remaining),
      lastRefillAt: Number(lastRefillAt ?? 0),
      ...(appliedReset !== null ? { appliedReset } : {}),
    };
  }

  async deleteCredits(keyId: string): Promise<void> {
    await this.redis.del(names.credits(keyId));
  }

  /**
   * set / increment / decrement, atomic with verifications, after any refill point passed. The
   * credits are in the key's slot, not the workspace's: the entry goes through the key's audit
   * outbox (src/store/auditOutbox.ts), appended by the script that changes them.
   */
  async updateCredits(
    ws: string,
    keyId: string,
    op: 'set' | 'increment' | 'decrement',
    value: number,
    refill: { boundary: number; amount: number } | undefined,
    reset: CreditReset,
    audit: AuditEntry,
  ): Promise<CreditsUpdate> {
    const outbox = names.auditOutbox(keyId);
    await this.outbox.register(outbox);
    const result = await this.redis.updateCreditsV2(
      names.credits(keyId),
      outbox,
      op,
      value,
      refill?.boundary ?? '',
      refill?.amount ?? '',
      reset.nonce,
      reset.value,
      reset.at,
      outboxArgument(ws, audit),
    );
    const outcome = updateCreditsOutcome(result);
    if (outcome !== undefined) return outcome;
    await this.outbox.relayAfterWrite(outbox);
    // Any other answer is the new remaining.
    return result;
  }

  /** The record and the ids of what it holds, in one round trip. */
  async get(ws: string, keyId: string): Promise<KeyRecord | undefined> {
    if (!isStorableId(keyId)) return undefined;
    const [hash, permissionIds, roleIds] = execResults(
      await this.redis
        .pipeline()
        .hgetall(names.key(ws, keyId))
        .smembers(names.keyPermissions(ws, keyId))
        .smembers(names.keyRoles(ws, keyId))
        .exec(),
    ) as [Record<string, string>, string[], string[]];
    const record = keyFromHash(hash);
    if (!record) return undefined;
    if (permissionIds.length > 0) record.permissionIds = permissionIds.sort();
    if (roleIds.length > 0) record.roleIds = roleIds.sort();
    return record;
  }

  async findByHash(ws: string, hash: string): Promise<KeyRecord | undefined> {
    const keyId = await this.redis.hget(names.keyHashes(ws), hash);
    if (keyId === null) return undefined;
    const record = await this.get(ws, keyId);
    // The index and the record are written together; a mismatch means a delete raced this read.
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
    for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
      const current = await this.get(ws, keyId);
      if (!current) return undefined;
      // A "set remaining" is named after the version this write creates: unique for the key.
      const changes = keyFieldChanges(fields, String(current.version + 1), now);
      changes.set.push(['updatedAt', String(now)]);
      const newOwner =
        fields.ownerId === undefined ? current.ownerId : (fields.ownerId ?? undefined);
      const ownerChanged = newOwner !== current.ownerId;
      const fieldArgs: string[] = [];
      for (const [field, value] of changes.set) fieldArgs.push(field, value);
      fieldArgs.push(...changes.del);
      const result = await this.redis.updateKeyV2(
        names.key(ws, keyId),
        ownerIndexArgs(ws, current.apiId, current.ownerId),
        ownerIndexArgs(ws, current.apiId, newOwner),
        names.audit(ws),
        String(current.version),
        names.invalidationChannel,
        invalidation.key(ws, current.hash),
        ownerChanged && current.ownerId !== undefined ? '1' : '0',
        ownerChanged && newOwner !== undefined ? '1' : '0',
        auditArgument(audit, this.auditMaxEntries),
        String(changes.set.length),
        ...fieldArgs,
      );
      const outcome = updateKeyOutcome(result);
      if (outcome === 'not_found') return undefined;
      if (outcome === 'updated') {
        this.announce({ kind: 'key', workspaceId: ws, hash: current.hash, created: false });
        return this.get(ws, keyId);
      }
    }
    throw new Error(`updateKey ${keyId}: version kept changing over ${MAX_CAS_ATTEMPTS} attempts`);
  }

  /**
   * Creates `rerolled` with the old key's settings and sets the old key's expiry, in one script:
   * both happen or neither. `plan` derives the writes from the old key as read; should the key
   * change before the script runs, it is read and planned again, so a concurrent write to the old
   * key is never lost, nor half carried over.
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
      const ownerId = fields.ownerId ?? undefined;
      const result = await this.redis.rerollKeyV2(
        names.api(ws, current.apiId),
        names.key(ws, keyId),
        names.key(ws, rerolled.keyId),
        names.keyHashes(ws),
        names.apiKeys(ws, current.apiId),
        ownerIndexArgs(ws, current.apiId, ownerId),
        names.keyPermissions(ws, keyId),
        names.keyRoles(ws, keyId),
        names.keyPermissions(ws, rerolled.keyId),
        names.keyRoles(ws, rerolled.keyId),
        names.audit(ws),
        String(current.version),
        names.invalidationChannel,
        invalidation.key(ws, current.hash),
        String(expires),
        String(rerolled.createdAt),
        rerolled.keyId,
        rerolled.hash,
        ownerId === undefined ? '0' : '1',
        invalidation.keyCreated(ws, rerolled.hash),
        auditArgument(audit, this.auditMaxEntries),
        ...recordFields({ ...rerolled, workspaceId: ws, apiId: current.apiId, fields }),
      );
      const outcome = rerollKeyOutcome(result);
      if (outcome === 'version_moved') continue;
      if (outcome === 'rerolled') {
        this.announce({ kind: 'key', workspaceId: ws, hash: current.hash, created: false });
        this.announce({ kind: 'key', workspaceId: ws, hash: rerolled.hash, created: true });
      }
      return outcome;
    }
    throw new Error(`rerollKey ${keyId}: version kept changing over ${MAX_CAS_ATTEMPTS} attempts`);
  }

  /** Deletes the key and its index entries; false when it did not exist. */
  async delete(ws: string, keyId: string, audit: AuditEntry): Promise<boolean> {
    for (let attempt = 0; attempt < MAX_CAS_ATTEMPTS; attempt++) {
      const current = await this.get(ws, keyId);
      if (!current) return false;
      const result = await this.redis.deleteKeyV2(
        names.key(ws, keyId),
        names.keyHashes(ws),
        names.apiKeys(ws, current.apiId),
        ownerIndexArgs(ws, current.apiId, current.ownerId),
        names.audit(ws),
        String(current.version),
        names.invalidationChannel,
        invalidation.key(ws, current.hash),
        current.ownerId === undefined ? '0' : '1',
        auditArgument(audit, this.auditMaxEntries),
      );
      const outcome = deleteKeyOutcome(result);
      if (outcome === 'not_found') return false;
      if (outcome === 'deleted') {
        this.announce({ kind: 'key', workspaceId: ws, hash: current.hash, created: false });
        if (current.credits) await this.deleteCredits(keyId);
        if (current.permissionIds || current.roleIds) {
          await this.redis.del(names.keyPermissions(ws, keyId), names.keyRoles(ws, keyId));
        }
        return true;
      }
    }
    throw new Error(`deleteKey ${keyId}: version kept changing over ${MAX_CAS_ATTEMPTS} attempts`);
  }

  /** One page of an API's keys in creation order, after `afterSeq`, with the exact total. */
  async list(
    ws: string,
    apiId: string,
    options: { limit: number; afterSeq?: number; ownerId?: string },
  ): Promise<KeyPage> {
    const index =
      options.ownerId === undefined
        ? names.apiKeys(ws, apiId)
        : names.ownerKeys(ws, apiId, options.ownerId);
    const min = options.afterSeq === undefined ? '-inf' : `(${options.afterSeq}`;
    const replies = await this.redis
      .multi()
      // One more than asked for, to tell whether another page follows.
      .zrangebyscore(index, min, '+inf', 'WITHSCORES', 'LIMIT', 0, options.limit + 1)
      .zcard(index)
      .exec();
    const [found, total] = execResults(replies) as [string[], number];
    const more = found.length > 2 * options.limit;
    const idsAndScores = more ? found.slice(0, 2 * options.limit) : found;
    if (idsAndScores.length === 0) return { keys: [], total, more: false };
    const pipeline = this.redis.pipeline();
    for (let i = 0; i < idsAndScores.length; i += 2) {
      pipeline.hgetall(names.key(ws, idsAndScores[i] as string));
    }
    const keys: KeyRecord[] = [];
    for (const hash of execResults(await pipeline.exec())) {
      // A key deleted between the two reads is simply not on the page.
      const record = keyFromHash(hash as Record<string, string>);
      if (record) keys.push(record);
    }
    return {
      keys,
      total,
      lastSeq: Number(idsAndScores[idsAndScores.length - 1]),
      more,
    };
  }

  /** Removes an id from the API's index when its record is gone. */
  async unindex(ws: string, apiId: string, keyId: string): Promise<void> {
    await this.redis.zrem(names.apiKeys(ws, apiId), keyId);
  }

  /** Ids of up to `count` keys of an API, oldest first: the batches of an API purge. */
  async firstKeyIds(ws: string, apiId: string, count: number): Promise<string[]> {
    return this.redis.zrange(names.apiKeys(ws, apiId), 0, count - 1);
  }
}
