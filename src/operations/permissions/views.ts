import type { PermissionRecord, RoleRecord } from '../../domain/rbac';

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
}

export function permissionView(permission: PermissionRecord): PermissionView {
  const { id, name, slug, description } = permission;
  return { id, name, slug, ...(description !== undefined ? { description } : {}) };
}

export function roleView(role: RoleRecord): RoleView {
  const { id, name, description } = role;
  return { id, name, ...(description !== undefined ? { description } : {}) };
}
