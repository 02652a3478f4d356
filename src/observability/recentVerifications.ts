import { Lru } from '../cache/lru';

/** One verification in a key's recent log: its time and outcome; from ClickHouse, more. */
export interface RecentVerification {
  at: number;
  code: string;
  /** The region of the node that answered (ClickHouse's log only). */
  region?: string;
  tags?: readonly string[];
  /** The client's address, only where KEYWARD_LOG_CLIENT_IP kept it. */
  ip?: string;
}

/** How many verifications a key's recent log shows. */
export const RECENT_PER_KEY = 20;
const PER_KEY = RECENT_PER_KEY;

/**
 * The last verification outcomes of each key as this node saw them, for the dashboard. Kept in
 * memory on purpose: writing them to Redis would add a round trip to every verification.
 */
export class RecentVerifications {
  private readonly byKey = new Lru<string, RecentVerification[]>(10_000);

  record(keyId: string, code: string, at: number): void {
    let list = this.byKey.get(keyId);
    if (!list) {
      list = [];
      this.byKey.set(keyId, list);
    }
    list.push({ at, code });
    if (list.length > PER_KEY) list.shift();
  }

  /** Newest first. */
  of(keyId: string): RecentVerification[] {
    return [...(this.byKey.get(keyId) ?? [])].reverse();
  }
}
