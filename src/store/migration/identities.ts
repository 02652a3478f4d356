import type { IdentityStore } from '../identityStore';
import { legacy } from '../names';
import { scanKeys, type MigrationStep } from './step';

/** `keyward:{<ws>}:identity:<identityId>`: a record of the previous layout. */
const LEGACY_IDENTITY_RECORD = /^keyward:\{(ws_[A-Za-z0-9_]+)\}:identity:([A-Za-z0-9_]+)$/;

/**
 * Moves every identity of the previous layout (record, externalId entry and listing entry under
 * the workspace's tag) to the current one, one identity at a time with the same move a node
 * makes when it reads such an identity. Once a full pass finds none left, the marker tells every
 * node to stop looking for them.
 */
export function identitiesMigration(identities: IdentityStore): MigrationStep {
  return {
    name: 'identities',
    async run(redis, progress) {
      let moved = 0;
      for await (const batch of scanKeys(redis, legacy.identityPattern)) {
        for (const name of batch) {
          const match = LEGACY_IDENTITY_RECORD.exec(name);
          if (!match) continue;
          const [ws, identityId] = [match[1] as string, match[2] as string];
          if ((await identities.moveLegacyIdentity(ws, identityId)) === 'moved') {
            progress(++moved);
          }
        }
      }
      // Identities an old node wrote during the pass would be found by the next run, not lost.
      for await (const _ of scanKeys(redis, legacy.identityPattern)) return { moved };
      await identities.legacy.markMigrated();
      return { moved };
    },
  };
}
