import { BadRequestError, ConflictError, NotFoundError, PreconditionFailedError } from '../errors';
import { isGranted, permissionFor } from '../auth/permissions';
import { newId } from '../keys/ids';
import { DEFAULT_BYTE_LENGTH, generateKey, hashKey } from '../keys/keyMaterial';
import { creditsAt, latestRefillPoint, type RefillConfig } from '../limiter/credits';
import { normalizeRatelimit, type RatelimitInput } from '../limiter/ratelimitConfig';
import { DECIDED_AT, type BucketDecision, type CreditSpend } from '../limiter/tokenBucket';
import { isRedisUnavailable } from '../redis/failures';
import type { KeyFields, KeyRecord } from '../store/records';
import type { RecentVerification } from '../observability/recentVerifications';
import { checkMeta } from './limits';
import { requireAction, requirePermission, type Caller, type Services } from './services';
import { keyView, type KeyView } from './views';

export interface KeyFieldsInput {
  name?: string | null;
  ownerId?: string | null;
  /** v1's newer name for ownerId. */
  externalId?: string | null;
  meta?: Record<string, unknown> | null;
  expires?: number | null;
  enabled?: boolean;
  ratelimit?: RatelimitInput | null;
  /** Usage credits; null (on update) makes usage unlimited. */
  remaining?: number | null;
  refill?: RefillConfig | null;
}

export interface CreateKeyInput extends KeyFieldsInput {
  apiId: string;
  prefix?: string;
  byteLength?: number;
}

/** `ownerId` or its newer v1 name `externalId`; both at once must agree. */
export function ownerIdOf(input: {
  ownerId?: string | null;
  externalId?: string | null;
}): string | null | undefined {
  if (input.externalId === undefined) return input.ownerId;
  if (input.ownerId !== undefined && input.ownerId !== input.externalId) {
    throw new BadRequestError('externalId: must equal ownerId when both are given');
  }
  return input.externalId;
}

function checkRefill(refill: RefillConfig | null | undefined): void {
  if (refill && refill.refillDay !== undefined && refill.interval !== 'monthly') {
    throw new BadRequestError('refill.refillDay: only allowed with interval monthly');
  }
}

/**
 * The key fields an input sets. `hadCredits` says whether the key has usage credits already, since
 * a refill needs credits to refill (as in Unkey v1).
 */
export function toKeyFields(input: KeyFieldsInput, now: number, hadCredits: boolean): KeyFields {
  if (input.expires !== undefined && input.expires !== null && input.expires <= now) {
    throw new BadRequestError('expires: must be in the future');
  }
  const fields: KeyFields = {};
  if (input.name !== undefined) fields.name = input.name;
  const ownerId = ownerIdOf(input);
  if (ownerId !== undefined) fields.ownerId = ownerId;
  if (input.meta !== undefined && input.meta !== null) checkMeta(input.meta);
  if (input.meta !== undefined) fields.meta = input.meta;
  if (input.expires !== undefined) fields.expires = input.expires;
  if (input.enabled !== undefined) fields.enabled = input.enabled;
  if (input.ratelimit !== undefined) {
    fields.ratelimit = input.ratelimit === null ? null : normalizeRatelimit(input.ratelimit);
  }
  checkRefill(input.refill);
  if (input.remaining === null) {
    if (input.refill) throw new BadRequestError('refill: requires remaining');
    fields.credits = null;
  } else if (input.remaining !== undefined || input.refill !== undefined) {
    if (input.remaining === undefined && !hadCredits && input.refill) {
      throw new BadRequestError('refill: requires remaining');
    }
    if (input.remaining !== undefined || hadCredits) {
      fields.credits = {
        ...(input.refill !== undefined ? { refill: input.refill } : {}),
        ...(input.remaining !== undefined ? { resetTo: input.remaining } : {}),
      };
    }
  }
  return fields;
}

/**
 * What the credits are worth now: the record's latest "set remaining" if the hash has not
 * applied it yet, then any refill point that passed since.
 */
async function currentCredits(
  services: Services,
  key: KeyRecord,
): Promise<{ remaining: number; lastRefillAt: number } | undefined> {
  if (!key.credits) return undefined;
  const { reset, refill } = key.credits;
  const stored = await services.keys.readCredits(key.id);
  const applied =
    stored && stored.appliedReset === reset.nonce
      ? stored
      : { remaining: reset.value, lastRefillAt: reset.at };
  return creditsAt(services.now(), applied, refill);
}

