import type { Unkey } from '@unkey/api';
import { v1Sdk } from '../support/v1Sdk';
import Redis from 'ioredis';
import { startTopology, type Topology } from '../support/topology';
import { client, type Client, type ErrorBody } from '../support/rpc';
import { createKey, hour } from '../support/helpers';

/**
 * Named rate limits (issue 14) over HTTP: set with createKey and updateKey, spent by verifyKey
 * through the published v1 SDK (`@unkey/api` 0.38 names them in `ratelimits`), all or nothing
 * with every other limit and the credits.
 */
let topology: Topology;
let unkey: Unkey;
let api: Client;
let nodes: Client[];
let apiId: string;

beforeAll(async () => {
  topology = await startTopology({ nodes: 2 });
  nodes = topology.nodes.map((node) => client(node.url, topology.rootKey));
  api = nodes[0]!;
  unkey = v1Sdk(topology.nodes[0]!.url, topology.rootKey);
  apiId = (await api.post<{ apiId: string }>('apis.createApi', { name: 'named' })).body.apiId;
});
afterAll(() => topology.stop());

type Standing = { name: string; limit: number; remaining?: number; exceeded?: boolean };
type Verdict = {
  code: string;
  remaining?: number;
  ratelimit?: { limit: number; remaining: number };
  ratelimits?: Standing[];
};

async function verify(
  key: string,
  ratelimits?: { name: string; cost?: number; limit?: number; duration?: number }[],
  extra: { remaining?: { cost: number } } = {},
): Promise<Verdict> {
  const { result, error } = await unkey.keys.verify({ key, apiId, ratelimits, ...extra });
  if (error) throw new Error(`${error.code}: ${error.message}`);
  return result as Verdict;
}

const remainingOf = (verdict: Verdict) =>
  Object.fromEntries((verdict.ratelimits ?? []).map((s) => [s.name, s.remaining]));

const tokens = { name: 'tokens', limit: 100, duration: hour, type: 'fast' };
const requests = { name: 'requests', limit: 3, duration: hour, autoApply: true };

test('createKey stores named limits beside the seed one; getKey shows them as stored', async () => {
  const { keyId } = await createKey(api, apiId, {
    ratelimit: { type: 'consistent', limit: 10, refillRate: 1, refillInterval: 1000 },
    ratelimits: [tokens, requests],
  });
  const { result } = await unkey.keys.get({ keyId });
  expect(result).toMatchObject({
    ratelimit: { type: 'consistent', limit: 10, refillRate: 1, refillInterval: 1000 },
  });
  expect((result as { ratelimits?: unknown }).ratelimits).toEqual([
    { name: 'tokens', type: 'fast', limit: 100, duration: hour, autoApply: false },
    { name: 'requests', type: 'consistent', limit: 3, duration: hour, autoApply: true },
  ]);
});

test('a verification spends the limits that apply themselves and those it names, each answered', async () => {
  const { key } = await createKey(api, apiId, {
    ratelimit: { type: 'fast', limit: 10, refillRate: 1, refillInterval: hour },
    ratelimits: [tokens, requests],
  });
  const first = await verify(key, [{ name: 'tokens', cost: 40 }]);
  expect(first.code).toBe('VALID');
  const standing = { reset: expect.any(Number), exceeded: false };
  expect(first.ratelimits).toEqual([
    { name: 'default', limit: 10, duration: hour, autoApply: true, remaining: 9, ...standing },
    { name: 'requests', limit: 3, duration: hour, autoApply: true, remaining: 2, ...standing },
    { name: 'tokens', limit: 100, duration: hour, autoApply: false, remaining: 60, ...standing },
  ]);
  expect(first.ratelimit).toMatchObject({ limit: 10, remaining: 9 });

  // 70 tokens are more than the 60 left: refused, and no limit is charged.
  const refused = await verify(key, [{ name: 'tokens', cost: 70 }]);
  expect(refused.code).toBe('RATE_LIMITED');
  expect(refused.ratelimits!.find((s) => s.name === 'tokens')).toMatchObject({ exceeded: true });
  const after = await verify(key, [{ name: 'tokens', cost: 0 }]);
  expect(remainingOf(after)).toEqual({ default: 8, requests: 1, tokens: 60 });
});

