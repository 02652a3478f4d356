import { EventEmitter } from 'node:events';
import { randomUUID } from 'node:crypto';
import type { Cluster, default as Redis } from 'ioredis';
import { names } from '../store/names';

/**
 * A probe a second: a node cut off from the cluster bus is distrusted within two seconds, at the
 * cost of one bus message per cluster node per keyward node a second (docs/redis.md).
 */
export const PROBE_INTERVAL_MS = 1000;
/** Long enough for a reconnection to a node that restarts; a dead master is left after this. */
export const MOVE_AFTER_MS = 3000;

/** A cluster node, as `host:port`. */
export type NodeAddress = string;

export const address = (node: { host?: string; port?: number }): NodeAddress =>
  `${node.host ?? '127.0.0.1'}:${node.port ?? 6379}`;

/**
 * The node to subscribe on next: every node the cluster client knows and every seed, in one
 * order, so that a node that stays unreachable is left for the one after it and each is tried in
 * turn. The first choice is at `pick` (0 ≤ pick < 1), so that keyward nodes spread their
 * subscriptions over the cluster.
 */
export function nextNode(
  known: readonly NodeAddress[],
  seeds: readonly NodeAddress[],
  current: NodeAddress | undefined,
  pick: number,
): NodeAddress {
  const candidates = [...new Set([...known, ...seeds])].sort();
  if (candidates.length === 0) throw new Error('no cluster node to subscribe on');
  if (current === undefined) return candidates[Math.floor(pick * candidates.length)]!;
  // A current node the cluster forgot still has a place in the order: the next one after it.
  return candidates.find((node) => node > current) ?? candidates[0]!;
}

export interface ClusterSubscriberOptions {
  /** The node's cluster client: which nodes exist, and a way to publish probes through them. */
  cluster: Cluster;
  seeds: readonly { host: string; port: number }[];
  /** A plain connection to one node, with the subscriber's client policy. */
  connect(node: { host: string; port: number }): Redis;
  /** How often a probe crosses the cluster to the subscription; a late one withdraws trust. */
  probeIntervalMs: number;
  /** How long the subscription may stay down or deaf on one node before it moves to the next. */
  moveAfterMs: number;
  random?: () => number;
}

/**
 * The invalidation subscription on a Redis Cluster: one plain connection to one cluster node,
 * whose state the listener can watch as it watches a single Redis's ('close': messages may be
 * missed from now on; 'ready': subscribe again). Redis Cluster broadcasts every PUBLISH, from any
 * slot, to every node, replicas included, so one node hears them all.
 *
 * ioredis's cluster client moves its own subscription between nodes without a word, which is why
 * this exists. Two more ways to miss messages are watched here: the node stays unreachable (the
 * subscription moves to the next node after `moveAfterMs`), and the connection stays up while
 * the node hears nothing of the cluster (cut off from the cluster bus). For the second, a probe
 * is published on another master every `probeIntervalMs` on a channel of this subscriber's own;
 * one that has not come back by the next withdraws trust until one does. 'ready' is passed on
 * only once a probe has come back through the connection, so trust never returns on a node that
 * cannot hear the cluster.
 */
export class ClusterSubscriber extends EventEmitter {
  private connection: Redis | undefined;
  private current: NodeAddress | undefined;
  private readonly probeChannel = names.invalidationProbe(randomUUID());
  private readonly channels = new Set<string>();
  private probeSent = 0;
  private probeAwaited: { seq: number; sentAt: number } | undefined;
  private healthy = false;
  /** Since when messages may have been missed on this node (undefined: healthy). */
  private troubleSince: number | undefined = Date.now();
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private started = false;

  constructor(private readonly options: ClusterSubscriberOptions) {
    super();
  }

  /** 'wait' until connect(), as an ioredis client; then 'ready' only while messages flow. */
  get status(): string {
    if (!this.started) return 'wait';
    if (this.closed) return 'end';
    return this.healthy ? 'ready' : 'connecting';
  }

  /** The node the subscription is on, or is moving to. */
  get node(): NodeAddress | undefined {
    return this.current;
  }

  /** Resolves once subscribed on a node that hears the cluster. */
  connect(): Promise<void> {
    this.started = true;
    const ready = new Promise<void>((resolve) => this.once('ready', () => resolve()));
    this.moveTo(this.choose());
    this.timer = setInterval(() => this.tick(), this.options.probeIntervalMs);
    this.timer.unref();
    return ready;
  }

