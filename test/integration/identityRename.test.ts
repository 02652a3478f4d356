import type { Redis } from 'ioredis';
import { KeyRepair } from '../../src/store/keyRepair';
import { KeyStore } from '../../src/store/keyStore';
import { runCommand, runCommandJson } from '../support/cliProcess';
import { eventually } from '../support/helpers';
import { inspectWorkspace } from '../support/invariants';
import { adminRedis, closeRedis } from '../support/keyspace';
import { client, type Client } from '../support/rpc';
import { startNodeProcess, startTopology, type Topology } from '../support/topology';

/**
 * Renaming an identity (issue: unkeyed/unkey#4432): v2's updateIdentity with `externalId` beside
 * `identity`, v1's with `newExternalId`. Its keys stay linked, the old name is free, a taken one is
 * 409; and a node killed between the rename's steps (they span slots, docs/redis.md) leaves
 * nothing a reader sees half done, which the repair finishes or undoes.
 */
let topology: Topology;
let admin: Redis;
let v1: Client;
let base: string;

beforeAll(async () => {
  topology = await startTopology({ nodes: 1 });
  base = topology.nodes[0]!.url;
  admin = await adminRedis(topology.primary.url);
  v1 = client(base, topology.rootKey);
});

afterAll(async () => {
  if (admin) await closeRedis(admin);
  await topology?.stop();
});

interface V2Answer<T> {
  status: number;
  body: { data?: T; error?: { type: string; status: number; errors?: unknown[] } };
}

