import type { RedisClient } from '../redis/clients';
import { resultDecoder } from '../redis/scriptTable';
import { scanKeys } from './migration/step';
import { names } from './names';
import { Vault, VaultError } from '../vault/vault';

/**
 * `keyward vault rotate`: re-wraps the data key of every recoverable key, and of every sealed
 * webhook secret, under the vault's first key (KEYWARD_VAULT_KEYS), one record at a time with a
 * compare-and-set, while nodes serve. Only the wrapping changes; the plaintext's seal and every other field stay, so nodes notice nothing.
 * Idempotent and resumable: a record already under the first key is left as it is, so a run
 * stopped anywhere finishes on the next.
 */

/** A recoverable key that could not be re-wrapped: by id only, never any of its secret. */
export interface SkippedKey {
  keyId: string;
  workspaceId: string;
  /**
   * VaultError's reason (its vault key is not listed, or the stored form does not open), or
   * `changing`: its sealed form changed under every attempt of this run.
   */
  reason: VaultError['reason'] | 'changing';
}

export interface RotationReport {
  /** The vault key every recoverable key is now wrapped under (but the skipped ones). */
  kekId: string;
  /** Live recoverable keys read. */
  scanned: number;
  /** Re-wrapped by this run. */
  rewrapped: number;
  /** Under the first vault key already. */
  current: number;
  skipped: SkippedKey[];
  /** Deleted between this run's read and its write: nothing left to rotate. */
  gone: number;
  /** Webhook secrets sealed by the vault (docs/webhooks.md), rotated the same way. */
  webhooks: WebhookRotation;
}

/** A sealed webhook secret that could not be re-wrapped: by id only. */
export interface SkippedWebhook {
  webhookId: string;
  workspaceId: string;
  reason: VaultError['reason'] | 'changing';
}

export interface WebhookRotation {
  scanned: number;
  rewrapped: number;
  current: number;
  skipped: SkippedWebhook[];
}

type Outcome =
  { kind: 'none' | 'rewrapped' | 'current' | 'gone' } | { kind: 'skipped'; key: SkippedKey };

/** The record names SCAN finds under `keyward:key:{*}`, which also matches a key's sets. */
const [KEY_HEAD, KEY_TAIL] = names.key('\0').split('\0') as [string, string];

/** The key id of a key record's name; undefined for anything else the pattern matches. */
export function keyIdOfRecord(name: string): string | undefined {
  if (!name.startsWith(KEY_HEAD) || !name.endsWith(KEY_TAIL)) return undefined;
  const id = name.slice(KEY_HEAD.length, name.length - KEY_TAIL.length);
  return id !== '' && names.key(id) === name && !/[{}]/.test(id) ? id : undefined;
}

const decode = resultDecoder('rewrapSealed');
const decodeWebhook = resultDecoder('rewrapWebhookSecret');

/** A webhook's record among the names `keyward:{*}:webhook:*` matches (its attempts' lists too). */
const WEBHOOK_RECORD = /^keyward:\{([A-Za-z0-9_]+)\}:webhook:([A-Za-z0-9_]+)$/;

type WebhookOutcome =
  { kind: 'none' | 'rewrapped' | 'current' } | { kind: 'skipped'; hook: SkippedWebhook };

async function rotateWebhook(
  redis: RedisClient,
  vault: Vault,
  name: string,
): Promise<WebhookOutcome> {
  const match = WEBHOOK_RECORD.exec(name);
  if (!match || names.webhook(match[1]!, match[2]!) !== name) return { kind: 'none' };
  const [workspaceId, webhookId] = [match[1]!, match[2]!];
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const secret = await redis.hget(name, 'secret');
    // Gone, or stored without a vault (`plain.`): nothing sealed to rotate.
    if (typeof secret !== 'string' || Vault.kekIdOf(secret) === undefined) return { kind: 'none' };
    if (Vault.kekIdOf(secret) === vault.sealingKekId) return { kind: 'current' };
    let rewrapped: string | undefined;
    try {
      rewrapped = vault.rewrap(secret, { workspaceId, keyId: webhookId });
    } catch (error) {
      if (error instanceof VaultError) {
        return { kind: 'skipped', hook: { webhookId, workspaceId, reason: error.reason } };
      }
      throw error;
    }
    if (rewrapped === undefined) return { kind: 'current' };
    if (decodeWebhook(await redis.rewrapWebhookSecretV1(name, secret, rewrapped)) === 'rewrapped') {
      return { kind: 'rewrapped' };
    }
  }
  return { kind: 'skipped', hook: { webhookId, workspaceId, reason: 'changing' } };
}

