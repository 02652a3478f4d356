import type { VerifiableKey } from '../../domain/key';
import type { RbacCatalogue } from '../../store/rbacStore';

/** What a key holds, by name: its own permissions and roles, and everything they add up to. */
export interface Holdings {
  /** Its own permissions, sorted. */
  permissions: string[];
  /** Its roles, sorted. */
  roles: string[];
  /** Its own permissions and its roles' permissions: what a permission query is judged on. */
  effective: ReadonlySet<string>;
  /** The same, sorted: what a verification answers. */
  effectiveSorted: readonly string[];
}

/**
 * Resolves a key's ids against the workspace's permissions and roles. An id whose permission or
 * role is gone resolves to nothing: a deletion takes effect without rewriting the keys.
 */
export function holdingsOf(
  key: Pick<VerifiableKey, 'permissionIds' | 'roleIds'>,
  catalogue: RbacCatalogue,
): Holdings {
  const permissions: string[] = [];
  const effective = new Set<string>();
  for (const id of key.permissionIds ?? []) {
    const name = catalogue.permissions.get(id);
    if (name === undefined) continue;
    permissions.push(name);
    effective.add(name);
  }
  const roles: string[] = [];
  for (const id of key.roleIds ?? []) {
    const role = catalogue.roles.get(id);
    if (!role) continue;
    roles.push(role.name);
    for (const permissionId of role.permissionIds) {
      const name = catalogue.permissions.get(permissionId);
      if (name !== undefined) effective.add(name);
    }
  }
  return {
    permissions: permissions.sort(),
    roles: roles.sort(),
    effective,
    effectiveSorted: [...effective].sort(),
  };
}

/**
 * A key's holdings, worked out once per key and catalogue: a verification of a cached key with
 * roles would otherwise rebuild and sort them every time. Weakly held by the key object (the
 * node's cached key, replaced when invalidated) and checked against the catalogue it was made
 * from (a new object whenever a permission or role changes).
 */
const memo = new WeakMap<object, { catalogue: RbacCatalogue; holdings: Holdings }>();

export function memoizedHoldings(
  key: Pick<VerifiableKey, 'permissionIds' | 'roleIds'>,
  catalogue: RbacCatalogue,
): Holdings {
  const known = memo.get(key);
  if (known?.catalogue === catalogue) return known.holdings;
  const holdings = holdingsOf(key, catalogue);
  memo.set(key, { catalogue, holdings });
  return holdings;
}

/** Whether the key holds anything at all: only then is the catalogue worth a look. */
export function holdsAny(key: Pick<VerifiableKey, 'permissionIds' | 'roleIds'>): boolean {
  return key.permissionIds !== undefined || key.roleIds !== undefined;
}
