import type { AnalyticsReader } from '../analytics/clickhouse/reader';
import type { ClickHouseVerificationLog } from '../analytics/clickhouse/verificationLog';
import type { Directory } from '../cache/directory';
import type { UsageCounts } from '../domain/usage';
import type { Limiter } from '../limiter/limiter';
import type { ManagementLimiter } from '../limiter/managementLimiter';
import type { LastUseRecorder } from '../observability/lastUse';
import type { Metrics } from '../observability/metrics';
import type { RecentVerifications } from '../observability/recentVerifications';
import type { UsageRecorder } from '../observability/usage';
import type { ApiStore } from '../store/apiStore';
import type { AuditLogStore } from '../store/auditLog';
import type { IdentityStore } from '../store/identityStore';
import type { KeyStore } from '../store/keyStore';
import type { RatelimitStore } from '../store/ratelimitStore';
import type { RbacStore } from '../store/rbacStore';
import type { RootKeyStore } from '../store/rootKeyStore';
import type { Vault } from '../vault/vault';
import type { WebhookStore } from '../store/webhookStore';
import type { WebhookEvents } from '../webhooks/events';

/**
 * Everything an operation may use: stores on the primary, the cached directory, and the limiter.
 * An operation names the members it uses (`uses`) and is handed only those.
 */
export interface Services {
  apis: ApiStore;
  keys: KeyStore;
  rootKeys: RootKeyStore;
  ratelimits: RatelimitStore;
  rbac: RbacStore;
  identities: IdentityStore;
  /** Each workspace's audit log, for reading; the stores append to it with every write. */
  auditLog: AuditLogStore;
  directory: Directory;
  limiter: Limiter;
  management: ManagementLimiter;
  /** closed: a bucket that cannot be reached refuses; open: it admits, and says so. */
  limiterFailure: 'closed' | 'open';
  now: () => number;
  metrics: Metrics;
  /** The last verifications of each key as this node saw them. */
  recent: RecentVerifications;
  /** The last verifications of each key from every node; present with KEYWARD_CLICKHOUSE_URL. */
  verificationLog?: ClickHouseVerificationLog;
  /** Each key's latest verification, noted in memory and flushed beside its record (`lastUsedAt`). */
  lastUse: LastUseRecorder;
  /** Usage analytics: counted in memory here, flushed on a timer (to Redis, to ClickHouse). */
  usage: UsageRecorder;
  /** Where the readers find the counts: ClickHouse when it is configured, Redis otherwise. */
  usageCounts: UsageCounts;
  /** Seals and opens recoverable keys; absent without KEYWARD_VAULT_KEYS. */
  vault?: Vault;
  /** The workspace's webhooks, their attempts and the delivery queue (docs/webhooks.md). */
  webhooks: WebhookStore;
  /** What verifications bring about for webhooks: noticed in memory, queued on a timer. */
  webhookEvents: WebhookEvents;
  /** KEYWARD_WEBHOOK_ALLOW_PRIVATE: whether a webhook may point to a private address. */
  webhookAllowPrivate: boolean;
  /** Runs callers' analytics SQL; absent without KEYWARD_CLICKHOUSE_READER_URL (v2 answers 412). */
  analyticsReader?: AnalyticsReader;
}
