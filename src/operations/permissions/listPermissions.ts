import { listed, listingInput, type ListingInput } from '../listing';
import { defineOperation } from '../operation';
import { object } from '../schemas';
import { permissionOutput } from './schemas';
import { permissionView, type PermissionView } from './views';

export interface PermissionsPage {
  permissions: PermissionView[];
  /** The last id of this page, present exactly when more follow. */
  cursor?: string;
}

/**
 * The workspace's permissions, oldest first: a page of those matching a search (any of id, name,
 * slug, description) when asked for one, else all of them (Unkey v1 answered the whole list).
 */
export const listPermissions = defineOperation({
  name: 'permissions.listPermissions',
  method: 'GET',
  plane: 'management',
  summary: "The workspace's permissions, oldest first.",
  permission: { resource: 'rbac', action: 'read_permission', scope: 'any' },
  input: listingInput,
  output: object(
    { permissions: { type: 'array', items: permissionOutput }, cursor: { type: 'string' } },
    ['permissions'],
  ),
  uses: ['rbac'],
  async handle(deps, caller, input: ListingInput): Promise<PermissionsPage> {
    const all = (await deps.rbac.listPermissions(caller.rootKey.workspaceId)).map(permissionView);
    const page = listed(all, input, (p) => [p.id, p.name, p.slug, p.description]);
    return {
      permissions: page.items,
      ...(page.cursor !== undefined ? { cursor: page.cursor } : {}),
    };
  },
});
