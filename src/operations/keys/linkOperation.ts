import type { LinkKind } from '../../store/rbacStore';
import { auditEntry } from '../audit';
import { defineOperation } from '../operation';
import { object } from '../schemas';
import {
  heldLinks,
  linkedKey,
  linksInput,
  linkedOutput,
  carryOut,
  planLinks,
  requireRemovalOfOthers,
  type LinkRef,
  type Linked,
} from './links';

type LinkInput = { keyId: string } & { [kind in LinkKind]?: LinkRef[] };

export interface LinkAnswer {
  /** What the call linked (add), or everything the key now holds of the kind (set); none (remove). */
  linked: Linked[];
  /** What the key holds directly of the kind once the call is done (Unkey v2 answers it for all three). */
  held: Linked[];
}

const ACTIONS = {
  permissions: { add: 'add_permission_to_key', remove: 'remove_permission_from_key' },
  roles: { add: 'add_role_to_key', remove: 'remove_role_from_key' },
} as const;

const NAMES = {
  permissions: { add: 'addPermissions', remove: 'removePermissions', set: 'setPermissions' },
  roles: { add: 'addRoles', remove: 'removeRoles', set: 'setRoles' },
} as const;

/**
 * keys.add|remove|set Permissions|Roles, one declaration for the six: they differ only in what
 * they link and how. add and set answer what they linked (set: everything the key now holds of
 * that kind); remove answers `{}` and passes over what the key does not hold. set also needs the
 * remove permission when it takes something away. Each answer also carries what the key holds of
 * that kind afterwards (v2 answers that; v1 the first, src/dialects/v1/routes.ts).
 */
export function linkOperation(kind: LinkKind, op: 'add' | 'remove' | 'set') {
  const action = op === 'remove' ? ACTIONS[kind].remove : ACTIONS[kind].add;
  const name = `keys.${NAMES[kind][op]}` as const;
  const idsField = kind === 'permissions' ? 'permissionIds' : 'roleIds';
  return defineOperation({
    name,
    method: 'POST',
    plane: 'management',
    summary:
      op === 'add'
        ? `Gives a key ${kind}, by id or by name (created when asked and allowed).`
        : op === 'remove'
          ? `Takes ${kind} from a key.`
          : `Sets a key's ${kind}: the ones named, and only those.`,
    permission: { resource: 'rbac', action, scope: 'any' },
    input: linksInput(kind, op === 'set' ? 0 : 1),
    output: object({ linked: linkedOutput, held: linkedOutput }, ['linked', 'held']),
    uses: ['keys', 'directory', 'rbac', 'now'],
    async handle(deps, caller, input: LinkInput): Promise<LinkAnswer> {
      const key = await linkedKey(deps, caller, input.keyId);
      const ws = caller.rootKey.workspaceId;
      const refs = input[kind] ?? [];
      const catalogue = await deps.rbac.catalogue(ws);
      // The key's entry: the ids the call added, took away or set.
      const audit = (ids: readonly string[]) =>
        auditEntry(caller, name, 'key', key.id, { apiId: key.apiId, [idsField]: [...ids] });
      if (op === 'remove') {
        const byName = new Map(heldLinks(key, kind, catalogue).map((l) => [l.name, l.id]));
        const ids = refs.flatMap((r) => {
          const id = r.id ?? (r.name !== undefined ? byName.get(r.name) : undefined);
          return id === undefined ? [] : [id];
        });
        await deps.rbac.changeKeyLinks(ws, key, kind, 'remove', ids, audit(ids));
        const removed = new Set(ids);
        return {
          linked: [],
          held: heldLinks(key, kind, catalogue).filter((l) => !removed.has(l.id)),
        };
      }
      const plan = planLinks(caller, kind, refs, catalogue);
      if (op === 'set') requireRemovalOfOthers(caller, key, kind, plan.existing);
      const linked = await carryOut(deps, caller, plan, name);
      const ids = linked.map((l) => l.id);
      await deps.rbac.changeKeyLinks(ws, key, kind, op, ids, audit(ids));
      if (op === 'set') return { linked, held: [...linked] };
      const added = new Set(linked.map((l) => l.id));
      const kept = heldLinks(key, kind, catalogue).filter((l) => !added.has(l.id));
      return { linked, held: [...kept, ...linked] };
    },
  });
}
