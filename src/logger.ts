import pino, { type Logger } from 'pino';
import type { LogLevel } from './config';

/**
 * JSON lines on stdout (colourised lines for a person at a terminal, with `pretty`). Authorization
 * headers and key material never reach a log call, and these paths are redacted in case a future
 * call passes a request or body by mistake.
 */
export function createLogger(level: LogLevel, pretty = false): Logger {
  return pino({
    level,
    ...(pretty
      ? { transport: { target: 'pino-pretty', options: { translateTime: 'SYS:HH:MM:ss.l' } } }
      : {}),
    base: { service: 'keyward' },
    redact: {
      paths: ['key', 'plaintext', '*.key', '*.plaintext', 'req.headers.authorization'],
      censor: '[redacted]',
    },
  });
}
