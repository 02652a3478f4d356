import { isGranted, permissionFor } from '../../auth/permissions';
import type { KeyRecord } from '../../domain/key';
import { InsufficientPermissionsError, invalidField, NotFoundError } from '../../errors';
import { newId } from '../../keys/ids';
import type { LinkKind, RbacCatalogue } from '../../store/rbacStore';
import { auditEntry } from '../audit';
import type { Caller } from '../operation';
import { newNameProblem, type NameRule } from '../permissions/schemas';
import { object } from '../schemas';
import type { Services } from '../services';

/** A permission or role named in a key call: by id, or by name (created when asked and allowed). */
export interface LinkRef {
  id?: string;
  name?: string;
  create?: boolean;
}

export interface Linked {
  id: string;
  name: string;
}

/** `{ id } | { name, create? }`, as the key calls and Unkey v1's updateKey take them. */
export const linkRef = object({
  id: { type: 'string', minLength: 1, maxLength: 64 },
  name: { type: 'string', minLength: 1, maxLength: 512 },
  create: { type: 'boolean' },
});

/**
 * Names given where Unkey takes names alone (createKey, createRole, v2's updateKey): created if
 * missing. A ref given as one (v1's updateKey) is taken as it is.
 */
export function namedRefs(names: readonly (string | LinkRef)[] = []): LinkRef[] {
  return names.map((name) => (typeof name === 'string' ? { name, create: true } : name));
}

/** A ref that names neither an id nor a name: 400, before anything is looked up. */
export function checkRefs(kind: LinkKind, refs: readonly (string | LinkRef)[] = []): void {
  refs.forEach((item, index) => {
    if (typeof item !== 'string' && item.id === undefined && item.name === undefined) {
      throw invalidField([kind, index], 'give either id or name');
    }
  });
}

/** `{ keyId, permissions: [...] }` (or `roles`), with at least `min` items and at most 100. */
export function linksInput(kind: LinkKind, min: number) {
  return object(
    {
      keyId: { type: 'string', minLength: 1, maxLength: 64 },
      [kind]: { type: 'array', minItems: min, maxItems: 100, items: linkRef },
    },
    ['keyId', kind],
  );
}

export const linkedOutput = {
  type: 'array',
  items: object({ id: { type: 'string' }, name: { type: 'string' } }, ['id', 'name']),
} as const;

const SINGULAR = { permissions: 'permission', roles: 'role' } as const;
const CREATE_ACTION = { permissions: 'create_permission', roles: 'create_role' } as const;
const REMOVE_ACTION = {
  permissions: 'remove_permission_from_key',
  roles: 'remove_role_from_key',
} as const;

/** The key of this workspace, unless it or its API is gone. */
export async function linkedKey(
  deps: Pick<Services, 'keys' | 'directory'>,
  caller: Caller,
  keyId: string,
): Promise<KeyRecord> {
  caller.logFields.keyId = keyId;
  const key = await deps.keys.get(caller.rootKey.workspaceId, keyId);
  if (!key || !(await deps.directory.liveApi(key.workspaceId, key.apiId))) {
    throw new NotFoundError('key', `key ${keyId} not found`);
  }
  return key;
}

function byId(catalogue: RbacCatalogue, kind: LinkKind): ReadonlyMap<string, string> {
  if (kind === 'permissions') return catalogue.permissions;
  return new Map([...catalogue.roles].map(([id, role]) => [id, role.name]));
}

/** The ids the key holds directly of this kind. */
function heldIds(key: KeyRecord, kind: LinkKind): readonly string[] {
  return (kind === 'permissions' ? key.permissionIds : key.roleIds) ?? [];
}

/** What the key holds directly of this kind, by id → name (ids whose entry is gone left out). */
export function heldLinks(key: KeyRecord, kind: LinkKind, catalogue: RbacCatalogue): Linked[] {
  const names = byId(catalogue, kind);
  return heldIds(key, kind).flatMap((id) => {
    const name = names.get(id);
    return name === undefined ? [] : [{ id, name }];
  });
}

/** What linking refs would take: the entries that exist, and the names to create first. */
export interface LinkPlan {
  kind: LinkKind;
  existing: Linked[];
  toCreate: string[];
}

