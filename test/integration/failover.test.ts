import type { RunningNode } from '../../src/node';
import { closeRedis, connectRedis, createPrimary, type RedisClient } from '../../src/redis/clients';
import { loadConfig } from '../../src/config';
import { client, type Client } from '../support/rpc';
import { eventually, hour, sleep } from '../support/helpers';
import { startRedisCluster, type TestCluster } from '../support/redisCluster';
import { startSentinelGroup, type SentinelGroup } from '../support/sentinel';
import { createTestRootKey, nodeEnv, startTestNode } from '../support/topology';
import { HANG_MS, startVerifyLoad, type LoadAnswer, type VerifyLoad } from '../support/verifyLoad';

/**
 * An unplanned failover under load (issue 17), behind Sentinels and on a Redis Cluster. Sentinel:
 * a master, two replicas that reach it through relays, three Sentinels; three nodes find the
 * primary through the Sentinels. Cluster: three masters with two replicas each, the partition made
 * by a password the replicas lack and a CLIENT KILL of their links. Three nodes with replicated
 * durability and three with local durability each verify a consistent key of their own (both
 * buckets on the one master that dies) without pause. Replication is cut, so that nothing the
 * master does from then on reaches a replica; the master is SIGKILLed; a replica is promoted.
 *
 * With replicated durability no token is admitted twice: every VALID answer is spent in the
 * promoted replica's bucket. With local durability the same failover admits tokens twice, which
 * is what gives the first its teeth. Both run through one failover of each topology: starting a
 * topology and failing it over is most of what the test costs.
 */
const locally = process.env.KEYWARD_TEST_REDIS !== 'containers';

/** Never refused: what the bucket holds afterwards counts the spends that survived. */
const LIMIT = 100_000;

interface Outcome {
  answers: LoadAnswer[];
  valid: number;
  unevaluated: number;
  /** Tokens the surviving bucket shows spent. */
  spent: number;
  /** From the SIGKILL to each node's first VALID after it, ms. */
  recoveryMs: number[];
}

type Durability = 'replicated' | 'local';

/** Where the primary is, and how it dies. */
interface Topology {
  /** How nodes find the primary. */
  env: Record<string, string>;
  /** Names the master that holds `keyId`'s consistent bucket (the same for two keys on one). */
  shardOf(keyId: string): Promise<string>;
  /** Partitions the replicas from the master that holds `keyId`'s bucket. */
  cutReplication(keyId: string): Promise<void>;
  /** SIGKILLs the master that holds `keyId`'s consistent bucket; answers when (performance.now()). */
  crash(keyId: string): Promise<number>;
  /** Roles and replication of the servers, for a failure's message. */
  describe(): Promise<string>;
  stop(): Promise<void>;
}

async function sentinelTopology(): Promise<Topology> {
  const group: SentinelGroup = await startSentinelGroup({
    replicas: 2,
    sentinels: 3,
    downAfterMs: 400,
  });
  return {
    env: {
      KEYWARD_REDIS_SENTINELS: group.sentinels,
      KEYWARD_REDIS_SENTINEL_MASTER: group.masterName,
    },
    shardOf: async () => 'the master',
    cutReplication: async () => group.cutReplication(),
    async crash() {
      const killedAt = performance.now();
      await group.kill(group.ports[0]!);
      return killedAt;
    },
    describe: () => group.describe(),
    stop: () => group.stop(),
  };
}

/** Three masters with two replicas each: one replica may die and WAIT 1 still be answered. */
async function clusterTopology(): Promise<Topology> {
  const cluster: TestCluster = await startRedisCluster(3, 2);
  const slotOf = async (keyId: string) => {
    const answer = await cluster.cli(cluster.nodes[0]!.port, 'CLUSTER', 'KEYSLOT', `{${keyId}}`);
    if (!/^\d+$/.test(answer)) throw new Error(`CLUSTER KEYSLOT answered "${answer}"`);
    return Number(answer);
  };
  return {
    env: { KEYWARD_REDIS_CLUSTER_NODES: cluster.seeds },
    shardOf: async (keyId) => String(await cluster.masterOf(await slotOf(keyId))),
    async cutReplication(keyId) {
      await cluster.cutReplicationOf(await slotOf(keyId));
    },
    async crash(keyId) {
      return (await cluster.killMasterOf(await slotOf(keyId))).killedAt;
    },
    describe: () => cluster.cli(cluster.nodes[1]!.port, 'CLUSTER', 'NODES'),
    stop: () => cluster.stop(),
  };
}

