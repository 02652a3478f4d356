import type { ApiStore } from '../apiStore';
import { LEGACY_API_RECORD } from '../legacyLayout';
import { legacy } from '../names';
import { scanKeys, type MigrationStep } from './step';

/**
 * Moves every API record of the previous layout to its own tag, one at a time with the same move
 * a node makes when it reads one (the workspace's index stays where it is). Once a full pass
 * finds none left, the marker tells every node to stop looking for them.
 */
export function apisMigration(apis: ApiStore): MigrationStep {
  return {
    name: 'apis',
    async run(redis, progress) {
      let moved = 0;
      for await (const batch of scanKeys(redis, legacy.apiPattern)) {
        for (const name of batch) {
          const match = LEGACY_API_RECORD.exec(name);
          if (!match) continue;
          const [ws, apiId] = [match[1] as string, match[2] as string];
          if ((await apis.moveLegacy(ws, apiId)) === 'moved') progress(++moved);
        }
      }
      // An API an old node wrote during the pass would be found by the next run, not lost.
      for await (const batch of scanKeys(redis, legacy.apiPattern)) {
        if (batch.some((name) => LEGACY_API_RECORD.test(name))) return { moved };
      }
      await apis.legacy.markMigrated();
      return { moved };
    },
  };
}