/**
 * Resolves refs without writing anything: an unknown id, or an unknown name without
 * `create: true`, is 404; creating without `rbac.*.create_<kind>` is 403. A caller that links
 * several kinds plans them all before it creates anything. A name to create follows `names`: the
 * catalogue's rules, or createKey's 1–512 characters of any kind.
 */
export function planLinks(
  caller: Caller,
  kind: LinkKind,
  refs: readonly LinkRef[],
  catalogue: RbacCatalogue,
  names: NameRule = 'catalogue',
): LinkPlan {
  const known = byId(catalogue, kind);
  const ids = new Map([...known].map(([id, name]) => [name, id]));
  const existing: Linked[] = [];
  const toCreate = new Set<string>();
  refs.forEach((item, index) => {
    if (item.id !== undefined) {
      const name = known.get(item.id);
      if (name === undefined)
        throw new NotFoundError(SINGULAR[kind], `${SINGULAR[kind]} ${item.id} not found`);
      existing.push({ id: item.id, name });
    } else if (item.name !== undefined) {
      const id = ids.get(item.name);
      if (id !== undefined) existing.push({ id, name: item.name });
      else if (item.create) {
        const problem = newNameProblem(kind, item.name, names);
        if (problem) throw invalidField([kind, index, 'name'], problem);
        toCreate.add(item.name);
      } else {
        throw new NotFoundError(
          SINGULAR[kind],
          `${SINGULAR[kind]} ${item.name} not found and not allowed to create (create: true)`,
        );
      }
    } else throw invalidField([kind, index], 'give either id or name');
  });
  if (toCreate.size > 0) {
    const needed = permissionFor('rbac', '*', CREATE_ACTION[kind]);
    if (!isGranted(caller.rootKey.permissions, needed)) {
      throw new InsufficientPermissionsError(needed);
    }
  }
  return { kind, existing, toCreate: [...toCreate] };
}

/**
 * Creates what a plan names and answers everything it links. Each permission or role created
 * appends its own entry, with the calling operation's name and the new entry as target.
 */
export async function carryOut(
  deps: Pick<Services, 'rbac' | 'now'>,
  caller: Caller,
  plan: LinkPlan,
  operation: string,
): Promise<Linked[]> {
  const ws = caller.rootKey.workspaceId;
  const { kind } = plan;
  const linked = [...plan.existing];
  const now = deps.now();
  for (const name of plan.toCreate) {
    const id = newId(kind === 'permissions' ? 'perm' : 'role', now);
    const record = { id, workspaceId: ws, name, createdAt: now };
    const audit = auditEntry(caller, operation, SINGULAR[kind], id, { name });
    const outcome =
      kind === 'permissions'
        ? await deps.rbac.createPermission({ ...record, slug: name }, audit)
        : await deps.rbac.createRole(record, [], audit);
    // Created meanwhile by someone else: the name is what the caller asked for either way.
    const found =
      outcome === 'created' ? id : (await deps.rbac.idsByName(ws, kind, [name])).get(name);
    if (found === undefined)
      throw new NotFoundError(SINGULAR[kind], `${SINGULAR[kind]} ${name} not found`);
    linked.push({ id: found, name });
  }
  return dedupe(linked);
}

function dedupe(links: Linked[]): Linked[] {
  const seen = new Map<string, Linked>();
  for (const link of links) seen.set(link.id, link);
  return [...seen.values()];
}

/**
 * Setting what a key holds to `kept` takes away whatever else it holds, which needs its own
 * permission: checked before anything is written.
 */
export function requireRemovalOfOthers(
  caller: Caller,
  key: KeyRecord,
  kind: LinkKind,
  kept: readonly Linked[],
): void {
  const keptIds = new Set(kept.map((link) => link.id));
  if (!heldIds(key, kind).some((id) => !keptIds.has(id))) return;
  const needed = permissionFor('rbac', '*', REMOVE_ACTION[kind]);
  if (!isGranted(caller.rootKey.permissions, needed)) {
    throw new InsufficientPermissionsError(needed);
  }
}