test('all or nothing with the credits: out of credits charges no limit, fast or consistent', async () => {
  const { key } = await createKey(api, apiId, {
    remaining: 2,
    ratelimits: [
      { name: 'local', limit: 5, duration: hour, type: 'fast', autoApply: true },
      { name: 'global', limit: 5, duration: hour, autoApply: true },
    ],
  });
  const refused = await verify(key, undefined, { remaining: { cost: 3 } });
  expect(refused).toMatchObject({ code: 'USAGE_EXCEEDED', remaining: 2 });
  expect(remainingOf(refused)).toEqual({ local: 5, global: 5 });
  const spent = await verify(key, undefined, { remaining: { cost: 2 } });
  expect(spent).toMatchObject({ code: 'VALID', remaining: 0 });
  expect(remainingOf(spent)).toEqual({ local: 4, global: 4 });
});

test('a consistent named limit admits exactly its limit across two nodes', async () => {
  const { key } = await createKey(api, apiId, {
    ratelimits: [{ name: 'shared', limit: 7, duration: hour, autoApply: true }],
  });
  const verdicts = await Promise.all(
    Array.from({ length: 24 }, (_, i) =>
      nodes[i % 2]!.post<Verdict>('keys.verifyKey', { key }).then((r) => r.body.code),
    ),
  );
  expect(verdicts.filter((code) => code === 'VALID')).toHaveLength(7);
  expect(verdicts.filter((code) => code === 'RATE_LIMITED')).toHaveLength(17);
});

test('a named limit with its own shape in the request; an unknown name without one is a 400', async () => {
  const { key } = await createKey(api, apiId);
  const adHoc = await verify(key, [{ name: 'burst', limit: 2, duration: hour, cost: 2 }]);
  expect(adHoc.ratelimits).toEqual([
    {
      name: 'burst',
      limit: 2,
      duration: hour,
      autoApply: false,
      remaining: 0,
      reset: expect.any(Number),
      exceeded: false,
    },
  ]);
  const response = await api.post<ErrorBody>('keys.verifyKey', {
    key,
    ratelimits: [{ name: 'nope' }],
  });
  expect(response.status).toBe(400);
  expect(response.body.error.message).toMatch(
    /ratelimits\[0\]\.name: ratelimit "nope" was requested but does not exist for key key_\w+ and it has no identity/,
  );
});

test('updateKey replaces the named limits and leaves the seed one; `default` among them sets it', async () => {
  const { keyId } = await createKey(api, apiId, {
    ratelimit: { type: 'fast', limit: 10, refillRate: 1, refillInterval: 1000 },
    ratelimits: [tokens],
  });
  const read = async () =>
    (
      await api.get<{ ratelimit?: { limit: number }; ratelimits?: Standing[] }>('keys.getKey', {
        keyId,
      })
    ).body;
  expect((await api.post('keys.updateKey', { keyId, ratelimits: [requests] })).status).toBe(200);
  expect(await read()).toMatchObject({
    ratelimit: { limit: 10 },
    ratelimits: [{ name: 'requests' }],
  });
  const withDefault = [{ name: 'default', limit: 4, duration: 1000 }, tokens];
  expect((await api.post('keys.updateKey', { keyId, ratelimits: withDefault })).status).toBe(200);
  expect(await read()).toMatchObject({
    ratelimit: { type: 'consistent', limit: 4, refillRate: 4, refillInterval: 1000 },
    ratelimits: [{ name: 'tokens' }],
  });
  expect((await api.post('keys.updateKey', { keyId, ratelimits: null })).status).toBe(200);
  const cleared = await read();
  expect(cleared.ratelimit).toMatchObject({ limit: 4 });
  expect(cleared.ratelimits).toBeUndefined();

  const both = await api.post<ErrorBody>('keys.updateKey', {
    keyId,
    ratelimit: { limit: 1, duration: 1000 },
    ratelimits: withDefault,
  });
  expect(both.status).toBe(400);
  expect(both.body.error.message).toMatch(/^ratelimits\[0\]\.name: "default"/);
});

test('named buckets are readable with redis-cli: fast ones on the node-local Redis, the rest on the primary', async () => {
  const { keyId, key } = await createKey(api, apiId, { ratelimits: [tokens, requests] });
  await verify(key, [{ name: 'tokens', cost: 5 }]);
  const primary = new Redis(topology.primary.url);
  const local = new Redis(topology.locals[0]!.url);
  try {
    expect(await primary.hget(`keyward:bucket:{${keyId}}:requests`, 'tokens')).toBe('2');
    expect(await local.hget(`keyward:bucket:{${keyId}}:tokens`, 'tokens')).toBe('95');
    expect(await primary.exists(`keyward:bucket:{${keyId}}:tokens`)).toBe(0);
  } finally {
    primary.disconnect();
    local.disconnect();
  }
});
