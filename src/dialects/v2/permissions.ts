import { createPermission } from '../../operations/permissions/createPermission';
import { createRole } from '../../operations/permissions/createRole';
import { deletePermission } from '../../operations/permissions/deletePermission';
import { deleteRole } from '../../operations/permissions/deleteRole';
import { getPermission } from '../../operations/permissions/getPermission';
import { getRole } from '../../operations/permissions/getRole';
import type { PermissionHandle, RoleHandle } from '../../operations/permissions/handles';
import { listPermissions } from '../../operations/permissions/listPermissions';
import { listRoles } from '../../operations/permissions/listRoles';
import { setRolePermissions } from '../../operations/permissions/setRolePermissions';
import { description, permissionName, roleName } from '../../operations/permissions/schemas';
import { type PermissionView, type RoleView } from '../../operations/permissions/views';
import { empty, id, object, pageLimit, text } from '../../operations/schemas';
import { isKeywardId, matching, pageOf, v2Pagination } from './lists';
import { defineV2Route, widen } from './route';

/**
 * permissions.* in v2's shapes. What keys hold and queries name is a permission's v2 `slug`, and
 * keyward's `name`: the two are the same field, unique in a workspace. v2's `name`, free text for
 * people, is kept in keyward's `slug` (a label nothing looks up), so that each dialect reads back
 * what it wrote.
 */

export interface V2Permission {
  id: string;
  name: string;
  slug: string;
  description?: string;
}

export function v2Permission(view: PermissionView): V2Permission {
  return {
    id: view.id,
    name: view.slug,
    slug: view.name,
    ...(view.description !== undefined ? { description: view.description } : {}),
  };
}

/**
 * A role with its permissions as objects (v2's Role). A role without any has no `permissions`,
 * as Unkey's server answers it (Go's omitempty; its getRole test wants the field absent).
 */
export function v2Role(view: RoleView) {
  const permissions = (view.permissionRecords ?? []).map(v2Permission);
  return {
    id: view.id,
    name: view.name,
    ...(view.description !== undefined ? { description: view.description } : {}),
    ...(permissions.length > 0 ? { permissions } : {}),
  };
}

/** v2's `permission`: a permission's id when it has the form of one, else its slug. */
export function permissionHandle(permission: string): PermissionHandle {
  return isKeywardId('perm', permission) ? { permissionId: permission } : { name: permission };
}

/** v2's `role`: a role's id when it has the form of one, else its name. */
export function roleHandle(role: string): RoleHandle {
  return isKeywardId('role', role) ? { roleId: role } : { name: role };
}

const string = { type: 'string' } as const;
const permissionOutput = object({ id: string, name: string, slug: string, description: string }, [
  'id',
  'name',
  'slug',
]);
const roleOutput = object(
  { id: string, name: string, description: string, permissions: { type: 'array' } },
  ['id', 'name', 'permissions'],
);
const listing = object({
  cursor: id,
  limit: pageLimit,
  search: { type: 'string', maxLength: 256 },
});

interface ListingBody {
  cursor?: string;
  limit?: number;
  search?: string;
}

/** Unkey v2's permission slug: 1–128 characters (its column's width) of `[a-zA-Z0-9_:-.*]`. */
const V2_SLUG = {
  type: 'string',
  minLength: 1,
  maxLength: 128,
  pattern: '^[a-zA-Z0-9_:\\-\\.\\*]+$',
} as const;

interface V2CreatePermissionBody {
  name: string;
  slug: string;
  description?: string;
}

export const v2CreatePermission = defineV2Route({
  name: 'permissions.createPermission',
  operation: createPermission,
  // v2's name is free text of 1–512 characters, kept in keyward's slug; its slug, keyward's name,
  // may be 1 character long and hold `*` (a literal in queries). v1 keeps its identifier rules.
  coreInput: widen(createPermission.input, {
    name: { minLength: 1, pattern: V2_SLUG.pattern },
    slug: { minLength: 1, maxLength: 512, pattern: undefined },
  }),
  input: object(
    { name: { type: 'string', minLength: 1, maxLength: 512 }, slug: V2_SLUG, description },
    ['name', 'slug'],
  ),
  output: object({ permissionId: string }, ['permissionId']),
  toInput(body: V2CreatePermissionBody) {
    return {
      name: body.slug,
      slug: body.name,
      ...(body.description !== undefined ? { description: body.description } : {}),
    };
  },
  toBody: (created) => ({ data: { permissionId: created.permissionId } }),
});

