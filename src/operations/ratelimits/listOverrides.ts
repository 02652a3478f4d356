import type { Override } from '../../domain/overrides';
import { defineOperation } from '../operation';
import { identifier, namespaceRef, overrideOutput, page, pageLimit } from '../schemas';
import { exactlyOneNamespace, resolveNamespace, type NamespaceRef } from './namespaces';

export const listOverrides = defineOperation({
  name: 'ratelimits.listOverrides',
  method: 'GET',
  plane: 'management',
  summary: "A namespace's overrides ordered by identifier, a page at a time.",
  permission: { resource: 'ratelimit', action: 'read_override', scope: 'resource' },
  input: {
    type: 'object',
    properties: { ...namespaceRef, cursor: identifier, limit: pageLimit },
  },
  check: exactlyOneNamespace,
  output: page('overrides', overrideOutput),
  uses: ['ratelimits', 'now'],
  async handle(
    deps,
    caller,
    input: NamespaceRef & { cursor?: string; limit?: number },
  ): Promise<{ overrides: Override[]; cursor?: string; total: number }> {
    const namespace = await resolveNamespace(deps, caller, input, 'read_override');
    const found = await deps.ratelimits.listOverrides(caller.rootKey.workspaceId, namespace, {
      limit: input.limit ?? 100,
      ...(input.cursor !== undefined ? { after: input.cursor } : {}),
    });
    const last = found.overrides[found.overrides.length - 1];
    return {
      overrides: found.overrides,
      total: found.total,
      ...(found.more && last ? { cursor: last.identifier } : {}),
    };
  },
});
