import type { Override } from '../../domain/overrides';
import { defineOperation } from '../operation';
import { overrideOutput } from '../schemas';
import { noOverride, oneOverride, resolveNamespace, type NamespaceRef } from './namespaces';

export const getOverride = defineOperation({
  name: 'ratelimits.getOverride',
  method: 'GET',
  plane: 'management',
  summary: 'The override of an identifier in a namespace.',
  permission: { resource: 'ratelimit', action: 'read_override', scope: 'resource' },
  ...oneOverride,
  output: overrideOutput,
  uses: ['ratelimits', 'now'],
  async handle(deps, caller, input: NamespaceRef & { identifier: string }): Promise<Override> {
    const namespace = await resolveNamespace(deps, caller, input, 'read_override');
    const override = await deps.ratelimits.getOverride(
      caller.rootKey.workspaceId,
      namespace,
      input.identifier,
    );
    if (!override) throw noOverride(input.identifier, namespace);
    return override;
  },
});
