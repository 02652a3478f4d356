import type { PermissionRecord, RoleRecord } from '../domain/rbac';
import type { RedisClient as Redis } from '../redis/clients';
import { execResults } from '../redis/results';
import { resultDecoder } from '../redis/scriptTable';
import { DEFAULT_AUDIT_MAX_ENTRIES, type AuditEntry } from '../domain/audit';
import { AuditOutbox, appendToOutbox, outboxArgument } from './auditOutbox';
import { noSteps, type StepHook } from './faults';
import { LEGACY_PERMISSIONS, LEGACY_ROLES, LegacyLayout } from './legacyLayout';
import { invalidation, isStorableId, legacy, names, type Announce } from './names';
import {
  UnfinishedWrites,
  type RbacKind,
  type Ticket,
  type UnfinishedWrite,
} from './unfinishedWrites';

const putOutcome = resultDecoder('putRecordWithMembers');
const releaseOutcome = resultDecoder('releaseName');
const tombstoneOutcome = resultDecoder('tombstoneRbacEntry');
const setMembersOutcome = resultDecoder('setRolePermissions');
const commitOutcome = resultDecoder('commitIdentity');
const discardOutcome = resultDecoder('discardPendingIdentity');

/**
 * A deleted permission's (role's) tombstone outlives any write that read it before its deletion
 * (a migration's move, a repair): none can bring it back.
 */
const TOMBSTONE_TTL_MS = 3_600_000;

/** Where each kind lives: a record and a set of members by id, an index of names per workspace. */
const KINDS = {
  permission: {
    record: names.permission,
    members: names.permissionMembers,
    names: names.permissionNames,
    legacyRecord: legacy.permission,
    legacyMembers: legacy.permissionMembers,
  },
  role: {
    record: names.role,
    members: names.rolePermissions,
    names: names.roleNames,
    legacyRecord: legacy.role,
    legacyMembers: legacy.rolePermissions,
  },
} as const;

type Hash = Record<string, string>;

function permissionFromHash(hash: Hash): PermissionRecord | undefined {
  if (!hash.id) return undefined;
  return {
    id: hash.id,
    workspaceId: hash.workspaceId ?? '',
    name: hash.name ?? '',
    slug: hash.slug ?? hash.name ?? '',
    ...(hash.description !== undefined ? { description: hash.description } : {}),
    createdAt: Number(hash.createdAt),
  };
}

function roleFromHash(hash: Hash): RoleRecord | undefined {
  if (!hash.id) return undefined;
  return {
    id: hash.id,
    workspaceId: hash.workspaceId ?? '',
    name: hash.name ?? '',
    ...(hash.description !== undefined ? { description: hash.description } : {}),
    createdAt: Number(hash.createdAt),
  };
}

function fields(record: PermissionRecord | RoleRecord): string[] {
  const pairs: string[] = [];
  for (const [field, value] of Object.entries(record)) {
    if (value !== undefined) pairs.push(field, String(value));
  }
  return pairs;
}

/** A record of the workspace that is neither a tombstone nor missing (it may still be pending). */
const isRecordOf = (hash: Hash, ws: string) =>
  hash.id !== undefined && hash.deletedAt === undefined && hash.workspaceId === ws;

/** Oldest first, as they were created; ids break ties (they are time-ordered too). */
const byCreation = (a: { createdAt: number; id: string }, b: { createdAt: number; id: string }) =>
  a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** What a node needs of a workspace's permissions and roles to judge its keys: names by id. */
export interface RbacCatalogue {
  permissions: ReadonlyMap<string, string>;
  roles: ReadonlyMap<string, { name: string; permissionIds: readonly string[] }>;
}

export type LinkKind = 'permissions' | 'roles';

/**
 * Permissions and roles on the primary: each record (with a role's permission ids) under its own
 * id's tag, and per kind the workspace's index of names → ids under the workspace's tag. A
 * permission or role exists while the index names it and its record is there: the index entry is
 * the point of no return of a creation (claimed with HSETNX, which also makes names unique) and of
 * a deletion (released first). Both writes span two slots, so they are journaled like the others
 * (docs/redis.md, "Writes across slots"), and the repair finishes what a node left.
 */
