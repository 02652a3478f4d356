import type { Redis } from 'ioredis';
import {
  startProcessTopology,
  startTopology,
  type ProcessTopology,
  type Topology,
} from '../support/topology';
import { client, type RpcResponse, type Client } from '../support/rpc';
import type { TestRedis } from '../support/redisServer';
import { startDelayProxy, type DelayProxy } from '../support/delayProxy';
import type { KeywardProcess } from '../support/keywardProcess';
import { adminRedis, closeRedis, diffKeyspace, snapshotKeyspace } from '../support/keyspace';
import { inspectWorkspace, rootKeyViolations } from '../support/invariants';
import { KeyRepair } from '../../src/store/keyRepair';
import { KeyStore } from '../../src/store/keyStore';
import { createRootKey } from '../../src/operations/rootKeys';
import { RootKeyStore } from '../../src/store/rootKeyStore';
import { sleep, eventually, hour } from '../support/helpers';

/**
 * Nothing acknowledged is lost, and nothing is left half done:
 * - the primary restarted (SIGTERM) or crashed (SIGKILL) with its append-only file keeps every
 *   acknowledged key, API and root key;
 * - nodes killed with SIGKILL in the middle of createKey, updateKey, deleteKey and deleteApi
 *   leave each record in its old or its new state, every index consistent with the records
 *   (checked directly in Redis, docs/redis.md), and an interrupted deleteApi that a second call
 *   finishes.
 */

const healthy = (url: string) => async () => {
  const response = await fetch(`${url}/v1/liveness`, { signal: AbortSignal.timeout(1_000) });
  const body = (await response.json()) as { services?: { invalidation?: { status?: string } } };
  return response.status === 200 && body.services?.invalidation?.status === 'subscribed';
};