/** The credits a verification (or a zero-cost look) spends, with what the script must apply. */
function creditSpend(
  services: Services,
  key: Pick<KeyRecord, 'credits'>,
  cost: number,
): CreditSpend | undefined {
  if (!key.credits) return undefined;
  const { refill, reset } = key.credits;
  return {
    cost,
    reset,
    ...(refill
      ? { refill: { boundary: latestRefillPoint(services.now(), refill), amount: refill.amount } }
      : {}),
  };
}

async function viewWithCredits(services: Services, key: KeyRecord): Promise<KeyView> {
  const view = keyView(key);
  const credits = await currentCredits(services, key);
  if (credits) {
    view.remaining = credits.remaining;
    if (key.credits?.refill)
      view.refill = { ...key.credits.refill, lastRefillAt: credits.lastRefillAt };
  }
  return view;
}

export async function createKey(
  services: Services,
  caller: Caller,
  input: CreateKeyInput,
): Promise<{ keyId: string; key: string }> {
  requirePermission(caller, permissionFor('api', input.apiId, 'create_key'));
  const ws = caller.rootKey.workspaceId;
  const now = services.now();
  if (input.remaining === null) throw new BadRequestError('remaining: must be integer');
  const fields = toKeyFields(input, now, false);
  fields.enabled = input.enabled ?? true;
  const material = generateKey(input.prefix, input.byteLength ?? DEFAULT_BYTE_LENGTH);
  const keyId = newId('key', now);
  const outcome = await services.keys.create({
    workspaceId: ws,
    apiId: input.apiId,
    keyId,
    hash: material.hash,
    start: material.start,
    createdAt: now,
    fields,
  });
  if (outcome === 'api_not_found') throw new NotFoundError(`api ${input.apiId} not found`);
  // 2^-128 for generated keys; reachable only by importing a known key.
  if (outcome === 'hash_exists') throw new ConflictError('a key with this hash exists already');
  services.directory.apply({ kind: 'key', workspaceId: ws, hash: material.hash, created: true });
  caller.logFields.keyId = keyId;
  return { keyId, key: material.plaintext };
}

/** The key of this workspace, with the caller allowed `action` on its API. */
async function loadKey(
  services: Services,
  caller: Caller,
  keyId: string,
  action: string,
): Promise<KeyRecord> {
  requireAction(caller, action);
  caller.logFields.keyId = keyId;
  const key = await services.keys.get(caller.rootKey.workspaceId, keyId);
  if (!key || !(await services.directory.liveApi(key.workspaceId, key.apiId))) {
    throw new NotFoundError(`key ${keyId} not found`);
  }
  requirePermission(caller, permissionFor('api', key.apiId, action));
  return key;
}

export async function getKey(
  services: Services,
  caller: Caller,
  input: { keyId: string },
): Promise<KeyView> {
  return viewWithCredits(services, await loadKey(services, caller, input.keyId, 'read_key'));
}

/** The keys of a listing page, each with its credits as they stand now. */
export function keyViews(services: Services, keys: KeyRecord[]): Promise<KeyView[]> {
  return Promise.all(keys.map((key) => viewWithCredits(services, key)));
}

export async function updateKey(
  services: Services,
  caller: Caller,
  input: KeyFieldsInput & { keyId: string },
): Promise<Record<string, never>> {
  const key = await loadKey(services, caller, input.keyId, 'update_key');
  const now = services.now();
  const fields = toKeyFields(input, now, key.credits !== undefined);
  // One atomic record write, a new `remaining` included (the credits hash applies it when next
  // used); a hash left behind by `remaining: null` is merely tidied up afterwards.
  const updated = await services.keys.update(key.workspaceId, key.id, fields, now);
  if (!updated) throw new NotFoundError(`key ${input.keyId} not found`);
  if (input.remaining === null) await services.keys.deleteCredits(key.id);
  services.directory.apply({
    kind: 'key',
    workspaceId: key.workspaceId,
    hash: key.hash,
    created: false,
  });
  return {};
}