export class RbacStore {
  /** Where writes leave their audit entries for the workspace's log. */
  private readonly outbox: AuditOutbox;
  readonly unfinished: UnfinishedWrites;
  readonly legacy: { permission: LegacyLayout; role: LegacyLayout };

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
    this.legacy = {
      permission: new LegacyLayout(redis, LEGACY_PERMISSIONS),
      role: new LegacyLayout(redis, LEGACY_ROLES),
    };
  }

  createPermission(
    permission: PermissionRecord,
    audit: AuditEntry,
  ): Promise<'created' | 'name_taken'> {
    return this.create('permission', permission, [], audit);
  }

  /** A role with the ids of its permissions and its audit entry, created together. */
  createRole(
    role: RoleRecord,
    permissionIds: readonly string[],
    audit: AuditEntry,
  ): Promise<'created' | 'name_taken'> {
    return this.create('role', role, permissionIds, audit);
  }

  async getPermission(ws: string, id: string): Promise<PermissionRecord | undefined> {
    const hash = await this.read('permission', ws, id);
    return hash && permissionFromHash(hash);
  }

  async getRole(ws: string, id: string): Promise<RoleRecord | undefined> {
    const hash = await this.read('role', ws, id);
    return hash && roleFromHash(hash);
  }

  async listPermissions(ws: string): Promise<PermissionRecord[]> {
    return (await this.list('permission', ws, permissionFromHash)).sort(byCreation);
  }

  async listRoles(ws: string): Promise<RoleRecord[]> {
    return (await this.list('role', ws, roleFromHash)).sort(byCreation);
  }

  /**
   * Every permission's and role's name by id, with each role's permission ids: the two indexes
   * (one slot, one round trip), then each role's set (its own slot, all at once).
   */
  async catalogue(ws: string): Promise<RbacCatalogue> {
    const [permissionIds, roleIds] = execResults(
      await this.redis
        .pipeline()
        .hgetall(names.permissionNames(ws))
        .hgetall(names.roleNames(ws))
        .exec(),
    ) as [Hash, Hash];
    const permissions = new Map(Object.entries(permissionIds).map(([name, id]) => [id, name]));
    const roleEntries = Object.entries(roleIds).filter(([, id]) => isStorableId(id));
    const legacyRolesMayRemain = roleEntries.length > 0 && (await this.legacy.role.mayRemain());
    const members = await Promise.all(
      roleEntries.map(async ([, id]) => {
        // A role of the previous layout is moved first, so its set is read where it now lives.
        if (legacyRolesMayRemain && (await this.redis.exists(names.role(id))) === 0) {
          await this.moveLegacy('role', ws, id);
        }
        return this.redis.smembers(names.rolePermissions(id));
      }),
    );
    const roles = new Map<string, { name: string; permissionIds: string[] }>();
    roleEntries.forEach(([name, id], i) => roles.set(id, { name, permissionIds: members[i]! }));
    return { permissions, roles };
  }

  /** The ids of the named permissions (or roles) that exist, by name. */
  async idsByName(
    ws: string,
    kind: LinkKind,
    wanted: readonly string[],
  ): Promise<Map<string, string>> {
    const found = new Map<string, string>();
    if (wanted.length === 0) return found;
    const index = kind === 'permissions' ? names.permissionNames(ws) : names.roleNames(ws);
    const ids = await this.redis.hmget(index, ...wanted);
    wanted.forEach((name, i) => {
      const id = ids[i];
      if (id) found.set(name, id);
    });
    return found;
  }

  /**
   * Adds, removes or sets (replaces) what a key holds directly, in one MULTI in the key's slot
   * with the write's audit entry (through the key's outbox), and tells every node to read the
   * key again. The caller read the key first, which moved a key of the previous layout.
   */
  async changeKeyLinks(
    ws: string,
    key: { id: string; hash: string },
    kind: LinkKind,
    op: 'add' | 'remove' | 'set',
    ids: readonly string[],
    audit: AuditEntry,
  ): Promise<void> {
    const set = kind === 'permissions' ? names.keyPermissions(key.id) : names.keyRoles(key.id);
    const outbox = names.auditOutbox(key.id);
    await this.outbox.register(outbox);
    const multi = this.redis.multi();
    if (op === 'set') multi.del(set);
    if (ids.length > 0) {
      if (op === 'remove') multi.srem(set, ...ids);
      else multi.sadd(set, ...ids);
    }
    multi.publish(names.invalidationChannel, invalidation.key(ws, key.hash));
    execResults(await appendToOutbox(multi, outbox, ws, audit).exec());
    this.announce({ kind: 'key', workspaceId: ws, hash: key.hash, created: false });
    await this.outbox.relayAfterWrite(outbox);
  }

  /**
   * Replaces the permission ids of a role, in one step in the role's slot with the check that
   * the role is there, the message to every node and the audit entry; false when it is not.
   */
  async setRolePermissions(
    ws: string,
    roleId: string,
    permissionIds: readonly string[],
    audit: AuditEntry,
  ): Promise<boolean> {
    if (!(await this.read('role', ws, roleId))) return false;
    const outbox = names.auditOutbox(roleId);
    await this.outbox.register(outbox);
    const outcome = setMembersOutcome(
      await this.redis.setRolePermissionsV1(
        names.role(roleId),
        names.rolePermissions(roleId),
        outbox,
        ws,
        names.invalidationChannel,
        invalidation.rbac(ws),
        outboxArgument(ws, audit),
        ...permissionIds,
      ),
    );
    await this.outbox.relayAfterWrite(outbox);
    if (outcome !== 'set') return false;
    this.announce({ kind: 'rbac', workspaceId: ws });
    return true;
  }

  deletePermission(ws: string, id: string, audit: AuditEntry): Promise<boolean> {
    return this.remove('permission', ws, id, audit);
  }

  deleteRole(ws: string, id: string, audit: AuditEntry): Promise<boolean> {
    return this.remove('role', ws, id, audit);
  }

  /**
   * Moves a permission (a role, with its set) of the previous layout to its own tag: a copy in
   * one step unless the record is there already (moved before, or deleted since: a tombstone),
   * then the old record and set deleted. Run twice, or cut short and run again, it is the same.
   */
  async moveLegacy(kind: RbacKind, ws: string, id: string): Promise<'moved' | 'absent'> {
    if (!isStorableId(id)) return 'absent';
    const where = KINDS[kind];
    const [hash, members] = execResults(
      await this.redis
        .pipeline()
        .hgetall(where.legacyRecord(ws, id))
        .smembers(where.legacyMembers(ws, id))
        .exec(),
    ) as [Hash, string[]];
    if (!hash.id) return 'absent';
    await this.redis.putRecordWithMembersV1(
      where.record(id),
      where.members(id),
      members.length,
      ...members,
      ...Object.entries(hash).flat(),
    );
    this.step(`move${kind === 'role' ? 'Role' : 'Permission'}:copied`);
    await this.redis.del(where.legacyRecord(ws, id), where.legacyMembers(ws, id));
    return 'moved';
  }

  /**
   * A new permission or role (docs/redis.md, "Creating a permission or role"):
   *   1. the journal entry;
   *   2. the pending record (its audit entry in it) with a role's permission ids, in one step;
   *   3. the name claimed in the workspace's index (HSETNX): the point of no return, and what
   *      decides between two creations of one name;
   *   4. the commit: its audit entry goes to its outbox and every node hears of it;
   *   5. the audit entry relayed, the journal entry removed.
   * A creation that loses the claim undoes its own step 2.
   */
  private async create(
    kind: RbacKind,
    record: PermissionRecord | RoleRecord,
    members: readonly string[],
    audit: AuditEntry,
  ): Promise<'created' | 'name_taken'> {
    const { workspaceId: ws, id, name } = record;
    const where = KINDS[kind];
    const ticket = await this.unfinished.begin({ op: 'createRbac', kind, ws, id, name });
    this.step('createRbac:journaled');
    const written = putOutcome(
      await this.redis.putRecordWithMembersV1(
        where.record(id),
        where.members(id),
        members.length,
        ...members,
        ...fields(record),
        'pending',
        '1',
        'pendingAudit',
        outboxArgument(ws, audit),
      ),
    );
    // Ids are new: a record there means an id was reused, which must never pass.
    if (written !== 'written') throw new Error(`${kind} ${id} exists`);
    this.step('createRbac:prepared');
    if (!(await this.claim(kind, ws, name, id))) {
      await this.undoCreation(kind, id);
      await this.unfinished.end(ticket);
      return 'name_taken';
    }
    this.step('createRbac:claimed');
    if ((await this.commit(kind, ws, id)) === 'gone') {
      // Only a repair that took this write for dead undoes a creation under way.
      await this.redis.hdel(where.names(ws), name);
      throw new Error(`${kind} creation: undone by a repair before it could commit`);
    }
    await this.finish(ticket, id);
    return 'created';
  }

  /**
   * Claims the name for `id`; false when another permission (role) of the workspace has it. An
   * entry whose record is nowhere (a creation a repair undid after it claimed) is freed first.
   */
  private async claim(kind: RbacKind, ws: string, name: string, id: string): Promise<boolean> {
    const index = KINDS[kind].names(ws);
    for (let attempt = 0; attempt < 3; attempt++) {
      if ((await this.redis.hsetnx(index, name, id)) === 1) return true;
      const holder = await this.redis.hget(index, name);
      if (holder === null) continue;
      if (holder === id) return true;
      if (await this.recordExists(kind, ws, holder)) return false;
      await this.redis.releaseNameV1(
        index,
        name,
        holder,
        names.invalidationChannel,
        invalidation.rbac(ws),
      );
    }
    return false;
  }

  /**
   * Whether the record an index entry names is anywhere: the previous layout is read first (a
   * move copies, then deletes), while its records may remain.
   */
  private async recordExists(kind: RbacKind, ws: string, id: string): Promise<boolean> {
    if (!isStorableId(id)) return false;
    if (
      (await this.legacy[kind].mayRemain()) &&
      (await this.redis.exists(KINDS[kind].legacyRecord(ws, id))) === 1
    ) {
      return true;
    }
    return isRecordOf(await this.redis.hgetall(KINDS[kind].record(id)), ws);
  }

  /** Commits a pending record whose name the index holds: its audit entry goes to its outbox. */
  private async commit(kind: RbacKind, ws: string, id: string) {
    const outcome = commitOutcome(
      await this.redis.commitIdentityV1(
        KINDS[kind].record(id),
        names.auditOutbox(id),
        names.invalidationChannel,
        invalidation.rbac(ws),
      ),
    );
    if (outcome === 'committed') this.announce({ kind: 'rbac', workspaceId: ws });
    return outcome;
  }

  /** Undoes a creation that did not claim its name: the pending record and its set. */
  private async undoCreation(kind: RbacKind, id: string): Promise<void> {
    const where = KINDS[kind];
    const outcome = discardOutcome(await this.redis.discardPendingIdentityV1(where.record(id)));
    if (outcome === 'discarded') await this.redis.del(where.members(id));
  }

  /**
   * Deletes a permission or role (docs/redis.md, "Deleting a permission or role"): its name
   * released first (from here no node counts it, and every node hears of it), then its record
   * replaced by a tombstone with its set gone and its audit entry in its outbox. False when the
   * workspace has none with this id.
   */
  private async remove(kind: RbacKind, ws: string, id: string, audit: AuditEntry) {
    const current = await this.read(kind, ws, id);
    if (!current) return false;
    const name = current.name ?? '';
    const entry = outboxArgument(ws, audit);
    const ticket = await this.unfinished.begin({
      op: 'deleteRbac',
      kind,
      ws,
      id,
      name,
      audit: entry,
    });
    const released = releaseOutcome(
      await this.redis.releaseNameV1(
        KINDS[kind].names(ws),
        name,
        id,
        names.invalidationChannel,
        invalidation.rbac(ws),
      ),
    );
    if (released === 'not_held') {
      // Another deletion released it first: that one finishes the deletion.
      await this.unfinished.end(ticket);
      return false;
    }
    this.announce({ kind: 'rbac', workspaceId: ws });
    this.step('deleteRbac:released');
    try {
      await this.tombstone(kind, ws, id, entry);
      await this.finish(ticket, id);
    } catch {
      // Deleted already: the repair finds the journal entry and does the rest.
    }
    return true;
  }

  private async tombstone(kind: RbacKind, ws: string, id: string, entry: string) {
    const where = KINDS[kind];
    return tombstoneOutcome(
      await this.redis.tombstoneRbacEntryV1(
        where.record(id),
        where.members(id),
        names.auditOutbox(id),
        ws,
        entry,
        String(Date.now()),
        String(TOMBSTONE_TTL_MS),
      ),
    );
  }

  /**
   * The record of a permission (role) of the workspace that exists: its index entry names it and
   * it is there (a pending one whose name is claimed is past its point of no return). One of the
   * previous layout is moved by this read.
   */
  private async read(kind: RbacKind, ws: string, id: string): Promise<Hash | undefined> {
    if (!isStorableId(id)) return undefined;
    const where = KINDS[kind];
    let hash = await this.redis.hgetall(where.record(id));
    if (
      hash.id === undefined &&
      hash.deletedAt === undefined &&
      (await this.legacy[kind].mayRemain())
    ) {
      if ((await this.moveLegacy(kind, ws, id)) === 'moved') {
        hash = await this.redis.hgetall(where.record(id));
      }
    }
    if (!isRecordOf(hash, ws)) return undefined;
    const holder = await this.redis.hget(where.names(ws), hash.name ?? '');
    return holder === id ? hash : undefined;
  }

  /** The live records the workspace's index names, read all at once. */
  private async list<T>(kind: RbacKind, ws: string, parse: (hash: Hash) => T | undefined) {
    const where = KINDS[kind];
    const entries = Object.entries(await this.redis.hgetall(where.names(ws))).filter(([, id]) =>
      isStorableId(id),
    );
    const legacyMayRemain = entries.length > 0 && (await this.legacy[kind].mayRemain());
    const hashes = await Promise.all(
      entries.map(async ([, id]) => {
        const hash = await this.redis.hgetall(where.record(id));
        if (hash.id !== undefined || hash.deletedAt !== undefined || !legacyMayRemain) return hash;
        // The previous layout's, then the current one again: a move between the two reads
        // (copy, then delete) would otherwise hide a record that exists.
        const old = await this.redis.hgetall(where.legacyRecord(ws, id));
        return old.id !== undefined ? old : this.redis.hgetall(where.record(id));
      }),
    );
    const found: T[] = [];
    hashes.forEach((hash, i) => {
      // One created or deleted between the two reads is not listed.
      if (!isRecordOf(hash, ws) || hash.name !== entries[i]![0]) return;
      const record = parse(hash);
      if (record) found.push(record);
    });
    return found;
  }

  /**
   * The last steps of a write that took effect: its audit entry relayed, its journal entry
   * removed. Should either fail, the journal entry stays and the repair does what is left.
   */
  private async finish(ticket: Ticket, id: string): Promise<void> {
    try {
      await this.outbox.relay(names.auditOutbox(id));
      await this.unfinished.end(ticket);
    } catch {
      // Left to the repair, which finds the journal entry.
    }
  }

  /**
   * Brings a write a node left in the journal to an end (the repair's part), then relays its
   * audit entry. A creation whose name the index holds passed its point of no return and is
   * committed; any other is undone. A deletion whose name is released is finished (a tombstone);
   * one whose name the index still holds never happened. Every step is idempotent.
   */
  async repair(write: Extract<UnfinishedWrite, { op: 'createRbac' | 'deleteRbac' }>) {
    const { kind, ws, id, name } = write;
    const holder = await this.redis.hget(KINDS[kind].names(ws), name);
    if (write.op === 'createRbac') {
      if (holder === id) await this.commit(kind, ws, id);
      else await this.undoCreation(kind, id);
    } else if (holder !== id) {
      await this.tombstone(kind, ws, id, write.audit);
    }
    await this.outbox.relay(names.auditOutbox(id));
  }
}
