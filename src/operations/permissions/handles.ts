import { invalidField, NotFoundError } from '../../errors';
import type { RbacStore } from '../../store/rbacStore';
import { id, text } from '../schemas';

/**
 * How a call names an existing permission or role: by its id or by its name, exactly one of
 * them. A name only looked up may be anything of 1–256 characters, as in the key calls.
 */
export const permissionHandles = { permissionId: id, name: text } as const;
export const roleHandles = { roleId: id, name: text } as const;

export interface PermissionHandle {
  permissionId?: string;
  name?: string;
}

export interface RoleHandle {
  roleId?: string;
  name?: string;
}

/**
 * Neither is the 400 the schema gave when the id alone was required (same words); both is a 400
 * too, as for an identity's or a namespace's two handles.
 */
function exactlyOne(idField: string, idValue: string | undefined, name: string | undefined) {
  if (idValue === undefined && name === undefined) {
    throw invalidField([idField], 'is required');
  }
  if (idValue !== undefined && name !== undefined) {
    throw invalidField([idField], `give either ${idField} or name`);
  }
}

export function exactlyOnePermission(input: PermissionHandle): void {
  exactlyOne('permissionId', input.permissionId, input.name);
}

export function exactlyOneRole(input: RoleHandle): void {
  exactlyOne('roleId', input.roleId, input.name);
}

/**
 * The id a handle names: the id given, or the id of the entry of that name in the caller's
 * workspace. A name that names nothing is the same 404 as an unknown id.
 */
export async function permissionIdOf(
  rbac: Pick<RbacStore, 'idsByName'>,
  ws: string,
  handle: PermissionHandle,
): Promise<string> {
  return idOf(rbac, ws, 'permissions', handle.permissionId, handle.name);
}

export async function roleIdOf(
  rbac: Pick<RbacStore, 'idsByName'>,
  ws: string,
  handle: RoleHandle,
): Promise<string> {
  return idOf(rbac, ws, 'roles', handle.roleId, handle.name);
}

async function idOf(
  rbac: Pick<RbacStore, 'idsByName'>,
  ws: string,
  kind: 'permissions' | 'roles',
  given: string | undefined,
  name: string | undefined,
): Promise<string> {
  if (given !== undefined) return given;
  const found = (await rbac.idsByName(ws, kind, [name ?? ''])).get(name ?? '');
  if (found === undefined) throw notFound(kind, { name });
  return found;
}

/** `permission perm_… not found`, `role admin not found`: the handle the call gave. */
export function notFound(
  kind: 'permissions' | 'roles',
  handle: { id?: string; name?: string },
): NotFoundError {
  return new NotFoundError(
    kind === 'permissions' ? 'permission' : 'role',
    `${kind === 'permissions' ? 'permission' : 'role'} ${handle.id ?? handle.name} not found`,
  );
}
