import * as apis from '../operations/apis';
import * as keys from '../operations/keys';
import * as migrations from '../operations/migrations';
import * as ratelimits from '../operations/ratelimits';
import type { Caller, Services } from '../operations/services';
import { DECIDED_AT } from '../limiter/tokenBucket';
import { rateLimitHeaders } from './rateLimitHeaders';
import { schemas, type OperationName } from './schemas';

export interface Route {
  name: OperationName;
  method: 'GET' | 'POST';
  /** Management calls count against the per-root-key request limit; the data plane does not. */
  plane: 'data' | 'management';
  run: (services: Services, caller: Caller, input: never) => Promise<object>;
  /** Response headers derived from the output (e.g. RateLimit-* of a verification). */
  headers?: (output: never, now: number) => Record<string, string>;
}

function verificationHeaders(verification: keys.Verification, now: number): Record<string, string> {
  const { ratelimit } = verification;
  if (!ratelimit || !('remaining' in ratelimit)) return {};
  return rateLimitHeaders(
    ratelimit,
    verification.code === 'RATE_LIMITED',
    verification[DECIDED_AT] ?? now,
  );
}

/** Every authenticated RPC: `{base}/v1/{name}`, GET reads with a query, POST writes with JSON. */
export const routes: readonly Route[] = [
  { name: 'apis.createApi', method: 'POST', plane: 'management', run: apis.createApi },
  { name: 'apis.getApi', method: 'GET', plane: 'management', run: apis.getApi },
  { name: 'apis.deleteApi', method: 'POST', plane: 'management', run: apis.deleteApi },
  { name: 'apis.listKeys', method: 'GET', plane: 'management', run: apis.listKeys },
  { name: 'keys.createKey', method: 'POST', plane: 'management', run: keys.createKey },
  { name: 'keys.getKey', method: 'GET', plane: 'management', run: keys.getKey },
  {
    name: 'keys.verifyKey',
    method: 'POST',
    plane: 'data',
    run: keys.verifyKey,
    headers: verificationHeaders,
  },
  { name: 'keys.updateKey', method: 'POST', plane: 'management', run: keys.updateKey },
  { name: 'keys.updateRemaining', method: 'POST', plane: 'management', run: keys.updateRemaining },
  {
    name: 'ratelimits.limit',
    method: 'POST',
    plane: 'data',
    run: ratelimits.limit,
    headers: (outcome: ratelimits.LimitOutcome, now: number) =>
      outcome.evaluated === false
        ? {}
        : rateLimitHeaders(outcome, !outcome.success, outcome[DECIDED_AT] ?? now),
  },
  {
    name: 'ratelimits.setOverride',
    method: 'POST',
    plane: 'management',
    run: ratelimits.setOverride,
  },
  {
    name: 'ratelimits.getOverride',
    method: 'GET',
    plane: 'management',
    run: ratelimits.getOverride,
  },
  {
    name: 'ratelimits.listOverrides',
    method: 'GET',
    plane: 'management',
    run: ratelimits.listOverrides,
  },
  {
    name: 'ratelimits.deleteOverride',
    method: 'POST',
    plane: 'management',
    run: ratelimits.deleteOverride,
  },
  {
    name: 'migrations.createKeys',
    method: 'POST',
    plane: 'management',
    run: migrations.createKeys,
  },
  // keyward's own additions, for the dashboard.
  { name: 'apis.listApis', method: 'GET', plane: 'management', run: apis.listApis },
  { name: 'keys.getVerifications', method: 'GET', plane: 'management', run: keys.getVerifications },
  { name: 'keys.getBucket', method: 'GET', plane: 'management', run: keys.getBucket },
  { name: 'keys.deleteKey', method: 'POST', plane: 'management', run: keys.deleteKey },
];

export function schemaOf(route: Route): (typeof schemas)[OperationName] {
  return schemas[route.name];
}
