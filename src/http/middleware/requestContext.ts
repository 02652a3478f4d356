import type { Next } from 'koa';
import type { Logger } from 'pino';
import { newId } from '../../keys/ids';
import type { Metrics } from '../../observability/metrics';
import type { KeywardContext } from '../context';

/** Headers for a JSON API that no browser should render, frame or cache. */
const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Cache-Control': 'no-store',
  'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'",
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
};

/**
 * Outermost middleware: gives the request its id, sets the headers every answer carries, and
 * writes the one access-log line per request (ids only: never a key, a root key or a body).
 */
export function requestContext(logger: Logger, metrics: Metrics) {
  return async function requestContextMiddleware(ctx: KeywardContext, next: Next): Promise<void> {
    const started = process.hrtime.bigint();
    const requestId = newId('req');
    ctx.state.requestId = requestId;
    ctx.state.logFields = {};
    ctx.set('X-Request-Id', requestId);
    for (const [name, value] of Object.entries(SECURITY_HEADERS)) ctx.set(name, value);
    try {
      await next();
    } finally {
      const durationMs = Number(process.hrtime.bigint() - started) / 1e6;
      // Unknown paths share one label: a label per path would let callers grow the registry.
      metrics.request(ctx.state.operation ?? 'unknown', ctx.status, durationMs / 1000);
      // Build the line only when it will be written: above info this runs for nothing.
      if (logger.isLevelEnabled('info')) {
        logger.info(
          {
            requestId,
            method: ctx.method,
            operation: ctx.state.operation ?? ctx.path.slice(0, 128),
            status: ctx.status,
            durationMs: Math.round(durationMs * 1000) / 1000,
            workspaceId: ctx.state.rootKey?.workspaceId,
            ...ctx.state.logFields,
          },
          'request',
        );
      }
    }
  };
}
