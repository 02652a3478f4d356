import { ConflictError } from '../../errors';
import { newId } from '../../keys/ids';
import { defineOperation } from '../operation';
import { object } from '../schemas';
import { description, roleName } from './schemas';

interface CreateRoleInput {
  name: string;
  description?: string;
}

export const createRole = defineOperation({
  name: 'permissions.createRole',
  method: 'POST',
  plane: 'management',
  summary: 'Creates a role: a named group of permissions.',
  permission: { resource: 'rbac', action: 'create_role', scope: 'any' },
  input: object({ name: roleName, description }, ['name']),
  output: object({ roleId: { type: 'string' } }, ['roleId']),
  uses: ['rbac', 'now'],
  async handle(deps, caller, input: CreateRoleInput): Promise<{ roleId: string }> {
    const now = deps.now();
    const roleId = newId('role', now);
    const outcome = await deps.rbac.createRole({
      id: roleId,
      workspaceId: caller.rootKey.workspaceId,
      name: input.name,
      ...(input.description ? { description: input.description } : {}),
      createdAt: now,
    });
    if (outcome === 'name_taken') {
      throw new ConflictError(`Role with name "${input.name}" already exists in this workspace`);
    }
    return { roleId };
  },
});