export async function updateRemaining(
  services: Services,
  caller: Caller,
  input: { keyId: string; op: 'increment' | 'decrement' | 'set'; value: number },
): Promise<{ remaining: number }> {
  const key = await loadKey(services, caller, input.keyId, 'update_key');
  const now = services.now();
  const spend = creditSpend(services, key, 0);
  if (!spend) {
    if (input.op !== 'set') {
      throw new PreconditionFailedError(
        `key ${key.id} has unlimited usage: set remaining before incrementing or decrementing it`,
      );
    }
    // "set" gives a key with unlimited usage its credits: one record write, as updateKey does.
    if (
      !(await services.keys.update(
        key.workspaceId,
        key.id,
        { credits: { resetTo: input.value } },
        now,
      ))
    ) {
      throw new NotFoundError(`key ${key.id} not found`);
    }
    services.directory.apply({
      kind: 'key',
      workspaceId: key.workspaceId,
      hash: key.hash,
      created: false,
    });
    return { remaining: input.value };
  }
  const result = await services.keys.updateCredits(
    key.id,
    input.op,
    input.value,
    spend.refill,
    spend.reset,
  );
  if (result === 'would_go_negative') {
    throw new BadRequestError('value: decrementing by this much would make remaining negative');
  }
  return { remaining: result };
}

export async function deleteKey(
  services: Services,
  caller: Caller,
  input: { keyId: string },
): Promise<Record<string, never>> {
  const key = await loadKey(services, caller, input.keyId, 'delete_key');
  if (!(await services.keys.delete(key.workspaceId, key.id))) {
    throw new NotFoundError(`key ${input.keyId} not found`);
  }
  services.directory.apply({
    kind: 'key',
    workspaceId: key.workspaceId,
    hash: key.hash,
    created: false,
  });
  return {};
}

export type VerificationCode =
  | 'VALID'
  | 'NOT_FOUND'
  | 'FORBIDDEN'
  | 'DISABLED'
  | 'EXPIRED'
  | 'RATE_LIMITED'
  | 'INSUFFICIENT_PERMISSIONS'
  | 'USAGE_EXCEEDED'
  | 'LIMITER_UNAVAILABLE';

export interface Verification {
  valid: boolean;
  code: VerificationCode;
  keyId?: string;
  name?: string;
  ownerId?: string;
  meta?: Record<string, unknown>;
  expires?: number;
  /** Usage credits left after this verification. */
  remaining?: number;
  /** false: the rate limit and credits could not be checked (their Redis was unreachable). */
  evaluated?: false;
  [DECIDED_AT]?: number;
  ratelimit?:
    | { limit: number; remaining: number; reset: number }
    /** The bucket could not be reached: nothing was counted. */
    | { limit: number; evaluated: false };
  enabled?: boolean;
  requestId: string;
}

export interface VerifyKeyInput {
  key: string;
  apiId?: string;
  ratelimit?: { cost?: number };
  remaining?: { cost?: number };
  authorization?: { permissions: PermissionQuery };
}

type PermissionQuery = string | { and: unknown[] } | { or: unknown[] };

/**
 * Evaluates v1's permission query against a key's permissions. keyward keys carry none yet, so a
 * named permission is never held; `and`/`or` still combine as logic says.
 */
function satisfies(query: unknown, depth = 0): boolean {
  if (depth > 16) throw new BadRequestError('authorization.permissions: nested too deeply');
  if (typeof query === 'string') return false;
  if (query !== null && typeof query === 'object') {
    if ('and' in query && Array.isArray(query.and))
      return query.and.every((q) => satisfies(q, depth + 1));
    if ('or' in query && Array.isArray(query.or))
      return query.or.some((q) => satisfies(q, depth + 1));
  }
  throw new BadRequestError(
    'authorization.permissions: must be a permission or { and | or: [...] }',
  );
}

/**
 * The hot path. Checks run in the contract's order and the first failure decides; the rate limit
 * runs last, so a key refused for any other reason spends no token.
 */
export async function verifyKey(
  services: Services,
  caller: Caller,
  input: VerifyKeyInput,
): Promise<Verification> {
  const verification = await decideVerification(services, caller, input);
  services.metrics.verification(verification.code, caller.logFields.mode ?? 'none');
  if (verification.keyId)
    services.recent.record(verification.keyId, verification.code, services.now());
  return verification;
}

