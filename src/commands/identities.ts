import { getIdentity } from '../operations/identities/getIdentity';
import { updateCredits, type UpdatePoolInput } from '../operations/identities/updateCredits';
import { updateIdentity } from '../operations/identities/updateIdentity';
import type { IdentityView } from '../operations/identities/views';
import { UsageError, type CommandSpec } from './framework';
import { emit } from './output';
import { operate, workspaceArgument, workspaceOption } from './services';
import { integerFlag } from './validate';

/** `keyward identities …`: an identity's credit pool (README, "Credits shared by an identity"). */

const externalIdArg = { name: 'externalId', description: "the identity's externalId" };

/** The pool as one line: its count and refill, or that there is none. */
function poolLine(identity: IdentityView): string {
  if (identity.remaining === undefined) return `${identity.externalId}: no credit pool`;
  const refill = identity.refill
    ? `, back to ${identity.refill.amount} ${identity.refill.interval}`
    : '';
  return `${identity.externalId}: ${identity.remaining} credits${refill}`;
}

const credits: CommandSpec = {
  path: ['identities', 'credits'],
  brief: "show or change an identity's credit pool",
  summary:
    "Prints an identity's credit pool, which every key of the identity spends from; with --set, --add or --take, changes it first, as identities.updateCredits does (atomically with verifications).",
  options: {
    workspace: workspaceOption,
    set: {
      type: 'string',
      value: 'N',
      description: 'set the pool to N (gives one to an identity without)',
    },
    add: { type: 'string', value: 'N', description: 'add N credits' },
    take: { type: 'string', value: 'N', description: 'take N credits (refused below 0)' },
  },
  args: [externalIdArg],
  example: 'keyward identities credits --workspace ws_… --add 500 acme',
  async run(invocation, runtime) {
    const externalId = invocation.args[0] ?? '';
    const changes = (
      [
        ['set', 'set'],
        ['add', 'increment'],
        ['take', 'decrement'],
      ] as const
    ).flatMap(([flag, op]) => {
      const value = integerFlag(invocation.string(flag), `--${flag}`, credits);
      return value === undefined ? [] : [{ op, value }];
    });
    if (changes.length > 1) {
      throw new UsageError('give at most one of --set, --add and --take', credits);
    }
    const ws = await workspaceArgument(invocation, runtime);
    const change = changes[0];
    if (change) {
      const input: UpdatePoolInput = { externalId, ...change };
      await operate(runtime, ws, updateCredits, input);
    }
    const identity = await operate(runtime, ws, getIdentity, { externalId });
    const pool = {
      externalId: identity.externalId,
      identityId: identity.id,
      ...(identity.remaining !== undefined ? { remaining: identity.remaining } : {}),
      ...(identity.refill ? { refill: identity.refill } : {}),
    };
    emit(invocation, pool, () => [poolLine(identity)]);
    return 0;
  },
};

const rename: CommandSpec = {
  path: ['identities', 'rename'],
  brief: 'give an identity a new externalId',
  summary:
    'Renames an identity as identities.updateIdentity with newExternalId does: its keys stay linked, the old externalId is free for another identity, and a taken one is refused (409).',
  options: { workspace: workspaceOption },
  args: [externalIdArg, { name: 'newExternalId', description: 'the externalId it takes' }],
  example: 'keyward identities rename --workspace ws_… acme acme-corp',
  async run(invocation, runtime) {
    const [externalId = '', newExternalId = ''] = invocation.args;
    const ws = await workspaceArgument(invocation, runtime);
    const identity = await operate(runtime, ws, updateIdentity, { externalId, newExternalId });
    const renamed = { identityId: identity.id, externalId: identity.externalId };
    emit(invocation, renamed, () => [`${identity.id}: now ${identity.externalId}`]);
    return 0;
  },
};

export const identityCommands: readonly CommandSpec[] = [credits, rename];
