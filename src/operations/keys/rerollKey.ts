import {
  KEY_DETAIL_NAMES,
  KEY_DETAIL_RULES,
  type ClientDetailName,
  type KeyFields,
  type KeyRecord,
} from '../../domain/key';
import { ConflictError, NotFoundError } from '../../errors';
import { newId } from '../../keys/ids';
import { DEFAULT_BYTE_LENGTH, generateKey, prefixOf } from '../../keys/keyMaterial';
import { defineOperation } from '../operation';
import { id, object, plaintextKey } from '../schemas';
import { currentCredits } from './credits';
import { loadKey } from './loadKey';
import { vaultToSeal } from './recoverable';
import { auditEntry } from '../audit';

/** Unkey v2's bound on `expiration`, in ms (its schema's `maximum`). */
export const MAX_EXPIRATION = 4_102_444_800_000;

export interface RerollKeyInput {
  keyId: string;
  /** How long the old key keeps verifying, in ms from now; 0 refuses it at once. */
  expiration: number;
}

/** The details a client sets on a key (name, ownerId, meta, expires, environment, ratelimits). */
const CARRIED_DETAILS = KEY_DETAIL_NAMES.filter(
  (name) => KEY_DETAIL_RULES[name].input,
) as readonly ClientDetailName[];

/**
 * The fields of the key that replaces `key`: everything a client set on it, its identity link,
 * its seed limit, and its credits as they stand now with their refill, as a "set remaining" of
 * the new key's own (Unkey copies `remaining_requests` and the refill into the new row). Its
 * permissions and roles are copied by the script, from the sets as they are when it runs.
 */
export function carriedFields(
  key: KeyRecord,
  credits: { remaining: number } | undefined,
): KeyFields {
  const fields: KeyFields = { enabled: key.enabled };
  for (const name of CARRIED_DETAILS) {
    if (key[name] !== undefined) (fields as Record<string, unknown>)[name] = key[name];
  }
  if (key.identityId !== undefined) fields.identityId = key.identityId;
  if (key.ratelimit !== undefined) fields.ratelimit = key.ratelimit;
  if (key.credits) {
    fields.credits = {
      resetTo: credits?.remaining ?? key.credits.reset.value,
      ...(key.credits.refill ? { refill: key.credits.refill } : {}),
    };
  }
  return fields;
}

/** The old key's expiry after a reroll: `now + expiration`, unless it expires sooner already. */
export function rerolledExpiry(
  expires: number | undefined,
  now: number,
  expiration: number,
): number {
  const end = now + expiration;
  return expires !== undefined && expires < end ? expires : end;
}

export const rerollKey = defineOperation({
  name: 'keys.rerollKey',
  method: 'POST',
  plane: 'management',
  summary:
    'A new secret with the settings of an existing key (Unkey v2); the old key keeps verifying for `expiration` ms, 0 refuses it at once.',
  // Rerolling makes a key: Unkey asks for create_key on the key's API.
  permission: { resource: 'api', action: 'create_key', scope: 'resource' },
  input: object(
    {
      keyId: id,
      expiration: { type: 'integer', minimum: 0, maximum: MAX_EXPIRATION },
    },
    ['keyId', 'expiration'],
  ),
  output: object({ keyId: id, key: plaintextKey }, ['keyId', 'key']),
  uses: ['keys', 'directory', 'now', 'vault'],
  async handle(deps, caller, input: RerollKeyInput): Promise<{ keyId: string; key: string }> {
    const key = await loadKey(deps, caller, input.keyId, 'create_key');
    // A recoverable key's successor is recoverable too, and sealing it needs what creating one
    // does (Unkey asks for encrypt_key here as well).
    const vault = key.sealed !== undefined ? vaultToSeal(deps, caller, key.apiId) : undefined;
    const now = deps.now();
    const material = generateKey(prefixOf(key.start), DEFAULT_BYTE_LENGTH);
    const keyId = newId('key', now);
    const sealed = vault?.seal(material.plaintext, { workspaceId: key.workspaceId, keyId });
    const rerolled = { keyId, hash: material.hash, start: material.start, createdAt: now };
    const outcome = await deps.keys.reroll(
      key.workspaceId,
      key.id,
      rerolled,
      async (current) => ({
        fields: {
          ...carriedFields(current, await currentCredits(deps, current)),
          ...(sealed !== undefined ? { sealed } : {}),
        },
        expires: rerolledExpiry(current.expires, now, input.expiration),
      }),
      // The old key is the target; the summary names the new one.
      auditEntry(caller, 'keys.rerollKey', 'key', key.id, {
        apiId: key.apiId,
        newKeyId: keyId,
        ...(input.expiration !== undefined ? { expiration: input.expiration } : {}),
      }),
    );
    // A key deleted, or whose API began its deletion, since loadKey read it.
    if (outcome === 'not_found' || outcome === 'api_not_found') {
      throw new NotFoundError('key', `key ${input.keyId} not found`);
    }
    // 2^-128 for a generated key.
    if (outcome === 'hash_exists')
      throw new ConflictError('key', 'a key with this hash exists already');
    return { keyId, key: material.plaintext };
  },
});
