import type { Override } from '../../domain/overrides';
import { NotFoundError } from '../../errors';
import { defineOperation } from '../operation';
import { identifier, namespaceRef, overrideOutput } from '../schemas';
import { exactlyOneNamespace, resolveNamespace, type NamespaceRef } from './namespaces';

export const getOverride = defineOperation({
  name: 'ratelimits.getOverride',
  method: 'GET',
  plane: 'management',
  summary: 'The override of an identifier in a namespace.',
  permission: { resource: 'ratelimit', action: 'read_override', scope: 'resource' },
  input: { type: 'object', required: ['identifier'], properties: { ...namespaceRef, identifier } },
  check: exactlyOneNamespace,
  output: overrideOutput,
  uses: ['ratelimits', 'now'],
  async handle(deps, caller, input: NamespaceRef & { identifier: string }): Promise<Override> {
    const namespace = await resolveNamespace(deps, caller, input, 'read_override');
    const override = await deps.ratelimits.getOverride(
      caller.rootKey.workspaceId,
      namespace,
      input.identifier,
    );
    if (!override)
      throw new NotFoundError(`no override for ${input.identifier} in namespace ${namespace.name}`);
    return override;
  },
});
