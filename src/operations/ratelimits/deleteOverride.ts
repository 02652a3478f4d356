import { NotFoundError } from '../../errors';
import { defineOperation } from '../operation';
import { empty, identifier, namespaceRef } from '../schemas';
import { exactlyOneNamespace, resolveNamespace, type NamespaceRef } from './namespaces';

export const deleteOverride = defineOperation({
  name: 'ratelimits.deleteOverride',
  method: 'POST',
  plane: 'management',
  summary: 'Deletes the override of an identifier in a namespace.',
  permission: { resource: 'ratelimit', action: 'delete_override', scope: 'resource' },
  input: { type: 'object', required: ['identifier'], properties: { ...namespaceRef, identifier } },
  check: exactlyOneNamespace,
  output: empty,
  uses: ['ratelimits', 'now'],
  async handle(
    deps,
    caller,
    input: NamespaceRef & { identifier: string },
  ): Promise<Record<string, never>> {
    const namespace = await resolveNamespace(deps, caller, input, 'delete_override');
    if (
      !(await deps.ratelimits.deleteOverride(
        caller.rootKey.workspaceId,
        namespace,
        input.identifier,
      ))
    ) {
      throw new NotFoundError(`no override for ${input.identifier} in namespace ${namespace.name}`);
    }
    return {};
  },
});
