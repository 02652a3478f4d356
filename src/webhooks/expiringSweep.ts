import { expiringSoon, type WebhookRecord } from '../domain/webhook';
import { PeriodicFlush } from '../observability/periodicFlush';
import type { ApiStore } from '../store/apiStore';
import { KEY_LISTING_SHARDS } from '../store/keyListing';
import type { KeyStore } from '../store/keyStore';
import type { WebhookStore } from '../store/webhookStore';
import type { WebhookEvents } from './events';

export interface ExpiringSweepOptions {
  /** KEYWARD_WEBHOOK_EXPIRING_SWEEP_MS: how often one node of the deployment sweeps. */
  everyMs: number;
  /** This node's id: the lock's value, so that an operator sees who holds it. */
  nodeId: string;
  /** Keys (APIs) read per round trip. */
  pageSize?: number;
  /** The identity's externalId for the event body, as a verification's would carry it. */
  externalId: (ws: string, identityId: string) => Promise<string | undefined>;
  failed?: (error: unknown) => void;
}

/** What one sweep did: `skipped` when another node holds this period's lock. */
export interface SweepOutcome {
  swept: boolean;
  workspaces: number;
  keysRead: number;
  expiring: number;
  /** Workspaces taken out of the set: their last webhook wanting key.expiring was deleted. */
  forgotten: number;
}

/**
 * key.expiring for keys nobody verifies in their last day (docs/webhooks.md): every
 * `everyMs` one node (SET NX PX lock) walks the listings of every workspace with a webhook
 * wanting key.expiring and queues the event for each key whose `expires` is within a day,
 * through the same once-per-state marker as a verification (WebhookEvents.queueExpiring). A key
 * is seen first between a day and a day less `everyMs` before its expiry; a sweep that fails is
 * done again by the next period's holder. Why a walk and not an index: docs/decisions.md.
 */
export class ExpiringSweep {
  private readonly timer: PeriodicFlush;

  constructor(
    private readonly webhooks: WebhookStore,
    private readonly apis: ApiStore,
    private readonly keys: KeyStore,
    private readonly events: WebhookEvents,
    private readonly now: () => number,
    private readonly options: ExpiringSweepOptions,
  ) {
    this.timer = new PeriodicFlush(async () => {
      try {
        await this.sweep();
        return true;
      } catch (error) {
        this.options.failed?.(error);
        return false;
      }
    }, options.everyMs);
  }

  start(): void {
    this.timer.start();
  }

  stop(): void {
    this.timer.stop();
  }

  /** One period's sweep, if this node takes the period's lock. */
  async sweep(): Promise<SweepOutcome> {
    const outcome: SweepOutcome = {
      swept: false,
      workspaces: 0,
      keysRead: 0,
      expiring: 0,
      forgotten: 0,
    };
    // Held for nine tenths of the period and not released: another node waking in the period
    // finds it taken, while the holder's own next tick, which timers may bring a little early,
    // finds it free, so that sweeps stay at most a period apart. A sweep longer than that may
    // overlap the next one; the markers keep that to one event a key.
    const holdMs = Math.max(1, Math.floor(this.options.everyMs * 0.9));
    if (!(await this.webhooks.takeSweepLock(this.options.nodeId, holdMs))) {
      return outcome;
    }
    outcome.swept = true;
    // Once per deployment: webhooks created before the set of their workspaces existed.
    await this.webhooks.backfillExpiringWorkspaces(this.now());
    for (const ws of await this.webhooks.expiringWorkspaces()) {
      const hooks = (await this.webhooks.list(ws)).filter((hook) =>
        hook.events.includes('key.expiring'),
      );
      if (hooks.length === 0) {
        // Its last such webhook is gone: later sweeps need not read it again.
        if (await this.webhooks.forgetExpiringWorkspace(ws)) outcome.forgotten += 1;
        continue;
      }
      outcome.workspaces += 1;
      await this.sweepWorkspace(ws, hooks, outcome);
    }
    return outcome;
  }

  private async sweepWorkspace(
    ws: string,
    hooks: readonly WebhookRecord[],
    outcome: SweepOutcome,
  ): Promise<void> {
    const limit = this.options.pageSize ?? 500;
    let afterId: string | undefined;
    do {
      const page = await this.apis.list(ws, { limit, ...(afterId ? { afterId } : {}) });
      for (const api of page.apis) await this.sweepApi(ws, api.id, hooks, outcome);
      afterId = page.next;
    } while (afterId !== undefined);
  }

  private async sweepApi(
    ws: string,
    apiId: string,
    hooks: readonly WebhookRecord[],
    outcome: SweepOutcome,
  ): Promise<void> {
    for (let shard = 0; shard < KEY_LISTING_SHARDS; shard++) {
      await this.sweepShard(ws, apiId, shard, hooks, outcome);
    }
  }

  private async sweepShard(
    ws: string,
    apiId: string,
    shard: number,
    hooks: readonly WebhookRecord[],
    outcome: SweepOutcome,
  ): Promise<void> {
    const limit = this.options.pageSize ?? 500;
    let afterSeq: number | undefined;
    for (;;) {
      const page = await this.keys.expiryPage(ws, apiId, shard, {
        limit,
        ...(afterSeq !== undefined ? { afterSeq } : {}),
      });
      // Read per page: a long sweep judges each key against the time it reaches it.
      const now = this.now();
      for (const key of page.keys) {
        outcome.keysRead += 1;
        if (!expiringSoon(key.expires, now)) continue;
        const externalId =
          key.identityId === undefined
            ? undefined
            : await this.options.externalId(ws, key.identityId);
        await this.events.queueExpiring(
          hooks,
          {
            workspaceId: ws,
            apiId,
            keyId: key.id,
            expires: key.expires,
            ...(key.identityId !== undefined && externalId !== undefined
              ? { identity: { id: key.identityId, externalId } }
              : {}),
          },
          now,
        );
        outcome.expiring += 1;
      }
      if (!page.more || page.lastSeq === undefined) return;
      afterSeq = page.lastSeq;
    }
  }
}
