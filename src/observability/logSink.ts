import { write, writeSync } from 'node:fs';
import type { DestinationStream } from 'pino';

export interface LogSinkOptions {
  /** Lines are written once this many characters are pending (or on `release`). */
  chunkChars: number;
  /** Past this many pending characters, lines are dropped and counted instead of queued. */
  maxPendingChars: number;
}

/**
 * Where pino's lines go in `keyward serve`: gathered in an array and written to a file descriptor
 * as one chunk at a time, asynchronously, with at most one write in flight.
 *
 * - A line costs an array push. sonic-boom's own `minLength` buffering took the byte length of its
 *   whole pending buffer on every line, about 3 µs an access-log line at 4 KiB (docs/performance.md,
 *   item 10).
 * - A reader of stdout that stops reading never stops the node: the write waits in libuv's thread
 *   pool, lines queue up to `maxPendingChars`, and past that they are dropped and counted
 *   (`takeDropped`). A synchronous writer stopped answering after about 1,300 requests once the
 *   pipe was full.
 */
export class LogSink implements DestinationStream {
  private pending: string[] = [];
  private pendingChars = 0;
  private inFlight = false;
  private dropped = 0;
  private drainWaiters: (() => void)[] = [];

  constructor(
    private readonly fd: number,
    private readonly options: LogSinkOptions,
  ) {}

  write(line: string): void {
    if (this.pendingChars + line.length > this.options.maxPendingChars) {
      this.dropped++;
      return;
    }
    this.pending.push(line);
    this.pendingChars += line.length;
    if (!this.inFlight && this.pendingChars >= this.options.chunkChars) this.writeNextChunk();
  }

  /** Starts writing whatever is pending, if no write is in flight (the flush timer calls it). */
  release(): void {
    if (!this.inFlight && this.pendingChars > 0) this.writeNextChunk();
  }

  /** Calls `done` once every line given so far has been written (pino's `logger.flush`). */
  flush(done?: (error?: Error) => void): void {
    if (done) this.drainWaiters.push(() => done());
    this.release();
    this.settleIfDrained();
  }

  /** Lines dropped since the last call, for the caller to report. */
  takeDropped(): number {
    const dropped = this.dropped;
    this.dropped = 0;
    return dropped;
  }

  /**
   * The process is exiting: writes what is pending synchronously, once. A clean stop has flushed
   * already (`keyward serve`), so this matters when the process dies. With a write still in
   * flight it gives up: the descriptor may be a full pipe, and a synchronous write would then
   * hang the exit.
   */
  flushSync(): void {
    if (this.inFlight || this.pendingChars === 0) return;
    const chunk = this.takeChunk();
    let offset = 0;
    try {
      while (offset < chunk.length) offset += writeSync(this.fd, chunk, offset);
    } catch {
      // EAGAIN on a full non-blocking pipe, EPIPE with no reader: nothing better to do at exit.
    }
  }

  private takeChunk(): Buffer {
    const chunk = Buffer.from(this.pending.join(''), 'utf8');
    this.pending = [];
    this.pendingChars = 0;
    return chunk;
  }

  private writeNextChunk(): void {
    this.inFlight = true;
    this.writeFrom(this.takeChunk(), 0);
  }

  private writeFrom(chunk: Buffer, offset: number): void {
    write(this.fd, chunk, offset, chunk.length - offset, null, (error, written) => {
      if (error) {
        if (error.code === 'EAGAIN') {
          setTimeout(() => this.writeFrom(chunk, offset), EAGAIN_RETRY_MS);
          return;
        }
        // No reader (EPIPE) or no descriptor: the chunk is lost, count its lines as dropped.
        this.dropped += countLines(chunk, offset);
      } else if (offset + written < chunk.length) {
        this.writeFrom(chunk, offset + written);
        return;
      }
      this.inFlight = false;
      if (this.pendingChars >= this.options.chunkChars) this.writeNextChunk();
      else if (this.drainWaiters.length > 0) this.release();
      this.settleIfDrained();
    });
  }

  private settleIfDrained(): void {
    if (this.inFlight || this.pendingChars > 0 || this.drainWaiters.length === 0) return;
    const waiters = this.drainWaiters;
    this.drainWaiters = [];
    for (const settle of waiters) settle();
  }
}

/** A full non-blocking pipe: wait this long before trying the same write again. */
const EAGAIN_RETRY_MS = 10;

function countLines(chunk: Buffer, from: number): number {
  let lines = 0;
  for (let index = chunk.indexOf(10, from); index !== -1; index = chunk.indexOf(10, index + 1)) {
    lines++;
  }
  return lines;
}
