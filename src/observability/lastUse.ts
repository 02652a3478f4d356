import { PeriodicFlush } from './periodicFlush';

/** Where a key's latest verification is noted: its record (KeyStore.touch). */
export interface LastUseStore {
  touch(lastUses: ReadonlyMap<string, number>): Promise<void>;
}

export interface LastUseOptions {
  /** false (KEYWARD_ANALYTICS=off): nothing is noted or written, as no usage is counted. */
  enabled: boolean;
  /** How often what was seen is written: the accuracy of `lastUsedAt`. */
  flushMs: number;
  /** Keys held in memory between flushes; a key beyond them waits for a later verification. */
  maxHeld: number;
}

/**
 * Each key's latest verification on this node, noted in memory on the request's path (a Map
 * update, no I/O) and written to the key's record on a timer: `lastUsedAt` costs verification no
 * round trip. What a flush could not write is kept for the next, the later time winning; the
 * record never moves back (lua/touch-key-1.lua), whichever node writes last.
 */
export class LastUseRecorder {
  private seen = new Map<string, number>();
  private readonly flusher: PeriodicFlush;

  constructor(
    private readonly store: LastUseStore,
    private readonly options: LastUseOptions,
  ) {
    this.flusher = new PeriodicFlush(() => this.flushOnce(), options.flushMs);
  }

  saw(keyId: string, at: number): void {
    if (!this.options.enabled) return;
    const held = this.seen.get(keyId);
    if (held === undefined) {
      if (this.seen.size < this.options.maxHeld) this.seen.set(keyId, at);
    } else if (at > held) this.seen.set(keyId, at);
  }

  /** Keys waiting to be written. */
  get held(): number {
    return this.seen.size;
  }

  start(): void {
    if (!this.options.enabled) return;
    this.flusher.start();
  }

  /** Writes what was seen; true when nothing is left. Never runs twice at once. */
  flush(): Promise<boolean> {
    return this.flusher.run();
  }

  /** Stops the timer and writes what is held, once; answers how many keys it could not. */
  async stop(): Promise<number> {
    this.flusher.stop();
    await this.flush();
    return this.seen.size;
  }

  private async flushOnce(): Promise<boolean> {
    if (this.seen.size === 0) return true;
    const batch = this.seen;
    this.seen = new Map();
    try {
      await this.store.touch(batch);
      return this.seen.size === 0;
    } catch {
      for (const [keyId, at] of batch) this.saw(keyId, at);
      return false;
    }
  }
}
