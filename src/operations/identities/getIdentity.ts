import { defineOperation } from '../operation';
import { object } from '../schemas';
import { exactlyOneIdentity, loadIdentity, type IdentityHandle } from './loadIdentity';
import { identityHandles, identityOutput } from './schemas';
import { poolStanding } from './credits';
import { identityView, type IdentityView } from './views';

export const getIdentity = defineOperation({
  name: 'identities.getIdentity',
  method: 'GET',
  plane: 'management',
  summary: 'An identity by its id or by its externalId (exactly one of them).',
  permission: { resource: 'identity', action: 'read_identity', scope: 'resource' },
  input: object(identityHandles),
  check: exactlyOneIdentity,
  output: identityOutput,
  uses: ['identities', 'now'],
  async handle(deps, caller, input: IdentityHandle): Promise<IdentityView> {
    const identity = await loadIdentity(deps, caller, input, 'read_identity');
    return identityView(identity, await poolStanding(deps, identity));
  },
});
