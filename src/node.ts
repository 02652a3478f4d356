import { randomUUID } from 'node:crypto';
import { createServer, ServerResponse, type OutgoingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { RedisClient as Redis } from './redis/clients';
import type { Logger } from 'pino';
import { Cluster } from 'ioredis';
import { InvalidationListener, type Subscriber } from './cache/invalidationListener';
import type { Config } from './config';
import { createApp } from './http/app';
import { createDataPlane } from './http/dataPlane';
import { defaultSteps, Lifecycle, type LifecycleStep } from './http/lifecycle';
import { compileRoutes } from './http/rpc';
import {
  closeRedis,
  connectRedis,
  createPrimary,
  createRedis,
  SUBSCRIBER_OPTIONS,
  withReplicaAcks,
} from './redis/clients';
import { RedisClock } from './redis/clock';
import { ClusterSubscriber, MOVE_AFTER_MS, PROBE_INTERVAL_MS } from './redis/clusterSubscriber';
import { AuditOutbox } from './store/auditOutbox';
import { AUDIT_SWEEP_DEFAULTS, AuditSweeper } from './store/auditSweeper';
import { KeyRepair, REPAIR_DEFAULTS } from './store/keyRepair';
import { VERSION } from './version';
import { assembleServices } from './wiring';
import { WebhookDispatcher } from './webhooks/dispatcher';
import { ExpiringSweep } from './webhooks/expiringSweep';

export interface RunningNode {
  /** `http://host:port`, with the port the OS chose when the config asked for 0. */
  url: string;
  server: Server;
  /** Stops accepting, lets requests in flight finish, then closes every Redis connection. */
  close(): Promise<void>;
}

interface Dependency {
  name: 'primary' | 'local';
  redis: Redis;
}

async function ping(redis: Redis): Promise<{ status: 'ok' | 'down'; latencyMs?: number }> {
  const started = process.hrtime.bigint();
  try {
    await redis.ping();
    return { status: 'ok', latencyMs: Number(process.hrtime.bigint() - started) / 1e6 };
  } catch {
    return { status: 'down' };
  }
}

/** How long a stopping node waits for requests in flight before it cuts their connections. */
const SHUTDOWN_GRACE_MS = 10_000;

/** A flush's deadline per command, and how long a stopping node tries to write its last counts. */
const ANALYTICS_COMMAND_TIMEOUT_MS = 2_000;
const ANALYTICS_FINAL_FLUSH_MS = 5_000;

export interface NodeOptions {
  /** The node's own clock; tests pass a wrong one to show that decisions do not depend on it. */
  localClock?: () => number;
  /** Steps run after the default ones, for every request through either door (tests). */
  extraSteps?: readonly LifecycleStep[];
  /** false: every request goes through the Koa app, the data plane's door stays shut (tests). */
  dataPlane?: boolean;
}

/** Starts one stateless node: Redis clients, caches and their invalidation, the HTTP server. */
export async function startNode(
  config: Config,
  logger: Logger,
  options: NodeOptions = {},
): Promise<RunningNode> {
  const redisOptions = {
    commandTimeoutMs: config.redisCommandTimeoutMs,
    connectTimeoutMs: config.redisConnectTimeoutMs,
  };
  const primary = withReplicaAcks(createPrimary(config), config);
  // Without a node-local Redis of its own, a node keeps fast buckets in the primary too; on a
  // connection of their own when the primary's writes wait for replicas, which fast ones never do.
  const localIsPrimary = config.localRedisUrl === config.redisUrl;
  const local = !localIsPrimary
    ? createRedis(config.localRedisUrl, redisOptions)
    : config.durability.mode === 'replicated'
      ? createPrimary(config)
      : primary;
  // The bookkeeping of writes across slots never waits for replicas: the write's own step does.
  const bookkeeping = config.durability.mode === 'replicated' ? createPrimary(config) : primary;
  // On a cluster, a plain connection to one node: the cluster client's own subscription moves
  // between nodes without a 'close', so the listener could not tell when messages were missed.
  const clusterSubscriber =
    primary instanceof Cluster
      ? new ClusterSubscriber({
          cluster: primary,
          seeds: config.redisClusterNodes ?? [],
          connect: ({ host, port }) =>
            createRedis(`redis://${host}:${port}`, redisOptions, SUBSCRIBER_OPTIONS),
          probeIntervalMs: PROBE_INTERVAL_MS,
          moveAfterMs: MOVE_AFTER_MS,
        })
      : undefined;
  const redisSubscriber = clusterSubscriber ? undefined : createPrimary(config, SUBSCRIBER_OPTIONS);
  const subscriber: Subscriber = clusterSubscriber ?? redisSubscriber!;
  // Usage counts travel on a connection of their own, never queued behind (or ahead of) a
  // verification's command: the primary's unless KEYWARD_ANALYTICS_REDIS_URL names another Redis.
  // Longer deadline than a bucket's: a flush is a batch, and nobody waits for it. A node that
  // counts nothing still reads what is stored, so a Redis of their own is connected all the same.
  const analyticsOptions = { commandTimeout: ANALYTICS_COMMAND_TIMEOUT_MS };
  const analytics = config.analytics.redisUrl
    ? createRedis(config.analytics.redisUrl, redisOptions, analyticsOptions)
    : config.analytics.enabled
      ? createPrimary(config, analyticsOptions)
      : undefined;
  const clients = [...new Set([primary, local, bookkeeping])];
  if (redisSubscriber) clients.push(redisSubscriber);
  if (analytics) clients.push(analytics);
  // Audit entries that a node which died mid-write left in outboxes reach their streams from here.
  const auditSweeper = new AuditSweeper(new AuditOutbox(primary, config.auditMaxEntries), {
    ...AUDIT_SWEEP_DEFAULTS,
    failed: (error) =>
      logger.warn({ err: error }, 'audit outbox sweep failed; the next one tries again'),
  });

  let keyRepair: KeyRepair | undefined;
  try {
    // A missing analytics Redis delays counts, never the node: it connects in the background.
    await Promise.all(clients.filter((c) => c !== analytics).map(connectRedis));
    if (analytics) void connectRedis(analytics).catch(() => undefined);
    let draining = false;
    const clock = new RedisClock(primary, options.localClock);
    await clock.start();
    const nodeId = `${config.region}:${randomUUID()}`;
    const services = assembleServices({
      config,
      primary,
      local,
      ...(config.leases && !localIsPrimary ? { leaseLocal: local } : {}),
      now: clock.now,
      ...(analytics ? { analytics } : {}),
      nodeId,
      bookkeeping,
      warn: (fields, message) => logger.warn(fields, message),
      // With one Redis for both roles every script ran on the primary, whichever mode asked.
      observeLimiter: (metrics) => (role, seconds, answered) => {
        const actual = localIsPrimary ? 'primary' : role;
        metrics.redis(actual, seconds);
        if (!answered) metrics.limiterFailure(actual);
      },
    });
    const routes = compileRoutes(services);
    const listener = new InvalidationListener(subscriber, services.directory);
    await listener.start();

    const dependencies: Dependency[] = [{ name: 'primary', redis: primary }];
    if (!localIsPrimary) dependencies.push({ name: 'local', redis: local });

    const lifecycle = new Lifecycle(
      [...defaultSteps(logger, services.metrics), ...(options.extraSteps ?? [])],
      { docsUrl: config.errorDocsUrl, logger },
      config.logClientIp,
    );
    services.metrics.countInFlight(() => lifecycle.requestsInFlight);
    const app = createApp({
      services,
      routes,
      lifecycle,
      version: VERSION,
      ...(config.metricsToken !== undefined ? { metricsToken: config.metricsToken } : {}),
      maxBodyBytes: config.maxBodyBytes,
      liveness: async () => {
        if (draining)
          return { healthy: false, body: { status: 'draining', region: config.region } };
        const services: Record<string, object> = {};
        let healthy = true;
        for (const { name, redis } of dependencies) {
          const state = await ping(redis);
          services[name] = state;
          healthy &&= state.status === 'ok';
        }
        if (localIsPrimary) services.local = { status: 'shared', with: 'primary' };
        services.invalidation = {
          status: listener.isSubscribed ? 'subscribed' : 'unsubscribed',
          ...(clusterSubscriber?.node === undefined ? {} : { node: clusterSubscriber.node }),
        };
        return {
          healthy,
          body: { status: healthy ? 'ok' : 'degraded', region: config.region, services },
        };
      },
    });

    const handle = app.callback();
    const dataPlane =
      options.dataPlane === false
        ? () => false
        : createDataPlane({
            services,
            logger,
            routes,
            lifecycle,
            maxBodyBytes: config.maxBodyBytes,
          });
    // Once stopping, every answer not yet sent ends its connection: a keep-alive client must not
    // hold the node open or send it new requests. (On the prototype: no closure per request.)
    class NodeResponse extends ServerResponse {
      override writeHead(statusCode: number, ...rest: unknown[]): this {
        if (draining) this.setHeader('Connection', 'close');
        return super.writeHead(statusCode, ...(rest as [string?, OutgoingHttpHeaders?]));
      }
    }
    const server = createServer({ ServerResponse: NodeResponse }, (req, res) => {
      if (!dataPlane(req, res)) void handle(req, res);
    });
    server.keepAliveTimeout = 65_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(config.port, config.host, () => resolve());
    });
    const address = server.address() as AddressInfo;
    const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
    const url = `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${address.port}`;
    // The background work starts once the node is up: what setting up holds the event loop for
    // (compiling the routes' schemas takes a few hundred ms) would otherwise run past the command
    // deadline of a first sweep's commands, and warn on every clean start.
    services.usage.start();
    services.lastUse.start();
    auditSweeper.start();
    services.webhookEvents.start();
    // Deliveries of webhook events: every node takes its share of the queue (docs/webhooks.md).
    const dispatcher = new WebhookDispatcher(services.webhooks, services.vault, clock.now, {
      pollMs: config.webhooks.pollMs,
      timeoutMs: config.webhooks.timeoutMs,
      retryBaseMs: config.webhooks.retryBaseMs,
      retryForMs: 24 * 3_600_000,
      allowPrivate: config.webhooks.allowPrivate,
      concurrency: 16,
      userAgent: `keyward/${VERSION}`,
      failed: (error) => logger.warn({ err: error }, 'webhook delivery failed; it stays queued'),
      attempted: (outcome) => services.metrics.webhookAttempt(outcome),
    });
    dispatcher.start();
    // key.expiring for keys nobody verifies in their last day: one node a period walks them.
    const expiringSweep = new ExpiringSweep(
      services.webhooks,
      services.apis,
      services.keys,
      services.webhookEvents,
      clock.now,
      {
        everyMs: config.webhooks.expiringSweepMs,
        nodeId,
        externalId: async (ws, identityId) =>
          (await services.directory.identity(ws, identityId))?.externalId,
        failed: (error) =>
          logger.warn({ err: error }, 'the key.expiring sweep failed; the next period retries'),
      },
    );
    expiringSweep.start();
    // What a node that died left half done in a write across slots is finished or undone here.
    keyRepair = new KeyRepair(
      primary,
      services.keys,
      {
        ...REPAIR_DEFAULTS,
        failed: (error) =>
          logger.warn({ err: error }, 'repair of unfinished writes failed; retrying'),
      },
      services.identities,
      services.apis,
      services.rbac,
    );
    keyRepair.start();
    // Once, in the background: a Redis with no namespace of the previous layout never looks again.
    void services.ratelimits.legacy
      .detect()
      .catch((error: unknown) =>
        logger.warn({ err: error }, 'looking for namespaces of the previous layout failed'),
      );

    let closing: Promise<void> | undefined;
    const close = () => {
      closing ??= (async () => {
        draining = true;
        if (config.shutdownDrainMs > 0) {
          // Tell load balancers first (liveness 503, keep-alive connections closed after their
          // answer) and keep serving meanwhile: closing the listener at once would reset
          // connections the kernel accepted but the node had not read yet.
          await new Promise((resolve) => setTimeout(resolve, config.shutdownDrainMs));
        }
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          server.closeIdleConnections();
          // A request still running after this long is not coming back; stop waiting for it.
          setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS).unref();
        });
        clock.stop();
        await auditSweeper.stop();
        await keyRepair?.stop();
        // Every request has been answered: what they counted is written before the clients close.
        const unwritten = await services.usage.stop(ANALYTICS_FINAL_FLUSH_MS);
        await services.lastUse.stop();
        // Noticed events are queued before the clients close; deliveries under way stop and
        // stay queued for another node (their lease runs out).
        await services.webhookEvents.stop().catch(() => undefined);
        expiringSweep.stop();
        await dispatcher.stop();
        if (unwritten > 0) {
          logger.warn(
            { counters: unwritten },
            'usage counts (or ClickHouse rows) not written before exit',
          );
        }
        await clusterSubscriber?.close();
        await Promise.all(clients.map(closeRedis));
      })();
      return closing;
    };
    return { url, server, close };
  } catch (error) {
    await auditSweeper.stop();
    await keyRepair?.stop();
    await clusterSubscriber?.close();
    await Promise.all(clients.map(closeRedis));
    throw error;
  }
}
