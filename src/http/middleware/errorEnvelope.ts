import type { Next } from 'koa';
import type { Logger } from 'pino';
import type { KeywardContext } from '../context';
import { errorResponse } from '../errorResponse';

/** Answers whatever the Koa routes throw with the error envelope. */
export function errorEnvelope(logger: Logger, docsUrl: string) {
  return async function errorEnvelopeMiddleware(ctx: KeywardContext, next: Next): Promise<void> {
    try {
      await next();
    } catch (thrown) {
      const { status, headers, body } = errorResponse(thrown, ctx.state.requestId, docsUrl, logger);
      ctx.status = status;
      ctx.set(headers);
      ctx.body = body;
    }
  };
}
