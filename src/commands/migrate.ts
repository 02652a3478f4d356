import type { RedisClient } from '../redis/clients';
import {
  apisMigration,
  identitiesMigration,
  keysMigration,
  namespacesMigration,
  permissionsMigration,
  rolesMigration,
} from '../store/migration/records';
import { usageCounts } from '../store/migration/usageCounts';
import type { MigrationStep } from '../store/migration/step';
import type { CommandSpec } from './framework';
import { emit } from './output';
import { operatorServices } from './services';

/**
 * `keyward migrate`: moves what the previous release stored under a workspace's tag to the
 * layout of this one (docs/redis.md, "Upgrading the layout"), while nodes serve.
 */
const migrate: CommandSpec = {
  path: ['migrate'],
  brief: "move the previous release's Redis layout to this one's, while nodes serve",
  summary:
    "Moves every record the previous release kept under its workspace's hash tag to this release's layout, one record at a time, while nodes serve: keys (with their permission and role sets, hash entries and listings), identities (with their externalId entries and listings), rate-limit namespaces (with their overrides), API records, permissions and roles (with their permission ids) on the primary, then usage counts where the nodes count them (KEYWARD_ANALYTICS_REDIS_URL, or the primary). Nodes of this release read both layouts until the move is done. Idempotent and resumable: stopped at any point, run it again and it finishes what is left.",
  notes:
    'Run it once every node runs this release (a node of the previous release does not read the new layout), and one run at a time: two runs at once may count the usage hash they both finish twice.',
  example: 'keyward migrate',
  async run(invocation, runtime) {
    const services = await operatorServices(runtime);
    const steps: [MigrationStep, () => Promise<RedisClient>][] = [
      [keysMigration(services.keys), () => runtime.redis('primary')],
      [identitiesMigration(services.identities), () => runtime.redis('primary')],
      [namespacesMigration(services.ratelimits), () => runtime.redis('primary')],
      [apisMigration(services.apis), () => runtime.redis('primary')],
      [permissionsMigration(services.rbac), () => runtime.redis('primary')],
      [rolesMigration(services.rbac), () => runtime.redis('primary')],
      [usageCounts, () => runtime.redis('analytics')],
    ];
    const results: { step: string; moved: number }[] = [];
    for (const [step, redis] of steps) {
      let last = 0;
      const { moved } = await step.run(await redis(), (count) => {
        if (!invocation.json && count - last >= 1000) {
          last = count;
          process.stderr.write(`${step.name}: ${count} moved\n`);
        }
      });
      results.push({ step: step.name, moved });
    }
    emit(invocation, { steps: results }, () =>
      results.map(({ step, moved }) => `${step}: ${moved} moved`),
    );
    return 0;
  },
};

export const migrateCommands: readonly CommandSpec[] = [migrate];
