import type { PermissionHandle, RoleHandle } from '../../../operations/permissions/handles';
import type { PermissionView, RoleView } from '../../../operations/permissions/views';
import type { ListingInput } from '../../../operations/listing';
import { object } from '../../../operations/schemas';
import { isKeywardId, v2Pagination } from '../lists';
import type { V2Body } from '../route';

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
export const permissionOutput = object(
  { id: string, name: string, slug: string, description: string },
  ['id', 'name', 'slug'],
);
export const roleOutput = object(
  { id: string, name: string, description: string, permissions: { type: 'array' } },
  ['id', 'name', 'permissions'],
);

/**
 * The operation's listing input from v2's body, which takes the same fields: v2 pages by 100
 * unless told otherwise, where v1 asks for the whole list.
 */
export function listingOf(body: ListingInput): ListingInput & { limit: number } {
  return {
    limit: body.limit ?? 100,
    ...(body.cursor !== undefined ? { cursor: body.cursor } : {}),
    ...(body.search !== undefined ? { search: body.search } : {}),
  };
}

/** A page of a listing in v2's answer. */
export function listedBody<T>(items: T[], cursor: string | undefined): V2Body<T[]> {
  return { data: items, pagination: v2Pagination(cursor) };
}

/** Unkey v2's permission slug: 1–128 characters (its column's width) of `[a-zA-Z0-9_:-.*]`. */
export const V2_SLUG = {
  type: 'string',
  minLength: 1,
  maxLength: 128,
  pattern: '^[a-zA-Z0-9_:\\-\\.\\*]+$',
} as const;
