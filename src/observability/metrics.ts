import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { Directory } from '../cache/directory';

export type RedisRole = 'primary' | 'local';

/**
 * A node's Prometheus metrics, in a registry of its own (several nodes may share a process in
 * tests). Hot-path updates are one label lookup and one increment or observation each.
 */
export class Metrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'operation' | 'status'>;
  private readonly requestSeconds: Histogram<'operation'>;
  private readonly verifications: Counter<'code' | 'mode'>;
  private readonly redisSeconds: Histogram<'role'>;
  private readonly limiterFailures: Counter<'role'>;

  constructor(directory?: Directory) {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: 'keyward_' });
    this.requests = new Counter({
      name: 'keyward_http_requests_total',
      help: 'HTTP requests by operation and status',
      labelNames: ['operation', 'status'],
      registers,
    });
    this.requestSeconds = new Histogram({
      name: 'keyward_http_request_duration_seconds',
      help: 'HTTP request latency by operation',
      labelNames: ['operation'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 1],
      registers,
    });
    this.verifications = new Counter({
      name: 'keyward_verifications_total',
      help: 'Key verifications by verdict code and rate-limit mode (fast, consistent, none)',
      labelNames: ['code', 'mode'],
      registers,
    });
    this.redisSeconds = new Histogram({
      name: 'keyward_redis_command_duration_seconds',
      help: 'Latency of bucket scripts (verifications and the management limit), by the role of the Redis that ran them',
      labelNames: ['role'],
      buckets: [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.1, 1],
      registers,
    });
    this.limiterFailures = new Counter({
      name: 'keyward_limiter_failures_total',
      help: 'Bucket decisions that could not be made because a Redis was unreachable or slow',
      labelNames: ['role'],
      registers,
    });
    if (directory) {
      const caches = {
        root_keys: directory.rootKeys,
        keys: directory.keys,
        apis: directory.apis,
        namespaces: directory.namespaces,
      };
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

  // Label children are looked up once per label set: prom-client would hash the labels on every
  // call, and these run on every request.
  private readonly children = new Map<string, { inc(): void } | { observe(value: number): void }>();

  private child<T>(key: string, make: () => T): T {
    let child = this.children.get(key) as T | undefined;
    if (child === undefined) {
      child = make();
      this.children.set(key, child as { inc(): void });
    }
    return child;
  }

  request(operation: string, status: number, seconds: number): void {
    this.child(`r ${operation} ${status}`, () =>
      this.requests.labels(operation, String(status)),
    ).inc();
    this.child(`d ${operation}`, () => this.requestSeconds.labels(operation)).observe(seconds);
  }

  verification(code: string, mode: string): void {
    this.child(`v ${code} ${mode}`, () => this.verifications.labels(code, mode)).inc();
  }

  redis(role: RedisRole, seconds: number): void {
    this.child(`s ${role}`, () => this.redisSeconds.labels(role)).observe(seconds);
  }

  limiterFailure(role: RedisRole): void {
    this.limiterFailures.inc({ role });
  }
}
