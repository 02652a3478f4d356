import type { IncomingMessage } from 'node:http';
import pino, { type Logger } from 'pino';
import type { RequestState } from '../../src/http/context';
import { defaultSteps, Lifecycle } from '../../src/http/lifecycle';
import { accessLogger, recordRequest } from '../../src/http/requestLog';
import { Metrics } from '../../src/observability/metrics';
import { UnknownKeyLog } from '../../src/observability/unknownKeyLog';
import type { RootKeyRecord } from '../../src/domain/records';
import { generateKey } from '../../src/keys/keyMaterial';
import { verifyKey } from '../../src/operations/keys/verifyKey';
import type { Caller } from '../../src/operations/operation';
import type { Services } from '../../src/operations/services';

/** A request as a door hands it over: only KEYWARD_LOG_CLIENT_IP reads it. */
const request = { socket: { remoteAddress: '127.0.0.1' }, headers: {} } as IncomingMessage;

type Line = Record<string, unknown>;

function capture(level: 'info' | 'warn' = 'info'): { logger: Logger; lines: Line[] } {
  const lines: Line[] = [];
  const logger = pino(
    { level },
    { write: (text: string) => void lines.push(JSON.parse(text) as Line) },
  );
  return { logger, lines };
}

const rootKey: RootKeyRecord = {
  id: 'root_1',
  workspaceId: 'ws_1',
  permissions: ['*'],
  createdAt: 0,
};

let requests = 0;
function verification(keyId?: string, workspaceId = 'ws_1'): RequestState {
  return {
    requestId: `req_${++requests}`,
    rootKey: { ...rootKey, workspaceId },
    operation: 'keys.verifyKey',
    logFields: keyId === undefined ? {} : { keyId },
  };
}

const answered = (status = 200) => ({
  method: 'POST',
  path: '/v1/keys.verifyKey',
  status,
  started: process.hrtime.bigint(),
});

const accessLines = (lines: Line[]) => lines.filter((line) => line.msg === 'request');
const summaries = (lines: Line[]) => lines.filter((line) => line.msg === 'unknown keys verified');

describe('UnknownKeyLog', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  test('the first of a window is admitted, the rest are summed up once the window closes', () => {
    const { logger, lines } = capture();
    const log = new UnknownKeyLog(logger, { windowMs: 1000, maxWorkspaces: 16 });
    expect(log.admit('req_a', 'ws_1')).toBe(true);
    for (let n = 0; n < 9; n++) expect(log.admit(`req_${n}`, n < 3 ? 'ws_2' : 'ws_1')).toBe(false);
    expect(lines).toEqual([]);
    jest.advanceTimersByTime(1000);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: 30,
      msg: 'unknown keys verified',
      operation: 'keys.verifyKey',
      code: 'NOT_FOUND',
      count: 10,
      unlogged: 9,
      windowMs: 1000,
      firstRequestId: 'req_a',
      byWorkspace: { ws_1: 7, ws_2: 3 },
    });
    expect(lines[0]).not.toHaveProperty('otherWorkspaces');
    // A new window opens with the next one.
    expect(log.admit('req_b', 'ws_1')).toBe(true);
    expect(log.admit('req_c', 'ws_1')).toBe(false);
    jest.advanceTimersByTime(1000);
    expect(lines[1]).toMatchObject({ count: 2, unlogged: 1, firstRequestId: 'req_b' });
  });

  test('a lone unknown key is its ordinary line and nothing more', () => {
    const { logger, lines } = capture();
    const log = new UnknownKeyLog(logger, { windowMs: 1000, maxWorkspaces: 16 });
    expect(log.admit('req_a', 'ws_1')).toBe(true);
    jest.advanceTimersByTime(5000);
    expect(lines).toEqual([]);
    expect(log.admit('req_b', 'ws_1')).toBe(true);
  });

  test('a summary names a bounded number of workspaces and sums the rest', () => {
    const { logger, lines } = capture();
    const log = new UnknownKeyLog(logger, { windowMs: 1000, maxWorkspaces: 2 });
    for (const ws of ['ws_1', 'ws_2', 'ws_3', 'ws_4', 'ws_1', 'ws_3']) log.admit('req', ws);
    log.close();
    expect(lines[0]).toMatchObject({ count: 6, byWorkspace: { ws_1: 2, ws_2: 1 } });
    expect(lines[0]?.otherWorkspaces).toBe(3);
  });
});

