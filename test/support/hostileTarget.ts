import fc from 'fast-check';
import type { Redis } from 'ioredis';
import { client } from './rpc';
import { TEST_VAULT } from './helpers';
import { startTopology, type Topology } from './topology';
import {
  adminRedis,
  closeRedis,
  diffKeyspace,
  dumpKeyspace,
  lastingWrites,
  writeWatcher,
  type WriteWatcher,
} from './keyspace';
import { rawRequest, type RawRequest, type RawResponse } from './rawHttp';
import { expectErrorEnvelope } from './envelope';
import { LIMIT_MAX } from './hostile';

/**
 * The node that test/integration/hostileInput.*.test.ts send hostile input to, and how they send
 * it. Against every operation of src/operations/registry.ts and GET /v1/liveness: whatever is sent, a
 * node answers within a deadline, never with a 5xx, always in the error envelope with the
 * security headers, and it writes nothing: the primary's keyspace notifications report no write
 * around a rejected request (a request that may write its own new keys is compared by DUMP).
 *
 * fast-check run counts are small on purpose: each file must stay well under a minute on two busy
 * cores. Each run is a fresh random sample, so coverage grows with every CI run.
 */
export const RUNS = 30;
export const MiB = 1024 * 1024;

export let topology: Topology;
export let base: string;
export let rootKey: string;
export let primary: Redis;
let watcher: WriteWatcher;
/** The fixtures every valid base input names, so that a missing check would really write. */
export const fixture = {
  apiId: '',
  keyId: '',
  key: '',
  ownerId: 'owner-1',
  permissionId: '',
  roleId: '',
  identityId: '',
  identityExternalId: 'fuzz-fixture-user',
  webhookId: '',
};

/** Starts one node with the fixtures before the file's tests, and stops it after them. */
export function useHostileTarget(): void {
  beforeAll(async () => {
    topology = await startTopology({
      nodes: 1,
      env: {
        // Management calls spend a token of a per-root-key bucket: fuzzing must not meet 429.
        KEYWARD_MANAGEMENT_RATE_LIMIT: String(LIMIT_MAX),
        // Parsing 600 KB bodies on a busy machine lags the event loop past the 100 ms default,
        // which would turn an input check into a 503: these files are about input, not timeouts.
        KEYWARD_REDIS_COMMAND_TIMEOUT_MS: '5000',
        // Webhooks seal their signing secrets: createWebhook needs a vault.
        ...TEST_VAULT,
      },
    });
    base = topology.nodes[0]!.url;
    rootKey = topology.rootKey;
    primary = await adminRedis(topology.primary.url);
    watcher = await writeWatcher(topology.primary.url);
    const admin = client(base, rootKey);
    fixture.apiId = (
      await admin.post<{ apiId: string }>('apis.createApi', { name: 'fuzz' })
    ).body.apiId;
    const created = await admin.post<{ keyId: string; key: string }>('keys.createKey', {
      apiId: fixture.apiId,
      ownerId: fixture.ownerId,
      meta: { plan: 'pro' },
      // consistent: the bucket lives in the primary, so a verification that should have been
      // refused but spent a token shows up in the keyspace dump.
      ratelimit: { type: 'consistent', limit: 1000, refillRate: 1, refillInterval: 60_000 },
    });
    expect(created.status).toBe(200);
    fixture.keyId = created.body.keyId;
    fixture.key = created.body.key;
    const permission = await admin.post<{ permissionId: string }>('permissions.createPermission', {
      name: 'fuzz.fixture',
    });
    fixture.permissionId = permission.body.permissionId;
    const role = await admin.post<{ roleId: string }>('permissions.createRole', {
      name: 'fuzz fixture',
    });
    fixture.roleId = role.body.roleId;
    const identity = await admin.post<{ identityId: string }>('identities.createIdentity', {
      externalId: fixture.identityExternalId,
    });
    fixture.identityId = identity.body.identityId;
    const webhook = await admin.post<{ webhookId: string }>('webhooks.createWebhook', {
      url: 'https://203.0.113.10/fuzz-fixture',
      events: ['key.credits.exhausted'],
    });
    expect(webhook.status).toBe(200);
    fixture.webhookId = webhook.body.webhookId;
  });

  afterAll(async () => {
    if (watcher) await watcher.close();
    if (primary) await closeRedis(primary);
    if (topology) await topology.stop();
  });
}

// ---------------------------------------------------------------------------------------------
// Sending and checking

export interface Wire extends RawRequest {
  /** What the request does wrong, for the report of a failing case. */
  label: string;
  /** Text the answer may echo (an id, a path): not a leak of internals. */
  echoes?: string[];
}

