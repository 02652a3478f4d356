import type { RedisClient as Redis } from '../redis/clients';
import { scanKeys } from './migration/step';
import { legacy, names } from './names';

/** How long a node trusts "records of the previous layout may remain" before asking again. */
const RECHECK_MS = 10_000;

/** One kind of record the previous release kept under its workspace's tag. */
export interface LegacyKind {
  /** Set once none is left: nodes then stop looking. */
  readonly marker: string;
  /** Matches every such record (a SCAN pattern). */
  readonly pattern: string;
  /**
   * Which names the pattern finds are such records (it may find others too: a key's sets, an
   * API's old listings), capturing the workspace and the record's id (a namespace's name).
   */
  readonly record: RegExp;
}

/** `keyward:{<ws>}:key:<keyId>` and nothing after it (its `:perms` and `:roles` sets move with it). */
export const LEGACY_KEYS: LegacyKind = {
  marker: names.layoutMigrated,
  pattern: legacy.keyPattern,
  record: /^keyward:\{(ws_[A-Za-z0-9_]+)\}:key:([A-Za-z0-9_]+)$/,
};

/** `keyward:{<ws>}:identity:<identityId>` (its externalId entry and listing entry move with it). */
export const LEGACY_IDENTITIES: LegacyKind = {
  marker: names.identityLayoutMigrated,
  pattern: legacy.identityPattern,
  record: /^keyward:\{(ws_[A-Za-z0-9_]+)\}:identity:([A-Za-z0-9_]+)$/,
};

/**
 * `keyward:{<ws>}:rlns:name:<name>`: the name is free text and runs to the end (its id entry and
 * overrides live under `rlns:id:`, which no name record's key can spell).
 */
export const LEGACY_NAMESPACES: LegacyKind = {
  marker: names.namespacesMigrated,
  pattern: legacy.namespacePattern,
  record: /^keyward:\{(ws_[A-Za-z0-9_]+)\}:rlns:name:([\s\S]*)$/,
};

/**
 * `keyward:{<ws>}:api:<apiId>`: an API record of the previous layout. Its pattern finds that
 * layout's key listings too (`…:keys`, `…:owner:…`), which are the keys' to move.
 */
export const LEGACY_APIS: LegacyKind = {
  marker: names.apiLayoutMigrated,
  pattern: legacy.apiPattern,
  record: /^keyward:\{(ws_[A-Za-z0-9_]+)\}:api:([A-Za-z0-9_]+)$/,
};

/** `keyward:{<ws>}:perm:<permissionId>`: a permission of the previous layout. */
export const LEGACY_PERMISSIONS: LegacyKind = {
  marker: names.permissionsMigrated,
  pattern: legacy.permissionPattern,
  record: /^keyward:\{(ws_[A-Za-z0-9_]+)\}:perm:([A-Za-z0-9_]+)$/,
};

/** `keyward:{<ws>}:role:<roleId>` (its `:perms` set moves with it). */
export const LEGACY_ROLES: LegacyKind = {
  marker: names.rolesMigrated,
  pattern: legacy.rolePattern,
  record: /^keyward:\{(ws_[A-Za-z0-9_]+)\}:role:([A-Za-z0-9_]+)$/,
};

/**
 * Whether records of one kind of the previous layout (under their workspace's tag) may remain,
 * so that reads must look for them too. Once `keyward migrate` has moved them all, or a node
 * found none at its start, the kind's marker says so and nodes stop looking: no read pays for
 * them any more. Keys, identities and namespaces have a marker each: different steps move them.
 */
export class LegacyLayout {
  private migrated = false;
  private detected = false;
  private checkedAt = -Infinity;

  constructor(
    private readonly redis: Redis,
    readonly kind: LegacyKind = LEGACY_KEYS,
    private readonly now: () => number = () => performance.now(),
  ) {}

  async mayRemain(): Promise<boolean> {
    if (this.migrated) return false;
    if (this.now() - this.checkedAt < RECHECK_MS) return true;
    this.migrated = (await this.redis.exists(this.kind.marker)) === 1;
    this.checkedAt = this.now();
    return !this.migrated;
  }

  async markMigrated(): Promise<void> {
    await this.redis.set(this.kind.marker, String(Date.now()));
    this.migrated = true;
  }

  /**
   * At a node's start: on a Redis that holds no record of the kind in the previous layout, nothing
   * will ever need moving, so the marker is set at once (a fresh deployment never pays for the
   * fallback).
   */
  async detect(): Promise<void> {
    if (this.detected || !(await this.mayRemain())) return;
    for await (const found of scanKeys(this.redis, this.kind.pattern)) {
      if (!found.some((name) => this.kind.record.test(name))) continue;
      this.detected = true;
      return;
    }
    await this.markMigrated();
    this.detected = true;
  }
}
