import { ClickHouseClient } from './analytics/clickhouse/client';
import { AnalyticsReader } from './analytics/clickhouse/reader';
import { ClickHouseSink } from './analytics/clickhouse/sink';
import { ClickHouseUsageCounts } from './analytics/clickhouse/usageCounts';
import { ClickHouseUsageSink } from './analytics/clickhouse/usageRows';
import { ClickHouseVerificationLog } from './analytics/clickhouse/verificationLog';
import { Directory } from './cache/directory';
import type { Config } from './config';
import { Limiter, type LimiterObserver } from './limiter/limiter';
import type { LeaseLocalRedis } from './limiter/leases';
import { ManagementLimiter } from './limiter/managementLimiter';
import type { BucketRedis } from './limiter/tokenBucket';
import { Metrics } from './observability/metrics';
import { Vault } from './vault/vault';
import { RecentVerifications } from './observability/recentVerifications';
import { LastUseRecorder } from './observability/lastUse';
import { UsageRecorder } from './observability/usage';
import type { Services } from './operations/services';
import type { RedisClient } from './redis/clients';
import { ApiStore } from './store/apiStore';
import { AuditLogStore } from './store/auditLog';
import { haltAt } from './store/faults';
import { KeyStore } from './store/keyStore';
import type { Announce } from './store/names';
import { RatelimitStore } from './store/ratelimitStore';
import { IdentityStore } from './store/identityStore';
import { RbacStore } from './store/rbacStore';
import { RootKeyStore } from './store/rootKeyStore';
import { RedisUsageCounts } from './store/usageCounts';
import { UsageStore } from './store/usageStore';
import { WebhookStore } from './store/webhookStore';
import { WebhookEvents } from './webhooks/events';

/**
 * The one place that assembles what operations run on, for a node (src/node.ts) and for the
 * operator's command line (src/commands/services.ts) alike.
 */
