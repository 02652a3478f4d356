import { casesOf } from '../cases';
import type { WireStep } from '../cases/types';
import { operations } from '../../src/operations/registry';
import { sharedSteps } from './wireSections';
import { WireScene, type Exchange, type RootKeyName, type ScenarioContext } from './wireScenario';

export { FIXED_IDS, type Exchange, type RootKeyName } from './wireScenario';

/**
 * The scenario of the wire corpus (test/integration/wireCorpus.test.ts): a fixed sequence of raw
 * HTTP requests against one node, covering the RPCs of src/operations/registry.ts with their
 * successes and characteristic errors, every verifyKey verdict, the transport errors and a sample
 * of hostile input. Each operation's steps are in its cases file (test/cases/, `wire`); the ones
 * about no one operation in test/support/wireSections.ts.
 */

/**
 * Every step, in the order the recording was made: later steps use what earlier ones made (APIs,
 * keys, overrides), and the recorded ids are numbered in the order they first appear, so this
 * order is part of the fixture. `shared` names a step of wireSections.ts, anything else an
 * operation of the registry.
 */
const ORDER: readonly (readonly [owner: string, step: string])[] = [
  ['shared', 'transport'],
  ['shared', 'authentication'],
  ['apis.createApi', 'aAndB'],
  ['shared', 'scopedRootKey'],
  ['apis.createApi', 'variants'],
  ['apis.getApi', 'reads'],
  ['apis.listApis', 'pages'],
  ['keys.createKey', 'keys'],
  ['keys.createKey', 'refusals'],
  ['keys.getKey', 'reads'],
  ['keys.verifyKey', 'verdicts'],
  ['keys.updateKey', 'updates'],
  ['keys.updateRemaining', 'credits'],
  ['keys.getBucket', 'buckets'],
  ['keys.getRecentVerifications', 'recent'],
  ['migrations.createKeys', 'imports'],
  ['apis.listKeys', 'pages'],
  ['ratelimits.limit', 'limits'],
  ['ratelimits.setOverride', 'overrides'],
  ['ratelimits.getOverride', 'reads'],
  ['ratelimits.listOverrides', 'pages'],
  ['ratelimits.deleteOverride', 'deletes'],
  ['shared', 'bodies'],
  ['shared', 'hostile'],
  ['keys.deleteKey', 'deletes'],
  // k6 has expired by now: it was made to expire a few seconds after its creation.
  ['keys.verifyKey', 'expired'],
  ['apis.deleteApi', 'deletes'],
  ['apis.listApis', 'atTheEnd'],
  ['shared', 'end'],
];

const stepsOf = (owner: string): Readonly<Record<string, WireStep>> =>
  owner === 'shared' ? sharedSteps : casesOf(owner).wire;

/**
 * ORDER's steps; a step of ORDER that is not written, or a written step ORDER leaves out, fails
 * by name before anything is sent.
 */
function orderedSteps(): WireStep[] {
  const listed = new Set(ORDER.map(([owner, step]) => `${owner} ${step}`));
  const written = ['shared', ...operations.map((op): string => op.name)].flatMap((owner) =>
    Object.keys(stepsOf(owner)).map((step) => `${owner} ${step}`),
  );
  const unlisted = written.filter((step) => !listed.has(step));
  if (unlisted.length > 0) {
    throw new Error(`wire steps not in ORDER (test/support/wireCorpus.ts): ${unlisted.join(', ')}`);
  }
  if (listed.size !== ORDER.length) throw new Error('a wire step is listed twice in ORDER');
  return ORDER.map(([owner, step]) => {
    const run = stepsOf(owner)[step];
    if (!run) throw new Error(`ORDER lists the wire step ${owner} ${step}, which is not written`);
    return run;
  });
}

/** Runs the whole scenario and returns every exchange, in the order sent. */
export async function runScenario(context: ScenarioContext): Promise<{
  exchanges: Exchange[];
  rootKeys: ReadonlyMap<RootKeyName, string>;
}> {
  const steps = orderedSteps();
  const scene = new WireScene(context);
  const { c } = scene;
  c.rootKeys.set('root', context.rootKey);
  c.rootKeys.set(
    'narrow',
    (
      await context.newRootKey({
        workspaceId: context.workspaceId,
        permissions: ['api.*.read_api'],
      })
    ).key,
  );
  c.rootKeys.set('other_ws', (await context.newRootKey({})).key);
  for (const step of steps) await step(scene);
  return { exchanges: c.exchanges, rootKeys: c.rootKeys };
}
