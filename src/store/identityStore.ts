import { DEFAULT_AUDIT_MAX_ENTRIES, type AuditEntry } from '../domain/audit';
import { idPage } from './idPage';
import { auditArgument } from './auditLog';
import type { IdentityChanges, IdentityRecord } from '../domain/identity';
import type { NamedLimit } from '../domain/namedLimits';
import { newId } from '../keys/ids';
import type { RedisClient as Redis } from '../redis/clients';
import { execResults } from '../redis/results';
import { resultDecoder } from '../redis/scriptTable';
import { invalidation, isStorableId, names, type Announce } from './names';

const updateOutcome = resultDecoder('updateIdentity');
const deleteOutcome = resultDecoder('deleteIdentity');

type Hash = Record<string, string>;

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
  for (const [field, value] of changedFields(identity).set) fields.push(field, value);
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
  return { set, del };
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
    createdAt: Number(hash.createdAt),
    ...(hash.updatedAt !== undefined ? { updatedAt: Number(hash.updatedAt) } : {}),
  };
}

/** Identities of a workspace on the primary, under the workspace's hash tag. */
export class IdentityStore {
  constructor(
    private readonly redis: Redis,
    private readonly announce: Announce,
    /** The cap of each workspace's audit log, which every write here appends to. */
    private readonly auditMaxEntries: number = DEFAULT_AUDIT_MAX_ENTRIES,
  ) {}

  /** The new identity, unless its externalId is taken in the workspace (then nothing is written). */
  async create(
    identity: IdentityRecord,
    audit: AuditEntry,
  ): Promise<'created' | 'external_id_taken'> {
    return (await this.ensure(identity, audit)) === identity.id ? 'created' : 'external_id_taken';
  }

  /**
   * The identity with this externalId, created without meta or limits when there is none.
   * Concurrent calls for one externalId make one identity: the script decides, not this process.
   * A creation is audited as `audit` (the key write that asked for it) with the identity as its
   * target.
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
      const id = await this.ensure(fresh, {
        ...audit,
        targetType: 'identity',
        targetId: fresh.id,
        summary: { externalId },
      });
      if (id === fresh.id) return fresh;
      const found = await this.byId(ws, id);
      if (found) return found;
    }
    throw new Error(
      `upsertByExternalId: the identity was deleted before it could be read, ${MAX_UPSERT_ATTEMPTS} times`,
    );
  }

  async byId(ws: string, identityId: string): Promise<IdentityRecord | undefined> {
    if (!isStorableId(identityId)) return undefined;
    return identityFromHash(await this.redis.hgetall(names.identity(ws, identityId)));
  }

  async byExternalId(ws: string, externalId: string): Promise<IdentityRecord | undefined> {
    const identityId = await this.redis.hget(names.identityNames(ws), externalId);
    if (identityId === null) return undefined;
    const found = await this.byId(ws, identityId);
    // The index and the record are written together; a mismatch means a delete raced this read.
    return found?.externalId === externalId ? found : undefined;
  }

  /** A page of the workspace's identities in id (creation) order, after `afterId`. */
  async list(
    ws: string,
    options: { limit: number; afterId?: string },
  ): Promise<{ identities: IdentityRecord[]; total: number; next?: string }> {
    const { page, total, more } = await idPage(this.redis, names.identities(ws), options);
    const identities: IdentityRecord[] = [];
    if (page.length > 0) {
      const pipeline = this.redis.pipeline();
      for (const id of page) pipeline.hgetall(names.identity(ws, id));
      for (const hash of execResults(await pipeline.exec())) {
        // One deleted between the two reads is simply not listed.
        const identity = identityFromHash(hash as Hash);
        if (identity) identities.push(identity);
      }
    }
    return {
      identities,
      total,
      // The last id read, listed or not, so a deletion cannot end the listing early.
      ...(more ? { next: page[page.length - 1] as string } : {}),
    };
  }

  /** Replaces what `changes` names; undefined when there is no such identity. */
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
    const result = await this.redis.updateIdentityV2(
      names.identity(ws, identityId),
      names.audit(ws),
      names.invalidationChannel,
      invalidation.identity(ws, identityId),
      auditArgument(audit, this.auditMaxEntries),
      set.length,
      ...set.flat(),
      ...del,
    );
    if (updateOutcome(result) === 'not_found') return undefined;
    this.announce({ kind: 'identity', workspaceId: ws, identityId });
    return this.byId(ws, identityId);
  }

  /** Deletes the identity and frees its externalId; false when there was none. */
  async delete(ws: string, identityId: string, audit: AuditEntry): Promise<boolean> {
    if (!isStorableId(identityId)) return false;
    const result = await this.redis.deleteIdentityV2(
      names.identityNames(ws),
      names.identity(ws, identityId),
      names.identities(ws),
      names.audit(ws),
      names.invalidationChannel,
      invalidation.identity(ws, identityId),
      auditArgument(audit, this.auditMaxEntries),
    );
    if (deleteOutcome(result) !== 'deleted') return false;
    this.announce({ kind: 'identity', workspaceId: ws, identityId });
    return true;
  }

  /** The id of the identity with this externalId: this one's when this call created it. */
  private async ensure(identity: IdentityRecord, audit: AuditEntry): Promise<string> {
    const { workspaceId: ws, id, externalId } = identity;
    const found = await this.redis.ensureIdentityV2(
      names.identityNames(ws),
      names.identity(ws, id),
      names.identities(ws),
      names.audit(ws),
      externalId,
      id,
      names.invalidationChannel,
      invalidation.identity(ws, id),
      auditArgument(audit, this.auditMaxEntries),
      ...identityFields(identity),
    );
    if (found === id) this.announce({ kind: 'identity', workspaceId: ws, identityId: id });
    return found;
  }
}
