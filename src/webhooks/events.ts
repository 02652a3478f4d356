import {
  EXPIRING_WITHIN_MS,
  expiringSoon,
  type WebhookEventType,
  type WebhookRecord,
} from '../domain/webhook';
import { newId } from '../keys/ids';
import { PeriodicFlush } from '../observability/periodicFlush';
import { names } from '../store/names';
import type { DeliveryJob, WebhookStore } from '../store/webhookStore';

/** What a verification tells the events of webhooks: a narrow view of its verdict. */
export interface VerifiedKey {
  keyId?: string;
  code: string;
  /** Credits left after it, for a key that counts them. */
  remaining?: number;
  expires?: number;
  /** With `remaining`: its credit pool's count after the verification, when it spent from it. */
  identity?: { id: string; externalId: string; remaining?: number };
  /** The seed limit's standing. */
  ratelimit?: { limit: number; remaining: number; reset: number } | { evaluated: false };
  ratelimits?: readonly (
    | { name: string; limit: number; duration: number; exceeded: boolean; reset: number }
    | { name: string; evaluated: false }
  )[];
}

/** What one key did on this node since the last flush, as far as webhooks care. */
interface Observation {
  workspaceId: string;
  keyId: string;
  apiId?: string;
  identity?: { id: string; externalId: string };
  /** The fewest and the latest credits seen. */
  minCredits?: number;
  lastCredits?: number;
  /** The same of its identity's pool, and when the latest was seen. */
  minPool?: number;
  lastPool?: number;
  lastPoolAt?: number;
  /** Limits that refused: name → how long their window lasts from `at`. */
  limited?: Map<string, { limit: number; windowMs: number }>;
  expires?: number;
  at: number;
}

export interface WebhookEventsOptions {
  /** How often noticed states are queued (KEYWARD_WEBHOOK_FLUSH_MS). */
  flushMs: number;
  /** How long a node trusts its copy of a workspace's webhooks (another node's creation). */
  cacheMs: number;
  /** Keys held between two flushes; beyond them a verification is not noticed. */
  maxPending: number;
  /** Told when a flush could not queue an observation's events (they are tried again). */
  failed?: (error: unknown) => void;
  /** Told of each event this node queued. */
  queued?: (type: WebhookEventType) => void;
}

/** A credits marker lives this long: a key that stays low fires again only after it. */
const CREDITS_MARKER_MS = 30 * 24 * 3_600_000;
/** A workspace's webhooks are read again at most this often when unknown and failing. */
const DAY = EXPIRING_WITHIN_MS;

/**
 * The events of webhooks as verifications bring them about: noticed on the request's path in
 * memory (a Map lookup, and nothing at all for a verification that cannot bring one about or a
 * workspace known to have no webhooks), queued in Redis on a timer by `flush`, each once per
 * webhook, key and state across every node (lua/queue-webhook-event-3.lua).
 */
export class WebhookEvents {
  private readonly hooks = new Map<string, { hooks: readonly WebhookRecord[]; at: number }>();
  private readonly loading = new Map<string, Promise<readonly WebhookRecord[]>>();
  private pending = new Map<string, Observation>();
  /** Workspaces known to have no webhooks, whose copy is older than `cacheMs`. */
  private readonly stale = new Set<string>();
  private readonly flusher: PeriodicFlush;

  constructor(
    private readonly store: WebhookStore,
    private readonly now: () => number,
    private readonly options: WebhookEventsOptions,
  ) {
    this.flusher = new PeriodicFlush(() => this.flushOnce(), options.flushMs);
  }

