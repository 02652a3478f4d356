import { isGranted, permissionFor } from '../../auth/permissions';
import { evaluate, parsePermissionQuery, type PermissionQuery } from '../../auth/permissionQuery';
import { Lru } from '../../cache/lru';
import { checksumVerdict } from '../../keys/keyFormat';
import { hashKey } from '../../keys/keyMaterial';
import type { BucketDecision } from '../../limiter/tokenBucket';
import { DECIDED_AT } from '../../limiter/tokenBucket';
import { isRedisUnavailable } from '../../redis/failures';
import { defineOperation, requirePermission, type Caller } from '../operation';
import {
  cost,
  id,
  identityRef,
  INTERVAL_MAX,
  LIMIT_MAX,
  limitName,
  plaintextKey,
} from '../schemas';
import {
  appliedLimits,
  usesNamedLimits,
  type AppliedLimit,
  type LimitRequest,
} from './appliedLimits';
import type { Directory } from '../../cache/directory';
import type { ChargeOutcome, CreditCharge, Limiter } from '../../limiter/limiter';
import { DEFAULT_LIMIT_NAME } from '../../domain/namedLimits';
import type { VerifiableKey } from '../../domain/key';
import type { Services } from '../services';
import { creditSpend } from './credits';
import { memoizedHoldings, holdsAny } from './holdings';
import {
  KEY_API,
  verdict,
  verificationHeaders,
  type LimitStanding,
  type Verification,
  type VerificationCode,
} from './verification';

export interface VerifyKeyInput {
  key: string;
  apiId?: string;
  ratelimit?: { cost?: number };
  remaining?: { cost?: number };
  /** Named limits to apply beside those that apply themselves. */
  ratelimits?: LimitRequest[];
  /** Unkey v1's JSON query or v2's string grammar; parsed by src/auth/permissionQuery.ts. */
  authorization?: { permissions: unknown };
  /** Counted with the verification in usage analytics (analytics.getVerifications). */
  tags?: string[];
}

/**
 * The `mode` noted for a key refused by its checksum: the access-log line and the `mode` label of
 * `keyward_verifications_total{code="NOT_FOUND"}` tell it from a key that was looked up (`none`).
 */
export const BAD_CHECKSUM = 'checksum';

/**
 * Parsed v2-grammar queries by their text: a service verifies with the same few queries over and
 * over, and parsing is pure. Bounded, since the text is the client's; the JSON form is parsed
 * each time (keying it by its serialisation would cost what parsing does).
 */
const parsedQueries = new Lru<string, PermissionQuery>(1024);

function parsedQuery(input: unknown): PermissionQuery {
  if (typeof input !== 'string') return parsePermissionQuery(input);
  const known = parsedQueries.get(input);
  if (known) return known;
  const query = parsePermissionQuery(input);
  parsedQueries.set(input, query);
  return query;
}

/** What a key that holds no permission or role is judged on. */
const NO_PERMISSIONS: ReadonlySet<string> = new Set();

/** What deciding a verification needs: narrow enough to be faked in a unit test. */
export interface VerifyDeps extends Pick<Services, 'limiterFailure' | 'now'> {
  directory: Pick<Directory, 'keyByHash' | 'catalogue' | 'identity'>;
  limiter: Pick<Limiter, 'check' | 'charge'>;
}

/**
 * The hot path. Checks run in the contract's order and the first failure decides; the rate limit
 * runs last, so a key refused for any other reason spends no token.
 */
