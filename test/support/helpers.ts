import type { Client } from './rpc';
import type { AuditEntry } from '../../src/domain/audit';

/** The small things every suite needs; one definition each, so that they cannot drift apart. */

export const hour = 3_600_000;

export const sleep = (ms: number): Promise<void> =>
  new Promise((resolve) => setTimeout(resolve, ms));

export interface EventuallyOptions {
  /** Named in the error when the condition is not reached. */
  what?: string;
  /** Measured from the first check; default 5 s. */
  timeoutMs?: number;
  /** Pause between two checks; default 25 ms. */
  intervalMs?: number;
  /**
   * `return`: give up quietly with `false`, for a caller whose own `expect` right after shows
   * what was there instead (a diff says more than "timed out").
   */
  onTimeout?: 'throw' | 'return';
}

/**
 * Polls `check` until it holds: what a node learns over pub/sub, a process's log, a Redis that
 * restarts all arrive a moment later. A check that throws counts as not yet (a server that is
 * still starting refuses connections); the last error is named if time runs out.
 */
export async function eventually(
  check: () => boolean | Promise<boolean>,
  options: EventuallyOptions = {},
): Promise<boolean> {
  const { what = 'condition', timeoutMs = 5_000, intervalMs = 25, onTimeout = 'throw' } = options;
  const started = Date.now();
  let lastError: unknown;
  for (;;) {
    try {
      if (await check()) return true;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() - started > timeoutMs) break;
    await sleep(intervalMs);
  }
  if (onTimeout === 'return') return false;
  const cause = lastError === undefined ? '' : ` (last error: ${String(lastError)})`;
  throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}${cause}`);
}

/** keys.createKey in `apiId`, which must succeed; `body` adds or overrides fields. */
export async function createKey(
  api: Client,
  apiId: string,
  body: Record<string, unknown> = {},
): Promise<{ keyId: string; key: string }> {
  const response = await api.post<{ keyId: string; key: string }>('keys.createKey', {
    apiId,
    ...body,
  });
  expect(response.status).toBe(200);
  return response.body;
}

/** An audit entry for tests that call a store's writes directly. */
export function testAudit(targetId = 'test'): AuditEntry {
  return {
    rootKeyId: 'rk_test',
    operation: 'test.write',
    requestId: 'req_test',
    targetType: 'key',
    targetId,
    summary: {},
  };
}

/**
 * KEYWARD_VAULT_KEYS of a test node that seals (recoverable keys, webhook secrets): a fixed key,
 * never one of a deployment's.
 */
export const TEST_VAULT = { KEYWARD_VAULT_KEYS: `test:${Buffer.alloc(32, 7).toString('base64')}` };
