import { names, parseInvalidation, type Invalidation } from '../store/names';

/**
 * The connection the listener watches: an ioredis client of a single Redis or of the Sentinels'
 * master, or on a Redis Cluster a `ClusterSubscriber`. 'close' says messages may be missed from
 * now on, 'ready' that a SUBSCRIBE would be heard again.
 */
export interface Subscriber {
  readonly status: string;
  connect(): Promise<void>;
  subscribe(channel: string): Promise<unknown>;
  on(event: 'message', listener: (channel: string, message: string) => void): unknown;
  on(event: 'close' | 'ready', listener: () => void): unknown;
}

export interface InvalidationTarget {
  apply(message: Invalidation): void;
  /** Called with false when messages may have been missed, with true once they flow again. */
  setListening(listening: boolean): void;
}

/**
 * Subscribes to the primary's invalidation channel. Pub/sub delivers nothing that was published
 * while the connection was down, so a disconnect withdraws trust from the caches and a completed
 * resubscription restores it with empty caches.
 */
export class InvalidationListener {
  private subscribed = false;

  constructor(
    private readonly subscriber: Subscriber,
    private readonly target: InvalidationTarget,
  ) {}

  async start(): Promise<void> {
    this.subscriber.on('message', (channel: string, message: string) => {
      if (channel !== names.invalidationChannel) return;
      const parsed = parseInvalidation(message);
      if (parsed) this.target.apply(parsed);
    });
    this.subscriber.on('close', () => this.markSubscribed(false));
    // After a reconnect, trust returns only once Redis has confirmed the subscription (ioredis
    // resubscribes by itself, but `ready` comes before the confirmation; SUBSCRIBE is idempotent).
    this.subscriber.on('ready', () => {
      this.subscriber.subscribe(names.invalidationChannel).then(
        () => this.markSubscribed(true),
        () => undefined, // the connection dropped again; the next `ready` retries
      );
    });
    if (this.subscriber.status === 'wait') await this.subscriber.connect();
    await this.subscriber.subscribe(names.invalidationChannel);
    this.markSubscribed(true);
  }

  get isSubscribed(): boolean {
    return this.subscribed;
  }

  private markSubscribed(subscribed: boolean): void {
    if (this.subscribed === subscribed) return;
    this.subscribed = subscribed;
    this.target.setListening(subscribed);
  }
}
