import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { readJsonBody } from './jsonBody';
import type { Answer, Exchange, Lifecycle } from './lifecycle';
import { invoke, type CompiledRoute, type RpcServices } from './rpc';

export interface DataPlaneOptions {
  services: RpcServices;
  logger: Logger;
  routes: readonly CompiledRoute[];
  /** The request lifecycle, shared with the Koa app. */
  lifecycle: Lifecycle;
  maxBodyBytes: number;
}

/** Serves the request and answers true, or answers false and leaves it to the Koa app. */
export type DataPlane = (req: IncomingMessage, res: ServerResponse) => boolean;

const JSON_CONTENT_TYPE = 'application/json; charset=utf-8';

/**
 * The verification path without Koa. A profile of a cached verification showed Koa's per-request
 * machinery (context objects, delegates, compose, on-finished, header-by-header setting) costing
 * about as much CPU as everything keyward itself does (docs/performance.md), so the data-plane
 * RPCs (`keys.verifyKey`, `ratelimits.limit`) are answered straight from node:http.
 *
 * Only the answer is written differently: the lifecycle (request id, steps, error envelope) and
 * the RPC itself are the very ones the Koa app runs. Anything that is not exactly
 * `POST /v1/<data-plane rpc>` (another method, another spelling of the path) goes to the Koa
 * app, which answers it as it always has.
 */
export function createDataPlane(options: DataPlaneOptions): DataPlane {
  const { services, logger, lifecycle, maxBodyBytes } = options;
  const byPath = new Map<string, CompiledRoute>();
  for (const compiled of options.routes) {
    if (compiled.operation.plane === 'data' && compiled.method === 'POST') {
      byPath.set(compiled.path, compiled);
    }
  }

  const write = (res: ServerResponse, exchange: Exchange, answer: Answer): number => {
    const body = JSON.stringify(answer.body);
    // One writeHead with every header, in the order the Koa app sends them: node validates and
    // serialises them once instead of header by header.
    // One literal led by a constant key, as the old writer had: spreading a per-request object
    // first made V8 clone its shape and cost this door ~2 µs more per answer in a profile.
    res.writeHead(answer.status, {
      'X-Request-Id': exchange.state.requestId,
      ...lifecycle.headers,
      ...exchange.headers,
      ...answer.headers,
      'Content-Type': JSON_CONTENT_TYPE,
      'Content-Length': Buffer.byteLength(body),
    });
    res.end(body);
    return answer.status;
  };

  const serve = async (
    compiled: CompiledRoute,
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> => {
    const exchange = lifecycle.begin(req, 'POST', compiled.path, compiled.label);
    let status = 500;
    try {
      // Lifecycle.run's own steps, without its extra await: this door answers only RPCs.
      let answer: Answer;
      try {
        answer = await invoke(services, compiled, exchange.state, req.headers.authorization, () =>
          readJsonBody(req, maxBodyBytes),
        );
      } catch (thrown) {
        answer = lifecycle.fail(exchange, thrown);
      }
      status = write(res, exchange, answer);
    } catch (thrown) {
      // Only writing the answer can get here (e.g. a header value node refuses): a bug, never a
      // hang. The client gets whatever node can still send, the log gets the cause.
      logger.error(
        { requestId: exchange.state.requestId, err: thrown },
        'could not write an answer',
      );
      if (!res.headersSent) {
        const { status: failed, body } = lifecycle.fail(exchange, thrown);
        status = write(res, exchange, { status: failed, body });
      } else res.destroy();
    } finally {
      lifecycle.finish(exchange, status);
    }
  };

  return (req, res) => {
    if (req.method !== 'POST' || req.url === undefined) return false;
    const query = req.url.indexOf('?');
    const compiled = byPath.get(query === -1 ? req.url : req.url.slice(0, query));
    if (compiled === undefined) return false;
    serve(compiled, req, res).catch((error: unknown) => {
      // Only recording the request can get here; the answer has gone out already.
      logger.error({ err: error }, 'could not record a request');
    });
    return true;
  };
}