async function decideVerification(
  services: Services,
  caller: Caller,
  input: VerifyKeyInput,
): Promise<Verification> {
  requireAction(caller, 'verify_key');
  if ('ratelimits' in input) {
    throw new BadRequestError('ratelimits: named rate limits are not supported by this server');
  }
  if (input.apiId !== undefined)
    requirePermission(caller, permissionFor('api', input.apiId, 'verify_key'));
  // Judged before the lookup: a malformed query is a 400 whether or not the key exists, and the
  // answer does not depend on the key (keys hold no permissions yet).
  const permissionsHeld = input.authorization ? satisfies(input.authorization.permissions) : true;
  const key = await services.directory.keyByHash(caller.rootKey.workspaceId, hashKey(input.key));
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

  const verdict = (code: VerificationCode): Verification => {
    const result: Verification = {
      valid: code === 'VALID',
      code,
      keyId: key.id,
      enabled: key.enabled,
      requestId: caller.requestId,
    };
    if (key.name !== undefined) result.name = key.name;
    if (key.ownerId !== undefined) result.ownerId = key.ownerId;
    if (key.meta !== undefined) result.meta = key.meta;
    if (key.expires !== undefined) result.expires = key.expires;
    return result;
  };

  if (!key.enabled) return verdict('DISABLED');
  if (input.apiId !== undefined && input.apiId !== key.apiId) return verdict('FORBIDDEN');
  if (key.expires !== undefined && key.expires <= services.now()) return verdict('EXPIRED');
  if (!permissionsHeld) return verdict('INSUFFICIENT_PERMISSIONS');
  if (!key.ratelimit && !key.credits) return verdict('VALID');

  const credits = creditSpend(services, key, input.remaining?.cost ?? 1);
  let decision: BucketDecision;
  try {
    decision = await services.limiter.check(
      key.id,
      key.ratelimit,
      input.ratelimit?.cost ?? 1,
      credits,
    );
  } catch (error) {
    if (!isRedisUnavailable(error)) throw error;
    // Never an ordinary VALID: the caller learns the limit was not evaluated, whatever the policy.
    const result = verdict(services.limiterFailure === 'open' ? 'VALID' : 'LIMITER_UNAVAILABLE');
    result.evaluated = false;
    if (key.ratelimit) result.ratelimit = { limit: key.ratelimit.limit, evaluated: false };
    return result;
  }
  const code = decision.allowed
    ? 'VALID'
    : decision.usageExceeded
      ? 'USAGE_EXCEEDED'
      : 'RATE_LIMITED';
  const result = verdict(code);
  if (key.ratelimit) {
    result.ratelimit = {
      limit: decision.limit,
      remaining: decision.remaining,
      reset: decision.reset,
    };
  }
  if (decision.creditsRemaining !== undefined) result.remaining = decision.creditsRemaining;
  result[DECIDED_AT] = decision.now;
  return result;
}

/** keyward's own addition: the last verifications of a key as this node saw them (dashboard). */
export async function getVerifications(
  services: Services,
  caller: Caller,
  input: { keyId: string },
): Promise<{ verifications: RecentVerification[]; scope: 'node' }> {
  const key = await loadKey(services, caller, input.keyId, 'read_key');
  return { verifications: services.recent.of(key.id), scope: 'node' };
}

/**
 * keyward's own addition: the live bucket and credits of a key, read without spending. A fast
 * bucket is the one in this node's local Redis.
 */
export async function getBucket(
  services: Services,
  caller: Caller,
  input: { keyId: string },
): Promise<{
  ratelimit?: { type: string; limit: number; remaining: number; reset: number };
  remaining?: number;
}> {
  const key = await loadKey(services, caller, input.keyId, 'read_key');
  if (!key.ratelimit && !key.credits) return {};
  const decision = await services.limiter.check(
    key.id,
    key.ratelimit,
    0,
    creditSpend(services, key, 0),
  );
  return {
    ...(key.ratelimit
      ? {
          ratelimit: {
            type: key.ratelimit.type,
            limit: decision.limit,
            remaining: decision.remaining,
            reset: decision.reset,
          },
        }
      : {}),
    ...(decision.creditsRemaining !== undefined ? { remaining: decision.creditsRemaining } : {}),
  };
}
