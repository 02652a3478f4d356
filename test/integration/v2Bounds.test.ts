import { Unkey } from 'unkey-api-v2';
import { hour } from '../support/helpers';
import { client, type Client } from '../support/rpc';
import { startTopology, type Topology } from '../support/topology';

/**
 * The bounds of v2 bodies, held to what Unkey's v2 spec (`svc/api/openapi/spec`) and its route
 * tests (`svc/api/routes/v2_*`) accept and refuse: what v2 takes is sent with the published
 * client (`@unkey/api` 2.5.1), what it refuses over raw HTTP (the client would not send some of
 * it), with Unkey's status and error type. v1's bounds, which keyward keeps, are checked beside.
 */
let topology: Topology;
let unkey: Unkey;
let v1: Client;
let url: string;

const INVALID_INPUT = 'https://unkey.com/docs/errors/unkey/application/invalid_input';

beforeAll(async () => {
  topology = await startTopology({ nodes: 1 });
  url = topology.nodes[0]!.url;
  unkey = new Unkey({ rootKey: topology.rootKey, serverURL: url });
  v1 = client(url, topology.rootKey);
});
afterAll(() => topology.stop());

interface V2Answer {
  data?: Record<string, unknown>;
  error?: { type: string; detail: string; errors?: { location: string; message: string }[] };
}

