import type { PermissionRecord, RoleRecord } from '../../domain/rbac';
import type { RbacCatalogue } from '../../store/rbacStore';

/** A permission as Unkey v1 answers it. */
export interface PermissionView {
  id: string;
  name: string;
  slug: string;
  description?: string;
}

/** A role as Unkey v1 answers it. */
export interface RoleView {
  id: string;
  name: string;
  description?: string;
  /** Its permissions, by name (as Unkey v2 answers a role): only when it has any. */
  permissions?: string[];
  /**
   * Its permissions in full, in the order of `permissions` (by name), for getRole and listRoles:
   * v2 answers them as objects; v1 answered names only.
   */
  permissionRecords?: PermissionView[];
}

export function permissionView(permission: PermissionRecord): PermissionView {
  const { id, name, slug, description } = permission;
  return { id, name, slug, ...(description !== undefined ? { description } : {}) };
}

export function roleView(role: RoleRecord, permissions: readonly string[] = []): RoleView {
  const { id, name, description } = role;
  return {
    id,
    name,
    ...(description !== undefined ? { description } : {}),
    ...(permissions.length > 0 ? { permissions: [...permissions].sort() } : {}),
  };
}

/** The names of a role's permissions that still exist. */
export function rolePermissionNames(catalogue: RbacCatalogue, roleId: string): string[] {
  const role = catalogue.roles.get(roleId);
  return (role?.permissionIds ?? []).flatMap((id) => {
    const name = catalogue.permissions.get(id);
    return name === undefined ? [] : [name];
  });
}

/** The ids of a role's permissions that still exist. */
export function rolePermissionIds(catalogue: RbacCatalogue, roleId: string): string[] {
  return (catalogue.roles.get(roleId)?.permissionIds ?? []).filter((id) =>
    catalogue.permissions.has(id),
  );
}

/**
 * The view with its permissions' records beside it (`permissionRecords`), from `records` (any
 * permissions of the workspace that include the role's); one deleted meanwhile is left out.
 */
export function withPermissionRecords(
  view: RoleView,
  catalogue: RbacCatalogue,
  records: readonly PermissionRecord[],
): RoleView {
  const byId = new Map(records.map((record) => [record.id, record]));
  view.permissionRecords = rolePermissionIds(catalogue, view.id)
    .flatMap((id) => {
      const record = byId.get(id);
      return record ? [permissionView(record)] : [];
    })
    .sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  return view;
}
