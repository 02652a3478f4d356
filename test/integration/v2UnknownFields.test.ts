import type { Redis } from 'ioredis';
import { closeRedis } from '../../src/redis/clients';
import { hour } from '../support/helpers';
import {
  adminRedis,
  lastingWrites,
  snapshotKeyspace,
  writeWatcher,
  type WriteWatcher,
} from '../support/keyspace';
import { client, type Client } from '../support/rpc';
import { startTopology, type Topology } from '../support/topology';

/**
 * Fields a request body does not declare. Unkey's v2 spec closes its request bodies and the
 * objects in them (`additionalProperties: false`) but for a few it leaves open (createIdentity's
 * and rerollKey's bodies, a RatelimitRequest): v2 answers 400 naming the field and writes
 * nothing, or accepts it where the spec does. v1 ignores them, as Unkey v1 did. Either way an
 * unknown field is never stored and never reaches an audit entry.
 *
 * Raw HTTP: the published v2 client (`@unkey/api` 2.5.1) drops fields it does not know.
 */
let topology: Topology;
let primary: Redis;
let watcher: WriteWatcher;
let url: string;
let v1: Client;

const INVALID_INPUT = 'https://unkey.com/docs/errors/unkey/application/invalid_input';
/** Found in no body but as an unknown field's name or value. */
const JUNK = 'zzjunkzz';

beforeAll(async () => {
  topology = await startTopology({ nodes: 1 });
  url = topology.nodes[0]!.url;
  v1 = client(url, topology.rootKey);
  primary = await adminRedis(topology.primary.url);
  watcher = await writeWatcher(topology.primary.url);
});
afterAll(async () => {
  await watcher?.close();
  if (primary) await closeRedis(primary);
  await topology?.stop();
});

interface V2Answer {
  data?: Record<string, unknown>;
  error?: { detail: string; errors?: { location: string; message: string }[] };
}

