import { ConflictError } from '../../errors';
import { newId } from '../../keys/ids';
import { auditEntry } from '../audit';
import { defineOperation } from '../operation';
import { object } from '../schemas';
import { description, permissionName } from './schemas';

interface CreatePermissionInput {
  name: string;
  slug?: string;
  description?: string;
}

export const createPermission = defineOperation({
  name: 'permissions.createPermission',
  method: 'POST',
  plane: 'management',
  summary: 'Creates a permission that keys can hold, by themselves or through a role.',
  permission: { resource: 'rbac', action: 'create_permission', scope: 'any' },
  input: object({ name: permissionName, slug: permissionName, description }, ['name']),
  output: object({ permissionId: { type: 'string' } }, ['permissionId']),
  uses: ['rbac', 'now'],
  async handle(deps, caller, input: CreatePermissionInput): Promise<{ permissionId: string }> {
    const now = deps.now();
    const permissionId = newId('perm', now);
    const slug = input.slug ?? input.name;
    const outcome = await deps.rbac.createPermission(
      {
        id: permissionId,
        workspaceId: caller.rootKey.workspaceId,
        name: input.name,
        slug,
        ...(input.description ? { description: input.description } : {}),
        createdAt: now,
      },
      auditEntry(caller, 'permissions.createPermission', 'permission', permissionId, {
        name: input.name,
        slug,
      }),
    );
    if (outcome === 'name_taken') {
      throw new ConflictError(
        'permission',
        `Permission with name "${input.name}" already exists in this workspace`,
      );
    }
    return { permissionId };
  },
});
