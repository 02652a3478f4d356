import { defineOperation } from '../operation';
import { auditEntry } from '../audit';
import { empty } from '../schemas';
import { noOverride, oneOverride, resolveNamespace, type NamespaceRef } from './namespaces';

export const deleteOverride = defineOperation({
  name: 'ratelimits.deleteOverride',
  method: 'POST',
  plane: 'management',
  summary: 'Deletes the override of an identifier in a namespace.',
  permission: { resource: 'ratelimit', action: 'delete_override', scope: 'resource' },
  ...oneOverride,
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
        auditEntry(caller, 'ratelimits.deleteOverride', 'namespace', namespace.id, {
          namespace: namespace.name,
          identifier: input.identifier,
        }),
      ))
    ) {
      throw noOverride(input.identifier, namespace);
    }
    return {};
  },
});
