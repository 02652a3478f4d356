import type { ApiStore } from '../apiStore';
import type { IdentityStore } from '../identityStore';
import type { KeyStore } from '../keyStore';
import type { LegacyLayout } from '../legacyLayout';
import type { RatelimitStore } from '../ratelimitStore';
import type { RbacStore } from '../rbacStore';
import { scanKeys, type MigrationStep } from './step';

/** What moves one kind of record of the previous layout, as a node moves one it reads. */
export interface RecordMove {
  /** The step's name in progress lines and `--json`. */
  name: string;
  /** The kind's marker, pattern and record names (LegacyLayout's `kind`). */
  legacy: LegacyLayout;
  /** Moves the record `id` (a namespace's name) of workspace `ws`; true when this call moved it. */
  move(ws: string, id: string): Promise<boolean>;
}

/**
 * Moves every record of one kind of the previous layout to the current one, one at a time with
 * the same move a node makes when it reads such a record. Once a full pass finds none left, the
 * kind's marker tells every node to stop looking for them; a record an old node wrote during the
 * pass is found by the next run, not lost.
 */
export function recordsMigration({ name, legacy, move }: RecordMove): MigrationStep {
  const { pattern, record } = legacy.kind;
  return {
    name,
    async run(redis, progress) {
      let moved = 0;
      for await (const batch of scanKeys(redis, pattern)) {
        for (const found of batch) {
          const match = record.exec(found);
          if (match && (await move(match[1] as string, match[2] as string))) progress(++moved);
        }
      }
      for await (const batch of scanKeys(redis, pattern)) {
        if (batch.some((found) => record.test(found))) return { moved };
      }
      await legacy.markMigrated();
      return { moved };
    },
  };
}

/** Keys, with their permission and role sets, hash entries and listing entries. */
export const keysMigration = (keys: KeyStore): MigrationStep =>
  recordsMigration({
    name: 'keys',
    legacy: keys.legacy,
    move: async (ws, id) => (await keys.moveLegacyKey(ws, id)) === 'moved',
  });

/** Identities, with their externalId entries and listing entries. */
export const identitiesMigration = (identities: IdentityStore): MigrationStep =>
  recordsMigration({
    name: 'identities',
    legacy: identities.legacy,
    move: async (ws, id) => (await identities.moveLegacyIdentity(ws, id)) === 'moved',
  });

/** Rate-limit namespaces, with their id entries and overrides. */
export const namespacesMigration = (ratelimits: RatelimitStore): MigrationStep =>
  recordsMigration({
    name: 'namespaces',
    legacy: ratelimits.legacy,
    move: async (ws, name) => (await ratelimits.moveLegacyNamespace(ws, name)) !== undefined,
  });

/** API records (the workspace's index of its APIs did not move). */
export const apisMigration = (apis: ApiStore): MigrationStep =>
  recordsMigration({
    name: 'apis',
    legacy: apis.legacy,
    move: async (ws, id) => (await apis.moveLegacy(ws, id)) === 'moved',
  });

/** Permissions (their index of names did not move). */
export const permissionsMigration = (rbac: RbacStore): MigrationStep =>
  recordsMigration({
    name: 'permissions',
    legacy: rbac.legacy.permission,
    move: async (ws, id) => (await rbac.moveLegacy('permission', ws, id)) === 'moved',
  });

/** Roles, with the ids of their permissions. */
export const rolesMigration = (rbac: RbacStore): MigrationStep =>
  recordsMigration({
    name: 'roles',
    legacy: rbac.legacy.role,
    move: async (ws, id) => (await rbac.moveLegacy('role', ws, id)) === 'moved',
  });
