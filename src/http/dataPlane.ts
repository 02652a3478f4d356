import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Logger } from 'pino';
import { newId } from '../keys/ids';
import type { Services } from '../operations/services';
import type { RequestState } from './context';
import { errorResponse } from './errorResponse';
import { readJsonBody } from './jsonBody';
import { accessLogger, recordRequest, SECURITY_HEADERS } from './requestLog';
import { invoke, type CompiledRoute, type RpcAnswer } from './rpc';

export interface DataPlaneOptions {
  services: Services;
  logger: Logger;
  routes: readonly CompiledRoute[];
  maxBodyBytes: number;
  errorDocsUrl: string;
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
 * Only the answer is written differently: authentication, body reading, validation, the
 * operation, the error envelope, the headers, metrics and the access log are the very functions
 * the Koa app calls. Anything that is not exactly `POST /v1/<data-plane rpc>` (another method,
 * another spelling of the path) goes to the Koa app, which answers it as it always has.
 */
export function createDataPlane(options: DataPlaneOptions): DataPlane {
  const { services, logger, maxBodyBytes, errorDocsUrl } = options;
  const accessLog = accessLogger(logger);
  const byPath = new Map<string, CompiledRoute>();
  for (const compiled of options.routes) {
    if (compiled.route.plane === 'data' && compiled.route.method === 'POST') {
      byPath.set(compiled.path, compiled);
    }
  }

  const answer = (
    res: ServerResponse,
    state: RequestState,
    status: number,
    headers: Readonly<Record<string, string>> | undefined,
    payload: object,
  ): number => {
    const body = JSON.stringify(payload);
    // One writeHead with every header, in the order the Koa app sends them: node validates and
    // serialises them once instead of header by header.
    res.writeHead(status, {
      'X-Request-Id': state.requestId,
      ...SECURITY_HEADERS,
      ...headers,
      'Content-Type': JSON_CONTENT_TYPE,
      'Content-Length': Buffer.byteLength(body),
    });
    res.end(body);
    return status;
  };

  const serve = async (
    compiled: CompiledRoute,
    req: IncomingMessage,
    res: ServerResponse,
  ): Promise<void> => {
    const started = process.hrtime.bigint();
    const state: RequestState = {
      requestId: newId('req'),
      operation: compiled.route.name,
      logFields: {},
    };
    let status = 500;
    try {
      let result: RpcAnswer;
      try {
        result = await invoke(services, compiled, state, req.headers.authorization, () =>
          readJsonBody(req, maxBodyBytes),
        );
      } catch (thrown) {
        const error = errorResponse(thrown, state.requestId, errorDocsUrl, logger);
        status = answer(res, state, error.status, error.headers, error.body);
        return;
      }
      status = answer(res, state, 200, result.headers, result.output);
    } catch (thrown) {
      // Only writing the answer can get here (e.g. a header value node refuses): a bug, never a
      // hang. The client gets whatever node can still send, the log gets the cause.
      logger.error({ requestId: state.requestId, err: thrown }, 'could not write an answer');
      if (!res.headersSent) {
        const error = errorResponse(thrown, state.requestId, errorDocsUrl, logger);
        status = answer(res, state, error.status, undefined, error.body);
      } else res.destroy();
    } finally {
      recordRequest(accessLog, services.metrics, state, {
        method: req.method,
        path: compiled.path,
        status,
        started,
      });
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
