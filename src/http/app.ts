import Koa, { type ParameterizedContext } from 'koa';
import Router from '@koa/router';
import { timingSafeEqual } from 'node:crypto';
import {
  MethodNotAllowedError,
  NotFoundError,
  ServiceUnavailableError,
  UnauthorizedError,
} from '../errors';
import { DASHBOARD_CSP, loadDashboardAssets } from './dashboardAssets';
import { openApiDocument } from './openapi';
import { errorsHtml, referenceHtml } from './referencePages';
import type { Metrics } from '../observability/metrics';
import { readJsonBody } from './jsonBody';
import type { Answer, Exchange, Lifecycle } from './lifecycle';
import { invoke, type CompiledRoute, type RpcServices } from './rpc';
import { decodeQuery } from './validation';

/** Koa's per-request state: the lifecycle's exchange, and the answer of an RPC route. */
interface KoaState {
  exchange: Exchange;
  answer?: Answer;
}

type KeywardContext = ParameterizedContext<KoaState>;

export interface AppOptions {
  services: RpcServices & { metrics: Metrics };
  /** The RPC routes, compiled once and shared with the data plane. */
  routes: readonly CompiledRoute[];
  /** The request lifecycle, shared with the data plane. */
  lifecycle: Lifecycle;
  maxBodyBytes: number;
  liveness: () => Promise<{ healthy: boolean; body: object }>;
  /** When set, GET /metrics requires `Authorization: Bearer <metricsToken>`. */
  metricsToken?: string;
  version: string;
}

/** HTML pages may style themselves inline; nothing else is loosened. */
const PAGE_CSP = "default-src 'none'; style-src 'unsafe-inline'; frame-ancestors 'none'";

export function createApp(options: AppOptions): Koa<KoaState> {
  const { services, lifecycle } = options;
  const app = new Koa<KoaState>();
  // Errors are answered by the lifecycle; Koa's own handler would only print them again.
  app.silent = true;
  const router = new Router<KoaState>({ sensitive: true, strict: true });
  const methodsByPath = new Map<string, string>();

  for (const compiled of options.routes) {
    const { method, path, queryProperties } = compiled;
    methodsByPath.set(path, method);
    const handler = async (ctx: KeywardContext) => {
      const { state } = ctx.state.exchange;
      state.operation = compiled.label;
      ctx.state.answer = await invoke(
        services,
        compiled,
        state,
        ctx.get('authorization'),
        method === 'GET'
          ? () => decodeQuery(ctx.query, queryProperties)
          : () => readJsonBody(ctx.req, options.maxBodyBytes),
      );
    };
    if (method === 'GET') router.get(path, handler);
    else router.post(path, handler);
  }

  methodsByPath.set('/v1/liveness', 'GET');
  router.get('/v1/liveness', async (ctx) => {
    ctx.state.exchange.state.operation = 'liveness';
    const { healthy, body } = await options.liveness();
    ctx.status = healthy ? 200 : 503;
    ctx.body = body;
  });

  // v2's liveness: the same check, its answer in v2's envelope (a 503 as v2's error).
  methodsByPath.set('/v2/liveness', 'GET');
  router.get('/v2/liveness', async (ctx) => {
    const { state } = ctx.state.exchange;
    state.operation = 'v2/liveness';
    const { healthy } = await options.liveness();
    if (!healthy) throw new ServiceUnavailableError('a Redis this node needs is unavailable');
    ctx.body = { meta: { requestId: state.requestId }, data: { message: 'OK' } };
  });

  const document = openApiDocument(options.version);
  const reference = referenceHtml(document);
  const errorsPage = errorsHtml();
  const page = (path: string, operation: string, type: string, body: () => string | object) => {
    methodsByPath.set(path, 'GET');
    router.get(path, (ctx) => {
      ctx.state.exchange.state.operation = operation;
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
      ctx.state.exchange.state.operation = 'dashboard';
      ctx.type = asset.type;
      ctx.set('Content-Security-Policy', DASHBOARD_CSP);
      ctx.body = asset.body;
    });
  }

  // A person who opens the node's address in a browser lands on the dashboard, not a 404.
  for (const path of ['/', '/dashboard/']) {
    methodsByPath.set(path, 'GET');
    router.get(path, (ctx) => {
      ctx.state.exchange.state.operation = 'dashboard';
      ctx.redirect('/dashboard');
    });
  }

  methodsByPath.set('/metrics', 'GET');
  router.get('/metrics', async (ctx) => {
    ctx.state.exchange.state.operation = 'metrics';
    if (options.metricsToken !== undefined) {
      const presented = /^Bearer (.+)$/.exec(ctx.get('authorization'))?.[1];
      if (!presented || !sameSecret(presented, options.metricsToken))
        throw new UnauthorizedError(
          'unknown',
          'metrics need the metrics token: Authorization: Bearer <token>',
        );
    }
    ctx.type = services.metrics.registry.contentType;
    ctx.body = await services.metrics.registry.metrics();
  });

  // The one lifecycle, as the data plane runs it: the headers every answer carries are set before
  // the routes (a page may override its Content-Security-Policy), a JSON answer after them.
  app.use(async (ctx, next) => {
    const exchange = lifecycle.begin(ctx.req, ctx.method, ctx.path);
    ctx.state.exchange = exchange;
    ctx.set('X-Request-Id', exchange.state.requestId);
    ctx.set(lifecycle.headers);
    ctx.set(exchange.headers);
    try {
      const answer = await lifecycle.run(exchange, async () => {
        await next();
        return ctx.state.answer;
      });
      if (answer) {
        ctx.status = answer.status;
        if (answer.headers) ctx.set(answer.headers);
        ctx.body = answer.body;
      }
    } finally {
      lifecycle.finish(exchange, ctx.status);
    }
  });
  app.use(router.routes());
  app.use(async (ctx) => {
    const allowed = methodsByPath.get(ctx.path);
    if (allowed === undefined)
      throw new NotFoundError(
        'route',
        `no such operation: ${ctx.method} ${ctx.path.slice(0, 128)}`,
      );
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
