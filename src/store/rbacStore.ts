import type { PermissionRecord, RoleRecord } from '../domain/rbac';
import type { RedisClient as Redis } from '../redis/clients';
import { execResults } from '../redis/results';
import { resultDecoder } from '../redis/scriptTable';
import { DEFAULT_AUDIT_MAX_ENTRIES, type AuditEntry } from '../domain/audit';
import { appendAudit, auditArgument } from './auditLog';
import { appendToOutbox, AuditOutbox } from './auditOutbox';
import { invalidation, isStorableId, names, type Announce } from './names';

const createOutcome = resultDecoder('createRbacEntry');
const deleteOutcome = resultDecoder('deleteRbacEntry');

/** The two kinds of entry: each a record per id and a workspace hash of names → ids. */
const KINDS = {
  permission: { record: names.permission, names: names.permissionNames },
  role: { record: names.role, names: names.roleNames },
} as const;

type Kind = keyof typeof KINDS;
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

/** Oldest first, as they were created; ids break ties (they are time-ordered too). */
const byCreation = (a: { createdAt: number; id: string }, b: { createdAt: number; id: string }) =>
  a.createdAt - b.createdAt || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);

/** What a node needs of a workspace's permissions and roles to judge its keys: names by id. */
export interface RbacCatalogue {
  permissions: ReadonlyMap<string, string>;
  roles: ReadonlyMap<string, { name: string; permissionIds: readonly string[] }>;
}

export type LinkKind = 'permissions' | 'roles';

/** Permissions and roles of a workspace on the primary, under the workspace's hash tag. */
export class RbacStore {
  constructor(
    private readonly redis: Redis,
    private readonly announce: Announce,
    /** The cap of each workspace's audit log, which every write here appends to. */
    private readonly auditMaxEntries: number = DEFAULT_AUDIT_MAX_ENTRIES,
  ) {
    this.outbox = new AuditOutbox(redis, auditMaxEntries);
  }

  /** A key's link changes are in the key's slot: their entries go through its outbox. */
  private readonly outbox: AuditOutbox;

  createPermission(
    permission: PermissionRecord,
    audit: AuditEntry,
  ): Promise<'created' | 'name_taken'> {
    return this.create('permission', permission, [], audit);
  }

  /** A role, the ids of its permissions and its audit entry, in one step. */
  createRole(
    role: RoleRecord,
    permissionIds: readonly string[],
    audit: AuditEntry,
  ): Promise<'created' | 'name_taken'> {
    return this.create('role', role, permissionIds, audit);
  }

  /** The ids of a role's permissions (some may name deleted ones). */
  rolePermissionIds(ws: string, roleId: string): Promise<string[]> {
    return this.redis.smembers(names.rolePermissions(ws, roleId));
  }

  async getPermission(ws: string, id: string): Promise<PermissionRecord | undefined> {
    if (!isStorableId(id)) return undefined;
    return permissionFromHash(await this.redis.hgetall(names.permission(ws, id)));
  }

  async getRole(ws: string, id: string): Promise<RoleRecord | undefined> {
    if (!isStorableId(id)) return undefined;
    return roleFromHash(await this.redis.hgetall(names.role(ws, id)));
  }

  async listPermissions(ws: string): Promise<PermissionRecord[]> {
    return (await this.list('permission', ws, permissionFromHash)).sort(byCreation);
  }

  async listRoles(ws: string): Promise<RoleRecord[]> {
    return (await this.list('role', ws, roleFromHash)).sort(byCreation);
  }

