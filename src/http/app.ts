import Koa from 'koa';
import Router from '@koa/router';
import type { Logger } from 'pino';
import { timingSafeEqual } from 'node:crypto';
import { MethodNotAllowedError, NotFoundError, UnauthorizedError } from '../errors';
import { DASHBOARD_CSP, loadDashboardAssets } from './dashboardAssets';
import { openApiDocument } from './openapi';
import { errorsHtml, referenceHtml } from './referencePages';
import type { Services } from '../operations/services';
import type { KeywardContext, RequestState } from './context';
import { readJsonBody } from './jsonBody';
import { errorEnvelope } from './middleware/errorEnvelope';
import { requestContext } from './middleware/requestContext';
import { invoke, type CompiledRoute } from './rpc';
import { decodeQuery } from './validation';

export interface AppOptions {
  services: Services;
  /** The RPC routes, compiled once and shared with the data plane. */
  routes: readonly CompiledRoute[];
  logger: Logger;
  maxBodyBytes: number;
  errorDocsUrl: string;
  liveness: () => Promise<{ healthy: boolean; body: object }>;
  /** When set, GET /metrics requires `Authorization: Bearer <metricsToken>`. */
  metricsToken?: string;
  version: string;
}

/** HTML pages may style themselves inline; nothing else is loosened. */
const PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'";

export function createApp(options: AppOptions): Koa<RequestState> {
  const { services, logger } = options;
  const app = new Koa<RequestState>();
  // Errors are answered by errorEnvelope; Koa's own handler would only print them again.
  app.silent = true;
  const router = new Router<RequestState>({ sensitive: true, strict: true });
  const methodsByPath = new Map<string, string>();

  for (const compiled of options.routes) {
    const { route, path, queryProperties } = compiled;
    methodsByPath.set(path, route.method);
    const handler = async (ctx: KeywardContext) => {
      ctx.state.operation = route.name;
      const { output, headers } = await invoke(
        services,
        compiled,
        ctx.state,
        ctx.get('authorization'),
        route.method === 'GET'
          ? () => decodeQuery(ctx.query, queryProperties)
          : () => readJsonBody(ctx.req, options.maxBodyBytes),
      );
      if (headers) ctx.set(headers);
      ctx.body = output;
    };
    if (route.method === 'GET') router.get(path, handler);
    else router.post(path, handler);
  }

  methodsByPath.set('/v1/liveness', 'GET');
  router.get('/v1/liveness', async (ctx) => {
    ctx.state.operation = 'liveness';
    const { healthy, body } = await options.liveness();
    ctx.status = healthy ? 200 : 503;
    ctx.body = body;
  });

  const document = openApiDocument(options.version);
  const reference = referenceHtml(document);
  const errorsPage = errorsHtml();
  const page = (path: string, operation: string, type: string, body: () => string | object) => {
    methodsByPath.set(path, 'GET');
    router.get(path, (ctx) => {
      ctx.state.operation = operation;
      ctx.type = type;
      if (type === 'html') ctx.set('Content-Security-Policy', PAGE_CSP);
      ctx.body = body();
    });
  };
  page('/openapi.json', 'openapi', 'json', () => document);
  page('/docs', 'docs', 'html', () => reference);
  page('/docs/errors', 'docs', 'html', () => errorsPage);
  for (const [path, asset] of Object.entries(loadDashboardAssets())) {
    methodsByPath.set(path, 'GET');
    router.get(path, (ctx) => {
      ctx.state.operation = 'dashboard';
      ctx.type = asset.type;
      ctx.set('Content-Security-Policy', DASHBOARD_CSP);
      ctx.body = asset.body;
    });
  }

  methodsByPath.set('/metrics', 'GET');
  router.get('/metrics', async (ctx) => {
    ctx.state.operation = 'metrics';
    if (options.metricsToken !== undefined) {
      const presented = /^Bearer (.+)$/.exec(ctx.get('authorization'))?.[1];
      if (!presented || !sameSecret(presented, options.metricsToken))
        throw new UnauthorizedError(
          'metrics need the metrics token: Authorization: Bearer <token>',
        );
    }
    ctx.type = services.metrics.registry.contentType;
    ctx.body = await services.metrics.registry.metrics();
  });

  app.use(requestContext(logger, services.metrics));
  app.use(errorEnvelope(logger, options.errorDocsUrl));
  app.use(router.routes());
  app.use(async (ctx) => {
    const allowed = methodsByPath.get(ctx.path);
    if (allowed === undefined)
      throw new NotFoundError(`no such operation: ${ctx.method} ${ctx.path.slice(0, 128)}`);
    throw new MethodNotAllowedError(ctx.method, allowed === 'GET' ? ['GET', 'HEAD'] : [allowed]);
  });
  return app;
}

/** Compares a presented secret without leaking, through timing, how much of it matched. */
function sameSecret(presented: string, expected: string): boolean {
  const a = Buffer.from(presented);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}
