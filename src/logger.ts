import pino, { type Logger } from 'pino';
import type { LogLevel } from './config';
import { LineBatcher } from './observability/logSink';

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
  // Lines leave in synchronous writes of CHUNK_CHARS, or every FLUSH_INTERVAL_MS, not one write
  // per request: at info, a write per access-log line cost a node about a tenth of its CPU. A
  // synchronous write (pino's own default) keeps no write in flight, so nothing is lost when the
  // process exits and a stalled reader of stdout holds the node back instead of filling its memory.
  const batcher = new LineBatcher(pino.destination({ dest: 1, sync: true }), CHUNK_CHARS);
  setInterval(() => batcher.release(), FLUSH_INTERVAL_MS).unref();
  process.on('exit', () => batcher.release());
  return pino(options, batcher);
}

/** About 60 access-log lines: a few hundred writes a second at full load. */
const CHUNK_CHARS = 16 * 1024;
/** The longest a log line waits in the buffer. */
const FLUSH_INTERVAL_MS = 100;