async function rawV2(operation: string, body: unknown) {
  const response = await fetch(`${url}/v2/${operation}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${topology.rootKey}`, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  return { status: response.status, body: (await response.json()) as V2Answer };
}

/** v2's 400 as Unkey answers a body its spec or its handler refuses, naming the field. */
function invalid(location: string) {
  return {
    status: 400,
    body: { error: { type: INVALID_INPUT, errors: [expect.objectContaining({ location })] } },
  };
}

async function newApi(name: string): Promise<string> {
  return (await unkey.apis.createApi({ name })).data.apiId;
}

const names = (count: number, prefix: string) =>
  Array.from({ length: count }, (_, i) => `${prefix}.${i}`);
const limits = (count: number) =>
  Array.from({ length: count }, (_, i) => ({
    name: `limit${i}`,
    limit: 10,
    duration: hour,
    autoApply: false,
  }));

describe('keys.createKey and keys.updateKey: 1,000 permissions and 50 limits', () => {
  test('take 1,000 permissions and 50 limits; refuse 1,001 and 51', async () => {
    const apiId = await newApi('v2 bounds create');
    const { data: created } = await unkey.keys.createKey({
      apiId,
      permissions: names(1000, 'b1'),
      ratelimits: limits(50),
    });
    const { data: key } = await unkey.keys.getKey({ keyId: created.keyId });
    expect(key.permissions).toHaveLength(1000);
    expect(key.ratelimits).toHaveLength(50);

    expect(await rawV2('keys.createKey', { apiId, permissions: names(1001, 'b2') })).toMatchObject(
      invalid('body.permissions'),
    );
    expect(await rawV2('keys.createKey', { apiId, ratelimits: limits(51) })).toMatchObject(
      invalid('body.ratelimits'),
    );

    await unkey.keys.updateKey({
      keyId: created.keyId,
      permissions: names(1000, 'b3'),
      ratelimits: limits(50).map((limit) => ({ ...limit, limit: 20 })),
    });
    const { data: updated } = await unkey.keys.getKey({ keyId: created.keyId });
    expect(updated.permissions).toHaveLength(1000);
    expect(updated.ratelimits?.every((limit) => limit.limit === 20)).toBe(true);
    expect(
      await rawV2('keys.updateKey', { keyId: created.keyId, ratelimits: limits(51) }),
    ).toMatchObject(invalid('body.ratelimits'));
  });

  test('v1 keeps its own bounds: 100 permissions, 20 limits', async () => {
    const apiId = await newApi('v1 bounds');
    const many = await v1.post('keys.createKey', { apiId, permissions: names(101, 'v1') });
    expect(many.status).toBe(400);
    const limited = await v1.post('keys.createKey', {
      apiId,
      ratelimits: limits(21).map(({ name, limit, duration }) => ({ name, limit, duration })),
    });
    expect(limited.status).toBe(400);
  });
});

describe('keys.verifyKey: credits.cost up to 1e12', () => {
  test('a cost of 1e12 is a verdict; above it, a 400', async () => {
    const apiId = await newApi('v2 bounds cost');
    const { data: counted } = await unkey.keys.createKey({ apiId, credits: { remaining: 5 } });
    const { data: unlimited } = await unkey.keys.createKey({ apiId });
    const cost = 1_000_000_000_000;

    const exceeded = await unkey.keys.verifyKey({ key: counted.key, credits: { cost } });
    expect(exceeded.data).toMatchObject({ valid: false, code: 'USAGE_EXCEEDED', credits: 5 });
    const free = await unkey.keys.verifyKey({ key: unlimited.key, credits: { cost } });
    expect(free.data).toMatchObject({ valid: true, code: 'VALID' });

    expect(
      await rawV2('keys.verifyKey', { key: counted.key, credits: { cost: cost + 1 } }),
    ).toMatchObject(invalid('body.credits.cost'));
    // v1's remaining.cost keeps its bound.
    const v1Answer = await v1.post('keys.verifyKey', {
      key: counted.key,
      remaining: { cost: 1_000_000_001 },
    });
    expect(v1Answer.status).toBe(400);
  });
});

describe('ratelimit.limit', () => {
  test('identifier up to 512 characters; duration from 1,000 ms', async () => {
    const identifier = 'i'.repeat(512);
    const { data } = await unkey.ratelimit.limit({
      namespace: 'v2.bounds',
      identifier,
      limit: 2,
      duration: 1000,
    });
    expect(data).toMatchObject({ success: true, limit: 2, remaining: 1 });
    const { data: multi } = await unkey.ratelimit.multiLimit([
      { namespace: 'v2.bounds', identifier, limit: 2, duration: 1000 },
    ]);
    expect(multi).toMatchObject({ passed: true });

    const base = { namespace: 'v2.bounds', identifier: 'u', limit: 2, duration: 60_000 };
    expect(await rawV2('ratelimit.limit', { ...base, identifier: 'i'.repeat(513) })).toMatchObject(
      invalid('body.identifier'),
    );
    expect(await rawV2('ratelimit.limit', { ...base, duration: 999 })).toMatchObject(
      invalid('body.duration'),
    );
    expect(await rawV2('ratelimit.multiLimit', [{ ...base, duration: 999 }])).toMatchObject(
      invalid('body[0].duration'),
    );
    expect(
      await rawV2('ratelimit.setOverride', { ...base, identifier: 'x', limit: 5, duration: 999 }),
    ).toMatchObject(invalid('body.duration'));
  });

  test("namespaces keep keyward's names (a deviation: docs/decisions.md)", async () => {
    const base = { identifier: 'u', limit: 2, duration: 60_000 };
    expect(await rawV2('ratelimit.limit', { ...base, namespace: 'has space' })).toMatchObject(
      invalid('body.namespace'),
    );
    expect(await rawV2('ratelimit.limit', { ...base, namespace: 'n'.repeat(129) })).toMatchObject(
      invalid('body.namespace'),
    );
  });
});

describe('externalId', () => {
  test('1–255 characters of [a-zA-Z0-9_.-], for identities and keys', async () => {
    const { data: short } = await unkey.identities.createIdentity({ externalId: 'a' });
    expect(short.identityId).toMatch(/^id_/);
    const { data: long } = await unkey.identities.createIdentity({ externalId: 'e'.repeat(255) });
    expect(long.identityId).toMatch(/^id_/);

    expect(await rawV2('identities.createIdentity', { externalId: 'e'.repeat(256) })).toMatchObject(
      invalid('body.externalId'),
    );
    expect(await rawV2('identities.createIdentity', { externalId: 'a b' })).toMatchObject(
      invalid('body.externalId'),
    );
    expect(await rawV2('identities.createIdentity', { externalId: '' })).toMatchObject(
      invalid('body.externalId'),
    );

    const apiId = await newApi('v2 bounds externalId');
    expect(await rawV2('keys.createKey', { apiId, externalId: 'user@example' })).toMatchObject(
      invalid('body.externalId'),
    );
    const { data: key } = await unkey.keys.createKey({ apiId, externalId: 'b' });
    expect(await rawV2('keys.updateKey', { keyId: key.keyId, externalId: 'a/b' })).toMatchObject(
      invalid('body.externalId'),
    );
  });
});

describe('a monthly refill names its day', () => {
  test('createKey and updateKey refuse a monthly refill without refillDay, as Unkey does', async () => {
    const apiId = await newApi('v2 bounds refill');
    const monthly = { interval: 'monthly', amount: 10 };
    expect(
      await rawV2('keys.createKey', { apiId, credits: { remaining: 5, refill: monthly } }),
    ).toMatchObject(invalid('body.credits.refill.refillDay'));

    const { data: key } = await unkey.keys.createKey({
      apiId,
      credits: { remaining: 5, refill: { interval: 'monthly', amount: 10, refillDay: 3 } },
    });
    expect(
      await rawV2('keys.updateKey', { keyId: key.keyId, credits: { refill: monthly } }),
    ).toMatchObject(invalid('body.credits.refill.refillDay'));
    const { data: stored } = await unkey.keys.getKey({ keyId: key.keyId });
    expect(stored.credits).toEqual({
      remaining: 5,
      refill: { interval: 'monthly', amount: 10, refillDay: 3 },
    });
  });
});

describe('keys.updateCredits as Unkey answers it', () => {
  test('set to null (or without a value) makes usage unlimited and drops the refill', async () => {
    const apiId = await newApi('v2 bounds unlimited');
    const { data: key } = await unkey.keys.createKey({
      apiId,
      credits: { remaining: 5, refill: { interval: 'daily', amount: 20 } },
    });
    const { data } = await unkey.keys.updateCredits({
      keyId: key.keyId,
      operation: 'set',
      value: null,
    });
    expect(data).toEqual({ remaining: null });
    const { data: stored } = await unkey.keys.getKey({ keyId: key.keyId });
    expect(stored.credits).toBeUndefined();

    const { data: again } = await unkey.keys.createKey({ apiId, credits: { remaining: 5 } });
    expect(await rawV2('keys.updateCredits', { keyId: again.keyId, operation: 'set' })).toEqual({
      status: 200,
      body: { meta: { requestId: expect.any(String) }, data: { remaining: null } },
    });
    expect((await unkey.keys.verifyKey({ key: again.key })).data).toMatchObject({ valid: true });
  });

  test('a decrement past zero leaves zero', async () => {
    const apiId = await newApi('v2 bounds decrement');
    const { data: key } = await unkey.keys.createKey({ apiId, credits: { remaining: 3 } });
    const { data } = await unkey.keys.updateCredits({
      keyId: key.keyId,
      operation: 'decrement',
      value: 10,
    });
    expect(data).toEqual({ remaining: 0 });
    expect((await unkey.keys.verifyKey({ key: key.key })).data).toMatchObject({
      valid: false,
      code: 'USAGE_EXCEEDED',
    });
    // v1's updateRemaining still refuses it.
    const refused = await v1.post('keys.updateRemaining', {
      keyId: key.keyId,
      op: 'decrement',
      value: 1,
    });
    expect(refused.status).toBe(400);
  });

  test('increment or decrement of a key without credits, or without a value, is a 400', async () => {
    const apiId = await newApi('v2 bounds no credits');
    const { data: unlimited } = await unkey.keys.createKey({ apiId });
    for (const operation of ['increment', 'decrement']) {
      expect(
        await rawV2('keys.updateCredits', { keyId: unlimited.keyId, operation, value: 1 }),
      ).toMatchObject(invalid('body.operation'));
      expect(
        await rawV2('keys.updateCredits', { keyId: unlimited.keyId, operation }),
      ).toMatchObject(invalid('body.value'));
    }
    // A key without credits gets them by `set`.
    expect(
      (await unkey.keys.updateCredits({ keyId: unlimited.keyId, operation: 'set', value: 4 })).data,
    ).toEqual({ remaining: 4 });
  });
});

describe('permissions.createPermission: Unkey’s name and slug', () => {
  test('a name of 1–512 characters of any kind; a slug of 1–128 of [a-zA-Z0-9_:-.*]', async () => {
    const made = [
      { name: 'n', slug: 's' },
      { name: `Read ${'n'.repeat(507)}`, slug: 'docs.*' },
      { name: 'Any: thing, at all!', slug: `x${'y'.repeat(127)}` },
    ];
    for (const body of made) {
      const { data } = await unkey.permissions.createPermission(body);
      expect((await unkey.permissions.getPermission({ permission: body.slug })).data).toEqual({
        id: data.permissionId,
        ...body,
      });
    }
    expect(await rawV2('permissions.createPermission', { name: '', slug: 'b.1' })).toMatchObject(
      invalid('body.name'),
    );
    expect(
      await rawV2('permissions.createPermission', { name: 'n'.repeat(513), slug: 'b.2' }),
    ).toMatchObject(invalid('body.name'));
    for (const slug of ['', 'z'.repeat(129), 'a b', 'a/b']) {
      expect(await rawV2('permissions.createPermission', { name: 'bad', slug })).toMatchObject(
        invalid('body.slug'),
      );
    }
    // v1 keeps Unkey v1's identifier rules for both.
    for (const body of [
      { name: 'ab' },
      { name: 'docs.*' },
      { name: 'ok.name', slug: 'Read documents' },
    ]) {
      expect((await v1.post('permissions.createPermission', body)).status).toBe(400);
    }
  });
});