/** The nodes of one durability, the key they verify, and the load on them. */
interface Group {
  nodes: RunningNode[];
  apis: Client[];
  key: string;
  keyId: string;
  load?: VerifyLoad;
}

const DURABILITIES: readonly Durability[] = ['replicated', 'local'];

/**
 * One failover of a fresh topology under load, seen by three nodes of each durability: what
 * each group's answers were, and what survived of its bucket.
 */
async function failoverUnderLoad(
  start: () => Promise<Topology>,
): Promise<Record<Durability, Outcome>> {
  const topology = await start();
  const nodes: RunningNode[] = [];
  let admin: RedisClient | undefined;
  const groups = new Map<Durability, Group>();
  try {
    const envOf = (durability: Durability) => ({
      ...topology.env,
      KEYWARD_CONSISTENT_DURABILITY: durability,
      KEYWARD_REPLICA_WAIT_MS: '200',
      KEYWARD_ANALYTICS: 'off',
    });
    admin = createPrimary(loadConfig(nodeEnv({ env: envOf('replicated') })));
    await connectRedis(admin);
    const root = await createTestRootKey(admin);
    let apiId: string | undefined;
    let shard: string | undefined;
    for (const durability of DURABILITIES) {
      const own: RunningNode[] = [];
      for (let i = 0; i < 3; i++) own.push(await startTestNode({ env: envOf(durability) }));
      nodes.push(...own);
      const apis: Client[] = own.map((node) => client(node.url, root.key));
      apiId ??= (await apis[0]!.post<{ apiId: string }>('apis.createApi', { name: 'ha' })).body
        .apiId;
      // Both buckets on the master that dies: a key of another shard is made again.
      let created: { key: string; keyId: string } | undefined;
      for (let attempt = 0; attempt < 60 && created === undefined; attempt++) {
        const answer = await apis[0]!.post<{ key: string; keyId: string }>('keys.createKey', {
          apiId,
          ratelimit: { type: 'consistent', limit: LIMIT, refillRate: 1, refillInterval: hour },
        });
        // Before the failover, a 503 is the set-up's, not the test's: a replica of the new cluster
        // still syncing, or a write past its deadline on a busy machine (seen once in ten full
        // runs). Asked again; anything else must be a 200.
        if (answer.status === 503) {
          await sleep(100);
          continue;
        }
        expect(answer.status).toBe(200);
        const candidate = answer.body;
        const its = await topology.shardOf(candidate.keyId);
        shard ??= its;
        if (its === shard) created = candidate;
      }
      if (created === undefined) throw new Error(`no key of ${durability} on ${shard}`);
      // Every node knows its key before the load starts (its record is read once, then cached).
      for (const api of apis) {
        const { code } = (await api.post<{ code: string }>('keys.verifyKey', { key: created.key }))
          .body;
        expect(code).toBe('VALID');
      }
      groups.set(durability, { nodes: own, apis, ...created });
    }
    const group = (durability: Durability) => groups.get(durability)!;
    for (const durability of DURABILITIES) {
      const { nodes: own, key } = group(durability);
      group(durability).load = startVerifyLoad(
        own.map((node) => node.url),
        root.key,
        { key },
      );
    }
    await sleep(500);
    await topology.cutReplication(group('replicated').keyId);
    await sleep(300);
    const killedAt = await topology.crash(group('replicated').keyId);
    const firstValidAfter = (durability: Durability, node: number) =>
      group(durability).load!.answers.find(
        (a) => a.node === node && a.code === 'VALID' && a.sentAt > killedAt,
      );
    await eventually(
      async () =>
        DURABILITIES.every((durability) =>
          group(durability).nodes.every((_, node) => firstValidAfter(durability, node)),
        ),
      {
        what: 'every node verifying again after the failover',
        timeoutMs: 30_000,
        intervalMs: 50,
      },
    );
    await sleep(300);
    const outcomes = {} as Record<Durability, Outcome>;
    for (const durability of DURABILITIES) {
      const { nodes: own, apis, key, load } = group(durability);
      const answers = await load!.stop();
      const recoveryMs = own.map(
        (_, node) => firstValidAfter(durability, node)!.answeredAt - killedAt,
      );

      // What survived, read on the promoted replica without spending (with replicated
      // durability, once the other replica follows it: the read is a script, and waits for one
      // too).
      let read: { code: string; ratelimit?: { remaining: number } } = { code: 'NOT_READ' };
      await eventually(
        async () => {
          read = (
            await apis[0]!.post<typeof read>('keys.verifyKey', { key, ratelimit: { cost: 0 } })
          ).body;
          return read.code === 'VALID';
        },
        {
          what: 'the surviving bucket read',
          timeoutMs: 30_000,
          intervalMs: 100,
          onTimeout: 'return',
        },
      );
      if (read.code !== 'VALID') {
        // What the Redis servers and the Sentinels make of it, for the failure's message.
        throw new Error(
          `the surviving bucket (${durability}) was not read (${read.code}); ` +
            (await topology.describe()),
        );
      }
      const spent = LIMIT - read.ratelimit!.remaining;
      // Each VALID of the preparation spent one token too.
      const valid = answers.filter((a) => a.code === 'VALID').length + apis.length;
      const unevaluated = answers.filter((a) => a.code === 'LIMITER_UNAVAILABLE').length;
      outcomes[durability] = { answers, valid, unevaluated, spent, recoveryMs };
    }
    return outcomes;
  } finally {
    await Promise.all([...groups.values()].map((group) => group.load?.stop()));
    await Promise.all(nodes.map((node) => node.close()));
    if (admin) await closeRedis(admin);
    await topology.stop();
  }
}