  /** Every permission's and role's name by id, with each role's permission ids. */
  async catalogue(ws: string): Promise<RbacCatalogue> {
    const [permissionIds, roleIds] = execResults(
      await this.redis
        .pipeline()
        .hgetall(names.permissionNames(ws))
        .hgetall(names.roleNames(ws))
        .exec(),
    ) as [Hash, Hash];
    const permissions = new Map(Object.entries(permissionIds).map(([name, id]) => [id, name]));
    const roleEntries = Object.entries(roleIds);
    const roles = new Map<string, { name: string; permissionIds: string[] }>();
    if (roleEntries.length > 0) {
      const pipeline = this.redis.pipeline();
      for (const [, id] of roleEntries) pipeline.smembers(names.rolePermissions(ws, id));
      const members = execResults(await pipeline.exec()) as string[][];
      roleEntries.forEach(([name, id], i) =>
        roles.set(id, { name, permissionIds: members[i] ?? [] }),
      );
    }
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
   * Replaces the permission ids of a role, in one MULTI with the check that the role is there,
   * the message to every node and the audit entry. A role deleted before it ran gets its set and
   * that entry taken away again, so nothing is left under a role that is gone and no entry stands
   * for a write that did not hold; false then.
   */
  async setRolePermissions(
    ws: string,
    roleId: string,
    permissionIds: readonly string[],
    audit: AuditEntry,
  ): Promise<boolean> {
    if (!isStorableId(roleId)) return false;
    const members = names.rolePermissions(ws, roleId);
    const multi = this.redis.multi().exists(names.role(ws, roleId)).del(members);
    if (permissionIds.length > 0) multi.sadd(members, ...permissionIds);
    multi.publish(names.invalidationChannel, invalidation.rbac(ws));
    const results = execResults(await appendAudit(multi, ws, audit, this.auditMaxEntries).exec());
    if (results[0] === 0) {
      await this.redis
        .multi()
        .del(members)
        .xdel(names.audit(ws), results[results.length - 1] as string)
        .exec();
      return false;
    }
    this.announce({ kind: 'rbac', workspaceId: ws });
    return true;
  }

  deletePermission(ws: string, id: string, audit: AuditEntry): Promise<boolean> {
    return this.remove('permission', ws, id, audit);
  }

  deleteRole(ws: string, id: string, audit: AuditEntry): Promise<boolean> {
    return this.remove('role', ws, id, audit);
  }

  private async create(
    kind: Kind,
    record: PermissionRecord | RoleRecord,
    members: readonly string[],
    audit: AuditEntry,
  ) {
    const { workspaceId: ws, id, name } = record;
    const result = await this.redis.createRbacEntryV2(
      KINDS[kind].names(ws),
      KINDS[kind].record(ws, id),
      // A permission has no members; the name is never written then, only named for the slot.
      names.rolePermissions(ws, id),
      names.audit(ws),
      name,
      id,
      names.invalidationChannel,
      invalidation.rbac(ws),
      auditArgument(audit, this.auditMaxEntries),
      members.length,
      ...members,
      ...fields(record),
    );
    const outcome = createOutcome(result);
    if (outcome === 'created') this.announce({ kind: 'rbac', workspaceId: ws });
    return outcome;
  }

  private async list<T>(kind: Kind, ws: string, parse: (hash: Hash) => T | undefined) {
    const ids = Object.values(await this.redis.hgetall(KINDS[kind].names(ws)));
    if (ids.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.hgetall(KINDS[kind].record(ws, id));
    const found: T[] = [];
    for (const hash of execResults(await pipeline.exec())) {
      // One deleted between the two reads is simply not listed.
      const record = parse(hash as Hash);
      if (record) found.push(record);
    }
    return found;
  }

  private async remove(kind: Kind, ws: string, id: string, audit: AuditEntry): Promise<boolean> {
    if (!isStorableId(id)) return false;
    const result = await this.redis.deleteRbacEntryV2(
      KINDS[kind].names(ws),
      KINDS[kind].record(ws, id),
      names.rolePermissions(ws, id),
      names.audit(ws),
      names.invalidationChannel,
      invalidation.rbac(ws),
      auditArgument(audit, this.auditMaxEntries),
    );
    if (deleteOutcome(result) !== 'deleted') return false;
    this.announce({ kind: 'rbac', workspaceId: ws });
    return true;
  }
}
