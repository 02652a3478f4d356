import { legacy } from '../names';
import type { RatelimitStore } from '../ratelimitStore';
import { scanKeys, type MigrationStep } from './step';

/**
 * `keyward:{<ws>}:rlns:name:<name>`: the name is free text and runs to the end (its id entry
 * and overrides live under `rlns:id:`, which no name record's key can spell).
 */
const LEGACY_NAMESPACE_RECORD = /^keyward:\{(ws_[A-Za-z0-9_]+)\}:rlns:name:([\s\S]*)$/;

/**
 * Moves every rate-limit namespace of the previous layout (record, id entry and overrides under
 * the workspace's tag) to the current one, one namespace at a time with the same move a node
 * makes when it reads such a namespace. Once a full pass finds none left, the marker tells every
 * node to stop looking for them.
 */
export function namespacesMigration(ratelimits: RatelimitStore): MigrationStep {
  return {
    name: 'namespaces',
    async run(redis, progress) {
      let moved = 0;
      for await (const batch of scanKeys(redis, legacy.namespacePattern)) {
        for (const name of batch) {
          const match = LEGACY_NAMESPACE_RECORD.exec(name);
          if (!match) continue;
          if (await ratelimits.moveLegacyNamespace(match[1] as string, match[2] as string)) {
            progress(++moved);
          }
        }
      }
      // Namespaces an old node created during the pass would be found by the next run, not lost.
      for await (const _ of scanKeys(redis, legacy.namespacePattern)) return { moved };
      await ratelimits.legacy.markMigrated();
      return { moved };
    },
  };
}
