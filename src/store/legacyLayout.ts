import type { RedisClient as Redis } from '../redis/clients';
import { scanKeys } from './migration/step';
import { legacy, names } from './names';

/** How long a node trusts "records of the previous layout may remain" before asking again. */
const RECHECK_MS = 10_000;

/**
 * Whether key records of the previous layout (under their workspace's tag) may remain, so that
 * reads must look for them too. Once `keyward migrate` has moved them all, or a node found none
 * at its start, the marker says so and nodes stop looking: no read pays for them any more.
 */
export class LegacyLayout {
  private migrated = false;
  private detected = false;
  private checkedAt = -Infinity;

  constructor(
    private readonly redis: Redis,
    private readonly now: () => number = () => performance.now(),
  ) {}

  async mayRemain(): Promise<boolean> {
    if (this.migrated) return false;
    if (this.now() - this.checkedAt < RECHECK_MS) return true;
    this.migrated = (await this.redis.exists(names.layoutMigrated)) === 1;
    this.checkedAt = this.now();
    return !this.migrated;
  }

  async markMigrated(): Promise<void> {
    await this.redis.set(names.layoutMigrated, String(Date.now()));
    this.migrated = true;
  }

  /**
   * At a node's start: on a Redis that holds no key of the previous layout, nothing will ever
   * need moving, so the marker is set at once (a fresh deployment never pays for the fallback).
   */
  async detect(): Promise<void> {
    if (this.detected || !(await this.mayRemain())) return;
    for await (const found of scanKeys(this.redis, legacy.keyPattern)) {
      if (found.length === 0) continue;
      this.detected = true;
      return;
    }
    await this.markMigrated();
    this.detected = true;
  }
}
