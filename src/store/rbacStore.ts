import type { PermissionRecord, RoleRecord } from '../domain/rbac';
import type { RedisClient as Redis } from '../redis/clients';
import { execResults } from '../redis/results';
import { resultDecoder } from '../redis/scriptTable';
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

/** Permissions and roles of a workspace on the primary, under the workspace's hash tag. */
export class RbacStore {
  constructor(
    private readonly redis: Redis,
    private readonly announce: Announce,
  ) {}

  createPermission(permission: PermissionRecord): Promise<'created' | 'name_taken'> {
    return this.create('permission', permission);
  }

  createRole(role: RoleRecord): Promise<'created' | 'name_taken'> {
    return this.create('role', role);
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

  deletePermission(ws: string, id: string): Promise<boolean> {
    return this.remove('permission', ws, id);
  }

  deleteRole(ws: string, id: string): Promise<boolean> {
    return this.remove('role', ws, id);
  }

  private async create(kind: Kind, record: PermissionRecord | RoleRecord) {
    const { workspaceId: ws, id, name } = record;
    const result = await this.redis.createRbacEntryV1(
      KINDS[kind].names(ws),
      KINDS[kind].record(ws, id),
      name,
      id,
      ...fields(record),
    );
    return createOutcome(result);
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

  private async remove(kind: Kind, ws: string, id: string): Promise<boolean> {
    if (!isStorableId(id)) return false;
    const result = await this.redis.deleteRbacEntryV1(
      KINDS[kind].names(ws),
      KINDS[kind].record(ws, id),
      names.invalidationChannel,
      invalidation.rbac(ws),
    );
    if (deleteOutcome(result) !== 'deleted') return false;
    this.announce({ kind: 'rbac', workspaceId: ws });
    return true;
  }
}
