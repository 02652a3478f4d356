import type { Logger } from 'pino';
import { REDACTION_CENSOR } from '../logger';
import type { Metrics } from '../observability/metrics';
import { UnknownKeyLog } from '../observability/unknownKeyLog';
import type { RequestState } from './context';

/** Headers for a JSON API that no browser should render, frame or cache. */
export const SECURITY_HEADERS: Readonly<Record<string, string>> = {
  'Cache-Control': 'no-store',
  'Content-Security-Policy': "default-src 'none'; frame-ancestors 'none'",
  'Referrer-Policy': 'no-referrer',
  'X-Content-Type-Options': 'nosniff',
  'X-Frame-Options': 'DENY',
};

/**
 * The logger the access-log line goes to: `logger` without its wildcard redaction paths. The line
 * holds only the ids RequestState types (LogFields is a closed set), and matching `*.key` against
 * every field was more than half of pino's work per line (docs/performance.md, item 10).
 */
export function accessLogger(logger: Logger): Logger {
  const accessLog = logger.child(
    {},
    { redact: { paths: ['key', 'plaintext'], censor: REDACTION_CENSOR } },
  );
  return accessLog;
}

const unknownKeysByAccessLog = new WeakMap<Logger, UnknownKeyLog>();

function unknownKeysOf(accessLog: Logger): UnknownKeyLog {
  let unknownKeys = unknownKeysByAccessLog.get(accessLog);
  if (unknownKeys === undefined) {
    unknownKeys = new UnknownKeyLog(accessLog);
    unknownKeysByAccessLog.set(accessLog, unknownKeys);
  }
  return unknownKeys;
}

/**
 * A verification answered NOT_FOUND. verifyKey notes the key's id for the log as soon as the key
 * is found, and refuses every other way with an error status or after noting it, so an answered
 * verification without a key id is exactly an unknown key (test/unit/requestLog.test.ts holds
 * verifyKey to that).
 */
function isUnknownKey(state: RequestState, status: number): boolean {
  return (
    status === 200 &&
    (state.operation === 'keys.verifyKey' || state.operation === 'v2/keys.verifyKey') &&
    state.logFields.keyId === undefined
  );
}

/**
 * Counts a finished request and writes its one access-log line (ids only: never a key, a root key
 * or a body). Shared by the Koa app and the data plane, so both report alike. Verifications of
 * unknown keys are the exception: one a window in full, the rest in a summary (UnknownKeyLog).
 */
export function recordRequest(
  accessLog: Logger,
  metrics: Metrics,
  state: RequestState,
  request: { method: string | undefined; path: string; status: number; started: bigint },
): void {
  const durationMs = Number(process.hrtime.bigint() - request.started) / 1e6;
  // Unknown paths share one label: a label per path would let callers grow the registry.
  metrics.request(state.operation ?? 'unknown', request.status, durationMs / 1000);
  // Build the line only when it will be written: above info this runs for nothing.
  if (accessLog.isLevelEnabled('info')) {
    if (
      isUnknownKey(state, request.status) &&
      !unknownKeysOf(accessLog).admit(state.requestId, state.rootKey?.workspaceId)
    ) {
      return;
    }
    const { apiId, keyId, mode } = state.logFields;
    accessLog.info(
      {
        requestId: state.requestId,
        method: request.method,
        operation: state.operation ?? request.path.slice(0, 128),
        status: request.status,
        durationMs: Math.round(durationMs * 1000) / 1000,
        workspaceId: state.rootKey?.workspaceId,
        apiId,
        keyId,
        mode,
      },
      'request',
    );
  }
}
