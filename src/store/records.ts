import type { RefillInterval } from '../domain/credits';
import {
  KEY_DETAIL_NAMES,
  KEY_DETAIL_RULES,
  type KeyDetailName,
  type KeyDetails,
  type KeyFields,
  type KeyRecord,
} from '../domain/key';
import type { RatelimitType } from '../domain/ratelimit';
import type { ApiRecord, RootKeyRecord } from '../domain/records';

/**
 * Records in their Redis hash form. Hash fields are flat strings so that `redis-cli HGETALL`
 * shows a record as it is; absent optional fields are absent from the hash.
 */
type Hash = Record<string, string>;

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
  for (const name of KEY_DETAIL_NAMES) {
    if (!KEY_DETAIL_RULES[name].input) continue;
    const value = fields[name as Exclude<KeyDetailName, 'updatedAt'>];
    put(name, value === undefined || value === null ? value : storedDetail(name, value));
  }
  put('enabled', fields.enabled === undefined ? undefined : fields.enabled ? '1' : '0');
  put('identityId', fields.identityId);
  put('sealed', fields.sealed);
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

function storedDetail(name: KeyDetailName, value: NonNullable<KeyDetails[KeyDetailName]>): string {
  return KEY_DETAIL_RULES[name].stored === 'json' ? JSON.stringify(value) : String(value);
}

function setDetail(record: KeyDetails, name: KeyDetailName, stored: string): void {
  const rule = KEY_DETAIL_RULES[name].stored;
  const value = rule === 'json' ? JSON.parse(stored) : rule === 'number' ? Number(stored) : stored;
  (record as Record<KeyDetailName, unknown>)[name] = value;
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
  for (const name of KEY_DETAIL_NAMES) {
    const stored = hash[name];
    if (stored !== undefined) setDetail(record, name, stored);
  }
  if (hash.identityId !== undefined) record.identityId = hash.identityId;
  if (hash.sealed !== undefined) record.sealed = hash.sealed;
  if (hash.lastUsedAt !== undefined) record.lastUsedAt = Number(hash.lastUsedAt);
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