  /** The hot path: a verification's verdict, noted in memory. No I/O: the flush does it all. */
  observe(workspaceId: string, apiId: string | undefined, verdict: VerifiedKey, now: number): void {
    const keyId = verdict.keyId;
    if (keyId === undefined) return;
    const credits = verdict.remaining;
    const pool = verdict.identity?.remaining;
    const limited = verdict.code === 'RATE_LIMITED';
    const expiring = verdict.expires !== undefined && expiringSoon(verdict.expires, now);
    if (credits === undefined && pool === undefined && !limited && !expiring) return;
    const known = this.hooks.get(workspaceId);
    if (known && known.hooks.length === 0) {
      // Read again by the next flush, never from here: a new webhook gets events once it is.
      if (now - known.at > this.options.cacheMs) this.stale.add(workspaceId);
      return;
    }
    const slot = `${workspaceId}\n${keyId}`;
    let seen = this.pending.get(slot);
    if (!seen) {
      if (this.pending.size >= this.options.maxPending) return;
      seen = { workspaceId, keyId, at: now };
      this.pending.set(slot, seen);
    }
    seen.at = now;
    if (apiId !== undefined) seen.apiId = apiId;
    if (verdict.identity) {
      seen.identity = { id: verdict.identity.id, externalId: verdict.identity.externalId };
    }
    if (credits !== undefined) {
      seen.minCredits = Math.min(seen.minCredits ?? credits, credits);
      seen.lastCredits = credits;
    }
    if (pool !== undefined) {
      seen.minPool = Math.min(seen.minPool ?? pool, pool);
      seen.lastPool = pool;
      seen.lastPoolAt = now;
    }
    if (expiring) seen.expires = verdict.expires;
    if (limited) {
      seen.limited ??= new Map();
      let named = false;
      for (const standing of verdict.ratelimits ?? []) {
        if (!('exceeded' in standing) || !standing.exceeded) continue;
        named = true;
        seen.limited.set(standing.name, { limit: standing.limit, windowMs: standing.duration });
      }
      const seed = verdict.ratelimit;
      if (!named && seed && 'reset' in seed) {
        seen.limited.set('default', { limit: seed.limit, windowMs: Math.max(seed.reset - now, 1) });
      }
    }
  }

  /** This node created or deleted a webhook of the workspace: read them again. */
  forget(workspaceId: string): void {
    this.hooks.delete(workspaceId);
  }

  start(): void {
    this.flusher.start();
  }

  flush(): Promise<boolean> {
    return this.flusher.run();
  }

  async stop(): Promise<void> {
    this.flusher.stop();
    await this.flush();
  }

  /** Observations waiting for a flush. */
  get held(): number {
    return this.pending.size;
  }

  private hooksOf(workspaceId: string, refresh = false): Promise<readonly WebhookRecord[]> {
    const known = this.hooks.get(workspaceId);
    if (known && !refresh && this.now() - known.at <= this.options.cacheMs) {
      return Promise.resolve(known.hooks);
    }
    let load = this.loading.get(workspaceId);
    if (!load) {
      load = this.store
        .list(workspaceId)
        .then((hooks) => {
          this.hooks.set(workspaceId, { hooks, at: this.now() });
          return hooks;
        })
        .finally(() => this.loading.delete(workspaceId));
      // A background refresh that fails keeps the old copy; a flush's own read reports it.
      load.catch(() => undefined);
      this.loading.set(workspaceId, load);
    }
    return load;
  }

  private async flushOnce(): Promise<boolean> {
    for (const workspaceId of this.stale) {
      this.stale.delete(workspaceId);
      await this.hooksOf(workspaceId, true).catch((error: unknown) => this.options.failed?.(error));
    }
    if (this.pending.size === 0) return true;
    const batch = this.pending;
    this.pending = new Map();
    poolAcrossKeys(batch.values());
    let ok = true;
    for (const [slot, seen] of batch) {
      try {
        await this.queue(seen);
      } catch (error) {
        ok = false;
        this.options.failed?.(error);
        // Tried again with the next flush, unless newer observations of the key replaced it.
        if (!this.pending.has(slot) && this.pending.size < this.options.maxPending) {
          this.pending.set(slot, seen);
        }
      }
    }
    return ok && this.pending.size === 0;
  }

  /** Queues what one key's observation brings about, for each webhook of its workspace. */
  private async queue(seen: Observation): Promise<void> {
    const hooks = await this.hooksOf(seen.workspaceId);
    const clear: string[] = [];
    for (const hook of hooks) {
      // A marker per webhook, subject (the key, or its identity for its pool) and state.
      const once = (state: string, subject = seen.keyId) =>
        names.webhookOnce(hook.id, subject, state);
      const wants = (type: WebhookEventType) => hook.events.includes(type);
      const emit = (type: WebhookEventType, marker: string, ttlMs: number, data: object) =>
        this.emit(hook, seen, type, marker, ttlMs, data);
      // The key's own credits, then its identity's pool: the same events, each once per subject,
      // `creditsOf` saying whose (the pool's subject is the identity: one event for all its keys).
      const pools: [number | undefined, number | undefined, 'key' | 'identity', string][] = [
        [seen.minCredits, seen.lastCredits, 'key', seen.keyId],
        [seen.minPool, seen.lastPool, 'identity', seen.identity?.id ?? ''],
      ];
      for (const [min, last, creditsOf, subject] of pools) {
        if (min === undefined || last === undefined || subject === '') continue;
        const threshold = hook.creditsThreshold ?? 0;
        if (wants('key.credits.low')) {
          if (min <= threshold) {
            await emit('key.credits.low', once('low', subject), CREDITS_MARKER_MS, {
              creditsOf,
              remaining: min,
              threshold,
            });
          }
          if (last > threshold) clear.push(once('low', subject));
        }
        if (wants('key.credits.exhausted')) {
          if (min <= 0) {
            await emit('key.credits.exhausted', once('exhausted', subject), CREDITS_MARKER_MS, {
              creditsOf,
              remaining: 0,
            });
          }
          if (last > 0) clear.push(once('exhausted', subject));
        }
      }
      if (seen.limited && wants('key.ratelimited')) {
        for (const [name, { limit, windowMs }] of seen.limited) {
          await emit('key.ratelimited', once(`rl:${name}`), windowMs, {
            ratelimit: { name, limit, windowMs },
          });
        }
      }
      if (seen.expires !== undefined) await this.expiring(hook, seen, seen.expires);
    }
    await this.store.clearMarkers(clear);
  }