export async function decideVerification(
  deps: VerifyDeps,
  caller: Caller,
  input: VerifyKeyInput,
): Promise<Verification> {
  if (input.apiId !== undefined)
    requirePermission(caller, permissionFor('api', input.apiId, 'verify_key'));
  // Parsed before the lookup: a malformed query is a 400 whether or not the key exists.
  const query = input.authorization ? parsedQuery(input.authorization.permissions) : undefined;
  // A key with the checksum's marker and a wrong checksum was never issued: refused before it
  // is hashed or looked up, in the same words as an unknown key (docs/security.md).
  if (checksumVerdict(input.key) === 'wrong') {
    caller.logFields.mode = BAD_CHECKSUM;
    return { valid: false, code: 'NOT_FOUND', requestId: caller.requestId };
  }
  // A warm key is answered without a promise: one turn of the microtask queue less per request.
  const found = deps.directory.keyByHash(caller.rootKey.workspaceId, hashKey(input.key));
  const key = found instanceof Promise ? await found : found;
  if (!key) return { valid: false, code: 'NOT_FOUND', requestId: caller.requestId };
  if (input.apiId === undefined)
    requirePermission(caller, permissionFor('api', key.apiId, 'verify_key'));
  caller.logFields.keyId = key.id;
  if (key.ratelimit) caller.logFields.mode = key.ratelimit.type;
  if (
    input.apiId !== undefined &&
    input.apiId !== key.apiId &&
    !isGranted(caller.rootKey.permissions, permissionFor('api', key.apiId, 'verify_key'))
  ) {
    // A root key scoped to other APIs learns nothing about this key, not even its state.
    return { valid: false, code: 'FORBIDDEN', requestId: caller.requestId };
  }

  const { requestId } = caller;
  // Only a key that holds permissions or roles needs the workspace's (a cache hit when warm).
  const holdings = holdsAny(key)
    ? memoizedHoldings(key, await deps.directory.catalogue(caller.rootKey.workspaceId))
    : undefined;
  const foundIdentity = key.identityId
    ? deps.directory.identity(caller.rootKey.workspaceId, key.identityId)
    : undefined;
  const identity = foundIdentity instanceof Promise ? await foundIdentity : foundIdentity;
  const answer = (code: VerificationCode) => verdict(key, code, requestId, holdings, identity);
  if (!key.enabled) return answer('DISABLED');
  if (input.apiId !== undefined && input.apiId !== key.apiId) return answer('FORBIDDEN');
  if (key.expires !== undefined && key.expires <= deps.now()) return answer('EXPIRED');
  if (query && !evaluate(query, holdings?.effective ?? NO_PERMISSIONS)) {
    return answer('INSUFFICIENT_PERMISSIONS');
  }
  // An identity's pool is spent with the key's own credits, the same cost, all or nothing.
  const pool: CreditCharge | undefined = identity?.credits
    ? { owner: identity.id, spend: creditSpend(deps.now(), identity, input.remaining?.cost ?? 1)! }
    : undefined;
  if (usesNamedLimits(key, identity, input)) {
    return spendNamedLimits(deps, key, appliedLimits(key, identity, input), input, answer, pool);
  }
  if (!key.ratelimit && !key.credits && !pool) {
    const result = answer('VALID');
    if (input.ratelimits) result.ratelimits = listedSeed(key, { evaluated: false });
    return result;
  }

  const credits = creditSpend(deps.now(), key, input.remaining?.cost ?? 1);
  let decision: BucketDecision;
  try {
    decision = await deps.limiter.check(
      key.id,
      key.ratelimit,
      input.ratelimit?.cost ?? 1,
      credits,
      pool,
    );
  } catch (error) {
    if (!isRedisUnavailable(error)) throw error;
    // Never an ordinary VALID: the caller learns the limit was not evaluated, whatever the policy.
    const result = answer(deps.limiterFailure === 'open' ? 'VALID' : 'LIMITER_UNAVAILABLE');
    result.evaluated = false;
    if (key.ratelimit) result.ratelimit = { limit: key.ratelimit.limit, evaluated: false };
    if (input.ratelimits) result.ratelimits = listedSeed(key, { evaluated: false });
    return result;
  }
  const code = decision.allowed
    ? 'VALID'
    : decision.usageExceeded
      ? 'USAGE_EXCEEDED'
      : 'RATE_LIMITED';
  const result = answer(code);
  if (key.ratelimit) {
    result.ratelimit = {
      limit: decision.limit,
      remaining: decision.remaining,
      reset: decision.reset,
    };
  }
  if (input.ratelimits) {
    const { remaining, reset } = decision;
    result.ratelimits = listedSeed(key, { remaining, reset, exceeded: code === 'RATE_LIMITED' });
  }
  if (decision.creditsRemaining !== undefined) result.remaining = decision.creditsRemaining;
  if (decision.poolRemaining !== undefined && result.identity) {
    result.identity.remaining = decision.poolRemaining;
  }
  result[DECIDED_AT] = decision.now;
  return result;
}