async function v2(operation: string, body: unknown) {
  const response = await fetch(`${url}/v2/${operation}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${topology.rootKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as V2Answer };
}

interface Entry {
  operation: string;
  target: { type: string; id: string };
  summary: Record<string, unknown>;
}

/** The newest audit entry of the workspace. */
async function newestEntry(): Promise<Entry> {
  const page = await v1.get<{ entries: Entry[] }>('auditLogs.list', { limit: 1 });
  expect(page.status).toBe(200);
  return page.body.entries[0]!;
}

/** No record, index or entry anywhere in the primary holds the junk. */
async function junkStored(): Promise<string[]> {
  const stored = await snapshotKeyspace(primary);
  return [...stored]
    .filter(([name, content]) => `${name} ${content}`.includes(JUNK))
    .map(([n]) => n);
}

async function newApi(): Promise<string> {
  const created = await v1.post<{ apiId: string }>('apis.createApi', { name: 'unknown fields' });
  expect(created.status).toBe(200);
  return created.body.apiId;
}

async function newKey(apiId: string, fields: Record<string, unknown> = {}) {
  const created = await v1.post<{ keyId: string; key: string }>('keys.createKey', {
    apiId,
    ...fields,
  });
  expect(created.status).toBe(200);
  return created.body;
}

describe('v2 refuses a field its body does not declare', () => {
  let apiId: string;
  let key: { keyId: string; key: string };
  beforeAll(async () => {
    apiId = await newApi();
    key = await newKey(apiId, { remaining: 10 });
  });

  // [operation, body, the location v2 names]
  const cases: [string, () => unknown, string][] = [
    ['keys.createKey', () => ({ apiId, remainig: 5 }), 'body.remainig'],
    [
      'keys.createKey',
      () => ({ apiId, credits: { remaining: 5, [JUNK]: 1 } }),
      `body.credits.${JUNK}`,
    ],
    [
      'keys.createKey',
      () => ({
        apiId,
        credits: { remaining: 5, refill: { interval: 'daily', amount: 5, day: 1 } },
      }),
      'body.credits.refill.day',
    ],
    ['keys.updateKey', () => ({ keyId: key.keyId, enabeld: false }), 'body.enabeld'],
    [
      'keys.updateKey',
      () => ({ keyId: key.keyId, credits: { remaining: 1, [JUNK]: true } }),
      `body.credits.${JUNK}`,
    ],
    ['keys.verifyKey', () => ({ key: key.key, apiId }), 'body.apiId'],
    [
      'keys.verifyKey',
      () => ({ key: key.key, credits: { cost: 5, [JUNK]: 1 } }),
      `body.credits.${JUNK}`,
    ],
    ['identities.updateIdentity', () => ({ identity: 'nobody', [JUNK]: 1 }), `body.${JUNK}`],
    [
      'ratelimit.multiLimit',
      () => [{ namespace: 'ns', identifier: 'a', limit: 1, duration: 60_000, [JUNK]: 1 }],
      `body[0].${JUNK}`,
    ],
  ];

  test.each(cases)('%s %#: 400 naming the field, nothing written', async (operation, body, at) => {
    await watcher.start();
    const answer = await v2(operation, body());
    expect(answer.status).toBe(400);
    expect(answer.body.error).toMatchObject({
      status: 400,
      type: INVALID_INPUT,
      errors: [{ location: at, message: 'is not a field of this request' }],
    });
    expect(answer.body.error?.detail).toContain(at.replace(/^body\.?/, ''));
    expect(await lastingWrites(watcher, primary)).toEqual([]);
    // The key is as it was: verifyKey's refusal spent nothing either.
    const view = await v1.get<{ remaining?: number; enabled: boolean }>('keys.getKey', {
      keyId: key.keyId,
    });
    expect(view.body).toMatchObject({ remaining: 10, enabled: true });
  });

  test('a long unknown name is cut short in the answer', async () => {
    const name = 'x'.repeat(100_000);
    const answer = await v2('keys.createKey', { apiId, [name]: 1 });
    expect(answer.status).toBe(400);
    expect(answer.body.error?.detail).toBe(`${'x'.repeat(64)}…: is not a field of this request`);
  });
});

describe("v2 accepts unknown fields where Unkey's spec leaves the object open, and stores none", () => {
  test('identities.createIdentity: its body and a RatelimitRequest are open', async () => {
    const answer = await v2('identities.createIdentity', {
      externalId: 'open_identity',
      meta: { plan: 'pro' },
      ratelimits: [{ name: 'requests', limit: 5, duration: 60_000, [JUNK]: 1 }],
      [JUNK]: { nested: true },
    });
    expect(answer.status).toBe(200);
    const identity = await v2('identities.getIdentity', { identity: 'open_identity' });
    expect(identity.body.data).toMatchObject({
      externalId: 'open_identity',
      meta: { plan: 'pro' },
      ratelimits: [{ name: 'requests', limit: 5, duration: 60_000, autoApply: false }],
    });
    expect(JSON.stringify(identity.body)).not.toContain(JUNK);
    expect(await junkStored()).toEqual([]);
    expect((await newestEntry()).summary).toEqual({
      externalId: 'open_identity',
      fields: ['meta', 'ratelimits'],
    });
  });

  test("keys.createKey: a ratelimit's unknown field passes, the limit is stored without it", async () => {
    const apiId = await newApi();
    const answer = await v2('keys.createKey', {
      apiId,
      ratelimits: [{ name: 'requests', limit: 5, duration: hour, [JUNK]: 1 }],
    });
    expect(answer.status).toBe(200);
    expect(await junkStored()).toEqual([]);
  });
});

describe('v1 ignores unknown fields: accepted, never stored, never audited', () => {
  test('keys.createKey with a misspelt field and unknown nested ones', async () => {
    const apiId = await newApi();
    const created = await newKey(apiId, {
      name: 'lenient',
      remainig: 5,
      ratelimit: { limit: 5, duration: 60_000, [JUNK]: 1 },
      [JUNK]: { deep: [JUNK] },
    });
    const entry = await newestEntry();
    expect(entry).toMatchObject({ operation: 'keys.createKey', target: { id: created.keyId } });
    expect(entry.summary).toEqual({ apiId, fields: ['name', 'ratelimit'] });
    const view = await v1.get<Record<string, unknown>>('keys.getKey', { keyId: created.keyId });
    expect(view.body.remaining).toBeUndefined();
    expect(JSON.stringify(view.body)).not.toContain(JUNK);
    expect(await junkStored()).toEqual([]);
  });

  test('keys.updateKey and identities.createIdentity', async () => {
    const apiId = await newApi();
    const { keyId } = await newKey(apiId);
    const updated = await v1.post('keys.updateKey', {
      keyId,
      enabled: false,
      remaining: 3,
      refill: { interval: 'daily', amount: 5, [JUNK]: 1 },
      [JUNK]: 1,
    });
    expect(updated.status).toBe(200);
    expect((await newestEntry()).summary).toEqual({
      apiId,
      fields: ['enabled', 'refill', 'remaining'],
    });
    const view = await v1.get<Record<string, unknown>>('keys.getKey', { keyId });
    expect(view.body.refill).toMatchObject({ interval: 'daily', amount: 5 });
    expect(JSON.stringify(view.body)).not.toContain(JUNK);

    const identity = await v1.post('identities.createIdentity', {
      externalId: 'lenient_identity',
      [JUNK]: 1,
    });
    expect(identity.status).toBe(200);
    expect((await newestEntry()).summary).toEqual({
      externalId: 'lenient_identity',
      fields: [],
    });
    expect(await junkStored()).toEqual([]);
  });

  test('keys.createKey with 2,000 junk fields: a small audit entry of the known fields', async () => {
    const apiId = await newApi();
    const body: Record<string, unknown> = { apiId, name: 'big body' };
    for (let i = 0; i < 2000; i++) body[`${JUNK}_${i}_${'j'.repeat(80)}`] = 'v'.repeat(32);
    expect(JSON.stringify(body).length).toBeGreaterThan(240_000);
    const { keyId } = await newKey(apiId, body);
    const entry = await newestEntry();
    expect(entry.target.id).toBe(keyId);
    expect(entry.summary).toEqual({ apiId, fields: ['name'] });
    expect(JSON.stringify(entry).length).toBeLessThan(1_000);
    expect(await junkStored()).toEqual([]);
  });
});
