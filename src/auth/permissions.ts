/**
 * Root-key permissions are strings `resource.id.action` (`api.api_123.read_key`), with `*` in the id
 * position matching every id, and a bare `*` granting everything.
 */
export type Permission = string;

const PERMISSION_PATTERN = /^(\*|[a-z_]+\.(\*|[A-Za-z0-9_-]+)\.[a-z_]+)$/;

export function isValidPermission(text: string): boolean {
  return PERMISSION_PATTERN.test(text);
}

export function permissionFor(
  resource: 'api' | 'ratelimit',
  id: string,
  action: string,
): Permission {
  return `${resource}.${id}.${action}`;
}

/** Whether one granted permission covers the required one. */
function covers(granted: Permission, required: Permission): boolean {
  if (granted === '*' || granted === required) return true;
  const [gResource, gId, gAction] = granted.split('.');
  const [rResource, rId, rAction] = required.split('.');
  return gResource === rResource && gAction === rAction && gId === '*' && rId !== undefined;
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
    const [gResource, , gAction] = permission.split('.');
    if (gResource === resource && gAction === action) return true;
  }
  return false;
}
