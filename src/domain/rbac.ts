/** A permission a key can hold, by itself or through a role. */
export interface PermissionRecord {
  id: string;
  workspaceId: string;
  /** Unique in its workspace: what keys and queries name it by. */
  name: string;
  /** Unkey v1's second handle of a permission; the name unless given. */
  slug: string;
  description?: string;
  createdAt: number;
}

/** A named group of permissions. */
export interface RoleRecord {
  id: string;
  workspaceId: string;
  /** Unique in its workspace. */
  name: string;
  description?: string;
  createdAt: number;
}