  async subscribe(channel: string): Promise<void> {
    this.channels.add(channel);
    const connection = this.connection;
    if (!connection) throw new Error('the cluster subscriber is not connected');
    await connection.subscribe(channel);
    // Confirmed on a connection since replaced, or one that dropped and took the command along
    // (ioredis resends it): trust waits for the next 'ready'.
    if (connection !== this.connection || !this.healthy) throw new Error('not subscribed yet');
  }

  async close(): Promise<void> {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    const connection = this.connection;
    this.connection = undefined;
    if (connection) await quit(connection);
  }

  private choose(): NodeAddress {
    const known = this.options.cluster.nodes('all').map((node) => address(node.options));
    return nextNode(
      known,
      this.options.seeds.map(address),
      this.current,
      (this.options.random ?? Math.random)(),
    );
  }

  private moveTo(node: NodeAddress): void {
    this.trouble();
    const previous = this.connection;
    if (previous) {
      previous.removeAllListeners('message');
      previous.removeAllListeners('ready');
      previous.removeAllListeners('close');
      void quit(previous);
    }
    this.current = node;
    this.troubleSince = Date.now();
    this.probeAwaited = undefined;
    const separator = node.lastIndexOf(':');
    const connection = this.options.connect({
      host: node.slice(0, separator),
      port: Number(node.slice(separator + 1)),
    });
    this.connection = connection;
    connection.on('message', (channel: string, message: string) => {
      if (channel === this.probeChannel) this.probeArrived(Number(message));
      else this.emit('message', channel, message);
    });
    connection.on('close', () => this.trouble());
    connection.on('ready', () => void this.subscribeAndProbe(connection));
    connection.connect().catch(() => undefined);
  }

  /** Messages may be missed from now on: the listener withdraws trust at once. */
  private trouble(): void {
    this.troubleSince ??= Date.now();
    if (!this.healthy) return;
    this.healthy = false;
    this.emit('close');
  }

  private async subscribeAndProbe(connection: Redis): Promise<void> {
    try {
      await connection.subscribe(this.probeChannel, ...this.channels);
    } catch {
      return; // the connection dropped again; its next 'ready' tries again
    }
    if (connection === this.connection) this.probe();
  }

  private probeArrived(seq: number): void {
    if (this.probeAwaited === undefined || seq < this.probeAwaited.seq) return;
    this.probeAwaited = undefined;
    this.troubleSince = undefined;
    if (this.healthy || this.closed) return;
    this.healthy = true;
    this.emit('ready');
  }

  /** On another master than the one subscribed to, so that the probe crosses the cluster bus. */
  private probe(): void {
    const seq = ++this.probeSent;
    this.probeAwaited ??= { seq, sentAt: Date.now() };
    const masters = this.options.cluster
      .nodes('master')
      .filter((node) => address(node.options) !== this.current);
    const via = masters[Math.floor((this.options.random ?? Math.random)() * masters.length)];
    const message = String(seq);
    const viaCluster = () => this.options.cluster.publish(this.probeChannel, message);
    // A master's connection in the cluster's pool may not be open yet; the cluster client opens
    // it. A probe that cannot be sent at all cannot come back either: the next tick finds it late.
    (via ? via.publish(this.probeChannel, message).catch(viaCluster) : viaCluster()).catch(
      () => undefined,
    );
  }

  private tick(): void {
    if (this.closed) return;
    const now = Date.now();
    if (
      this.probeAwaited !== undefined &&
      now - this.probeAwaited.sentAt >= this.options.probeIntervalMs
    ) {
      this.trouble();
    }
    if (this.troubleSince !== undefined && now - this.troubleSince >= this.options.moveAfterMs) {
      this.moveTo(this.choose());
      return;
    }
    if (this.connection?.status === 'ready') this.probe();
  }
}

/** QUIT only on an open connection: on any other it would wait for a reconnection. */
async function quit(connection: Redis): Promise<void> {
  if (connection.status === 'ready') {
    try {
      await connection.quit();
    } catch {
      // disconnected below all the same
    }
  }
  if (connection.status !== 'end') connection.disconnect();
}