/** During the switch every answer is a verdict or a 503 in the envelope: no 500, no hang. */
function expectOnlyVerdictsOr503(answers: LoadAnswer[]): void {
  const strays = answers.filter(
    (a) =>
      !(a.status === 200 && ['VALID', 'LIMITER_UNAVAILABLE'].includes(a.code)) &&
      !(a.status === 503 && a.code === 'SERVICE_UNAVAILABLE'),
  );
  expect(strays).toEqual([]);
  expect(Math.max(...answers.map((a) => a.answeredAt - a.sentAt))).toBeLessThan(HANG_MS);
}

function report(topology: string, outcome: Outcome): void {
  const { answers, valid, unevaluated, spent, recoveryMs } = outcome;
  console.log(
    `failover (${topology}): ${answers.length} answers, ${valid} VALID, ${unevaluated} unevaluated; ` +
      `the survivor holds ${spent} spends: ${Math.max(0, valid - spent)} tokens admitted twice, ` +
      `${Math.max(0, spent - valid)} spends of unevaluated answers kept; ` +
      `service back after ${recoveryMs.map((ms) => Math.round(ms)).join(', ')} ms`,
  );
}

/** Replicated durability: no token admitted twice, no spend beyond the answers unevaluated. */
function expectEveryValidSurvived(outcome: Outcome): void {
  expectOnlyVerdictsOr503(outcome.answers);
  // Every VALID answer is spent in the bucket that survived …
  expect(outcome.spent).toBeGreaterThanOrEqual(outcome.valid);
  // … and nothing beyond the verifications answered unevaluated.
  expect(outcome.spent).toBeLessThanOrEqual(outcome.valid + outcome.unevaluated);
  // The cut made verifications unevaluated before the kill: the WAIT was what refused them.
  expect(outcome.unevaluated).toBeGreaterThan(0);
}

/** Local durability: what the master admitted after the cut is admitted again. */
function expectTokensAdmittedTwice(outcome: Outcome): void {
  expectOnlyVerdictsOr503(outcome.answers);
  expect(outcome.spent).toBeLessThan(outcome.valid);
}

const topologies = [
  ['Sentinel', sentinelTopology, 90_000],
  ['Redis Cluster', clusterTopology, 150_000],
] as const;

(locally ? describe : describe.skip)('an unplanned failover under load', () => {
  describe.each(topologies)('%s', (name, topology, timeoutMs) => {
    let outcomes: Record<Durability, Outcome> | undefined;
    beforeAll(async () => {
      outcomes = await failoverUnderLoad(topology);
    }, timeoutMs);

    test('replicated durability: no token is admitted twice, and service comes back', () => {
      report(`${name}, replicated`, outcomes!.replicated);
      expectEveryValidSurvived(outcomes!.replicated);
    });

    test('local durability: the same failover admits tokens twice', () => {
      report(`${name}, local`, outcomes!.local);
      expectTokensAdmittedTwice(outcomes!.local);
    });
  });
});
