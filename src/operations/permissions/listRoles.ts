import { listed, listingInput, type ListingInput } from '../listing';
import { defineOperation } from '../operation';
import { object } from '../schemas';
import { roleOutput } from './schemas';
import { rolePermissionNames, roleView, withPermissionRecords, type RoleView } from './views';

export interface RolesPage {
  roles: RoleView[];
  /** The last id of this page, present exactly when more follow. */
  cursor?: string;
}

/**
 * The workspace's roles, oldest first: a page of those matching a search (any of id, name,
 * description) when asked for one, else all of them (Unkey v1 answered the whole list).
 */
export const listRoles = defineOperation({
  name: 'permissions.listRoles',
  method: 'GET',
  plane: 'management',
  summary: "The workspace's roles, oldest first.",
  permission: { resource: 'rbac', action: 'read_role', scope: 'any' },
  input: listingInput,
  output: object({ roles: { type: 'array', items: roleOutput }, cursor: { type: 'string' } }, [
    'roles',
  ]),
  uses: ['rbac'],
  async handle(deps, caller, input: ListingInput): Promise<RolesPage> {
    const ws = caller.rootKey.workspaceId;
    const [roles, catalogue, permissions] = await Promise.all([
      deps.rbac.listRoles(ws),
      deps.rbac.catalogue(ws),
      deps.rbac.listPermissions(ws),
    ]);
    const page = listed(
      roles.map((role) => roleView(role, rolePermissionNames(catalogue, role.id))),
      input,
      (r) => [r.id, r.name, r.description],
    );
    return {
      roles: page.items.map((view) => withPermissionRecords(view, catalogue, permissions)),
      ...(page.cursor !== undefined ? { cursor: page.cursor } : {}),
    };
  },
});