/**
 * A verification with named limits: every applied limit and the credits, all or nothing
 * (Limiter.charge); the answer lists each limit, and `ratelimit` still describes the seed one.
 */
async function spendNamedLimits(
  deps: VerifyDeps,
  key: VerifiableKey,
  limits: readonly AppliedLimit[],
  input: VerifyKeyInput,
  answer: (code: VerificationCode) => Verification,
  pool: CreditCharge | undefined,
): Promise<Verification> {
  const spend = creditSpend(deps.now(), key, input.remaining?.cost ?? 1);
  if (limits.length === 0 && !spend && !pool) {
    const result = answer('VALID');
    result.ratelimits = [];
    return result;
  }
  let outcome: ChargeOutcome;
  try {
    outcome = await deps.limiter.charge(limits, {
      ...(pool ? { pool } : {}),
      ...(spend ? { key: { owner: key.id, spend } } : {}),
    });
  } catch (error) {
    if (!isRedisUnavailable(error)) throw error;
    const result = answer(deps.limiterFailure === 'open' ? 'VALID' : 'LIMITER_UNAVAILABLE');
    result.evaluated = false;
    if (key.ratelimit) result.ratelimit = { limit: key.ratelimit.limit, evaluated: false };
    result.ratelimits = limits.map((limit) => ({ ...standingOf(limit), evaluated: false }));
    return result;
  }
  const result = answer(
    outcome.allowed ? 'VALID' : outcome.usageExceeded ? 'USAGE_EXCEEDED' : 'RATE_LIMITED',
  );
  result.ratelimits = limits.map((limit, index): LimitStanding => {
    const standing = outcome.standings[index];
    return standing
      ? { ...standingOf(limit), ...standing }
      : { ...standingOf(limit), evaluated: false };
  });
  const seed = limits.findIndex((limit) => limit.name === DEFAULT_LIMIT_NAME);
  const seedStanding = outcome.standings[seed];
  if (seed >= 0 && seedStanding) {
    result.ratelimit = {
      limit: limits[seed]!.config.limit,
      remaining: seedStanding.remaining,
      reset: seedStanding.reset,
    };
  }
  if (outcome.creditsRemaining !== undefined) result.remaining = outcome.creditsRemaining;
  if (outcome.poolRemaining !== undefined && result.identity) {
    result.identity.remaining = outcome.poolRemaining;
  }
  result[DECIDED_AT] = outcome.now;
  return result;
}

/**
 * The limits a seed-path verification applied, for a request that asked for the list (v2 always
 * does): the key's seed limit as a named one (`default`, its own, always applied), or none.
 */
function listedSeed(
  key: VerifiableKey,
  outcome: { remaining: number; reset: number; exceeded: boolean } | { evaluated: false },
): LimitStanding[] {
  if (!key.ratelimit) return [];
  const { limit, refillInterval } = key.ratelimit;
  const seed = { name: DEFAULT_LIMIT_NAME, limit, duration: refillInterval, autoApply: true };
  return [{ ...seed, owner: key.id, ...outcome }];
}

/** What an answer says of an applied limit whatever its outcome. */
function standingOf(limit: AppliedLimit) {
  return {
    name: limit.name,
    limit: limit.config.limit,
    duration: limit.config.refillInterval,
    autoApply: limit.autoApply,
    owner: limit.tag,
  };
}

