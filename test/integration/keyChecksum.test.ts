import { createHash, randomBytes } from 'node:crypto';
import fc from 'fast-check';
import Redis from 'ioredis';
import { encodeBase58 } from '../../src/keys/base58';
import { generateKey } from '../../src/keys/keyMaterial';
import { sleep } from '../support/helpers';
import { client, type Client, type ErrorBody } from '../support/rpc';
import { startTopology, type Topology } from '../support/topology';

/**
 * The key checksum over HTTP (docs/security.md, "The key format"). A key that ends in the marker
 * with a wrong checksum, or is one mistyped character away from an issued key, is refused before
 * it is hashed or looked up: no Redis command at all, even on a node that never saw it. Keys
 * without a checksum (imported, or generated before the format) verify as they always did.
 *
 * Node 0 answers verifications through its data plane, node 1 (data plane shut) through the Koa
 * app: the check is in the operation, so both doors refuse alike.
 */
let topology: Topology;
let doors: [Client, Client];
let api: Client;
let apiId: string;
let redises: Redis[];

beforeAll(async () => {
  // Usage analytics off: their flush, once a second, would land in the counted windows.
  topology = await startTopology({
    nodes: 2,
    nodeOptions: [{}, { dataPlane: false }],
    env: { KEYWARD_ANALYTICS: 'off' },
  });
  doors = [
    client(topology.nodes[0]!.url, topology.rootKey),
    client(topology.nodes[1]!.url, topology.rootKey),
  ];
  api = doors[0];
  apiId = (await api.post<{ apiId: string }>('apis.createApi', { name: 'checksum' })).body.apiId;
  redises = [topology.primary, ...topology.locals].map((server) => new Redis(server.url));
  // Each node authenticates the root key once, so that counts below hold only what keys cost.
  for (const door of doors) {
    expect((await door.post('keys.verifyKey', { key: 'warm_up' })).status).toBe(200);
  }
});
afterAll(async () => {
  await Promise.all(redises.map((redis) => redis.quit()));
  await topology.stop();
});

/** Commands the primary and each node-local Redis ran during `action`, from INFO commandstats. */
async function commandsDuring(action: () => Promise<void>): Promise<Record<string, number>[]> {
  await Promise.all(redises.map((redis) => redis.config('RESETSTAT')));
  await action();
  return Promise.all(
    redises.map(async (redis) => {
      const counts: Record<string, number> = {};
      const info = await redis.info('commandstats');
      for (const match of info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)) {
        // Our own INFO and CONFIG RESETSTAT are not the nodes', nor is a lone TIME: each node
        // reads the primary's clock every 10 s on its own (a script's TIME comes with an EVALSHA).
        // Nor are the sweeps every node runs every 5 s on its own (audit outboxes, unfinished
        // writes): no verification sends these.
        if (!/^(info|config|zscan$|xrange$|zrangebyscore$)/.test(match[1]!)) {
          counts[match[1]!] = Number(match[2]);
        }
      }
      if (counts.time !== undefined && counts.evalsha === undefined && counts.time <= 2) {
        delete counts.time;
      }
      return counts;
    }),
  );
}

/** A key created through node 0, once its creation was announced back to the nodes. */
async function newKey(body: Record<string, unknown> = {}): Promise<{ keyId: string; key: string }> {
  const created = await api.post<{ keyId: string; key: string }>('keys.createKey', {
    apiId,
    ...body,
  });
  expect(created.status).toBe(200);
  await sleep(100);
  return created.body;
}

const KEY_CHARACTERS = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-';

/** One edit: a character replaced, added, dropped, or swapped with the next. */
function edited(key: string, kind: number, at: number, char: string): string {
  const i = at % key.length;
  switch (kind % 4) {
    case 0:
      return key.slice(0, i) + char + key.slice(i + 1);
    case 1:
      return key.slice(0, i) + char + key.slice(i);
    case 2:
      return key.slice(0, i) + key.slice(i + 1);
    default: {
      const j = at % (key.length - 1);
      return key.slice(0, j) + key[j + 1] + key[j] + key.slice(j + 2);
    }
  }
}

/** `count` different one-character edits of `key` (a fixed sample, so runs repeat). */
function editsOf(key: string, count: number): string[] {
  const samples = fc.sample(fc.tuple(fc.nat(3), fc.nat(), fc.constantFrom(...KEY_CHARACTERS)), {
    numRuns: count * 4,
    seed: 15,
  });
  const variants = new Set<string>();
  for (const [kind, at, char] of samples) {
    const variant = edited(key, kind, at, char);
    if (variant !== key) variants.add(variant);
    if (variants.size === count) break;
  }
  return [...variants];
}

const NOT_FOUND = { valid: false, code: 'NOT_FOUND' };