export function describeWire(wire: Wire): string {
  const body =
    wire.body === undefined
      ? ''
      : ` body(${wire.body.length} bytes)=${JSON.stringify(wire.body.toString().slice(0, 160))}`;
  return `${wire.method ?? 'GET'} ${wire.path.slice(0, 200)} [${wire.label}]${body}`;
}

/** fast-check prints a counterexample with this, instead of a 600 KB body. */
export function printable(wire: Wire): Wire {
  return Object.assign(wire, { [fc.toStringMethod]: () => describeWire(wire) });
}

export const auth = () => ({ authorization: `Bearer ${rootKey}` });

export function post(operation: string, body: string | Buffer, label: string, extra = {}): Wire {
  return printable({
    method: 'POST',
    path: `/v1/${operation}`,
    headers: { ...auth(), 'content-type': 'application/json', ...extra },
    body,
    label,
  });
}

export function getWire(operation: string, query: string, label: string, echoes?: string[]): Wire {
  return printable({
    method: 'GET',
    path: `/v1/${operation}${query === '' ? '' : `?${query}`}`,
    headers: auth(),
    label,
    ...(echoes ? { echoes } : {}),
  });
}

/**
 * Sends one request and checks its answer, and that the primary's keyspace did not move. A
 * failure names the request: method, path, what was wrong with it, the start of the body.
 */
export async function sendWithoutWrites(
  wire: Wire,
  check: (response: RawResponse) => void,
): Promise<RawResponse> {
  await watcher.start();
  return reported(wire, async (keep) => {
    const response = await rawRequest(base, wire);
    keep(response);
    check(response);
    const writes = await lastingWrites(watcher, primary);
    if (writes.length > 0) expect(writes).toEqual([]);
    return response;
  });
}

/**
 * What an accepted write's audit entry changes: the workspace's stream or one of its shards, and
 * the outbox registry that an override write's entry passes through.
 */
const AUDIT_LOG = /^~ keyward:(\{[^}]*\}:audit|audit:\{[^}]*\}|audit-outboxes)$/;

/**
 * Like sendWithoutWrites, but the request may be an accepted write of its own: new keys may
 * appear (a first use creates a rate-limit namespace) and the workspace's audit log may grow by
 * its entry. Only a change to, or the loss of, another existing key fails.
 */
export function sendWithoutChanges(
  wire: Wire,
  check: (response: RawResponse) => void,
): Promise<RawResponse> {
  return sendAndCompare(wire, check, (diff) =>
    diff.filter((line) => !line.startsWith('+') && !AUDIT_LOG.test(line)),
  );
}

/** `forbidden` picks, from the keyspace's diff, the lines that fail the request. */
async function sendAndCompare(
  wire: Wire,
  check: (response: RawResponse) => void,
  forbidden: (diff: string[]) => string[],
): Promise<RawResponse> {
  const before = await dumpKeyspace(primary);
  return reported(wire, async (keep) => {
    const response = await rawRequest(base, wire);
    keep(response);
    check(response);
    expect(forbidden(diffKeyspace(before, await dumpKeyspace(primary)))).toEqual([]);
    return response;
  });
}

/** Runs one exchange; a failure names the request and what came back. */
async function reported(
  wire: Wire,
  exchange: (keep: (response: RawResponse) => void) => Promise<RawResponse>,
): Promise<RawResponse> {
  let response: RawResponse | undefined;
  try {
    return await exchange((answer) => (response = answer));
  } catch (error) {
    const answer = response ? `${response.status} ${response.text.slice(0, 300)}` : 'no answer';
    const message = error instanceof Error ? error.message : String(error);
    throw new Error(`${describeWire(wire)}\n  → ${answer}\n${message}`);
  }
}

/** A 4xx in the envelope (exactly `status` when given). */
export function rejectedWith(status?: number, echoes: readonly string[] = []) {
  return (response: RawResponse) => {
    // Checked plainly, `expect` only for what fails (as in support/envelope.ts): this runs for
    // every hostile request.
    if (status !== undefined && response.status !== status) expect(response.status).toBe(status);
    if (!(response.status >= 400)) expect(response.status).toBeGreaterThanOrEqual(400);
    if (!(response.status < 500)) expect(response.status).toBeLessThan(500);
    expectErrorEnvelope(response.status, response.headers, response.text, echoes);
  };
}

export async function property(
  arbitrary: fc.Arbitrary<Wire>,
  check: (wire: Wire) => (r: RawResponse) => void,
  numRuns = RUNS,
) {
  await fc.assert(
    fc.asyncProperty(arbitrary, async (wire) => {
      await sendWithoutWrites(wire, check(wire));
    }),
    { numRuns },
  );
}
