import { listingIndexes } from '../../src/store/keyListing';
import { names } from '../../src/store/names';
import { startTopology, type Topology } from '../support/topology';
import { client, type ErrorBody, type Client } from '../support/rpc';

let topology: Topology;
let api: Client;

beforeAll(async () => {
  topology = await startTopology({ nodes: 1 });
  api = client(topology.nodes[0]!.url, topology.rootKey);
});
afterAll(() => topology.stop());

async function createApi(name = 'an api'): Promise<string> {
  const response = await api.post<{ apiId: string; name: string }>('apis.createApi', { name });
  expect(response.status).toBe(200);
  expect(response.body.name).toBe(name);
  return response.body.apiId;
}

interface Page {
  keys: { id: string; ownerId?: string }[];
  cursor?: string;
  total: number;
}

describe('apis.createApi and apis.getApi', () => {
  test('an API reads back with its workspace and creation time', async () => {
    const apiId = await createApi('payments');
    const got = await api.get('apis.getApi', { apiId });
    expect(got.status).toBe(200);
    expect(got.body).toEqual({
      id: apiId,
      workspaceId: topology.workspaceId,
      name: 'payments',
      createdAt: expect.any(Number),
    });
  });

  test.each([
    [{}, 'name: is required'],
    [{ name: '' }, 'name: must NOT have fewer than 1 characters'],
    [{ name: 'x'.repeat(257) }, 'name: must NOT have more than 256 characters'],
    [[], 'body: must be object'],
    ['"text"', 'body: must be object'],
  ])('createApi refuses %j', async (body, message) => {
    const response = await api.post<ErrorBody>('apis.createApi', body);
    expect(response.status).toBe(400);
    expect(response.body.error.message).toBe(message);
  });

  test("another workspace's API is not found by any call, and nothing of it changes", async () => {
    // API ids are not tagged by workspace any more: the store itself checks whose an API is.
    const apiId = await createApi('theirs');
    const { key: kept } = (await api.post<{ key: string }>('keys.createKey', { apiId })).body;
    const stranger = client(topology.nodes[0]!.url, (await topology.newRootKey()).key);
    for (const [method, operation, body] of [
      ['get', 'apis.getApi', { apiId }],
      ['get', 'apis.listKeys', { apiId }],
      ['post', 'keys.createKey', { apiId }],
      ['post', 'apis.deleteKeys', { apiId }],
      ['post', 'apis.deleteApi', { apiId }],
    ] as const) {
      const response =
        method === 'get'
          ? await stranger.get<ErrorBody>(operation, body)
          : await stranger.post<ErrorBody>(operation, body);
      expect({ operation, status: response.status }).toEqual({ operation, status: 404 });
    }
    expect((await stranger.get<{ apis: unknown[] }>('apis.listApis', {})).body.apis).toEqual([]);
    expect((await api.get('apis.getApi', { apiId })).status).toBe(200);
    expect((await api.post<{ code: string }>('keys.verifyKey', { key: kept })).body.code).toBe(
      'VALID',
    );
  });

  test('getApi of an unknown API is 404', async () => {
    const response = await api.get<ErrorBody>('apis.getApi', { apiId: 'api_unknown' });
    expect(response.status).toBe(404);
    expect(response.body.error.code).toBe('NOT_FOUND');
  });
});

