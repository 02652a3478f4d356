import pino, { type Logger } from 'pino';
import type { LogLevel } from './config';

/**
 * JSON lines on stdout. Authorization headers and key material never reach a log call, and these
 * paths are redacted in case a future call passes a request or body by mistake.
 */
export function createLogger(level: LogLevel): Logger {
  return pino({
    level,
    base: { service: 'keyward' },
    redact: {
      paths: ['key', 'plaintext', '*.key', '*.plaintext', 'req.headers.authorization'],
      censor: '[redacted]',
    },
  });
}
