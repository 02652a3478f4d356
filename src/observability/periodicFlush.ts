/**
 * A flush run on an unref'd timer and on demand, never two at once: a call while one runs joins
 * it. What writes the usage counts, the ClickHouse rows and keys' last uses share.
 */
export class PeriodicFlush {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<boolean> | undefined;

  constructor(
    /** One flush: true when nothing is left to write. */
    private readonly once: () => Promise<boolean>,
    private readonly everyMs: number,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => void this.run(), this.everyMs);
    this.timer.unref();
  }

  run(): Promise<boolean> {
    this.running ??= this.once().finally(() => (this.running = undefined));
    return this.running;
  }

  /** Stops the timer; a flush under way goes on (`busy`). */
  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  get busy(): boolean {
    return this.running !== undefined;
  }
}