  /**
   * Queues key.expiring for a key the expiring sweep found within a day of its expiry, for each
   * of these webhooks (the workspace's, read by the sweep). The marker is the one a verification
   * sets, so a key both verified and swept fires once.
   */
  async queueExpiring(
    hooks: readonly WebhookRecord[],
    key: {
      workspaceId: string;
      apiId: string;
      keyId: string;
      expires: number;
      identity?: { id: string; externalId: string };
    },
    at: number,
  ): Promise<void> {
    const { expires, ...rest } = key;
    for (const hook of hooks) await this.expiring(hook, { ...rest, at }, expires);
  }

  /** key.expiring once per webhook, key and `expires`: a changed `expires` fires anew. */
  private async expiring(hook: WebhookRecord, seen: Observation, expires: number): Promise<void> {
    if (!hook.events.includes('key.expiring')) return;
    // The marker outlives the expiry by an hour, so no later sighting of the state fires again.
    const ttl = Math.min(expires - seen.at, DAY) + 3_600_000;
    const marker = names.webhookOnce(hook.id, seen.keyId, `exp:${expires}`);
    await this.emit(hook, seen, 'key.expiring', marker, ttl, { expires });
  }

  private async emit(
    hook: WebhookRecord,
    seen: Observation,
    type: WebhookEventType,
    marker: string,
    ttlMs: number,
    data: object,
  ): Promise<void> {
    if (await this.store.queueOnce(marker, ttlMs, this.job(hook, seen, type, data))) {
      this.options.queued?.(type);
    }
  }

  private job(
    hook: WebhookRecord,
    seen: Observation,
    type: WebhookEventType,
    data: object,
  ): DeliveryJob {
    const eventId = newId('evt', seen.at);
    const body = JSON.stringify({
      id: eventId,
      type,
      createdAt: seen.at,
      data: {
        workspaceId: seen.workspaceId,
        ...(seen.apiId !== undefined ? { apiId: seen.apiId } : {}),
        keyId: seen.keyId,
        ...(seen.identity ? { identity: seen.identity } : {}),
        ...data,
      },
    });
    return {
      workspaceId: seen.workspaceId,
      webhookId: hook.id,
      eventId,
      type,
      body,
      attempts: 0,
      queuedAt: seen.at,
    };
  }
}

/**
 * An identity's pool as all of its keys in one flush saw it: the fewest credits, and the latest
 * count, on every key's observation. Each key alone would otherwise decide the pool's events: a key
 * whose last verification saw the pool above the threshold would clear the marker that another
 * key, which saw it run out later, had just set, and the event would fire again.
 */
function poolAcrossKeys(observations: Iterable<Observation>): void {
  const pools = new Map<string, { min: number; last: number; at: number; of: Observation[] }>();
  for (const seen of observations) {
    const id = seen.identity?.id;
    if (id === undefined || seen.minPool === undefined || seen.lastPool === undefined) continue;
    const at = seen.lastPoolAt ?? seen.at;
    const pool = pools.get(id);
    if (!pool) {
      pools.set(id, { min: seen.minPool, last: seen.lastPool, at, of: [seen] });
      continue;
    }
    pool.min = Math.min(pool.min, seen.minPool);
    // Seen in the same millisecond: the fewer credits are the later count of a pool being spent.
    if (at > pool.at || (at === pool.at && seen.lastPool < pool.last)) {
      pool.last = seen.lastPool;
      pool.at = at;
    }
    pool.of.push(seen);
  }
  for (const pool of pools.values()) {
    for (const seen of pool.of) {
      seen.minPool = pool.min;
      seen.lastPool = pool.last;
      seen.lastPoolAt = pool.at;
    }
  }
}
