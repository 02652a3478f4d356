import type { AuditEntry } from '../domain/audit';
import {
  DELIVERIES_KEPT,
  WEBHOOK_EVENTS,
  type DeliveryAttempt,
  type WebhookEventType,
  type WebhookRecord,
} from '../domain/webhook';
import type { RedisClient as Redis } from '../redis/clients';
import { execResults } from '../redis/results';
import { resultDecoder } from '../redis/scriptTable';
import { auditFields } from './auditLog';
import { scanKeys } from './migration/step';
import { isStorableId, names } from './names';

const queued = resultDecoder('queueWebhookEvent');

/** One event waiting in the delivery queue, as its job JSON holds it. */
export interface DeliveryJob {
  workspaceId: string;
  webhookId: string;
  eventId: string;
  type: WebhookEventType;
  /** The body, exactly as every attempt sends it. */
  body: string;
  /** Attempts made so far. */
  attempts: number;
  /** Unix ms the event was queued: it is given up 24 h later. */
  queuedAt: number;
}

function recordFrom(fields: Record<string, string>): WebhookRecord | undefined {
  const { id, workspaceId, url, events, createdAt, secret } = fields;
  if (!id || !workspaceId || !url || events === undefined || !createdAt || !secret) {
    return undefined;
  }
  return {
    id,
    workspaceId,
    url,
    events: events
      .split(',')
      .filter((event): event is WebhookEventType =>
        (WEBHOOK_EVENTS as readonly string[]).includes(event),
      ),
    createdAt: Number(createdAt),
    secret,
    ...(fields.creditsThreshold !== undefined
      ? { creditsThreshold: Number(fields.creditsThreshold) }
      : {}),
  };
}

/**
 * A workspace's webhooks, their delivery attempts, and the one delivery queue every node reads
 * (docs/webhooks.md, docs/redis.md "Webhooks").
 */
export class WebhookStore {
  constructor(
    private readonly redis: Redis,
    private readonly auditMaxEntries: number,
  ) {}

  /** Writes the webhook, its set entry and its audit entry in one MULTI (one slot). */
  async create(record: WebhookRecord, audit: AuditEntry): Promise<void> {
    const ws = record.workspaceId;
    const fields: Record<string, string> = {
      id: record.id,
      workspaceId: ws,
      url: record.url,
      events: record.events.join(','),
      createdAt: String(record.createdAt),
      secret: record.secret,
      ...(record.creditsThreshold !== undefined
        ? { creditsThreshold: String(record.creditsThreshold) }
        : {}),
    };
    if (record.events.includes('key.expiring')) {
      // Before the MULTI, in another slot: a creation that fails after it leaves a workspace
      // the sweep reads for nothing, never a webhook the sweep does not know of.
      await this.redis.sadd(names.webhookExpiringWorkspaces, ws);
    }
    execResults(
      await this.redis
        .multi()
        .hset(names.webhook(ws, record.id), fields)
        .sadd(names.webhooks(ws), record.id)
        .xadd(names.audit(ws), 'MAXLEN', String(this.auditMaxEntries), '*', ...auditFields(audit))
        .exec(),
    );
    if (record.events.includes('key.expiring')) {
      // Again after it: a sweep that took the workspace out (forgetExpiringWorkspace) between the
      // first add and the webhook's write, and read the webhooks before that write, cannot lose it.
      await this.redis.sadd(names.webhookExpiringWorkspaces, ws);
    }
  }

  async count(ws: string): Promise<number> {
    return this.redis.scard(names.webhooks(ws));
  }

  async get(ws: string, webhookId: string): Promise<WebhookRecord | undefined> {
    if (!isStorableId(webhookId)) return undefined;
    return recordFrom(await this.redis.hgetall(names.webhook(ws, webhookId)));
  }

  /** Every webhook of the workspace, oldest first (ids sort by creation time). */
  async list(ws: string): Promise<WebhookRecord[]> {
    const ids = (await this.redis.smembers(names.webhooks(ws))).sort();
    if (ids.length === 0) return [];
    const pipeline = this.redis.pipeline();
    for (const id of ids) pipeline.hgetall(names.webhook(ws, id));
    const found = execResults(await pipeline.exec()) as Record<string, string>[];
    return found.map(recordFrom).filter((record): record is WebhookRecord => !!record);
  }

  /** Deletes the webhook and its attempts; false when it was not there. Its queued events drop. */
  async delete(ws: string, webhookId: string, audit: AuditEntry): Promise<boolean> {
    if (!isStorableId(webhookId)) return false;
    if ((await this.redis.exists(names.webhook(ws, webhookId))) === 0) return false;
    const [, removed] = execResults(
      await this.redis
        .multi()
        .del(names.webhook(ws, webhookId), names.webhookDeliveries(ws, webhookId))
        .srem(names.webhooks(ws), webhookId)
        .xadd(names.audit(ws), 'MAXLEN', String(this.auditMaxEntries), '*', ...auditFields(audit))
        .exec(),
    ) as [number, number];
    return removed === 1;
  }

  /** The webhook's latest attempts, newest first. */
  async deliveries(ws: string, webhookId: string): Promise<DeliveryAttempt[]> {
    const raw = await this.redis.lrange(names.webhookDeliveries(ws, webhookId), 0, -1);
    return raw.map((text) => JSON.parse(text) as DeliveryAttempt);
  }

