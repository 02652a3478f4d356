/**
 * Credits shared by an identity (issue 26, part 1): every key of an identity spends from its
 * pool, with the key's own credits and its limits all or nothing, exactly across nodes; the pool
 * refills as a key's credits do; identities.updateCredits changes it atomically with
 * verifications; both dialects write and answer it.
 */
import Redis from 'ioredis';
import { names } from '../../src/store/names';
import { runCommand, runCommandJson } from '../support/cliProcess';
import { createKey, hour } from '../support/helpers';
import { client, type Client } from '../support/rpc';
import { startTopology, type Topology } from '../support/topology';

let topology: Topology;
let nodeA: Client;
let nodeB: Client;
let apiId: string;

beforeAll(async () => {
  topology = await startTopology({ nodes: 2 });
  nodeA = client(topology.nodes[0]!.url, topology.rootKey);
  nodeB = client(topology.nodes[1]!.url, topology.rootKey);
  apiId = (await nodeA.post<{ apiId: string }>('apis.createApi', { name: 'pools' })).body.apiId;
});
afterAll(() => topology?.stop());

interface Verdict {
  code: string;
  remaining?: number;
  identity?: { id: string; remaining?: number };
}

const verify = async (node: Client, key: string, extra: Record<string, unknown> = {}) =>
  (await node.post<Verdict>('keys.verifyKey', { key, ...extra })).body;

