import type { LeaseEvents } from '../limiter/leases';
import { Counter, Gauge, Registry, collectDefaultMetrics } from 'prom-client';
import { HotCounter, HotHistogram } from './hotMetrics';

export type RedisRole = 'primary' | 'local';

/** What a cache reports about itself; metrics read these numbers and nothing else of a cache. */
export interface CacheStats {
  readonly hits: number;
  readonly misses: number;
  readonly invalidations: number;
  readonly staleServed: number;
  readonly size: number;
}

/**
 * A node's Prometheus metrics, in a registry of its own (several nodes may share a process in
 * tests). Hot-path updates are one lookup of a series and one increment or observation each
 * (hotMetrics.ts).
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly requests: HotCounter;
  private readonly requestSeconds: HotHistogram;
  private readonly verifications: HotCounter;
  private readonly redisSeconds: HotHistogram;
  private readonly limiterFailures: Counter<'role'>;
  private readonly leaseTokens: Counter<'event'>;
  private readonly leaseDecisions: Counter<'where'>;
  private readonly analyticsDropped: Counter<'kind'>;
  private readonly analyticsFlushes: Counter<'result'>;
  private readonly decryptions: Counter;
  private readonly webhookEvents: Counter<'type'>;
  private readonly webhookAttempts: Counter<'outcome'>;
  private readonly clickhouseRows: Counter<'table'>;
  private readonly clickhouseDropped: Counter<'table' | 'reason'>;
  private readonly clickhouseInserts: Counter<'result'>;
  /** Where the ClickHouse buffer gauge reads its value: the sink, when there is one. */
  private clickhouseHeld: () => number = () => 0;
  /** Where the in-flight gauge reads its value: the node's Lifecycle, once there is one. */
  private inFlight: () => number = () => 0;

  /** `caches`: the node's caches by the name they are reported under. */
  constructor(caches?: Readonly<Record<string, CacheStats>>) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'keyward_' });
    this.requests = new HotCounter(
      'keyward_http_requests_total',
      'HTTP requests by operation and status',
      ['operation', 'status'],
      this.registry,
    );
    this.requestSeconds = new HotHistogram(
      'keyward_http_request_duration_seconds',
      'HTTP request latency by operation',
      ['operation'],
      [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      this.registry,
    );
    this.verifications = new HotCounter(
      'keyward_verifications_total',
      "Key verifications by verdict code and mode: the key's rate limit (fast, consistent, none), or checksum for a key refused by its checksum",
      ['code', 'mode'],
      this.registry,
    );
    this.redisSeconds = new HotHistogram(
      'keyward_redis_command_duration_seconds',
      'Latency of bucket scripts (verifications and the management limit), by the role of the Redis that ran them',
      ['role'],
      [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 1],
      this.registry,
    );
    this.limiterFailures = new Counter({
      name: 'keyward_limiter_failures_total',
      help: 'Bucket decisions that could not be made because a Redis was unreachable or slow',
      labelNames: ['role'],
      registers,
    });
    this.leaseTokens = new Counter({
      name: 'keyward_lease_tokens_total',
      help: "Tokens of consistent buckets by what happened to this region's leases: granted (taken from the primary), returned (given back unspent), expired (unspent when the lease ended, lost to the region)",
      labelNames: ['event'],
      registers,
    });
    this.leaseDecisions = new Counter({
      name: 'keyward_lease_decisions_total',
      help: "Consistent verifications under KEYWARD_CONSISTENT_LEASES=on, by where they were decided: lease (the region's Redis) or primary",
      labelNames: ['where'],
      registers,
    });
    this.analyticsDropped = new Counter({
      name: 'keyward_analytics_dropped_total',
      help: 'Usage counts dropped because the pending counters were full (a Redis away too long), by kind: verification, credits (credits spent), limit',
      labelNames: ['kind'],
      registers,
    });
    this.analyticsFlushes = new Counter({
      name: 'keyward_analytics_flushes_total',
      help: 'Usage analytics flushes by result: ok, or failed (the counts wait for the next one)',
      labelNames: ['result'],
      registers,
    });
    this.decryptions = new Counter({
      name: 'keyward_key_decryptions_total',
      help: 'Recoverable keys decrypted for getKey or listKeys with decrypt, each also in the audit log',
      registers,
    });
    this.webhookEvents = new Counter({
      name: 'keyward_webhook_events_queued_total',
      help: 'Webhook events this node queued for delivery (once per webhook, key and state across nodes), by type',
      labelNames: ['type'],
      registers,
    });
    this.webhookAttempts = new Counter({
      name: 'keyward_webhook_delivery_attempts_total',
      help: 'Webhook delivery attempts this node made, by outcome: delivered, failed (retried) or abandoned',
      labelNames: ['outcome'],
      registers,
    });
    this.clickhouseRows = new Counter({
      name: 'keyward_clickhouse_rows_written_total',
      help: 'Analytics rows written to ClickHouse (KEYWARD_CLICKHOUSE_URL), by table',
      labelNames: ['table'],
      registers,
    });
    this.clickhouseDropped = new Counter({
      name: 'keyward_clickhouse_rows_dropped_total',
      help: 'Analytics rows never written to ClickHouse, by table and reason: buffer_full (ClickHouse slow or away too long), rejected (refused 5 times), shutdown (still held when the node stopped)',
      labelNames: ['table', 'reason'],
      registers,
    });
    this.clickhouseInserts = new Counter({
      name: 'keyward_clickhouse_inserts_total',
      help: 'Batch inserts to ClickHouse by result: ok, failed (answered with an error; sent again), unanswered (checked before it is sent again), duplicate (an unanswered one that had landed)',
      labelNames: ['result'],
      registers,
    });
    const clickhouseHeld: Gauge = new Gauge({
      name: 'keyward_clickhouse_buffered_rows',
      help: 'Analytics rows held in memory for ClickHouse: waiting for a batch, or in one not yet written',
      registers,
      collect: () => clickhouseHeld.set(this.clickhouseHeld()),
    });
    const inFlight: Gauge = new Gauge({
      name: 'keyward_http_requests_in_flight',
      help: 'Requests read and not yet answered: what a draining node still owes its clients',
      registers,
      collect: () => inFlight.set(this.inFlight()),
    });
    if (caches) {
      new Gauge({
        name: 'keyward_cache_events',
        help: 'Cache hits, misses, invalidations and stale fallbacks since start, by cache',
        labelNames: ['cache', 'event'],
        registers,
        collect() {
          for (const [name, cache] of Object.entries(caches)) {
            this.set({ cache: name, event: 'hit' }, cache.hits);
            this.set({ cache: name, event: 'miss' }, cache.misses);
            this.set({ cache: name, event: 'invalidation' }, cache.invalidations);
            this.set({ cache: name, event: 'stale' }, cache.staleServed);
          }
        },
      });
      new Gauge({
        name: 'keyward_cache_entries',
        help: 'Entries held by each cache',
        labelNames: ['cache'],
        registers,
        collect() {
          for (const [name, cache] of Object.entries(caches)) this.set({ cache: name }, cache.size);
        },
      });
    }
  }

  /** `read`: how many requests are read and not yet answered (Lifecycle.requestsInFlight). */
  countInFlight(read: () => number): void {
    this.inFlight = read;
  }

  request(operation: string, status: number, seconds: number): void {
    this.requests.handle(operation, String(status)).value++;
    this.requestSeconds.handle(operation).observe(seconds);
  }

  verification(code: string, mode: string): void {
    this.verifications.handle(code, mode).value++;
  }

  redis(role: RedisRole, seconds: number): void {
    this.redisSeconds.handle(role).observe(seconds);
  }

  analyticsDrop(kind: string, count: number): void {
    this.analyticsDropped.inc({ kind }, count);
  }

  analyticsFlush(ok: boolean): void {
    this.analyticsFlushes.inc({ result: ok ? 'ok' : 'failed' });
  }

  /** `read`: how many rows the ClickHouse sink holds. */
  countClickhouseBuffered(read: () => number): void {
    this.clickhouseHeld = read;
  }

  clickhouseWritten(table: string, rows: number): void {
    this.clickhouseRows.inc({ table }, rows);
  }

  clickhouseDrop(table: string, reason: string, rows: number): void {
    this.clickhouseDropped.inc({ table, reason }, rows);
  }

  clickhouseInsert(result: string): void {
    this.clickhouseInserts.inc({ result });
  }

  webhookEventQueued(type: string): void {
    this.webhookEvents.inc({ type });
  }

  webhookAttempt(outcome: string): void {
    this.webhookAttempts.inc({ outcome });
  }

  keyDecrypted(): void {
    this.decryptions.inc();
  }

  limiterFailure(role: RedisRole): void {
    this.limiterFailures.inc({ role });
  }

  /** What the node's leases did (src/limiter/leases.ts, LeaseEvents). */
  leaseEvents(): LeaseEvents {
    return {
      granted: (tokens) => this.leaseTokens.inc({ event: 'granted' }, tokens),
      returned: (tokens) => this.leaseTokens.inc({ event: 'returned' }, tokens),
      expired: (tokens) => this.leaseTokens.inc({ event: 'expired' }, tokens),
      served: (where) => this.leaseDecisions.inc({ where }),
    };
  }
}
