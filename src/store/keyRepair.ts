import type { RedisClient as Redis } from '../redis/clients';
import { ApiStore } from './apiStore';
import { IdentityStore } from './identityStore';
import type { KeyStore } from './keyStore';
import { names } from './names';
import { RbacStore } from './rbacStore';
import type { UnfinishedWrite } from './unfinishedWrites';

/**
 * A journal entry older than this belongs to a write that died: far longer than any write takes
 * from its first step to its last (each step is bounded by the command timeout).
 */
export const REPAIR_AFTER_MS = 30_000;

export interface RepairOptions {
  /** How often a sweep runs; the first runs at start. */
  intervalMs: number;
  /** How old an entry must be to be taken for the leftover of a dead write. */
  staleAfterMs: number;
  /** Told of a sweep that failed; the next one tries again. */
  failed?: (error: unknown) => void;
  /** Wall-clock time in unix ms, as the journal's entries are stamped. */
  now?: () => number;
}

export const REPAIR_DEFAULTS = { intervalMs: 5_000, staleAfterMs: REPAIR_AFTER_MS } as const;

/**
 * Finishes or undoes what writes across slots left half done (docs/redis.md, "Writes across
 * slots"): every node sweeps the journal at start and then periodically. Each repair reads
 * where the write got to and completes it from there; run twice (two nodes, or a repair that
 * died itself), it changes nothing the second time. Key writes and identity writes share the
 * journal, so one sweep repairs both (an identity's steps are IdentityStore.repair's), and so do
 * API writes (ApiStore.repair's) and permission and role writes (RbacStore.repair's).
 */
export class KeyRepair {
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<number> | undefined;
  private readonly now: () => number;

  constructor(
    private readonly redis: Redis,
    private readonly keys: KeyStore,
    private readonly options: RepairOptions = REPAIR_DEFAULTS,
    /** Identity writes share the journal: a node's own store, or one that announces nothing. */
    private readonly identities: IdentityStore = new IdentityStore(redis, () => undefined),
    /** API writes share it too. */
    private readonly apis: ApiStore = new ApiStore(redis, () => undefined),
    /** And permission and role writes. */
    private readonly rbac: RbacStore = new RbacStore(redis, () => undefined),
  ) {
    this.now = options.now ?? Date.now;
  }

  start(): void {
    void this.sweep();
    this.timer ??= setInterval(() => void this.sweep(), this.options.intervalMs);
    this.timer.unref();
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.sweeping;
  }

  /** One sweep (a call while one runs joins it); answers how many writes it repaired. */
  sweep(): Promise<number> {
    this.sweeping ??= this.sweepOnce()
      .catch((error: unknown) => {
        this.options.failed?.(error);
        return 0;
      })
      .finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  private async sweepOnce(): Promise<number> {
    // Once per process, until it succeeds: whether records of the previous layout remain.
    await Promise.all([
      this.keys.legacy.detect(),
      this.identities.legacy.detect(),
      this.apis.legacy.detect(),
      this.rbac.legacy.permission.detect(),
      this.rbac.legacy.role.detect(),
    ]);
    let repaired = 0;
    let failure: { error: unknown } | undefined;
    const olderThan = this.now() - this.options.staleAfterMs;
    for await (const { ticket, write } of this.keys.unfinished.stale(olderThan)) {
      try {
        await this.repair(write);
        await this.keys.unfinished.end(ticket);
        repaired++;
      } catch (error) {
        // One slot may be away (a failover): the others are repaired, and told of once.
        failure ??= { error };
      }
    }
    if (failure) throw failure.error;
    return repaired;
  }

  /**
   * Brings one write to an end: finished where it had passed its point of no return, else
   * undone; then what its keys' (identity's) outboxes hold is relayed to the audit log (the
   * journal entry stands in for their registration).
   */
  async repair(write: UnfinishedWrite): Promise<void> {
    switch (write.op) {
      case 'createKeys':
        if (write.committing) {
          await Promise.all(
            write.keys.map((key, i) =>
              this.keys.commit(write.ws, key.keyId, key.hash, write.audit?.[i] ?? ''),
            ),
          );
        } else {
          await Promise.all(write.keys.map((key) => this.keys.undoCreation(write.ws, key)));
        }
        await Promise.all(write.keys.map((key) => this.keys.relayAudit(key.keyId)));
        return;
      case 'reroll': {
        const rerolledTo = await this.redis.hget(names.key(write.oldKeyId), 'rerolledTo');
        if (rerolledTo === write.key.keyId) {
          await this.keys.commit(write.ws, write.key.keyId, write.key.hash, write.audit);
        } else {
          await this.keys.undoCreation(write.ws, write.key);
        }
        await this.keys.relayAudit(write.key.keyId);
        return;
      }
      case 'deleteKey':
        if (!(await this.keys.liveRecord(write.ws, write.key.keyId))) {
          await this.keys.unindexKey(write.ws, write.key);
        }
        await this.keys.relayAudit(write.key.keyId);
        return;
      case 'createIdentity':
      case 'deleteIdentity':
      case 'renameIdentity':
        await this.identities.repair(write);
        return;
      case 'createApi':
      case 'deleteApi':
        await this.apis.repair(write);
        return;
      case 'createRbac':
      case 'deleteRbac':
        await this.rbac.repair(write);
        return;
      case 'updateKey': {
        if (write.owners.length > 0) {
          const record = await this.keys.liveRecord(write.ws, write.keyId);
          await this.keys.placeInOwnerIndexes(
            write.keyId,
            write.apiId,
            record?.seq ?? 0,
            record?.ownerId,
            write.owners,
          );
        }
        await this.keys.relayAudit(write.keyId);
        return;
      }
    }
  }
}