async function v2(node: Client, path: string, body: unknown) {
  const url = (node === nodeA ? topology.nodes[0]! : topology.nodes[1]!).url;
  const response = await fetch(`${url}/v2/${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${topology.rootKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

test('keys of an identity spend its pool, on every node, until it is empty', async () => {
  const created = await nodeA.post<{ identityId: string }>('identities.createIdentity', {
    externalId: 'acme-pool',
    remaining: 3,
  });
  expect(created.status).toBe(200);
  const first = await createKey(nodeA, apiId, { externalId: 'acme-pool' });
  const second = await createKey(nodeA, apiId, { externalId: 'acme-pool' });
  const spent = [
    await verify(nodeA, first.key),
    await verify(nodeB, second.key),
    await verify(nodeB, first.key),
    await verify(nodeA, second.key),
  ];
  expect(spent.map((v) => [v.code, v.identity?.remaining])).toEqual([
    ['VALID', 2],
    ['VALID', 1],
    ['VALID', 0],
    ['USAGE_EXCEEDED', 0],
  ]);
  // The keys have no credits of their own: `remaining` stays the key's, absent.
  expect(spent[0]!.remaining).toBeUndefined();
  const identity = await nodeB.get<{ remaining?: number }>('identities.getIdentity', {
    identityId: created.body.identityId,
  });
  expect(identity.body.remaining).toBe(0);
});

test('a pool is exact under concurrent verifications from two nodes', async () => {
  await nodeA.post('identities.createIdentity', { externalId: 'busy-pool', remaining: 40 });
  const keys = await Promise.all(
    [0, 1, 2, 3].map(() => createKey(nodeA, apiId, { externalId: 'busy-pool' })),
  );
  const verdicts = await Promise.all(
    Array.from({ length: 60 }, (_, i) => verify(i % 2 ? nodeA : nodeB, keys[i % 4]!.key)),
  );
  expect(verdicts.filter((v) => v.code === 'VALID')).toHaveLength(40);
  expect(verdicts.filter((v) => v.code === 'USAGE_EXCEEDED')).toHaveLength(20);
});

test("a key's own credits and its identity's pool are spent together or not at all", async () => {
  await nodeA.post('identities.createIdentity', { externalId: 'both', remaining: 5 });
  const key = await createKey(nodeA, apiId, { externalId: 'both', remaining: 2 });
  const pool = async () =>
    (await nodeA.get<{ remaining: number }>('identities.getIdentity', { externalId: 'both' })).body
      .remaining;
  const one = await verify(nodeA, key.key, { remaining: { cost: 2 } });
  expect([one.code, one.remaining, one.identity?.remaining]).toEqual(['VALID', 0, 3]);
  // The key's credits refuse: the pool's were taken first and are given back.
  const refused = await verify(nodeB, key.key);
  expect([refused.code, refused.remaining, refused.identity?.remaining]).toEqual([
    'USAGE_EXCEEDED',
    0,
    3,
  ]);
  expect(await pool()).toBe(3);
  // The pool refuses: the key's credits are not touched.
  await nodeA.post('keys.updateRemaining', { keyId: key.keyId, op: 'set', value: 10 });
  const tooMuch = await verify(nodeA, key.key, { remaining: { cost: 4 } });
  expect([tooMuch.code, tooMuch.identity?.remaining]).toEqual(['USAGE_EXCEEDED', 3]);
  expect(
    (await nodeA.get<{ remaining: number }>('keys.getKey', { keyId: key.keyId })).body.remaining,
  ).toBe(10);
});

test('a rate limit that refuses spends nothing of the pool', async () => {
  await nodeA.post('identities.createIdentity', { externalId: 'limited', remaining: 10 });
  const key = await createKey(nodeA, apiId, {
    externalId: 'limited',
    ratelimit: { type: 'consistent', limit: 1, refillRate: 1, refillInterval: hour },
  });
  expect((await verify(nodeA, key.key)).identity?.remaining).toBe(9);
  const limited = await verify(nodeB, key.key);
  expect(limited.code).toBe('RATE_LIMITED');
  expect(
    (await nodeA.get<{ remaining: number }>('identities.getIdentity', { externalId: 'limited' }))
      .body.remaining,
  ).toBe(9);
});

test('identities.updateCredits sets, increments and decrements a pool; set null drops it', async () => {
  await nodeA.post('identities.createIdentity', { externalId: 'topped' });
  const key = await createKey(nodeA, apiId, { externalId: 'topped' });
  const update = (body: Record<string, unknown>) =>
    nodeA.post<{ remaining?: number | null; error?: { code: string } }>(
      'identities.updateCredits',
      {
        externalId: 'topped',
        ...body,
      },
    );
  // No pool yet: only a set gives one.
  expect((await update({ op: 'increment', value: 1 })).status).toBe(412);
  expect((await update({ op: 'set', value: 2 })).body).toEqual({ remaining: 2 });
  expect((await update({ op: 'increment', value: 3 })).body).toEqual({ remaining: 5 });
  expect((await update({ op: 'decrement', value: 1 })).body).toEqual({ remaining: 4 });
  expect((await update({ op: 'decrement', value: 9 })).status).toBe(400);
  expect((await verify(nodeB, key.key)).identity?.remaining).toBe(3);
  // v2: a decrement past zero leaves zero, `set` null drops the pool.
  const v2Update = (body: Record<string, unknown>) =>
    v2(nodeB, 'identities.updateCredits', { identity: 'topped', ...body });
  expect(await v2Update({ operation: 'decrement', value: 7 })).toMatchObject({
    status: 200,
    body: { data: { remaining: 0 } },
  });
  expect((await verify(nodeA, key.key)).code).toBe('USAGE_EXCEEDED');
  expect(await v2Update({ operation: 'set', value: null })).toMatchObject({
    status: 200,
    body: { data: { remaining: null } },
  });
  const free = await verify(nodeA, key.key);
  expect([free.code, free.identity?.remaining]).toEqual(['VALID', undefined]);
  expect(await v2Update({ operation: 'increment', value: 1 })).toMatchObject({ status: 400 });
});

test('v2 writes and answers the pool in the shape of a key’s credits, and it refills', async () => {
  const created = await v2(nodeA, 'identities.createIdentity', {
    externalId: 'refilled',
    credits: { remaining: 2, refill: { interval: 'daily', amount: 50 } },
  });
  expect(created.status).toBe(200);
  const identityId = (created.body.data as { identityId: string }).identityId;
  const read = async () =>
    (await v2(nodeB, 'identities.getIdentity', { identity: identityId })).body.data as Record<
      string,
      unknown
    >;
  expect((await read()).credits).toEqual({
    remaining: 2,
    refill: { interval: 'daily', amount: 50 },
  });
  const key = await createKey(nodeA, apiId, { externalId: 'refilled' });
  const answer = await v2(nodeA, 'keys.verifyKey', { key: key.key });
  expect(answer.body.data).toMatchObject({
    valid: true,
    identity: { id: identityId, externalId: 'refilled', credits: 1 },
  });
  // A day passes for the pool: its last refill moved back by one day, as the clock would.
  const admin = new Redis(topology.primary.url);
  try {
    const pool = names.credits(identityId);
    const last = Number(await admin.hget(pool, 'lastRefillAt'));
    await admin.hset(pool, 'lastRefillAt', String(last - 86_400_000), 'remaining', '0');
  } finally {
    admin.disconnect();
  }
  expect((await verify(nodeB, key.key)).identity?.remaining).toBe(49);
  // updateIdentity changes the refill and the count in one write; the key sees both.
  const updated = await v2(nodeA, 'identities.updateIdentity', {
    identity: 'refilled',
    credits: { remaining: 7, refill: null },
  });
  expect((updated.body.data as Record<string, unknown>).credits).toEqual({ remaining: 7 });
  expect((await verify(nodeA, key.key)).identity?.remaining).toBe(6);
  // A refill without a pool to refill is the operation's 400, named as v2 names it.
  const orphan = await v2(nodeA, 'identities.createIdentity', {
    externalId: 'no-pool',
    credits: { remaining: null, refill: { interval: 'daily', amount: 5 } },
  });
  expect(orphan.status).toBe(400);
  expect(JSON.stringify(orphan.body)).toContain('credits.refill');
});

test('deleting an identity deletes its pool', async () => {
  const { body } = await nodeA.post<{ identityId: string }>('identities.createIdentity', {
    externalId: 'gone',
    remaining: 3,
  });
  const key = await createKey(nodeA, apiId, { externalId: 'gone' });
  await verify(nodeA, key.key);
  const admin = new Redis(topology.primary.url);
  try {
    expect(await admin.exists(names.credits(body.identityId))).toBe(1);
    expect(
      (await nodeA.post('identities.deleteIdentity', { identityId: body.identityId })).status,
    ).toBe(200);
    expect(await admin.exists(names.credits(body.identityId))).toBe(0);
  } finally {
    admin.disconnect();
  }
});

test('keyward identities credits shows the pool and changes it as identities.updateCredits does', async () => {
  await nodeA.post('identities.createIdentity', { externalId: 'cli-pool' });
  const env = { KEYWARD_REDIS_URL: topology.primary.url, LOG_LEVEL: 'silent' };
  const args = ['identities', 'credits', '--workspace', topology.workspaceId];
  const none = await runCommand([...args, 'cli-pool'], env);
  expect([none.code, none.stdout.trim()]).toEqual([0, 'cli-pool: no credit pool']);
  // Take before there is a pool: the operation's 412, as the API answers it.
  const early = await runCommand([...args, '--take', '1', 'cli-pool'], env);
  expect(early.code).not.toBe(0);
  expect(early.stderr).toContain('has no credit pool');
  expect(await runCommandJson([...args, '--set', '40', 'cli-pool'], env)).toMatchObject({
    externalId: 'cli-pool',
    remaining: 40,
  });
  await runCommand([...args, '--add', '5', 'cli-pool'], env);
  const taken = await runCommand([...args, '--take', '3', 'cli-pool'], env);
  expect(taken.stdout.trim()).toBe('cli-pool: 42 credits');
  const both = await runCommand([...args, '--add', '1', '--take', '1', 'cli-pool'], env);
  expect(both.code).not.toBe(0);
  // Verifications see what the CLI wrote.
  const key = await createKey(nodeA, apiId, { externalId: 'cli-pool' });
  expect((await verify(nodeB, key.key)).identity?.remaining).toBe(41);
});
