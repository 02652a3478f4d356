/**
 * Root-key permissions are strings `resource.id.action` (`api.api_123.read_key`), with `*` in the id
 * position matching every id, and a bare `*` granting everything. The id is everything between the
 * first and the last dot, since rate-limit namespace names may contain dots themselves.
 */
export type Permission = string;

const PERMISSION_PATTERN = /^(\*|[a-z_]+\.[A-Za-z0-9_.:/*-]{1,128}\.[a-z_]+)$/;

function parts(permission: Permission): { resource: string; id: string; action: string } {
  const first = permission.indexOf('.');
  const last = permission.lastIndexOf('.');
  return {
    resource: permission.slice(0, first),
    id: permission.slice(first + 1, last),
    action: permission.slice(last + 1),
  };
}

export function isValidPermission(text: string): boolean {
  return PERMISSION_PATTERN.test(text);
}

export function permissionFor(
  resource: 'api' | 'ratelimit' | 'rbac' | 'identity' | 'audit' | 'webhook',
  id: string,
  action: string,
): Permission {
  return `${resource}.${id}.${action}`;
}

/** Whether one granted permission covers the required one. */
function covers(granted: Permission, required: Permission): boolean {
  if (granted === '*' || granted === required) return true;
  const g = parts(granted);
  const r = parts(required);
  return g.resource === r.resource && g.action === r.action && g.id === '*';
}

export function isGranted(granted: readonly Permission[], required: Permission): boolean {
  for (const permission of granted) if (covers(permission, required)) return true;
  return false;
}

/**
 * Whether any id could satisfy `resource.<id>.action`: lets an operation refuse a root key that can
 * never succeed before it looks anything up.
 */
export function mayHaveAction(
  granted: readonly Permission[],
  resource: string,
  action: string,
): boolean {
  for (const permission of granted) {
    if (permission === '*') return true;
    const granted = parts(permission);
    if (granted.resource === resource && granted.action === action) return true;
  }
  return false;
}
