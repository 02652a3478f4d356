import type { IncomingMessage } from 'node:http';
import type { Logger } from 'pino';
import { newRequestId } from '../keys/ids';
import type { Metrics } from '../observability/metrics';
import type { RequestState } from './context';
import { dialectOf } from '../dialects/dialects';
import { clientAddress, type ClientIpMode } from './clientAddress';
import { clientError } from './errorResponse';
import { accessLogger, recordRequest, SECURITY_HEADERS } from './requestLog';

/** A JSON answer: what an operation returned, or the error envelope of what it threw. */
export interface Answer {
  status: number;
  headers?: Readonly<Record<string, string>>;
  body: object;
}

/** One request on its way through the lifecycle, whichever door took it. */
export interface Exchange {
  readonly method: string;
  readonly path: string;
  readonly started: bigint;
  readonly state: RequestState;
  /**
   * Headers the steps add for this request alone. Every answer carries `X-Request-Id` first,
   * then the steps' static headers, then these.
   */
  readonly headers: Record<string, string>;
  /** The status that went out, set by the door once it has answered. */
  status: number;
}

/**
 * A cross-cutting step of every request, through either door. Steps are synchronous hooks, not
 * an onion of async middleware: the verification path runs them on every request, and each
 * awaited layer would cost it a promise and a turn of the microtask queue.
 */
export interface LifecycleStep {
  /** Headers every answer carries, the same for every request: merged once, at start-up. */
  headers?: Readonly<Record<string, string>>;
  /** Before the route runs: may add headers that every answer to this request carries. */
  enter?(exchange: Exchange): void;
  /** Once the answer has gone out: logs and metrics. */
  finish?(exchange: Exchange): void;
}

/**
 * The one request lifecycle of a node: a request id, the steps (security headers, access log
 * and metrics by default), and errors turned into the envelope. The Koa app and the data plane
 * both run every request through it, so a step added here reaches both.
 */
export class Lifecycle {
  private readonly enters: readonly ((exchange: Exchange) => void)[];
  private readonly finishes: readonly ((exchange: Exchange) => void)[];
  /** The steps' static headers, in step order: sent after the request id. */
  readonly headers: Readonly<Record<string, string>>;
  /**
   * Requests begun and not yet finished, through either door: what a draining node still owes
   * (keyward_http_requests_in_flight). A field here, not a step: the verification path pays one
   * increment, not one more call per request.
   */
  requestsInFlight = 0;

  constructor(
    steps: readonly LifecycleStep[],
    private readonly errors: { docsUrl: string; logger: Logger },
    /** KEYWARD_LOG_CLIENT_IP: which address a request's state keeps, if any. */
    private readonly clientIp: ClientIpMode = 'off',
  ) {
    this.enters = steps.flatMap((step) => (step.enter ? [step.enter.bind(step)] : []));
    this.finishes = steps.flatMap((step) => (step.finish ? [step.finish.bind(step)] : []));
    this.headers = Object.assign({}, ...steps.map((step) => step.headers ?? {})) as Record<
      string,
      string
    >;
  }

  begin(req: IncomingMessage, method: string, path: string, operation?: string): Exchange {
    const requestId = newRequestId();
    const exchange: Exchange = {
      method,
      path,
      started: process.hrtime.bigint(),
      state: {
        requestId,
        operation,
        logFields: {},
        clientIp: this.clientIp === 'off' ? undefined : clientAddress(req, this.clientIp),
      },
      headers: {},
      status: 500,
    };
    this.requestsInFlight++;
    for (const enter of this.enters) enter(exchange);
    return exchange;
  }

  /**
   * Runs the route. Whatever it throws becomes the error envelope; `undefined` means the route
   * wrote its own answer (a page of the Koa app).
   */
  async run(
    exchange: Exchange,
    route: () => Promise<Answer | undefined>,
  ): Promise<Answer | undefined> {
    try {
      return await route();
    } catch (thrown) {
      return this.fail(exchange, thrown);
    }
  }

  /** The error envelope of the dialect the path speaks. */
  fail(exchange: Exchange, thrown: unknown): Answer {
    const { docsUrl, logger } = this.errors;
    const { requestId } = exchange.state;
    const dialect = dialectOf(exchange.path);
    const caught = clientError(thrown, requestId, logger);
    const error = dialect.refine ? dialect.refine(caught) : caught;
    const body = dialect.errorBody(error, requestId, docsUrl);
    return { status: error.status, headers: error.headers, body };
  }

  finish(exchange: Exchange, status: number): void {
    this.requestsInFlight--;
    exchange.status = status;
    for (const finish of this.finishes) finish(exchange);
  }
}

/** What every node runs for every request, in this order. */
export function defaultSteps(logger: Logger, metrics: Metrics): LifecycleStep[] {
  const accessLog = accessLogger(logger);
  return [
    { headers: SECURITY_HEADERS },
    {
      finish(exchange) {
        recordRequest(accessLog, metrics, exchange.state, exchange);
      },
    },
  ];
}
