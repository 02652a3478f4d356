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
