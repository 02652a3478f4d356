import pino, { type Logger } from 'pino';
import type { LogLevel } from './config';
import { LogSink } from './observability/logSink';

/** Paths blanked in every line, in case a future call passes a request or a body by mistake. */
export const REDACTED_PATHS: readonly string[] = [
  'key',
  'plaintext',
  '*.key',
  '*.plaintext',
  'req.headers.authorization',
];
export const REDACTION_CENSOR = '[redacted]';

/**
 * JSON lines on stdout (colourised lines for a person at a terminal, with `pretty`). Authorization
 * headers and key material never reach a log call; REDACTED_PATHS is the second line of defence.
 */
export function createLogger(level: LogLevel, pretty = false): Logger {
  const options = {
    level,
    base: { service: 'keyward' },
    redact: { paths: [...REDACTED_PATHS], censor: REDACTION_CENSOR },
  };
  if (pretty) {
    return pino({
      ...options,
      transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss.l' } },
    });
  }
  // Lines leave in chunks, not one write per request: at info, a write per access-log line cost a
  // node about a tenth of its CPU. The writes are asynchronous, so a stalled reader of stdout
  // costs log lines (dropped past LOG_BUFFER_CHARS, and counted), never answers.
  const sink = new LogSink(1, { chunkChars: CHUNK_CHARS, maxPendingChars: LOG_BUFFER_CHARS });
  const logger = pino(options, sink);
  setInterval(() => {
    sink.release();
    const dropped = sink.takeDropped();
    if (dropped > 0) {
      logger.warn({ droppedLines: dropped }, 'log lines dropped: stdout is not read fast enough');
    }
  }, FLUSH_INTERVAL_MS).unref();
  process.on('exit', () => sink.flushSync());
  return logger;
}

/**
 * Waits until every line logged so far has been written, or `timeoutMs` has passed (a reader of
 * stdout that does not read must not hold a stopping node forever).
 */
export function flushLog(logger: Logger, timeoutMs: number): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, timeoutMs);
    logger.flush(() => {
      clearTimeout(timer);
      resolve();
    });
  });
}

/** About 250 access-log lines: under a hundred writes a second at full load. */
const CHUNK_CHARS = 64 * 1024;
/** About 30,000 access-log lines: 1–2 s of a saturated node whose stdout is not read. */
const LOG_BUFFER_CHARS = 8 * 1024 * 1024;
/** The longest a log line waits in the buffer. */
const FLUSH_INTERVAL_MS = 100;