/** Rotates every sealed webhook secret to the vault's first key. */
export async function rotateWebhookSecrets(
  redis: RedisClient,
  vault: Vault,
): Promise<WebhookRotation> {
  const report: WebhookRotation = { scanned: 0, rewrapped: 0, current: 0, skipped: [] };
  for await (const batch of scanKeys(redis, names.webhook('*', '*'))) {
    const outcomes = await Promise.all(batch.map((name) => rotateWebhook(redis, vault, name)));
    for (const outcome of outcomes) {
      if (outcome.kind === 'none') continue;
      report.scanned++;
      if (outcome.kind === 'skipped') report.skipped.push(outcome.hook);
      else report[outcome.kind]++;
    }
  }
  return report;
}

/**
 * A record that changed between the read and the write is read again: only a concurrent run (or
 * a deletion) changes a sealed form, so a few attempts settle it. Past them the key is reported,
 * not spun on.
 */
const ATTEMPTS = 5;

async function rotateOne(redis: RedisClient, vault: Vault, keyId: string): Promise<Outcome> {
  const record = names.key(keyId);
  let workspaceId = '';
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    const [id, ws, sealed, pending, deletedAt] = await redis.hmget(
      record,
      'id',
      'workspaceId',
      'sealed',
      'pending',
      'deletedAt',
    );
    const live = typeof pending !== 'string' && typeof deletedAt !== 'string';
    if (typeof id !== 'string' || typeof ws !== 'string' || typeof sealed !== 'string' || !live) {
      // Not a live recoverable key (a pending creation seals under whatever its node's first key
      // is, and is found by the next run once committed); one that was is gone since.
      return { kind: attempt === 0 ? 'none' : 'gone' };
    }
    workspaceId = ws;
    if (Vault.kekIdOf(sealed) === vault.sealingKekId) return { kind: 'current' };
    let rewrapped: string | undefined;
    try {
      rewrapped = vault.rewrap(sealed, { workspaceId: ws, keyId: id });
    } catch (error) {
      if (error instanceof VaultError) {
        return { kind: 'skipped', key: { keyId, workspaceId: ws, reason: error.reason } };
      }
      throw error;
    }
    // Unreachable while kekIdOf and rewrap parse alike; current is what rewrap means by it.
    if (rewrapped === undefined) return { kind: 'current' };
    if (decode(await redis.rewrapSealedV1(record, sealed, rewrapped)) === 'rewrapped') {
      return { kind: 'rewrapped' };
    }
  }
  return { kind: 'skipped', key: { keyId, workspaceId, reason: 'changing' } };
}

/**
 * Rotates every recoverable key of `redis` (each master of a cluster) to the vault's first key.
 * `progress` hears the number of records read so far after each batch of SCAN.
 */
export async function rotateVault(
  redis: RedisClient,
  vault: Vault,
  progress: (scanned: number) => void = () => {},
): Promise<RotationReport> {
  const report: RotationReport = {
    kekId: vault.sealingKekId,
    scanned: 0,
    rewrapped: 0,
    current: 0,
    skipped: [],
    gone: 0,
    webhooks: { scanned: 0, rewrapped: 0, current: 0, skipped: [] },
  };
  for await (const batch of scanKeys(redis, names.key('*'))) {
    const ids = batch.map(keyIdOfRecord).filter((id): id is string => id !== undefined);
    // A batch at a time: SCAN's COUNT bounds how many commands are in flight at once.
    const outcomes = await Promise.all(ids.map((id) => rotateOne(redis, vault, id)));
    for (const outcome of outcomes) {
      if (outcome.kind === 'none') continue;
      if (outcome.kind === 'gone') {
        report.gone++;
        continue;
      }
      report.scanned++;
      if (outcome.kind === 'skipped') report.skipped.push(outcome.key);
      else report[outcome.kind]++;
    }
    progress(report.scanned);
  }
  report.webhooks = await rotateWebhookSecrets(redis, vault);
  return report;
}
