import type { KeyStore } from '../keyStore';
import { legacy } from '../names';
import { scanKeys, type MigrationStep } from './step';

/** `keyward:{<ws>}:key:<keyId>` and nothing after it (its `:perms` and `:roles` sets move with it). */
const LEGACY_KEY_RECORD = /^keyward:\{(ws_[A-Za-z0-9_]+)\}:key:([A-Za-z0-9_]+)$/;

/**
 * Moves every key of the previous layout (records, sets, hash entries and listing entries under
 * the workspace's tag) to the current one, one key at a time with the same move a node makes
 * when it reads such a key. Once a full pass finds none left, the marker tells every node to
 * stop looking for them.
 */
export function keysMigration(keys: KeyStore): MigrationStep {
  return {
    name: 'keys',
    async run(redis, progress) {
      let moved = 0;
      for await (const batch of scanKeys(redis, legacy.keyPattern)) {
        for (const name of batch) {
          const match = LEGACY_KEY_RECORD.exec(name);
          if (!match) continue;
          if ((await keys.moveLegacyKey(match[1] as string, match[2] as string)) === 'moved') {
            progress(++moved);
          }
        }
      }
      // Keys an old node wrote during the pass would be found by the next run, not lost.
      for await (const _ of scanKeys(redis, legacy.keyPattern)) return { moved };
      await keys.legacy.markMigrated();
      return { moved };
    },
  };
}
