import pino, { type Logger } from 'pino';
import type { LogLevel } from './config';

/**
 * JSON lines on stdout (colourised lines for a person at a terminal, with `pretty`). Authorization
 * headers and key material never reach a log call, and these paths are redacted in case a future
 * call passes a request or body by mistake.
 */
export function createLogger(level: LogLevel, pretty = false): Logger {
  const options = {
    level,
    base: { service: 'keyward' },
    redact: {
      paths: ['key', 'plaintext', '*.key', '*.plaintext', 'req.headers.authorization'],
      censor: '[redacted]',
    },
  };
  if (pretty) {
    return pino({
      ...options,
      transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss.l' } },
    });
  }
  // Lines leave in writes of 4 KiB, or every FLUSH_INTERVAL_MS, not one write per request: at
  // info, a write per access-log line cost a node about a tenth of its CPU (docs/performance.md).
  // pino flushes what is left when the process exits.
  const destination = pino.destination({ dest: 1, sync: false, minLength: 4096 });
  setInterval(() => destination.flush(), FLUSH_INTERVAL_MS).unref();
  return pino(options, destination);
}

/** The longest a log line waits in the buffer. */
const FLUSH_INTERVAL_MS = 100;
