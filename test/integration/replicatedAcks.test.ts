import type { Redis } from 'ioredis';
import { closeRedis, connectRedis, createRedis } from '../../src/redis/clients';
import { acknowledgeAfterReplicas, ReplicasUnconfirmedError } from '../../src/redis/replicatedAcks';
import type { RunningNode } from '../../src/node';
import { createKey, eventually, hour } from '../support/helpers';
import { client } from '../support/rpc';
import { createTestRootKey, startTestNode } from '../support/topology';
import { startSentinelGroup, type SentinelGroup } from '../support/sentinel';

/**
 * KEYWARD_CONSISTENT_DURABILITY=replicated at its root: a write on a client made durable answers
 * once the replicas hold it, with one WAIT after each batch of writes, and fails when they do not
 * confirm in time. A master and one replica behind a relay the test can cut.
 */
const locally = process.env.KEYWARD_TEST_REDIS !== 'containers';

let group: SentinelGroup;
let durable: Redis;
let strict: Redis;
let master: Redis;
let replica: Redis;

const options = { commandTimeoutMs: 2000, connectTimeoutMs: 2000 };

async function waitCalls(): Promise<number> {
  const stats = await master.info('commandstats');
  return Number(/cmdstat_wait:calls=(\d+)/.exec(stats)?.[1] ?? 0);
}

