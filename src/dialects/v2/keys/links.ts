import type { addPermissions } from '../../../operations/keys/addPermissions';
import type { LinkAnswer } from '../../../operations/keys/linkOperation';
import type { LinkRef, Linked } from '../../../operations/keys/links';
import { permissionName, roleName } from '../../../operations/permissions/schemas';
import { object } from '../../../operations/schemas';
import type { LinkKind } from '../../../store/rbacStore';
import { defineV2Route } from '../route';
import { keyId } from './shapes';

/** The six calls that link a key's permissions or roles, as v2 speaks each. */

type Op = 'add' | 'remove' | 'set';

const ITEMS = { permissions: permissionName, roles: roleName } as const;

const ANSWERED = {
  permissions: object(
    { id: { type: 'string' }, name: { type: 'string' }, slug: { type: 'string' } },
    ['id', 'name', 'slug'],
  ),
  roles: object({ id: { type: 'string' }, name: { type: 'string' } }, ['id', 'name']),
} as const;

/**
 * v2 names permissions and roles by name alone, as plain strings (Unkey's handlers match
 * permission slugs and role names, never ids). A permission named to add or set is created when
 * missing (which needs `rbac.*.create_permission`); a role must exist.
 */
export function linkRefs(kind: LinkKind, op: Op, names: readonly string[]): LinkRef[] {
  const create = kind === 'permissions' && op !== 'remove';
  return names.map((name) => (create ? { name, create } : { name }));
}

/**
 * Every answer is what the key holds directly of the kind afterwards. A permission's name is
 * keyward's identifier for it, which is what v2 calls its slug: it is answered as both.
 */
export function heldBody(kind: LinkKind, held: readonly Linked[]) {
  return held.map(({ id, name }) =>
    kind === 'permissions' ? { id, name, slug: name } : { id, name },
  );
}

export function linkRoute(
  kind: LinkKind,
  op: Op,
  name: `keys.${string}`,
  operation: typeof addPermissions,
) {
  return defineV2Route({
    name,
    operation,
    input: object(
      {
        keyId,
        [kind]: {
          type: 'array',
          minItems: op === 'set' ? 0 : 1,
          maxItems: 100,
          items: ITEMS[kind],
        },
      },
      ['keyId', kind],
    ),
    output: { type: 'array', items: ANSWERED[kind] },
    toInput: (body: { keyId: string } & Partial<Record<LinkKind, string[]>>) => ({
      keyId: body.keyId,
      [kind]: linkRefs(kind, op, body[kind] ?? []),
    }),
    toBody: (answer: LinkAnswer) => ({ data: heldBody(kind, answer.held) }),
  });
}