describe('the primary restarts with its append-only file', () => {
  let topology: Topology;
  let primary: Redis;

  beforeAll(async () => {
    topology = await startTopology({
      nodes: 1,
      primaryAppendOnly: true,
      env: { KEYWARD_MANAGEMENT_RATE_LIMIT: '1000000', KEYWARD_REDIS_COMMAND_TIMEOUT_MS: '2000' },
    });
    primary = await adminRedis(topology.primary.url);
  });
  afterAll(async () => {
    if (primary) await closeRedis(primary);
    if (topology) await topology.stop();
  });

  test('every acknowledged key, API and root key is intact afterwards', async () => {
    const base = topology.nodes[0]!.url;
    const admin = client(base, topology.rootKey);
    const ws = topology.workspaceId;
    const store = new RootKeyStore(primary);
    const verifier = await createRootKey(store, {
      workspaceId: ws,
      permissions: ['api.*.verify_key'],
    });
    const stranger = await createRootKey(store, {});

    const apiIds: string[] = [];
    for (const name of ['a', 'b', 'c']) {
      apiIds.push((await admin.post<{ apiId: string }>('apis.createApi', { name })).body.apiId);
    }
    const keys: { keyId: string; key: string; apiId: string }[] = [];
    for (let i = 0; i < 30; i++) {
      const apiId = apiIds[i % 3]!;
      const created = await admin.post<{ keyId: string; key: string }>('keys.createKey', {
        apiId,
        name: `key-${i}`,
        ...(i % 2 === 0 ? { ownerId: `owner-${i % 4}` } : {}),
        ...(i % 5 === 0 ? { prefix: 'sk', meta: { i, nested: { list: [i] } } } : {}),
        ...(i % 3 === 0 ? { expires: Date.now() + hour } : {}),
        ratelimit:
          i % 2 === 0
            ? { type: 'consistent', limit: 50, refillRate: 1, refillInterval: hour }
            : { async: true, limit: 50, duration: hour },
      });
      expect(created.status).toBe(200);
      keys.push({ ...created.body, apiId });
    }
    // Updates, deletions, and one API deleted with its keys.
    for (const { keyId } of keys.slice(0, 6)) {
      expect(
        (await admin.post('keys.updateKey', { keyId, name: 'renamed', ownerId: 'moved' })).status,
      ).toBe(200);
    }
    expect(
      (await admin.post('keys.updateKey', { keyId: keys[6]!.keyId, enabled: false })).status,
    ).toBe(200);
    const deleted = [keys[7]!, keys[8]!];
    for (const { keyId } of deleted) {
      expect((await admin.post('keys.deleteKey', { keyId })).status).toBe(200);
    }
    expect((await admin.post('apis.deleteApi', { apiId: apiIds[2] })).status).toBe(200);
    // Spend tokens of the consistent buckets: bucket state lives in the primary too.
    const remainingBefore = new Map<string, number>();
    for (const { key, keyId, apiId } of keys) {
      if (apiId === apiIds[2]) continue;
      const verdict = await admin.post<{ ratelimit?: { remaining: number } }>('keys.verifyKey', {
        key,
      });
      if (verdict.body.ratelimit) remainingBefore.set(keyId, verdict.body.ratelimit.remaining);
    }

    // Everything a client can see (but the request ids, and a key's lastUsedAt, which the
    // node's flush writes on its own timer), before.
    const seenOf = (response: RpcResponse) => {
      const body = JSON.parse(JSON.stringify(response.body), (field: string, value: unknown) =>
        field === 'lastUsedAt' ? undefined : value,
      ) as { error?: { requestId?: string } };
      if (body.error) delete body.error.requestId;
      return [response.status, body];
    };
    const views = async () => {
      const seen: Record<string, unknown> = {};
      for (const { keyId } of keys) seen[keyId] = seenOf(await admin.get('keys.getKey', { keyId }));
      for (const apiId of apiIds) {
        seen[apiId] = [
          seenOf(await admin.get('apis.getApi', { apiId })),
          seenOf(await admin.get('apis.listKeys', { apiId })),
        ];
      }
      seen.apis = seenOf(await admin.get('apis.listApis', {}));
      return seen;
    };
    const before = await views();
    const dumped = await snapshotKeyspace(primary);

    await topology.primary.restart();
    await eventually(healthy(base), {
      what: 'the node to see the primary again',
      timeoutMs: 10_000,
    });
    await eventually(async () => (await primary.ping()) === 'PONG', {
      what: 'the admin client to reconnect',
      timeoutMs: 10_000,
    });

    // The keyspace holds the same, value for value.
    expect(diffKeyspace(dumped, await snapshotKeyspace(primary))).toEqual([]);
    expect(await views()).toEqual(before);
    const state = await inspectWorkspace(primary, ws, { exact: true });
    expect(state.violations).toEqual([]);
    expect(await rootKeyViolations(primary, ws)).toEqual([]);

    // Verification continues from the stored state: a consistent bucket kept its tokens.
    for (const { key, keyId, apiId } of keys) {
      const verdict = await admin.post<{ code: string; ratelimit?: { remaining: number } }>(
        'keys.verifyKey',
        { key },
      );
      const expected =
        deleted.some((d) => d.keyId === keyId) || apiId === apiIds[2]
          ? 'NOT_FOUND'
          : keyId === keys[6]!.keyId
            ? 'DISABLED'
            : 'VALID';
      expect([keyId, verdict.body.code]).toEqual([keyId, expected]);
      if (expected === 'VALID' && state.keys.get(keyId)?.rlType === 'consistent') {
        expect(verdict.body.ratelimit?.remaining).toBe(remainingBefore.get(keyId)! - 1);
      }
    }
    // Root keys still authenticate, with the same permissions.
    const scoped = client(base, verifier.key);
    expect((await scoped.post('keys.verifyKey', { key: keys[0]!.key })).body.code).toBe('VALID');
    expect((await scoped.post('apis.createApi', { name: 'no' })).status).toBe(403);
    const other = client(base, stranger.key);
    expect((await other.get('apis.getApi', { apiId: apiIds[0]! })).status).toBe(404);
    expect((await other.post('apis.createApi', { name: 'theirs' })).status).toBe(200);
  });
});

