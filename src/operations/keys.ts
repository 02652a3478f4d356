import { BadRequestError, ConflictError, NotFoundError } from '../errors';
import { isGranted, permissionFor } from '../auth/permissions';
import { newId } from '../keys/ids';
import { DEFAULT_BYTE_LENGTH, generateKey, hashKey } from '../keys/keyMaterial';
import { normalizeRatelimit, type RatelimitInput } from '../limiter/ratelimitConfig';
import type { BucketDecision } from '../limiter/tokenBucket';
import { isRedisUnavailable } from '../redis/failures';
import type { KeyFields, KeyRecord } from '../store/records';
import { checkMeta } from './limits';
import { requireAction, requirePermission, type Caller, type Services } from './services';
import { keyView, type KeyView } from './views';

interface KeyFieldsInput {
  name?: string | null;
  ownerId?: string | null;
  /** v1's newer name for ownerId. */
  externalId?: string | null;
  meta?: Record<string, unknown> | null;
  expires?: number | null;
  enabled?: boolean;
  ratelimit?: RatelimitInput | null;
}

export interface CreateKeyInput extends KeyFieldsInput {
  apiId: string;
  prefix?: string;
  byteLength?: number;
}

/** Fields v1 clients may send that keyward does not implement yet: refused, never ignored. */
const NOT_YET_SUPPORTED = ['remaining', 'refill'] as const;

function refuseUnsupported(input: object): void {
  for (const field of NOT_YET_SUPPORTED) {
    if (field in input && (input as Record<string, unknown>)[field] !== null) {
      throw new BadRequestError(`${field}: usage credits are not supported by this server yet`);
    }
  }
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

function toKeyFields(input: KeyFieldsInput, now: number): KeyFields {
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
  return fields;
}

export async function createKey(
  services: Services,
  caller: Caller,
  input: CreateKeyInput,
): Promise<{ keyId: string; key: string }> {
  requirePermission(caller, permissionFor('api', input.apiId, 'create_key'));
  refuseUnsupported(input);
  const ws = caller.rootKey.workspaceId;
  const now = services.now();
  const fields = toKeyFields(input, now);
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
  // 2^-128 for generated keys; reachable only by importing a known key (issue 6).
  if (outcome === 'hash_exists') throw new ConflictError('a key with this hash exists already');
  services.directory.apply({ kind: 'key', workspaceId: ws, hash: material.hash });
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
  return keyView(await loadKey(services, caller, input.keyId, 'read_key'));
}

export async function updateKey(
  services: Services,
  caller: Caller,
  input: KeyFieldsInput & { keyId: string },
): Promise<Record<string, never>> {
  refuseUnsupported(input);
  const key = await loadKey(services, caller, input.keyId, 'update_key');
  const updated = await services.keys.update(
    key.workspaceId,
    key.id,
    toKeyFields(input, services.now()),
    services.now(),
  );
  if (!updated) throw new NotFoundError(`key ${input.keyId} not found`);
  services.directory.apply({ kind: 'key', workspaceId: key.workspaceId, hash: key.hash });
  return {};
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
  services.directory.apply({ kind: 'key', workspaceId: key.workspaceId, hash: key.hash });
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
  | 'LIMITER_UNAVAILABLE';

export interface Verification {
  valid: boolean;
  code: VerificationCode;
  keyId?: string;
  name?: string;
  ownerId?: string;
  meta?: Record<string, unknown>;
  expires?: number;
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
  requireAction(caller, 'verify_key');
  if ('ratelimits' in input) {
    throw new BadRequestError('ratelimits: named rate limits are not supported by this server');
  }
  if (input.apiId !== undefined)
    requirePermission(caller, permissionFor('api', input.apiId, 'verify_key'));
  const key = await services.directory.keyByHash(caller.rootKey.workspaceId, hashKey(input.key));
  if (!key) return { valid: false, code: 'NOT_FOUND', requestId: caller.requestId };
  if (input.apiId === undefined)
    requirePermission(caller, permissionFor('api', key.apiId, 'verify_key'));
  caller.logFields.keyId = key.id;
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
  if (input.authorization && !satisfies(input.authorization.permissions)) {
    return verdict('INSUFFICIENT_PERMISSIONS');
  }
  if (!key.ratelimit) return verdict('VALID');

  let decision: BucketDecision;
  try {
    decision = await services.limiter.take(key.id, key.ratelimit, input.ratelimit?.cost ?? 1);
  } catch (error) {
    if (!isRedisUnavailable(error)) throw error;
    // Never an ordinary VALID: the caller learns the limit was not evaluated, whatever the policy.
    const result = verdict(services.limiterFailure === 'open' ? 'VALID' : 'LIMITER_UNAVAILABLE');
    result.ratelimit = { limit: key.ratelimit.limit, evaluated: false };
    return result;
  }
  const result = verdict(decision.allowed ? 'VALID' : 'RATE_LIMITED');
  result.ratelimit = {
    limit: decision.limit,
    remaining: decision.remaining,
    reset: decision.reset,
  };
  return result;
}
