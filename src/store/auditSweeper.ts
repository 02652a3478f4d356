import type { AuditOutbox } from './auditOutbox';

export interface AuditSweeperOptions {
  /** How often a sweep runs; the first runs at start. */
  intervalMs: number;
  /**
   * How long this node must see an outbox empty, its registrations unchanged, before it takes it
   * out of the registry: far longer than a write takes from its registration to its script.
   */
  graceMs: number;
  /** Told of a sweep that failed, once per sweep; the next sweep tries again. */
  failed?: (error: unknown) => void;
  /** Elapsed time on this node, for the grace. */
  now?: () => number;
}

export const AUDIT_SWEEP_DEFAULTS = { intervalMs: 5_000, graceMs: 60_000 } as const;

/**
 * Relays the entries that writes left in their audit outboxes (src/store/auditOutbox.ts): those
 * whose node died between the write and its relay. Every node sweeps; the relay's marker makes
 * two nodes relaying one entry append it once. An outbox leaves the registry once this node has
 * seen it empty for `graceMs` with the same score: a write registers before it appends, so a
 * score that did not move in that time means no write was about to append there.
 */
export class AuditSweeper {
  private timer: NodeJS.Timeout | undefined;
  private sweeping: Promise<void> | undefined;
  /** Outboxes seen empty: the score they had, and since when. */
  private readonly emptySince = new Map<string, { score: string; at: number }>();
  private readonly now: () => number;

  constructor(
    private readonly outbox: AuditOutbox,
    private readonly options: AuditSweeperOptions,
  ) {
    this.now = options.now ?? (() => performance.now());
  }

  start(): void {
    void this.sweep();
    this.timer ??= setInterval(() => void this.sweep(), this.options.intervalMs);
    this.timer.unref();
  }

  /** One sweep; a call while one runs joins it. */
  sweep(): Promise<void> {
    this.sweeping ??= this.sweepOnce()
      .catch((error: unknown) => this.options.failed?.(error))
      .finally(() => (this.sweeping = undefined));
    return this.sweeping;
  }

  /** Stops the timer and waits for a sweep under way. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
    await this.sweeping;
  }

  private async sweepOnce(): Promise<void> {
    const listed = new Set<string>();
    let failure: { error: unknown } | undefined;
    for await (const page of this.outbox.registered()) {
      for (const [outbox, score] of page) {
        listed.add(outbox);
        try {
          await this.sweepOutbox(outbox, score);
        } catch (error) {
          // One slot may be away (a failover): the others are still swept, and told of once.
          failure ??= { error };
        }
      }
    }
    for (const outbox of this.emptySince.keys()) {
      if (!listed.has(outbox)) this.emptySince.delete(outbox);
    }
    if (failure) throw failure.error;
  }

  private async sweepOutbox(outbox: string, score: string): Promise<void> {
    if ((await this.outbox.relay(outbox)) > 0) {
      this.emptySince.delete(outbox);
      return;
    }
    const now = this.now();
    const seen = this.emptySince.get(outbox);
    if (seen?.score !== score) {
      this.emptySince.set(outbox, { score, at: now });
    } else if (now - seen.at >= this.options.graceMs) {
      await this.outbox.forget(outbox, score);
      this.emptySince.delete(outbox);
    }
  }
}