describe('crashes: nodes killed in the middle of writes, then the primary', () => {
  let topology: ProcessTopology;
  let primary: TestRedis;
  let proxy: DelayProxy | undefined;
  let nodes: KeywardProcess[] = [];
  let slowNode: KeywardProcess | undefined;
  let redis: Redis;
  let rootKey: string;
  let ws: string;

  beforeAll(async () => {
    // Persisted as in production (AOF, fsync every second): a SIGKILL keeps what Redis wrote.
    topology = await startProcessTopology({
      nodes: 2,
      primaryAppendOnly: true,
      env: {
        KEYWARD_MANAGEMENT_RATE_LIMIT: '1000000',
        // Under load, on a busy machine: a slow answer must not be mistaken for a dead Redis.
        KEYWARD_REDIS_COMMAND_TIMEOUT_MS: '5000',
      },
    });
    ({ primary, nodes, rootKey, workspaceId: ws } = topology);
    redis = await adminRedis(primary.url);
  }, 60_000);

  afterAll(async () => {
    await Promise.all([...nodes, ...(slowNode ? [slowNode] : [])].map((node) => node.dispose()));
    if (proxy) await proxy.close();
    if (redis) await closeRedis(redis);
    if (topology) await topology.stop();
  });

  const api = (node: KeywardProcess): Client => client(node.url, rootKey);

  async function createKeys(node: KeywardProcess, apiId: string, count: number): Promise<string[]> {
    const ids: string[] = [];
    const batch = 25;
    for (let i = 0; i < count; i += batch) {
      const created = await Promise.all(
        Array.from({ length: Math.min(batch, count - i) }, (_, j) =>
          api(node).post<{ keyId: string }>('keys.createKey', {
            apiId,
            ...(j % 3 === 0 ? { ownerId: 'doomed-owner' } : {}),
          }),
        ),
      );
      for (const { status, body } of created) {
        expect(status).toBe(200);
        ids.push(body.keyId);
      }
    }
    return ids;
  }

  test('deleteApi killed mid-purge leaves a marked API; calling it again finishes it', async () => {
    // A node whose primary is 2 × 3 ms away: the purge of 500 keys takes many round trips,
    // and the node is killed the moment the API is marked deleted.
    proxy = await startDelayProxy(primary.port, 3);
    slowNode = await topology.addNode({ primaryUrl: proxy.url });
    const fast = nodes[0]!;
    const apiId = (await api(fast).post<{ apiId: string }>('apis.createApi', { name: 'doomed' }))
      .body.apiId;
    const keyIds = await createKeys(fast, apiId, 500);
    const sample = (await api(fast).post<{ key: string }>('keys.createKey', { apiId })).body.key;
    expect((await api(fast).post('keys.verifyKey', { key: sample })).body.code).toBe('VALID');

    const record = `keyward:api:{${apiId}}`;
    const pending = api(slowNode)
      .post('apis.deleteApi', { apiId })
      .catch(() => 'no answer');
    const deadline = Date.now() + 10_000;
    while ((await redis.hexists(record, 'deletedAt')) !== 1) {
      if (Date.now() > deadline) throw new Error('the API was never marked deleted');
    }
    await slowNode.stop('SIGKILL');
    expect(await pending).toBe('no answer');

    // Marked, partly purged, and consistent.
    const marked = await inspectWorkspace(redis, ws);
    expect(marked.violations).toEqual([]);
    expect(marked.apis.get(apiId)?.deletedAt).toBeDefined();
    const left = marked.keyIndex.get(apiId)?.size ?? 0;
    expect(left).toBeGreaterThan(0);
    expect(left).toBeLessThanOrEqual(keyIds.length + 1);
    // From the mark on, the API and its keys are gone for every client.
    for (const node of nodes) {
      expect((await api(node).post('keys.verifyKey', { key: sample })).body.code).toBe('NOT_FOUND');
      expect((await api(node).get('apis.getApi', { apiId })).status).toBe(404);
      expect((await api(node).get('apis.listKeys', { apiId })).status).toBe(404);
      expect((await api(node).post('keys.createKey', { apiId })).status).toBe(404);
      const survivor = [...(marked.keyIndex.get(apiId)?.keys() ?? [])][0]!;
      expect((await api(node).get('keys.getKey', { keyId: survivor })).status).toBe(404);
    }

    // A second call finishes the job; a third finds nothing.
    expect((await api(nodes[1]!).post('apis.deleteApi', { apiId })).status).toBe(200);
    const after = await inspectWorkspace(redis, ws);
    expect(after.violations).toEqual([]);
    expect(after.apis.has(apiId)).toBe(false);
    expect(after.keyIndex.has(apiId)).toBe(false);
    expect([...after.ownerIndex.keys()].filter((name) => name.startsWith(apiId))).toEqual([]);
    expect([...after.keys.values()].filter((key) => key.apiId === apiId)).toEqual([]);
    expect((await api(nodes[1]!).post('apis.deleteApi', { apiId })).status).toBe(404);
  });

  test('updateKey with remaining, killed mid-write, leaves the old or the new key', async () => {
    // A new `remaining` is part of the one atomic record write (the credits hash applies it when
    // next used), so no instant of a kill can leave new credits with an old name or the reverse.
    if (!slowNode) throw new Error('the deleteApi test starts the slow node');
    const fast = nodes[0]!;
    const apiId = (await api(fast).post<{ apiId: string }>('apis.createApi', { name: 'credits' }))
      .body.apiId;
    const outcomes = new Set<string>();
    for (const delayMs of [0, 2, 4, 6, 8, 12]) {
      if (!slowNode.running()) await slowNode.start();
      const created = await api(fast).post<{ keyId: string; key: string }>('keys.createKey', {
        apiId,
        name: 'before',
        remaining: 100,
      });
      expect(created.status).toBe(200);
      const { keyId, key } = created.body;
      // Spend one, so the credits hash holds an applied state the update must replace whole.
      expect(
        (await api(fast).post<{ remaining: number }>('keys.verifyKey', { key })).body.remaining,
      ).toBe(99);
      const pending = api(slowNode)
        .post('keys.updateKey', { keyId, remaining: 5, name: 'after' })
        .catch(() => 'no answer');
      await sleep(delayMs);
      await slowNode.stop('SIGKILL');
      const answer = await pending;
      const got = await api(fast).get<{ name: string; remaining: number }>('keys.getKey', {
        keyId,
      });
      const state = `${got.body.name}/${got.body.remaining}`;
      if (answer === 'no answer') expect(['before/99', 'after/5']).toContain(state);
      else expect(state).toBe('after/5');
      outcomes.add(state);
    }
    expect((await inspectWorkspace(redis, ws)).violations).toEqual([]);
  });

  test('SIGKILL under load: every record is old or new, every index consistent, nothing acknowledged lost', async () => {
    interface KeyState {
      deleted: boolean;
      name: string;
      ownerId?: string;
      enabled: boolean;
    }
    interface Tracked {
      keyId: string;
      key: string;
      apiId: string;
      worker: number;
      /** One state when every write was answered; the old and the new one after an unanswered write. */
      candidates: KeyState[];
    }
    const up = [true, true];
    const apiIds: string[] = [];
    for (const name of ['load-1', 'load-2']) {
      apiIds.push(
        (await api(nodes[0]!).post<{ apiId: string }>('apis.createApi', { name })).body.apiId,
      );
    }
    const doomed: string[] = [];
    for (const name of ['doomed-1', 'doomed-2']) {
      const apiId = (await api(nodes[1]!).post<{ apiId: string }>('apis.createApi', { name })).body
        .apiId;
      await createKeys(nodes[1]!, apiId, 150);
      doomed.push(apiId);
    }
    const tracked: Tracked[] = [];
    const unansweredCreates = new Set<string>();
    let answered = 0;
    let unanswered = 0;

    /** One request; undefined when no complete answer came (the node died, or a 5xx). */
    async function attempt(
      worker: number,
      send: (c: Client) => Promise<RpcResponse>,
    ): Promise<RpcResponse | undefined> {
      const candidates = [0, 1].filter((i) => up[i]);
      const index = candidates[(worker + answered + unanswered) % candidates.length] ?? 0;
      try {
        const response = await send(api(nodes[index]!));
        if (response.status >= 500) throw new Error(`status ${response.status}`);
        answered++;
        return response;
      } catch {
        unanswered++;
        return undefined;
      }
    }

    let running = true;
    const owners = [undefined, 'alice', 'bob'];
    const workers = Array.from({ length: 8 }, async (_, worker) => {
      for (let n = 0; running; n++) {
        const mine = tracked.filter(
          (t) => t.worker === worker && t.candidates.length === 1 && !t.candidates[0]!.deleted,
        );
        const dice = Math.random();
        if (dice < 0.4 || mine.length === 0) {
          const name = `w${worker}-${n}`;
          const ownerId = owners[n % 3];
          const apiId = apiIds[n % 2]!;
          const response = await attempt(worker, (c) =>
            c.post<{ keyId: string; key: string }>('keys.createKey', {
              apiId,
              name,
              ...(ownerId ? { ownerId } : {}),
            }),
          );
          if (!response) unansweredCreates.add(name);
          else {
            expect(response.status).toBe(200);
            const { keyId, key } = response.body as { keyId: string; key: string };
            tracked.push({
              keyId,
              key,
              apiId,
              worker,
              candidates: [
                { deleted: false, name, ...(ownerId ? { ownerId } : {}), enabled: true },
              ],
            });
          }
          continue;
        }
        const target = mine[n % mine.length]!;
        const old = target.candidates[0]!;
        if (dice < 0.8) {
          const ownerId = owners[(n + worker) % 3];
          const next: KeyState = {
            deleted: false,
            name: `${old.name}-u${n}`,
            ...(ownerId ? { ownerId } : {}),
            enabled: n % 4 !== 0,
          };
          const response = await attempt(worker, (c) =>
            c.post('keys.updateKey', {
              keyId: target.keyId,
              name: next.name,
              ownerId: ownerId ?? null,
              enabled: next.enabled,
            }),
          );
          if (!response) target.candidates = [old, next];
          else {
            expect(response.status).toBe(200);
            target.candidates = [next];
          }
        } else if (dice < 0.93) {
          const response = await attempt(worker, (c) =>
            c.post('keys.deleteKey', { keyId: target.keyId }),
          );
          const gone: KeyState = { ...old, deleted: true };
          if (!response) target.candidates = [old, gone];
          else {
            expect(response.status).toBe(200);
            target.candidates = [gone];
          }
        } else {
          await attempt(worker, (c) => c.post('keys.verifyKey', { key: target.key }));
        }
      }
    });

    // The killer: each node in turn, once right after it was sent a deleteApi.
    const kill = async (index: number, apiId?: string) => {
      const pending = apiId
        ? api(nodes[index]!)
            .post('apis.deleteApi', { apiId })
            .catch(() => undefined)
        : undefined;
      await sleep(apiId ? 8 : 0);
      up[index] = false;
      await nodes[index]!.stop('SIGKILL');
      await pending;
      await sleep(150);
      await nodes[index]!.start();
      up[index] = true;
    };
    try {
      await sleep(400);
      await kill(0, doomed[0]);
      await sleep(300);
      await kill(1, doomed[1]);
      await sleep(200);
    } finally {
      running = false;
      await Promise.all(workers);
    }
    expect(answered).toBeGreaterThan(100);

    // 1. The records as they are, right after the crashes: consistent.
    const crashed = await inspectWorkspace(redis, ws);
    expect(crashed.violations).toEqual([]);
    // What the killed nodes left half done across slots, finished or undone as any node's repair
    // does (it waits 30 s for an entry to age; a test need not).
    const keyStore = new KeyStore(redis, () => undefined);
    await new KeyRepair(redis, keyStore, { intervalMs: 60_000, staleAfterMs: 0 }).sweep();

    // 2. An interrupted deleteApi is finished by calling it again.
    for (const apiId of doomed) {
      const status = (await api(nodes[0]!).post('apis.deleteApi', { apiId })).status;
      expect([apiId, status]).toEqual([apiId, crashed.apis.has(apiId) ? 200 : 404]);
    }
    const state = await inspectWorkspace(redis, ws, { exact: true });
    expect(state.violations).toEqual([]);
    for (const apiId of doomed) {
      expect(state.apis.has(apiId)).toBe(false);
      expect([...state.keys.values()].filter((key) => key.apiId === apiId)).toEqual([]);
    }

    // 3. Every key is in one of the states its writes allow.
    const matches = (record: Record<string, string> | undefined, candidate: KeyState) =>
      candidate.deleted
        ? record === undefined
        : record !== undefined &&
          record.name === candidate.name &&
          record.ownerId === candidate.ownerId &&
          record.enabled === (candidate.enabled ? '1' : '0');
    for (const t of tracked) {
      const record = state.keys.get(t.keyId);
      if (!t.candidates.some((candidate) => matches(record, candidate))) {
        throw new Error(
          `key ${t.keyId}: ${JSON.stringify(record)} is none of ${JSON.stringify(t.candidates)}`,
        );
      }
    }
    // A key nobody was told about can only come from a createKey that got no answer.
    const known = new Set(tracked.map((t) => t.keyId));
    for (const [keyId, record] of state.keys) {
      if (!apiIds.includes(record.apiId ?? '')) continue;
      if (!known.has(keyId))
        expect([keyId, unansweredCreates.has(record.name ?? '')]).toEqual([keyId, true]);
    }

    // 4. Totals: listKeys = the index = the records, for the API and for each owner.
    for (const apiId of apiIds) {
      const records = [...state.keys.values()].filter((key) => key.apiId === apiId);
      const listed = await api(nodes[1]!).get<{ total: number }>('apis.listKeys', {
        apiId,
        limit: 1,
      });
      expect([apiId, listed.body.total, state.keyIndex.get(apiId)?.size ?? 0]).toEqual([
        apiId,
        records.length,
        records.length,
      ]);
      for (const ownerId of ['alice', 'bob']) {
        const owned = records.filter((key) => key.ownerId === ownerId).length;
        const page = await api(nodes[0]!).get<{ total: number }>('apis.listKeys', {
          apiId,
          ownerId,
          limit: 1,
        });
        expect([apiId, ownerId, page.body.total]).toEqual([apiId, ownerId, owned]);
      }
    }

    // 5. Both nodes, restarted or not, verify what the primary holds.
    for (const t of tracked.filter((_, i) => i % 5 === 0)) {
      const record = state.keys.get(t.keyId);
      const expected =
        record === undefined ? 'NOT_FOUND' : record.enabled === '1' ? 'VALID' : 'DISABLED';
      for (const node of nodes) {
        const verdict = await api(node).post<{ code: string }>('keys.verifyKey', { key: t.key });
        expect([t.keyId, verdict.body.code]).toEqual([t.keyId, expected]);
      }
    }
  }, 60_000);

  test('the primary killed with SIGKILL comes back from its AOF with every acknowledged write', async () => {
    // The last write before the crash, acknowledged just now.
    const apiId = (await api(nodes[0]!).post<{ apiId: string }>('apis.createApi', { name: 'last' }))
      .body.apiId;
    const last = (
      await api(nodes[0]!).post<{ keyId: string; key: string }>('keys.createKey', { apiId })
    ).body;
    const before = await snapshotKeyspace(redis);
    await primary.kill('SIGKILL');
    await primary.start();
    for (const node of nodes) {
      await eventually(healthy(node.url), { what: 'the node to reconnect', timeoutMs: 15_000 });
    }
    await eventually(async () => (await redis.ping()) === 'PONG', {
      what: 'the admin client to reconnect',
      timeoutMs: 10_000,
    });
    expect(diffKeyspace(before, await snapshotKeyspace(redis))).toEqual([]);
    expect((await inspectWorkspace(redis, ws)).violations).toEqual([]);
    expect((await api(nodes[1]!).post('keys.verifyKey', { key: last.key })).body.code).toBe(
      'VALID',
    );
    expect((await api(nodes[1]!).post('keys.createKey', { apiId })).status).toBe(200);
  });
});
