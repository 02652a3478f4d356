import type { DestinationStream } from 'pino';

/** What the batcher needs of the stream it feeds (a synchronous sonic-boom, in production). */
export interface ChunkWriter {
  write(chunk: string): unknown;
}

/**
 * Gathers log lines and hands them on as one string once `chunkChars` characters are pending, or
 * when `release` is called (on a timer, and before the process exits).
 *
 * Why not sonic-boom's own `minLength`: it takes the byte length of its whole pending buffer on
 * every line it is given, so an access-log line cost about 3 µs at 4 KiB and more with bigger
 * buffers (docs/performance.md, item 10). Here a line costs an array push.
 */
export class LineBatcher implements DestinationStream {
  private pending: string[] = [];
  private pendingChars = 0;

  constructor(
    private readonly out: ChunkWriter,
    private readonly chunkChars: number,
  ) {}

  write(line: string): void {
    this.pending.push(line);
    this.pendingChars += line.length;
    if (this.pendingChars >= this.chunkChars) this.release();
  }

  /** Hands every pending line to the stream, in order, as one chunk. */
  release(): void {
    if (this.pending.length === 0) return;
    const chunk = this.pending.join('');
    this.pending = [];
    this.pendingChars = 0;
    this.out.write(chunk);
  }

  /** pino's `logger.flush()` ends up here; the stream writes synchronously, so it is done. */
  flush(done?: (error?: Error) => void): void {
    this.release();
    done?.();
  }
}
