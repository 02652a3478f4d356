import { NotFoundError } from '../../errors';
import { newId } from '../../keys/ids';
import { defineOperation } from '../operation';
import { auditEntry } from '../audit';
import { duration, id, identifier, namespaceRef, object, tokens } from '../schemas';
import { exactlyOneNamespace, resolveNamespace, type NamespaceRef } from './namespaces';

type SetOverrideInput = NamespaceRef & {
  identifier: string;
  limit: number;
  duration: number;
  async?: boolean;
};

export const setOverride = defineOperation({
  name: 'ratelimits.setOverride',
  method: 'POST',
  plane: 'management',
  summary: 'Creates or replaces the limit of an identifier (or an identifier prefix ending in *).',
  permission: { resource: 'ratelimit', action: 'set_override', scope: 'resource' },
  input: object(
    { ...namespaceRef, identifier, limit: tokens, duration, async: { type: 'boolean' } },
    ['identifier', 'limit', 'duration'],
  ),
  check: exactlyOneNamespace,
  output: object({ overrideId: id }, ['overrideId']),
  uses: ['ratelimits', 'now'],
  async handle(deps, caller, input: SetOverrideInput): Promise<{ overrideId: string }> {
    const namespace = await resolveNamespace(deps, caller, input, 'set_override', true);
    const override = {
      identifier: input.identifier,
      limit: input.limit,
      duration: input.duration,
      ...(input.async !== undefined ? { async: input.async } : {}),
    };
    const overrideId = await deps.ratelimits.setOverride(
      caller.rootKey.workspaceId,
      namespace,
      override,
      newId('rlor'),
      // The target is the namespace: a replaced override keeps an id only the script reads.
      auditEntry(caller, 'ratelimits.setOverride', 'namespace', namespace.id, {
        namespace: namespace.name,
        ...override,
      }),
    );
    if (overrideId === undefined)
      throw new NotFoundError('ratelimit_namespace', `namespace ${namespace.name} not found`);
    return { overrideId };
  },
});