describe('verifyKey', () => {
  test('any single-character change of an issued key is NOT_FOUND, with no Redis command, through either door', async () => {
    const { key } = await newKey({ prefix: 'sk_live' });
    const variants = editsOf(key, 60);
    expect(variants).toHaveLength(60);
    const answers: unknown[] = [];
    const counts = await commandsDuring(async () => {
      for (const [index, variant] of variants.entries()) {
        const door = doors[index % 2]!;
        const answer = await door.post<{ requestId: string }>('keys.verifyKey', { key: variant });
        answers.push({ status: answer.status, ...answer.body, requestId: '<req>' });
      }
    });
    // Every variant is new to both nodes: nothing cached, nothing remembered as missing.
    expect(counts).toEqual([{}, {}, {}]);
    expect(answers).toEqual(
      variants.map(() => ({ status: 200, ...NOT_FOUND, requestId: '<req>' })),
    );
  });

  test('a cold unknown key without a checksum is read from the primary; one with a wrong checksum is not', async () => {
    const generated = generateKey('sk').plaintext;
    const wrong = `${generated.slice(0, -1)}${generated.endsWith('2') ? '3' : '2'}`;
    const oldShape = `sk_${encodeBase58(randomBytes(16))}`;
    const [withoutChecksum] = await commandsDuring(async () => {
      expect((await api.post('keys.verifyKey', { key: oldShape })).body).toMatchObject(NOT_FOUND);
    });
    expect(Object.values(withoutChecksum!).reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    const counts = await commandsDuring(async () => {
      for (const door of doors) {
        expect((await door.post('keys.verifyKey', { key: wrong })).body).toMatchObject(NOT_FOUND);
      }
    });
    expect(counts).toEqual([{}, {}, {}]);
  });

  test('keys without a checksum keep verifying: imported by plaintext or hash, or of the shape keys had before', async () => {
    const before = `sk_${encodeBase58(randomBytes(16))}`; // a key generated before the format
    const foreign = randomBytes(24).toString('hex');
    const byHash = `legacy_${randomBytes(20).toString('base64url')}`;
    const imported = await api.post<{ keyIds: string[] }>('migrations.createKeys', [
      { apiId, plaintext: before, prefix: 'sk' },
      { apiId, plaintext: foreign },
      {
        apiId,
        hash: {
          value: createHash('sha256').update(byHash).digest('base64'),
          variant: 'sha256_base64',
        },
      },
    ]);
    expect(imported.status).toBe(200);
    await sleep(100);
    for (const door of doors) {
      for (const [index, key] of [before, foreign, byHash].entries()) {
        const answer = await door.post('keys.verifyKey', { key });
        expect(answer.body).toMatchObject({
          valid: true,
          code: 'VALID',
          keyId: imported.body.keyIds[index],
        });
      }
    }
    const shown = await api.post<{ id: string }>('keys.whoami', { key: before });
    expect([shown.status, shown.body.id]).toEqual([200, imported.body.keyIds[0]]);
  });

  test('a refusal by checksum is counted as NOT_FOUND with the mode checksum', async () => {
    const metrics = async () => {
      const text = await (await fetch(`${topology.nodes[0]!.url}/metrics`)).text();
      const count = (mode: string) =>
        Number(
          new RegExp(
            `keyward_verifications_total\\{code="NOT_FOUND",mode="${mode}"\\} (\\d+)`,
          ).exec(text)?.[1] ?? 0,
        );
      return { checksum: count('checksum'), none: count('none') };
    };
    const { key } = await newKey();
    const was = await metrics();
    for (const variant of editsOf(key, 3)) await api.post('keys.verifyKey', { key: variant });
    await api.post('keys.verifyKey', { key: `sk_${encodeBase58(randomBytes(16))}` });
    expect(await metrics()).toEqual({ checksum: was.checksum + 3, none: was.none + 1 });
  });
});

describe('keys.whoami', () => {
  test('a wrong checksum is its usual 404, without reading the primary', async () => {
    const { key } = await newKey();
    const wrong = `${key.slice(0, -1)}${key.endsWith('2') ? '3' : '2'}`;
    let answer: { status: number; body: ErrorBody } | undefined;
    const [primary, ...locals] = await commandsDuring(async () => {
      answer = await api.post<ErrorBody>('keys.whoami', { key: wrong });
    });
    const unknown = await api.post<ErrorBody>('keys.whoami', { key: 'sk_not_a_key_at_all' });
    expect(answer!.status).toBe(404);
    expect({ ...answer!.body.error, requestId: '<req>' }).toEqual({
      ...unknown.body.error,
      requestId: '<req>',
    });
    // Only the management limit's script, on node 0's own Redis.
    expect(primary).toEqual({});
    expect(locals[0]).toMatchObject({ evalsha: 1 });
    expect((await api.post('keys.whoami', { key })).status).toBe(200);
  });
});

describe('migrations.createKeys', () => {
  test('a plaintext with a wrong checksum is refused, and the batch with it', async () => {
    const fine = `sk_${encodeBase58(randomBytes(16))}`;
    const issuedElsewhere = generateKey('sk').plaintext;
    const wrong = `${issuedElsewhere.slice(0, -1)}${issuedElsewhere.endsWith('2') ? '3' : '2'}`;
    const refused = await api.post<ErrorBody>('migrations.createKeys', [
      { apiId, plaintext: fine },
      { apiId, plaintext: wrong },
    ]);
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toBe(
      "[1].plaintext: has keyward's key format but a wrong checksum, so it would never verify",
    );
    expect((await api.post('keys.verifyKey', { key: fine })).body).toMatchObject(NOT_FOUND);
    // A key of the format from another keyward, with its checksum right, is imported as it is.
    const imported = await api.post('migrations.createKeys', [
      { apiId, plaintext: issuedElsewhere },
    ]);
    expect(imported.status).toBe(200);
    await sleep(100);
    expect((await api.post('keys.verifyKey', { key: issuedElsewhere })).body).toMatchObject({
      code: 'VALID',
    });
  });
});
