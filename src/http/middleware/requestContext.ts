import type { Next } from 'koa';
import type { Logger } from 'pino';
import { newId } from '../../keys/ids';
import type { Metrics } from '../../observability/metrics';
import type { KeywardContext } from '../context';
import { accessLogger, recordRequest, SECURITY_HEADERS } from '../requestLog';

/**
 * Outermost middleware: gives the request its id, sets the headers every answer carries, and
 * records the request once it is answered.
 */
export function requestContext(logger: Logger, metrics: Metrics) {
  const accessLog = accessLogger(logger);
  return async function requestContextMiddleware(ctx: KeywardContext, next: Next): Promise<void> {
    const started = process.hrtime.bigint();
    const requestId = newId('req');
    ctx.state.requestId = requestId;
    ctx.state.logFields = {};
    ctx.set('X-Request-Id', requestId);
    ctx.set(SECURITY_HEADERS);
    try {
      await next();
    } finally {
      recordRequest(accessLog, metrics, ctx.state, {
        method: ctx.method,
        path: ctx.path,
        status: ctx.status,
        started,
      });
    }
  };
}