  async recordAttempt(ws: string, webhookId: string, attempt: DeliveryAttempt): Promise<void> {
    // Only while the webhook is there: an attempt finishing after its deletion leaves nothing.
    if ((await this.redis.exists(names.webhook(ws, webhookId))) === 0) return;
    const list = names.webhookDeliveries(ws, webhookId);
    execResults(
      await this.redis
        .multi()
        .lpush(list, JSON.stringify(attempt))
        .ltrim(list, 0, DELIVERIES_KEPT - 1)
        .exec(),
    );
  }

  /** Queues the event unless its marker is set; true when queued. */
  async queueOnce(marker: string, markerTtlMs: number, job: DeliveryJob): Promise<boolean> {
    const reply = await this.redis.queueWebhookEventV1(
      marker,
      names.webhookDue,
      names.webhookJobs,
      Math.max(1, Math.round(markerTtlMs)),
      job.eventId,
      JSON.stringify(job),
    );
    return queued(reply) === 'queued';
  }

  /** Every workspace that may have a webhook wanting key.expiring (a superset). */
  async expiringWorkspaces(): Promise<string[]> {
    return (await this.redis.smembers(names.webhookExpiringWorkspaces)).sort();
  }

  /**
   * Takes the workspace out of the set once it has no webhook wanting key.expiring; true when it
   * was taken out. The set is in another slot than the webhooks, so a webhook created meanwhile
   * could be missed: the webhooks are read again after the removal, and the workspace goes back
   * if one appeared. A webhook written after that second read is safe too: `create` adds its
   * workspace again once the webhook is written.
   */
  async forgetExpiringWorkspace(ws: string): Promise<boolean> {
    if ((await this.redis.srem(names.webhookExpiringWorkspaces, ws)) === 0) return false;
    if ((await this.list(ws)).some((hook) => hook.events.includes('key.expiring'))) {
      await this.redis.sadd(names.webhookExpiringWorkspaces, ws);
      return false;
    }
    return true;
  }

  /**
   * Adds to the set of workspaces with a key.expiring webhook those whose webhooks were created
   * before the set existed, once per deployment: a SCAN of every master for the workspaces' sets
   * of webhooks, which never blocks a server. Run again when cut short (the mark is set last);
   * a webhook created meanwhile adds itself. The number of workspaces added.
   */
  async backfillExpiringWorkspaces(now: number): Promise<number> {
    if ((await this.redis.exists(names.webhookExpiringBackfilled)) === 1) return 0;
    let added = 0;
    for await (const found of scanKeys(this.redis, names.webhooks('*'))) {
      for (const name of found) {
        const ws = /\{([^}]+)\}:webhooks$/.exec(name)?.[1];
        if (ws === undefined) continue;
        const hooks = await this.list(ws);
        if (!hooks.some((hook) => hook.events.includes('key.expiring'))) continue;
        added += await this.redis.sadd(names.webhookExpiringWorkspaces, ws);
      }
    }
    await this.redis.set(names.webhookExpiringBackfilled, String(now));
    return added;
  }

  /** Takes the sweep's lock for `ms` unless another node holds it; true when taken. */
  async takeSweepLock(owner: string, ms: number): Promise<boolean> {
    const reply = await this.redis.set(names.webhookExpiringLock, owner, 'PX', ms, 'NX');
    return reply === 'OK';
  }

  /** Lets a state fire again (credits rose above the threshold). */
  async clearMarkers(markers: readonly string[]): Promise<void> {
    if (markers.length === 0) return;
    // One DEL: every marker is under the queue's tag, in one slot.
    await this.redis.del(...markers);
  }

  /**
   * Whether any delivery is due by `now`: one read, so that an idle queue costs every node one
   * ZRANGEBYSCORE a poll and no script call.
   */
  async anyDue(now: number): Promise<boolean> {
    const due = await this.redis.zrangebyscore(names.webhookDue, '-inf', now, 'LIMIT', 0, 1);
    return due.length > 0;
  }

  /** Claims up to `max` due deliveries for `leaseMs`. */
  async claim(leaseMs: number, max: number): Promise<DeliveryJob[]> {
    const reply = await this.redis.claimWebhookDeliveriesV1(
      names.webhookDue,
      names.webhookJobs,
      leaseMs,
      max,
    );
    const pairs = JSON.parse(reply) as [string, string][];
    const jobs: DeliveryJob[] = [];
    for (const [eventId, job] of pairs) {
      try {
        jobs.push(JSON.parse(job) as DeliveryJob);
      } catch {
        // Not a job of ours: dropped, or every lease would claim it again.
        await this.finish(eventId);
      }
    }
    return jobs;
  }

  /** Done with the event: delivered, or given up. */
  async finish(eventId: string): Promise<void> {
    execResults(
      await this.redis
        .multi()
        .zrem(names.webhookDue, eventId)
        .hdel(names.webhookJobs, eventId)
        .exec(),
    );
  }

  /** Due again at `dueAt` (Unix ms), with its attempt count. */
  async retry(job: DeliveryJob, dueAt: number): Promise<void> {
    execResults(
      await this.redis
        .multi()
        .hset(names.webhookJobs, job.eventId, JSON.stringify(job))
        .zadd(names.webhookDue, dueAt, job.eventId)
        .exec(),
    );
  }
}