async function v2<T = Record<string, unknown>>(route: string, body: unknown): Promise<V2Answer<T>> {
  const response = await fetch(`${base}/v2/${route}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${topology.rootKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as V2Answer<T>['body'] };
}

let apiId: string;
beforeAll(async () => {
  apiId = (await v1.post<{ apiId: string }>('apis.createApi', { name: 'renames' })).body.apiId;
});

const identityOf = async (externalId: string) =>
  v2<{ id: string; externalId: string; meta: object }>('identities.getIdentity', {
    identity: externalId,
  });

test('v2: renamed with its meta in one call; its keys follow it, the old name is free', async () => {
  const { identityId } = (
    await v2<{ identityId: string }>('identities.createIdentity', { externalId: 'acme_old' })
  ).body.data!;
  const { keyId, key } = (
    await v1.post<{ keyId: string; key: string }>('keys.createKey', {
      apiId,
      externalId: 'acme_old',
    })
  ).body;

  const renamed = await v2('identities.updateIdentity', {
    identity: 'acme_old',
    externalId: 'acme.new',
    meta: { plan: 'pro' },
  });
  expect(renamed).toMatchObject({
    status: 200,
    body: { data: { id: identityId, externalId: 'acme.new', meta: { plan: 'pro' } } },
  });
  expect((await identityOf('acme.new')).body.data).toMatchObject({ id: identityId });
  expect((await identityOf('acme_old')).status).toBe(404);

  // Its key, by every read: linked by id, so the new name shows at once.
  const got = await v2<{ identity: { externalId: string } }>('keys.getKey', { keyId });
  expect(got.body.data!.identity).toMatchObject({ id: identityId, externalId: 'acme.new' });
  const verified = await v2<{ identity: { externalId: string } }>('keys.verifyKey', { key });
  expect(verified.body.data!.identity).toMatchObject({ externalId: 'acme.new' });
  const listed = await v2<{ keyId: string }[]>('apis.listKeys', { apiId, externalId: 'acme.new' });
  expect(listed.body.data!.map((k) => k.keyId)).toEqual([keyId]);

  // The old name is anyone's again.
  const reused = await v2<{ identityId: string }>('identities.createIdentity', {
    externalId: 'acme_old',
  });
  expect(reused.status).toBe(200);
  expect(reused.body.data!.identityId).not.toBe(identityId);

  // Keys made under either name are listed by their identity's name now, and by nothing else.
  const after = (
    await v1.post<{ keyId: string }>('keys.createKey', { apiId, externalId: 'acme.new' })
  ).body.keyId;
  const mine = (
    await v1.post<{ keyId: string }>('keys.createKey', { apiId, externalId: 'acme_old' })
  ).body.keyId;
  const listedBy = async (externalId: string) =>
    (await v2<{ keyId: string }[]>('apis.listKeys', { apiId, externalId })).body
      .data!.map((k) => k.keyId)
      .sort();
  expect(await listedBy('acme.new')).toEqual([keyId, after].sort());
  expect(await listedBy('acme_old')).toEqual([mine]);
  expect((await inspectWorkspace(admin, topology.workspaceId, { exact: true })).violations).toEqual(
    [],
  );
});

test('a taken name is 409 and changes nothing; the same name is no change; v1 renames by newExternalId', async () => {
  await v2('identities.createIdentity', { externalId: 'taken_a' });
  const { identityId: b } = (
    await v2<{ identityId: string }>('identities.createIdentity', { externalId: 'taken_b' })
  ).body.data!;
  const refused = await v2('identities.updateIdentity', {
    identity: 'taken_b',
    externalId: 'taken_a',
    meta: { lost: true },
  });
  expect(refused.status).toBe(409);
  expect(refused.body.error!.type).toBe(
    'https://unkey.com/docs/errors/unkey/data/identity_already_exists',
  );
  expect((await identityOf('taken_b')).body.data).toMatchObject({ id: b, meta: {} });
  expect((await admin.hget(`keyward:identity:{${b}}`, 'renamingTo')) ?? 'none').toBe('none');

  const same = await v2('identities.updateIdentity', { identity: b, externalId: 'taken_b' });
  expect(same).toMatchObject({ status: 200, body: { data: { id: b, externalId: 'taken_b' } } });

  const byV1 = await v1.post<{ id: string; externalId: string }>('identities.updateIdentity', {
    identityId: b,
    newExternalId: 'taken_b_renamed',
  });
  expect(byV1.status).toBe(200);
  expect(byV1.body).toMatchObject({ id: b, externalId: 'taken_b_renamed' });

  // One audit entry for the rename, naming both names.
  const entries = await v1.get<{
    entries: { summary: { externalId?: string; newExternalId?: string; fields?: string[] } }[];
  }>('auditLogs.list', { operation: 'identities.updateIdentity', targetId: b, limit: '10' });
  expect(entries.body.entries.map((entry) => entry.summary)).toContainEqual({
    externalId: 'taken_b',
    newExternalId: 'taken_b_renamed',
    fields: ['newExternalId'],
  });
});

test('v2 holds the new name to v2’s externalId bounds, naming the field as v2 does', async () => {
  await v2('identities.createIdentity', { externalId: 'bounded' });
  for (const externalId of ['', 'with space', 'x'.repeat(256)]) {
    const refused = await v2('identities.updateIdentity', { identity: 'bounded', externalId });
    expect({ externalId, status: refused.status }).toEqual({ externalId, status: 400 });
    expect(refused.body.error!.errors).toEqual([
      expect.objectContaining({ location: 'body.externalId' }),
    ]);
  }
});

describe('a node killed between the steps of a rename', () => {
  /** What any node's repair does, without waiting for a journal entry to age. */
  const repair = () =>
    new KeyRepair(admin, new KeyStore(admin, () => undefined), {
      intervalMs: 60_000,
      staleAfterMs: 0,
    }).sweep();

  async function halted(point: string, body: unknown): Promise<void> {
    const node = await startNodeProcess({
      primaryUrl: topology.primary.url,
      env: { KEYWARD_FAULT_HALT_AT: point },
    });
    try {
      const answer = await client(node.url, topology.rootKey)
        .post('identities.updateIdentity', body)
        .then(
          (response) => `answered ${response.status}`,
          () => 'no answer',
        );
      expect({ point, answer }).toEqual({ point, answer: 'no answer' });
      await eventually(async () => !node.running(), { what: 'the node to die', timeoutMs: 5_000 });
    } finally {
      await node.dispose();
    }
  }

  const consistent = async () =>
    expect(
      (await inspectWorkspace(admin, topology.workspaceId, { exact: true })).violations,
    ).toEqual([]);

  test.each([
    ['renameIdentity:journaled', 'undone'],
    ['renameIdentity:marked', 'undone'],
    ['renameIdentity:claimed', 'finished'],
    ['renameIdentity:committed', 'finished'],
  ])('killed at %s: readers see one name, the repair leaves it %s', async (point, outcome) => {
    const from = `killed_${point.split(':')[1]}`;
    const to = `${from}_renamed`;
    const { identityId } = (
      await v2<{ identityId: string }>('identities.createIdentity', { externalId: from })
    ).body.data!;
    await halted(point, { externalId: from, newExternalId: to, meta: { step: point } });

    // One name reads at any moment: the old one until the commit, the new one from it.
    const committed = point === 'renameIdentity:committed';
    expect((await identityOf(committed ? to : from)).body.data).toMatchObject({ id: identityId });
    expect((await identityOf(committed ? from : to)).status).toBe(404);

    expect(await repair()).toBe(1);
    await consistent();
    expect(await repair()).toBe(0);
    const name = outcome === 'finished' ? to : from;
    expect((await identityOf(name)).body.data).toMatchObject({
      id: identityId,
      externalId: name,
      meta: outcome === 'finished' ? { step: point } : {},
    });
    // The other name is free: a new identity takes it.
    const other = outcome === 'finished' ? from : to;
    expect((await v2('identities.createIdentity', { externalId: other })).status).toBe(200);
    await consistent();
  });

  test('a creation of the name a killed rename left behind frees the stale entry', async () => {
    const from = 'left_behind';
    const to = 'left_behind_renamed';
    await v2('identities.createIdentity', { externalId: from });
    // Killed after its commit: the old name's entry still names the renamed identity.
    await halted('renameIdentity:committed', { externalId: from, newExternalId: to });
    const created = await v2<{ identityId: string }>('identities.createIdentity', {
      externalId: from,
    });
    expect(created.status).toBe(200);
    expect((await identityOf(from)).body.data).toMatchObject({ id: created.body.data!.identityId });
    await repair();
    await consistent();
  });
});

test('keyward identities rename renames as updateIdentity does; a taken name is refused', async () => {
  await v1.post('identities.createIdentity', { externalId: 'cli-before' });
  await v1.post('identities.createIdentity', { externalId: 'cli-taken' });
  const env = { KEYWARD_REDIS_URL: topology.primary.url, LOG_LEVEL: 'silent' };
  const args = ['identities', 'rename', '--workspace', topology.workspaceId];
  const renamed = await runCommandJson<{ identityId: string; externalId: string }>(
    [...args, 'cli-before', 'cli-after'],
    env,
  );
  expect(renamed.externalId).toBe('cli-after');
  const read = await v1.get<{ id: string }>('identities.getIdentity', { externalId: 'cli-after' });
  expect(read.body.id).toBe(renamed.identityId);
  const taken = await runCommand([...args, 'cli-after', 'cli-taken'], env);
  expect(taken.code).not.toBe(0);
  expect(taken.stderr).toMatch(/cli-taken/);
  const missing = await runCommand([...args, 'cli-after'], env);
  expect([missing.code, missing.stderr]).toEqual([
    2,
    expect.stringContaining('missing <newExternalId>'),
  ]);
});