export function assembleServices(parts: {
  config: Config;
  primary: RedisClient;
  local: BucketRedis;
  /** The node-local Redis, as leases spend on it: only with KEYWARD_CONSISTENT_LEASES=on. */
  leaseLocal?: LeaseLocalRedis;
  now: () => number;
  /** Cache bound; a one-shot command, whose caches are never trusted, passes a tiny one. */
  maxCacheEntries?: number;
  observeLimiter?: (metrics: Metrics) => LimiterObserver;
  /** Where usage counts are written and read: the primary unless the config names another Redis. */
  analytics?: RedisClient;
  /** This process's name in its usage flush markers. */
  nodeId?: string;
  /** The primary without replica acknowledgements, for the journal of writes across slots. */
  bookkeeping?: RedisClient;
  /** Where the ClickHouse sink warns (rate-limited): drops, refused inserts, an away server. */
  warn?: (fields: object, message: string) => void;
}): Services {
  const { config, primary } = parts;
  // Every write a store makes is applied to this node's caches here, and only here.
  const announce: Announce = (message) => directory.apply(message);
  const step = haltAt(config.faultHaltAt);
  const stores = {
    apis: new ApiStore(primary, announce, config.auditMaxEntries, step, parts.bookkeeping),
    keys: new KeyStore(primary, announce, config.auditMaxEntries, step, parts.bookkeeping),
    rootKeys: new RootKeyStore(primary, config.auditMaxEntries),
    ratelimits: new RatelimitStore(
      primary,
      announce,
      config.auditMaxEntries,
      haltAt(config.faultHaltAt),
    ),
    rbac: new RbacStore(primary, announce, config.auditMaxEntries, step, parts.bookkeeping),
    identities: new IdentityStore(
      primary,
      announce,
      config.auditMaxEntries,
      step,
      parts.bookkeeping,
    ),
    auditLog: new AuditLogStore(primary, config.auditMaxEntries),
  };
  const directory = new Directory(stores, {
    ...config.cache,
    maxEntries: parts.maxCacheEntries ?? config.cache.maxEntries,
  });
  const metrics = new Metrics({
    root_keys: directory.rootKeys,
    keys: directory.keys,
    apis: directory.apis,
    namespaces: directory.namespaces,
    rbac: directory.rbac,
    identities: directory.identities,
  });
  const limiter = new Limiter(
    { local: parts.local, primary, primaryIsCluster: 'isCluster' in primary && primary.isCluster },
    parts.observeLimiter?.(metrics),
    config.leases && parts.leaseLocal
      ? {
          local: parts.leaseLocal,
          primary,
          settings: { holder: config.region, ...config.leases },
          events: metrics.leaseEvents(),
        }
      : undefined,
  );
  const webhooks = new WebhookStore(primary, config.auditMaxEntries);
  const usageStore = new UsageStore(parts.analytics ?? primary, config.analytics.retention);
  const usage = new UsageRecorder(usageStore, {
    enabled: config.analytics.enabled && config.analytics.countInRedis,
    flushMs: config.analytics.flushMs,
    maxPending: config.analytics.maxPending,
    nodeId: parts.nodeId ?? 'cli',
    dropped: (kind, count) => metrics.analyticsDrop(kind, count),
    flushed: (ok) => metrics.analyticsFlush(ok),
    ...(config.clickhouse ? { sink: clickhouseSink(config, parts, metrics, directory) } : {}),
  });
  // keyward's own readers of the rows (usage counts, the verification log): its own queries,
  // as the writing user; callers' SQL runs as the read-only one.
  const clickhouseReads = config.clickhouse
    ? new ClickHouseClient(config.clickhouse.target, config.clickhouse.timeoutMs)
    : undefined;
  return {
    ...stores,
    directory,
    limiter,
    management: new ManagementLimiter(limiter, {
      limit: config.managementLimit,
      refillRate: config.managementLimit,
      refillInterval: 1000,
    }),
    limiterFailure: config.limiterFailure,
    now: parts.now,
    metrics,
    recent: new RecentVerifications(),
    lastUse: new LastUseRecorder(stores.keys, {
      enabled: config.analytics.enabled,
      flushMs: config.analytics.flushMs,
      maxHeld: config.analytics.maxPending,
    }),
    usage,
    usageCounts: clickhouseReads
      ? new ClickHouseUsageCounts(clickhouseReads)
      : new RedisUsageCounts(usageStore),
    ...(clickhouseReads
      ? {
          verificationLog: new ClickHouseVerificationLog(
            clickhouseReads,
            config.clickhouse!.rawRetentionDays,
            parts.now,
          ),
        }
      : {}),
    webhooks,
    webhookEvents: new WebhookEvents(webhooks, parts.now, {
      flushMs: config.webhooks.flushMs,
      cacheMs: config.webhooks.cacheMs,
      maxPending: config.analytics.maxPending,
      queued: (type) => metrics.webhookEventQueued(type),
      ...(parts.warn
        ? {
            failed: (error: unknown) =>
              parts.warn!({ err: error }, 'queueing webhook events failed; the next flush retries'),
          }
        : {}),
    }),
    webhookAllowPrivate: config.webhooks.allowPrivate,
    ...(config.vaultKeys ? { vault: new Vault(config.vaultKeys) } : {}),
    ...(config.clickhouse?.reader
      ? {
          analyticsReader: new AnalyticsReader(
            new ClickHouseClient(
              config.clickhouse.reader,
              config.clickhouse.query.timeoutSeconds * 1000 + 5000,
            ),
            config.clickhouse.query,
          ),
        }
      : {}),
  };
}

/** The ClickHouse sink of KEYWARD_CLICKHOUSE_URL, reporting to the node's metrics and log. */
function clickhouseSink(
  config: Config,
  parts: { nodeId?: string; warn?: (fields: object, message: string) => void },
  metrics: Metrics,
  directory: Directory,
): ClickHouseUsageSink {
  const settings = config.clickhouse!;
  const sink = new ClickHouseSink(
    new ClickHouseClient(settings.target, settings.timeoutMs),
    {
      batchRows: settings.batchRows,
      flushMs: settings.flushMs,
      maxBufferedRows: settings.maxBufferedRows,
      rawRetentionDays: settings.rawRetentionDays,
      region: config.region,
      nodeId: parts.nodeId ?? 'cli',
      externalId: async (ws, identityId) => (await directory.identity(ws, identityId))?.externalId,
    },
    {
      written: (table, rows) => metrics.clickhouseWritten(table, rows),
      dropped: (table, reason, rows) => metrics.clickhouseDrop(table, reason, rows),
      insert: (result) => metrics.clickhouseInsert(result),
      ...(parts.warn ? { warn: parts.warn } : {}),
    },
  );
  metrics.countClickhouseBuffered(() => sink.held);
  return new ClickHouseUsageSink(sink);
}