describe('apis.listKeys', () => {
  test('pagination visits every key once, in creation order, with an exact total', async () => {
    const apiId = await createApi();
    const created: string[] = [];
    for (let i = 0; i < 23; i++) {
      const owner = i % 3 === 0 ? 'owner_x' : 'owner_y';
      const response = await api.post<{ keyId: string }>('keys.createKey', {
        apiId,
        ownerId: owner,
      });
      created.push(response.body.keyId);
    }
    const seen: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const query: Record<string, string | number> = { apiId, limit: 5 };
      if (cursor) query.cursor = cursor;
      const page = await api.get<Page>('apis.listKeys', query);
      expect(page.status).toBe(200);
      expect(page.body.total).toBe(23);
      seen.push(...page.body.keys.map((k) => k.id));
      cursor = page.body.cursor;
      pages++;
    } while (cursor && pages < 10);
    expect(seen).toEqual(created);
    expect(pages).toBe(5);

    const owned = await api.get<Page>('apis.listKeys', { apiId, ownerId: 'owner_x' });
    expect(owned.body.total).toBe(8);
    expect(owned.body.keys.map((k) => k.id)).toEqual(created.filter((_, i) => i % 3 === 0));
    expect(owned.body.cursor).toBeUndefined();
  });

  test('a key created during pagination is listed on a later page', async () => {
    const apiId = await createApi();
    const create = async () =>
      (await api.post<{ keyId: string }>('keys.createKey', { apiId })).body.keyId;
    const first = await create();
    const second = await create();
    const page1 = await api.get<Page>('apis.listKeys', { apiId, limit: 1 });
    expect(page1.body.keys.map((k) => k.id)).toEqual([first]);
    const later = await create();
    const page2 = await api.get<Page>('apis.listKeys', {
      apiId,
      limit: 1,
      cursor: page1.body.cursor!,
    });
    expect(page2.body.keys.map((k) => k.id)).toEqual([second]);
    const page3 = await api.get<Page>('apis.listKeys', {
      apiId,
      limit: 1,
      cursor: page2.body.cursor!,
    });
    expect(page3.body.keys.map((k) => k.id)).toEqual([later]);
    expect(page3.body.total).toBe(3);
    expect(page3.body.cursor).toBeUndefined();
  });

  test('the last page carries no cursor, even when it is exactly full', async () => {
    const apiId = await createApi();
    for (let i = 0; i < 4; i++) await api.post('keys.createKey', { apiId });
    const page1 = await api.get<Page>('apis.listKeys', { apiId, limit: 2 });
    expect(page1.body.cursor).toEqual(expect.any(String));
    const page2 = await api.get<Page>('apis.listKeys', {
      apiId,
      limit: 2,
      cursor: page1.body.cursor!,
    });
    expect(page2.body.keys).toHaveLength(2);
    expect(page2.body.cursor).toBeUndefined();
  });

  test.each([
    [{ limit: 0 }, 'limit: must be >= 1'],
    [{ limit: 101 }, 'limit: must be <= 100'],
    [{ limit: 'ten' }, 'limit: must be integer'],
    [{ cursor: 'abc' }, 'cursor: is not a cursor this server returned'],
  ])('refuses %j', async (query, message) => {
    const apiId = await createApi();
    const response = await api.get<ErrorBody>('apis.listKeys', { apiId, ...query });
    expect(response.status).toBe(400);
    expect(response.body.error.message).toBe(message);
  });

  test('a query parameter given twice is refused', async () => {
    const response = await fetch(`${topology.nodes[0]!.url}/v1/apis.listKeys?apiId=a&apiId=b`, {
      headers: { authorization: `Bearer ${topology.rootKey}` },
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as ErrorBody).error.message).toBe('apiId: must be given once');
  });
});

describe('apis.deleteApi', () => {
  test('finishes even when an index entry has lost its record', async () => {
    const apiId = await createApi();
    const { keyId } = (await api.post<{ keyId: string }>('keys.createKey', { apiId })).body;
    await api.post('keys.createKey', { apiId });
    const Redis = (await import('ioredis')).default;
    const redis = new Redis(topology.primary.url);
    const hash = (await redis.hget(names.key(keyId), 'hash'))!;
    await redis.del(names.key(keyId));
    await redis.del(names.keyByHash(topology.workspaceId, hash));
    expect((await api.post('apis.deleteApi', { apiId })).status).toBe(200);
    expect(await redis.exists(...listingIndexes(apiId))).toBe(0);
    await redis.quit();
  });

  test('deletes the API and every key of it', async () => {
    const apiId = await createApi();
    const keys: string[] = [];
    for (let i = 0; i < 120; i++) {
      keys.push(
        (await api.post<{ key: string }>('keys.createKey', { apiId, ownerId: `o${i % 2}` })).body
          .key,
      );
    }
    expect((await api.post('keys.verifyKey', { key: keys[0] })).body.code).toBe('VALID');
    const deleted = await api.post('apis.deleteApi', { apiId });
    expect(deleted.status).toBe(200);
    expect(deleted.body).toEqual({});
    expect((await api.get('apis.getApi', { apiId })).status).toBe(404);
    expect((await api.get('apis.listKeys', { apiId })).status).toBe(404);
    for (const key of [keys[0], keys[119]]) {
      expect((await api.post('keys.verifyKey', { key })).body.code).toBe('NOT_FOUND');
    }
    expect((await api.post('keys.createKey', { apiId })).status).toBe(404);
    expect((await api.post('apis.deleteApi', { apiId })).status).toBe(404);

    // Nothing of the API is left in the primary but its usage counts, which outlive it until
    // their retention ends (docs/decisions.md, "Usage analytics"): a flush may land any time;
    // and its record's tombstone, which goes by itself within the hour (a late move of the
    // previous layout's record cannot bring it back meanwhile).
    const Redis = (await import('ioredis')).default;
    const redis = new Redis(topology.primary.url);
    const record = `keyward:api:{${apiId}}`;
    expect(await redis.hget(record, 'removedAt')).not.toBeNull();
    expect(await redis.pttl(record)).toBeGreaterThan(0);
    const leftovers = (await redis.keys(`keyward:*${apiId}*`)).filter(
      (name) => !name.includes(':usage:') && name !== record,
    );
    const hashEntries = await redis.keys(`keyward:keyhash:*:${topology.workspaceId}`);
    const indexed = hashEntries.length > 0 ? ((await redis.mget(...hashEntries)) as string[]) : [];
    await redis.quit();
    expect(leftovers).toEqual([]);
    expect(indexed.length).toBeGreaterThan(0); // keys of other APIs remain
    const keyIds = await Promise.all(
      indexed.map(async (id) => (await api.get('keys.getKey', { keyId: id })).status),
    );
    expect(keyIds.every((status) => status === 200)).toBe(true);
  });
});