/** The credits a verification spent: its cost, when it passed and the key counts credits. */
function spentCredits(verification: Verification, input: VerifyKeyInput): number {
  if (verification.code !== 'VALID') return 0;
  if (verification.remaining === undefined && verification.identity?.remaining === undefined) {
    return 0;
  }
  if (verification.evaluated === false) return 0;
  return input.remaining?.cost ?? 1;
}

export const verifyKey = defineOperation({
  name: 'keys.verifyKey',
  method: 'POST',
  plane: 'data',
  summary:
    "Verifies a key and spends its rate limit and credits: always a 200 with the verdict's code.",
  permission: { resource: 'api', action: 'verify_key', scope: 'resource' },
  input: {
    type: 'object',
    required: ['key'],
    properties: {
      key: plaintextKey,
      apiId: id,
      ratelimit: cost,
      remaining: cost,
      ratelimits: {
        type: 'array',
        maxItems: 20,
        items: {
          type: 'object',
          required: ['name'],
          properties: {
            name: limitName,
            cost: { type: 'integer', minimum: 0, maximum: LIMIT_MAX },
            limit: { type: 'integer', minimum: 1, maximum: LIMIT_MAX },
            duration: { type: 'integer', minimum: 1, maximum: INTERVAL_MAX },
          },
        },
      },
      // Unkey v1 takes 10 of 128 characters, v2 20 of 512: the operation admits v2's.
      tags: {
        type: 'array',
        maxItems: 20,
        items: { type: 'string', minLength: 1, maxLength: 512 },
      },
      authorization: {
        type: 'object',
        required: ['permissions'],
        // The shape is the parser's to judge: its messages say what is wrong, and where.
        properties: { permissions: { type: ['string', 'object'] } },
      },
    },
  },
  output: {
    type: 'object',
    required: ['valid', 'code', 'requestId'],
    properties: {
      valid: { type: 'boolean' },
      code: { type: 'string' },
      keyId: { type: 'string' },
      name: { type: 'string' },
      ownerId: { type: 'string' },
      meta: { type: 'object' },
      expires: { type: 'integer' },
      environment: { type: 'string' },
      remaining: { type: 'integer' },
      ratelimit: { type: 'object' },
      ratelimits: { type: 'array', items: { type: 'object' } },
      enabled: { type: 'boolean' },
      permissions: { type: 'array', items: { type: 'string' } },
      roles: { type: 'array', items: { type: 'string' } },
      identity: identityRef,
      evaluated: { const: false },
      requestId: { type: 'string' },
    },
  },
  uses: [
    'directory',
    'limiter',
    'limiterFailure',
    'now',
    'metrics',
    'recent',
    'lastUse',
    'usage',
    'webhookEvents',
  ],
  async handle(deps, caller, input: VerifyKeyInput): Promise<Verification> {
    const verification = await decideVerification(deps, caller, input);
    deps.metrics.verification(verification.code, caller.logFields.mode ?? 'none');
    const now = deps.now();
    if (verification.keyId) {
      deps.recent.record(verification.keyId, verification.code, now);
      deps.lastUse.saw(verification.keyId, now);
      // Webhook events (docs/webhooks.md): noticed in memory, only when the verdict can bring
      // one about and the workspace is not known to have no webhooks; queued by a timer.
      deps.webhookEvents.observe(
        caller.rootKey.workspaceId,
        verification[KEY_API],
        verification,
        now,
      );
    }
    // Counted in memory once the verdict is known: nothing is added to the round trip.
    deps.usage.verification(caller.rootKey.workspaceId, now, {
      apiId: verification[KEY_API] ?? input.apiId,
      keyId: verification.keyId,
      identityId: verification.identity?.id,
      code: verification.code,
      tags: input.tags,
      credits: spentCredits(verification, input),
      requestId: caller.requestId,
      clientIp: caller.clientIp,
    });
    return verification;
  },
  headers: verificationHeaders,
});