(locally ? describe : describe.skip)('replica acknowledgements', () => {
  beforeAll(async () => {
    group = await startSentinelGroup({ replicas: 1, sentinels: 0 });
    const [masterPort, replicaPort] = group.ports;
    const url = `redis://127.0.0.1:${masterPort}`;
    durable = createRedis(url, options);
    // A loaded machine (a whole suite on two cores) can hold a replica's ack past 300 ms.
    acknowledgeAfterReplicas(durable, { minReplicas: 1, waitMs: 1000 });
    strict = createRedis(url, options);
    acknowledgeAfterReplicas(strict, { minReplicas: 2, waitMs: 100 });
    master = createRedis(url, options);
    replica = createRedis(`redis://127.0.0.1:${replicaPort}`, options);
    await Promise.all([durable, strict, master, replica].map(connectRedis));
    await eventually(async () => /master_link_status:up/.test(await replica.info('replication')), {
      what: 'the replica in sync',
    });
    // The link being up on the replica's side is not yet the master counting its acks.
    await eventually(async () => (await master.wait(1, 200)) >= 1, {
      what: 'the master counting its replica',
    });
  });
  afterAll(async () => {
    for (const client of [durable, strict, master, replica]) if (client) await closeRedis(client);
    await group?.stop();
  });

  test('a write answers once the replica holds it', async () => {
    expect(await durable.set('held', 'yes')).toBe('OK');
    // No waiting here: the WAIT already did.
    expect(await replica.get('held')).toBe('yes');
    expect(await durable.eval("return redis.call('incrby', KEYS[1], 5)", 1, 'counted')).toBe(5);
    expect(await replica.get('counted')).toBe('5');
  });

  test('one WAIT follows each batch of writes; reads send none', async () => {
    const before = await waitCalls();
    const [a, b, c, read] = await Promise.all([
      durable.incr('batch'),
      durable.incr('batch'),
      durable.hset('batch-hash', 'f', '1'),
      durable.get('batch'),
    ]);
    expect([a, b, c, read]).toEqual([1, 2, 1, '2']);
    expect(await waitCalls()).toBe(before + 1);
    await durable.incr('batch');
    await durable.incr('batch');
    expect(await waitCalls()).toBe(before + 3);
    await durable.get('batch');
    await durable.hgetall('batch-hash');
    expect(await waitCalls()).toBe(before + 3);
  });

  test('a MULTI waits once, after its EXEC', async () => {
    const before = await waitCalls();
    const replies = await durable.multi().set('tx-a', '1').incr('tx-b').exec();
    expect(replies).toEqual([
      [null, 'OK'],
      [null, 1],
    ]);
    expect(await waitCalls()).toBe(before + 1);
    expect(await replica.mget('tx-a', 'tx-b')).toEqual(['1', '1']);
  });

  test('a write the replica does not confirm in time fails, though the primary applied it', async () => {
    group.cutReplication();
    try {
      const failed = await durable.set('partitioned', 'applied').catch((error: unknown) => error);
      expect(failed).toBeInstanceOf(ReplicasUnconfirmedError);
      expect(failed).toMatchObject({ acknowledged: 0, required: 1 });
      expect(await master.get('partitioned')).toBe('applied');
      expect(await replica.get('partitioned')).toBeNull();
      // A transaction fails the same way.
      const tx = await durable
        .multi()
        .set('partitioned-tx', '1')
        .exec()
        .catch((error: unknown) => error);
      const outcome = Array.isArray(tx) ? tx[0]?.[0] : tx;
      expect(outcome).toBeInstanceOf(ReplicasUnconfirmedError);
    } finally {
      group.restoreReplication();
    }
    await eventually(async () => (await replica.get('partitioned')) === 'applied', {
      what: 'the held stream delivered once the link is back',
    });
  });

  test('more replicas required than exist: every write fails, reads answer', async () => {
    const failed = await strict.set('two-needed', '1').catch((error: unknown) => error);
    expect(failed).toBeInstanceOf(ReplicasUnconfirmedError);
    expect(failed).toMatchObject({ acknowledged: 1, required: 2 });
    expect(await strict.get('two-needed')).toBe('1');
  });

  test('an error reply is the error, not a replica failure', async () => {
    await master.set('text', 'not a number');
    await expect(durable.incr('text')).rejects.toThrow(/not an integer/);
  });

  test('through a node: a write the replicas miss is a 503 that says it was applied; fast keys never wait', async () => {
    const node: RunningNode = await startTestNode({
      primaryUrl: `redis://127.0.0.1:${group.ports[0]}`,
      env: {
        KEYWARD_CONSISTENT_DURABILITY: 'replicated',
        KEYWARD_REPLICA_WAIT_MS: '200',
        KEYWARD_ANALYTICS: 'off',
      },
    });
    try {
      const root = await createTestRootKey(master);
      const api = client(node.url, root.key);
      const { apiId } = (await api.post<{ apiId: string }>('apis.createApi', { name: 'acks' }))
        .body;
      const consistent = await createKey(api, apiId, {
        ratelimit: { type: 'consistent', limit: 100, refillRate: 1, refillInterval: hour },
      });
      const fast = await createKey(api, apiId, {
        ratelimit: { type: 'fast', limit: 100, refillRate: 1, refillInterval: hour },
      });
      for (const { key } of [consistent, fast]) {
        expect((await api.post<{ code: string }>('keys.verifyKey', { key })).body.code).toBe(
          'VALID',
        );
      }
      group.cutReplication();
      try {
        const before = await waitCalls();
        // The fast bucket lives in the primary here (no local Redis), on a connection that never waits.
        const fastAnswer = await api.post<{ code: string }>('keys.verifyKey', { key: fast.key });
        expect(fastAnswer.body.code).toBe('VALID');
        expect(await waitCalls()).toBe(before);
        const consistentAnswer = await api.post<{ code: string; valid: boolean }>(
          'keys.verifyKey',
          { key: consistent.key },
        );
        expect(consistentAnswer.body).toMatchObject({ valid: false, code: 'LIMITER_UNAVAILABLE' });
        const renamed = await api.post<{ error: { code: string; message: string } }>(
          'keys.updateKey',
          { keyId: consistent.keyId, name: 'renamed while cut' },
        );
        expect(renamed.status).toBe(503);
        expect(renamed.body.error.code).toBe('SERVICE_UNAVAILABLE');
        expect(renamed.body.error.message).toMatch(
          /the primary applied this write, but 0 of the 1 replicas required confirmed it in time/,
        );
        // Applied all the same: the primary holds it.
        expect(
          (await api.get<{ name?: string }>('keys.getKey', { keyId: consistent.keyId })).body.name,
        ).toBe('renamed while cut');
      } finally {
        group.restoreReplication();
      }
      await eventually(
        async () =>
          (await api.post<{ code: string }>('keys.verifyKey', { key: consistent.key })).body
            .code === 'VALID',
        { what: 'consistent verifications once the replica is back' },
      );
    } finally {
      await node.close();
    }
  });
});
