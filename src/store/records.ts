import type { RefillConfig, RefillInterval } from '../limiter/credits';
import type { RatelimitConfig, RatelimitType } from '../limiter/ratelimitConfig';

/**
 * Records as the code sees them, and their Redis hash form. Hash fields are flat strings so that
 * `redis-cli HGETALL` shows a record as it is; absent optional fields are absent from the hash.
 */
export interface KeyRecord {
  id: string;
  workspaceId: string;
  apiId: string;
  hash: string;
  start: string;
  name?: string;
  ownerId?: string;
  meta?: Record<string, unknown>;
  createdAt: number;
  updatedAt?: number;
  expires?: number;
  enabled: boolean;
  ratelimit?: RatelimitConfig;
  /**
   * Present when the key has usage credits. Their count lives in its own hash (names.credits);
   * `reset` is the latest "set remaining to N" (createKey, updateKey), kept here so that such a
   * write is one atomic write of the record, applied to the hash the next time it is used.
   */
  credits?: { refill?: RefillConfig; reset: { nonce: string; value: number; at: number } };
  /** Bumped by every write; updates and deletes compare-and-set on it. */
  version: number;
  /** Position in the API's creation order. */
  seq: number;
}

export interface ApiRecord {
  id: string;
  workspaceId: string;
  name: string;
  createdAt: number;
  deletedAt?: number;
}

export interface RootKeyRecord {
  id: string;
  workspaceId: string;
  name?: string;
  permissions: string[];
  createdAt: number;
}

type Hash = Record<string, string>;

/** The mutable part of a key: what createKey sets and updateKey may change or clear. */
export interface KeyFields {
  name?: string | null;
  ownerId?: string | null;
  meta?: Record<string, unknown> | null;
  expires?: number | null;
  enabled?: boolean;
  ratelimit?: RatelimitConfig | null;
  /** null: unlimited usage; refill null: credits that never refill; resetTo: set remaining. */
  credits?: { refill?: RefillConfig | null; resetTo?: number } | null;
}

export interface FieldChanges {
  set: [string, string][];
  del: string[];
}

const RATELIMIT_FIELDS = ['rlType', 'rlLimit', 'rlRefillRate', 'rlRefillInterval'];
const REFILL_FIELDS = ['refillInterval', 'refillAmount', 'refillDay'];
const CREDIT_FIELDS = [
  'credits',
  'creditsReset',
  'creditsResetTo',
  'creditsResetAt',
  ...REFILL_FIELDS,
];

/**
 * Turns a patch into hash writes: undefined leaves a field alone, null deletes it. `resetNonce`
 * names a "set remaining" (unique per record write: the record's next version).
 */
export function keyFieldChanges(fields: KeyFields, resetNonce = '', now = 0): FieldChanges {
  const changes: FieldChanges = { set: [], del: [] };
  const put = (field: string, value: string | null | undefined) => {
    if (value === undefined) return;
    if (value === null) changes.del.push(field);
    else changes.set.push([field, value]);
  };
  put('name', fields.name);
  put('ownerId', fields.ownerId);
  put(
    'meta',
    fields.meta === undefined || fields.meta === null ? fields.meta : JSON.stringify(fields.meta),
  );
  put(
    'expires',
    fields.expires === undefined || fields.expires === null
      ? fields.expires
      : String(fields.expires),
  );
  put('enabled', fields.enabled === undefined ? undefined : fields.enabled ? '1' : '0');
  if (fields.ratelimit === null) changes.del.push(...RATELIMIT_FIELDS);
  else if (fields.ratelimit) {
    const { type, limit, refillRate, refillInterval } = fields.ratelimit;
    changes.set.push(
      ['rlType', type],
      ['rlLimit', String(limit)],
      ['rlRefillRate', String(refillRate)],
      ['rlRefillInterval', String(refillInterval)],
    );
  }
  if (fields.credits === null) changes.del.push(...CREDIT_FIELDS);
  else if (fields.credits) {
    changes.set.push(['credits', '1']);
    const { refill, resetTo } = fields.credits;
    if (resetTo !== undefined) {
      changes.set.push(
        ['creditsReset', resetNonce],
        ['creditsResetTo', String(resetTo)],
        ['creditsResetAt', String(now)],
      );
    }
    if (refill === null) changes.del.push(...REFILL_FIELDS);
    else if (refill) {
      changes.set.push(
        ['refillInterval', refill.interval],
        ['refillAmount', String(refill.amount)],
      );
      if (refill.refillDay === undefined) changes.del.push('refillDay');
      else changes.set.push(['refillDay', String(refill.refillDay)]);
    }
  }
  return changes;
}

function optionalNumber(value: string | undefined): number | undefined {
  return value === undefined ? undefined : Number(value);
}

export function keyFromHash(hash: Hash): KeyRecord | undefined {
  if (!hash.id) return undefined;
  const record: KeyRecord = {
    id: hash.id,
    workspaceId: hash.workspaceId ?? '',
    apiId: hash.apiId ?? '',
    hash: hash.hash ?? '',
    start: hash.start ?? '',
    createdAt: Number(hash.createdAt),
    enabled: hash.enabled !== '0',
    version: Number(hash.version),
    seq: Number(hash.seq),
  };
  if (hash.name !== undefined) record.name = hash.name;
  if (hash.ownerId !== undefined) record.ownerId = hash.ownerId;
  if (hash.meta !== undefined) record.meta = JSON.parse(hash.meta) as Record<string, unknown>;
  const updatedAt = optionalNumber(hash.updatedAt);
  if (updatedAt !== undefined) record.updatedAt = updatedAt;
  const expires = optionalNumber(hash.expires);
  if (expires !== undefined) record.expires = expires;
  if (hash.rlType !== undefined) {
    record.ratelimit = {
      type: hash.rlType as RatelimitType,
      limit: Number(hash.rlLimit),
      refillRate: Number(hash.rlRefillRate),
      refillInterval: Number(hash.rlRefillInterval),
    };
  }
  if (hash.credits === '1') {
    record.credits = {
      reset: {
        nonce: hash.creditsReset ?? '',
        value: Number(hash.creditsResetTo ?? 0),
        at: Number(hash.creditsResetAt ?? 0),
      },
    };
    if (hash.refillInterval !== undefined) {
      record.credits.refill = {
        interval: hash.refillInterval as RefillInterval,
        amount: Number(hash.refillAmount),
      };
      const refillDay = optionalNumber(hash.refillDay);
      if (refillDay !== undefined) record.credits.refill.refillDay = refillDay;
    }
  }
  return record;
}

export function apiFromHash(hash: Hash): ApiRecord | undefined {
  if (!hash.id) return undefined;
  const record: ApiRecord = {
    id: hash.id,
    workspaceId: hash.workspaceId ?? '',
    name: hash.name ?? '',
    createdAt: Number(hash.createdAt),
  };
  const deletedAt = optionalNumber(hash.deletedAt);
  if (deletedAt !== undefined) record.deletedAt = deletedAt;
  return record;
}

export function rootKeyFromHash(hash: Hash): RootKeyRecord | undefined {
  if (!hash.id) return undefined;
  const record: RootKeyRecord = {
    id: hash.id,
    workspaceId: hash.workspaceId ?? '',
    permissions: (hash.permissions ?? '').split(' ').filter(Boolean),
    createdAt: Number(hash.createdAt),
  };
  if (hash.name !== undefined) record.name = hash.name;
  return record;
}