export const v2GetPermission = defineV2Route({
  name: 'permissions.getPermission',
  operation: getPermission,
  input: object({ permission: text }, ['permission']),
  output: permissionOutput,
  toInput: (body: { permission: string }) => permissionHandle(body.permission),
  toBody: (view) => ({ data: v2Permission(view) }),
});

export const v2ListPermissions = defineV2Route({
  name: 'permissions.listPermissions',
  operation: listPermissions,
  input: listing,
  output: { type: 'array', items: permissionOutput },
  toInput: () => ({}),
  toBody(views: PermissionView[], body: ListingBody) {
    const found = matching(views.map(v2Permission), body.search, (p) => [
      p.id,
      p.name,
      p.slug,
      p.description,
    ]);
    const page = pageOf(found, body.cursor, body.limit ?? 100);
    return { data: page.items, pagination: v2Pagination(page.next) };
  },
});

export const v2DeletePermission = defineV2Route({
  name: 'permissions.deletePermission',
  operation: deletePermission,
  input: object({ permission: text }, ['permission']),
  output: empty,
  toInput: (body: { permission: string }) => permissionHandle(body.permission),
  toBody: () => ({ data: {} }),
});

interface V2CreateRoleBody {
  name: string;
  description?: string;
  permissions?: string[];
}

export const v2CreateRole = defineV2Route({
  name: 'permissions.createRole',
  operation: createRole,
  input: object(
    {
      name: roleName,
      description,
      permissions: { type: 'array', maxItems: 100, items: permissionName },
    },
    ['name'],
  ),
  output: object({ roleId: string }, ['roleId']),
  toInput: (body: V2CreateRoleBody) => ({
    name: body.name,
    ...(body.description !== undefined ? { description: body.description } : {}),
    ...(body.permissions !== undefined ? { permissions: body.permissions } : {}),
  }),
  toBody: (created) => ({ data: { roleId: created.roleId } }),
});

export const v2GetRole = defineV2Route({
  name: 'permissions.getRole',
  operation: getRole,
  input: object({ role: text }, ['role']),
  output: roleOutput,
  toInput: (body: { role: string }) => roleHandle(body.role),
  toBody: (view) => ({ data: v2Role(view) }),
});

export const v2ListRoles = defineV2Route({
  name: 'permissions.listRoles',
  operation: listRoles,
  input: listing,
  output: { type: 'array', items: roleOutput },
  toInput: () => ({}),
  toBody(views: RoleView[], body: ListingBody) {
    const found = matching(views, body.search, (r) => [r.id, r.name, r.description]);
    const page = pageOf(found, body.cursor, body.limit ?? 100);
    return { data: page.items.map(v2Role), pagination: v2Pagination(page.next) };
  },
});

export const v2DeleteRole = defineV2Route({
  name: 'permissions.deleteRole',
  operation: deleteRole,
  input: object({ role: text }, ['role']),
  output: empty,
  toInput: (body: { role: string }) => roleHandle(body.role),
  toBody: () => ({ data: {} }),
});

export const v2SetRolePermissions = defineV2Route({
  name: 'permissions.setRolePermissions',
  operation: setRolePermissions,
  input: object(
    {
      // Unkey's ResourceIdentifier.
      roleId: { type: 'string', minLength: 3, maxLength: 255, pattern: '^[a-zA-Z0-9_-]+$' },
      permissions: { type: 'array', maxItems: 100, items: permissionName },
    },
    ['roleId', 'permissions'],
  ),
  output: { type: 'array', items: permissionOutput },
  toInput: (body: { roleId: string; permissions: string[] }) => ({
    roleId: body.roleId,
    permissions: body.permissions,
  }),
  toBody: (views: PermissionView[]) => ({ data: views.map(v2Permission) }),
});