describe('recordRequest', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  test('a flood of unknown keys writes one access line and one summary a window', () => {
    const { logger, lines } = capture();
    const accessLog = accessLogger(logger);
    const metrics = new Metrics();
    const first = verification();
    recordRequest(accessLog, metrics, first, answered());
    for (let n = 0; n < 999; n++) recordRequest(accessLog, metrics, verification(), answered());
    expect(accessLines(lines)).toHaveLength(1);
    expect(accessLines(lines)[0]).toMatchObject({
      requestId: first.requestId,
      operation: 'keys.verifyKey',
      status: 200,
      workspaceId: 'ws_1',
    });
    jest.advanceTimersByTime(1000);
    expect(summaries(lines)).toHaveLength(1);
    expect(summaries(lines)[0]).toMatchObject({
      count: 1000,
      unlogged: 999,
      firstRequestId: first.requestId,
      byWorkspace: { ws_1: 1000 },
    });
    // No key material in either line: only ids and counts.
    expect(JSON.stringify(lines)).not.toMatch(/"key"/);
  });

  test('unknown keys verified through v2 are the same flood, summarised with v1’s', () => {
    const { logger, lines } = capture();
    const accessLog = accessLogger(logger);
    const metrics = new Metrics();
    for (let n = 0; n < 10; n++) {
      const state = {
        ...verification(),
        operation: n % 2 ? 'v2/keys.verifyKey' : 'keys.verifyKey',
      };
      recordRequest(accessLog, metrics, state, answered());
    }
    expect(accessLines(lines)).toHaveLength(1);
    jest.advanceTimersByTime(1000);
    expect(summaries(lines)[0]).toMatchObject({ count: 10, unlogged: 9 });
  });

  test('every other request keeps its own line, during a flood too', () => {
    const { logger, lines } = capture();
    const accessLog = accessLogger(logger);
    const metrics = new Metrics();
    for (let n = 0; n < 10; n++) recordRequest(accessLog, metrics, verification(), answered());
    const others: [RequestState, number][] = [
      [verification('key_1'), 200], // found: valid, rate limited, disabled, ...
      [verification(), 401], // refused before any lookup
      [verification(), 400],
      [verification(), 503],
      [{ requestId: 'req_x', rootKey, operation: 'keys.getKey', logFields: {} }, 200],
      [{ requestId: 'req_y', rootKey, operation: 'ratelimits.limit', logFields: {} }, 200],
    ];
    for (const [state, status] of others)
      recordRequest(accessLog, metrics, state, answered(status));
    const ids = accessLines(lines).map((line) => line.requestId);
    for (const [state] of others) expect(ids).toContain(state.requestId);
    expect(accessLines(lines)).toHaveLength(1 + others.length);
  });

  test('the Koa app and the data plane of one node share a window', () => {
    const { logger, lines } = capture();
    // Both doors of a node run one Lifecycle, and so one access log and one window.
    const lifecycle = new Lifecycle(defaultSteps(logger, new Metrics()), {
      docsUrl: 'https://example.test/errors',
      logger,
    });
    for (let n = 0; n < 10; n++) {
      const exchange = lifecycle.begin(request, 'POST', '/v1/keys.verifyKey', 'keys.verifyKey');
      exchange.state.rootKey = rootKey;
      lifecycle.finish(exchange, 200);
    }
    jest.advanceTimersByTime(1000);
    expect(accessLines(lines)).toHaveLength(1);
    expect(summaries(lines)).toHaveLength(1);
    expect(summaries(lines)[0]).toMatchObject({ count: 10, unlogged: 9 });
  });

  test('a request counts as in flight from its start to its answer', async () => {
    const { logger } = capture('warn');
    const metrics = new Metrics();
    const lifecycle = new Lifecycle(defaultSteps(logger, metrics), {
      docsUrl: 'https://example.test/errors',
      logger,
    });
    const inFlight = async () =>
      /^keyward_http_requests_in_flight (\d+)$/m.exec(await metrics.registry.metrics())?.[1];
    metrics.countInFlight(() => lifecycle.requestsInFlight);
    const first = lifecycle.begin(request, 'POST', '/v1/keys.verifyKey', 'keys.verifyKey');
    const second = lifecycle.begin(request, 'GET', '/v1/apis.getApi');
    expect(await inFlight()).toBe('2');
    lifecycle.finish(first, 200);
    expect(await inFlight()).toBe('1');
    lifecycle.finish(second, 500);
    expect(await inFlight()).toBe('0');
  });

  test('above info nothing is written or scheduled, and the metric still counts', async () => {
    const { logger, lines } = capture('warn');
    const accessLog = accessLogger(logger);
    const metrics = new Metrics();
    for (let n = 0; n < 5; n++) recordRequest(accessLog, metrics, verification(), answered());
    expect(jest.getTimerCount()).toBe(0);
    jest.advanceTimersByTime(1000);
    expect(lines).toEqual([]);
    const text = await metrics.registry.metrics();
    expect(text).toMatch(
      /keyward_http_requests_total\{operation="keys.verifyKey",status="200"\} 5/,
    );
  });
});

/**
 * requestLog recognises an unknown key by what verifyKey leaves in the request state: an
 * answered verification that noted no key id. These hold verifyKey to that.
 */
describe('verifyKey notes a key id for every verdict but NOT_FOUND', () => {
  const key = {
    id: 'key_1',
    workspaceId: 'ws_1',
    apiId: 'api_1',
    hash: 'h',
    start: 'sk_',
    createdAt: 0,
    enabled: true,
    version: 1,
    seq: 1,
  };
  const services = (found: object | undefined) =>
    ({
      directory: { keyByHash: () => Promise.resolve(found) },
      metrics: new Metrics(),
      recent: { record: () => undefined },
      lastUse: { saw: () => undefined },
      webhookEvents: { observe: () => undefined },
      usage: { verification: () => undefined },
      now: () => 1_000_000,
    }) as unknown as Services;
  const caller = (): Caller => ({ rootKey, requestId: 'req_1', logFields: {} });

  const issued = generateKey('sk').plaintext;
  const badChecksum = issued.slice(0, -1) + (issued.endsWith('2') ? '3' : '2');

  test.each([
    ['NOT_FOUND', undefined, {}, false],
    ['NOT_FOUND', key, { key: badChecksum }, false],
    ['VALID', key, {}, true],
    ['DISABLED', { ...key, enabled: false }, {}, true],
    ['EXPIRED', { ...key, expires: 1 }, {}, true],
    ['FORBIDDEN', key, { apiId: 'api_2' }, true],
  ])('%s', async (code, found, input, noted) => {
    const who = caller();
    const verdict = await verifyKey.handle(services(found), who, { key: 'sk_x', ...input });
    expect(verdict.code).toBe(code);
    expect(who.logFields.keyId !== undefined).toBe(noted);
  });
});
