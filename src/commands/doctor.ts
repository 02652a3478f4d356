import { Cluster, type Redis } from 'ioredis';
import { checkClickHouse } from './clickhouseChecks';
import type { CommandSpec } from './framework';
import { emit } from './output';
import {
  checkLatency,
  checkServer,
  clusterStateCheck,
  type CheckResult,
  type Holds,
  type ServerCheckOptions,
} from './redisChecks';
import { connectClient, type RedisRole, type Runtime } from './runtime';

/** Connects and PINGs one standalone Redis, then runs the server checks on it. */
async function checkStandalone(
  redis: Redis,
  options: ServerCheckOptions,
  where: string,
): Promise<CheckResult[]> {
  try {
    await connectClient(redis);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return [
      {
        target: options.target,
        check: 'reachable',
        status: 'fail',
        detail: `${message} (${where})`,
      },
    ];
  }
  const latency = await checkLatency(redis, options).catch((error: unknown) => ({
    status: 'fail' as const,
    detail: error instanceof Error ? error.message : String(error),
  }));
  const reachable: CheckResult = {
    target: options.target,
    check: 'reachable',
    status: latency.status,
    detail: `${latency.detail} (${where})`,
  };
  return [reachable, ...(await checkServer(redis, options))];
}

/** The cluster's own state, then every master as a primary of its own. */
async function checkCluster(
  cluster: Cluster,
  options: Omit<ServerCheckOptions, 'target'>,
  where: string,
): Promise<CheckResult[]> {
  try {
    await connectClient(cluster);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    return [
      { target: 'cluster', check: 'reachable', status: 'fail', detail: `${message} (${where})` },
    ];
  }
  const masters = cluster.nodes('master');
  const results: CheckResult[] = [];
  try {
    const info = await cluster.cluster('INFO');
    results.push({
      target: 'cluster',
      check: 'state',
      ...clusterStateCheck(String(info), masters.length),
    });
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    results.push({ target: 'cluster', check: 'state', status: 'fail', detail: message });
  }
  const perMaster = await Promise.all(
    masters.map((master) => {
      const address = `${master.options.host ?? '?'}:${master.options.port ?? '?'}`;
      return checkStandalone(master, { ...options, target: `primary ${address}` }, address);
    }),
  );
  return [...results, ...perMaster.flat()];
}

const HOLDS: Readonly<Record<RedisRole, Holds>> = {
  primary: 'records',
  local: 'buckets',
  analytics: 'counts',
};

async function checkRole(runtime: Runtime, role: RedisRole): Promise<CheckResult[]> {
  const client = runtime.createClient(role);
  const options = {
    holds: HOLDS[role],
    nodeCommandTimeoutMs: runtime.config.redisCommandTimeoutMs,
  };
  const where = runtime.describe(role);
  return client instanceof Cluster
    ? checkCluster(client, options, where)
    : checkStandalone(client, { ...options, target: role }, where);
}

function humanLines(checks: readonly CheckResult[]): string[] {
  const targetWidth = Math.max(...checks.map((check) => check.target.length));
  const checkWidth = Math.max(...checks.map((check) => check.check.length));
  return checks.map(
    (check) =>
      `${check.status.toUpperCase().padEnd(4)}  ${check.target.padEnd(targetWidth)}  ${check.check.padEnd(checkWidth)}  ${check.detail}`,
  );
}

const doctor: CommandSpec = {
  path: ['doctor'],
  brief: 'check every configured Redis (and ClickHouse)',
  summary:
    'Checks every Redis this configuration names: the primary (or each master of the cluster), the local Redis and the analytics Redis; and ClickHouse, when KEYWARD_CLICKHOUSE_URL is set. One line per check: OK, WARN or FAIL. Exits 0 when nothing failed (warnings included), 1 otherwise.',
  notes: [
    'checks:',
    '  reachable    connects and PINGs; WARN when the latency is over half of KEYWARD_REDIS_COMMAND_TIMEOUT_MS',
    '  version      INFO server; WARN below Redis 7.0',
    '  persistence  primary and analytics: WARN unless appendonly yes; FAIL when the last AOF write failed',
    '  memory       primary and analytics: WARN when maxmemory is set with a policy other than noeviction',
    '  scripts      primary and local: SCRIPT LOAD of every lua/*.lua',
    "  clock        TIME against this machine's clock; WARN beyond 1 s",
    '  layout       primary: WARN while keys or identities of the previous layout remain (run keyward migrate)',
    '  state        cluster only: CLUSTER INFO, every slot ok',
    'ClickHouse (KEYWARD_CLICKHOUSE_URL):',
    '  reachable    SELECT version(); FAIL when it does not answer in 5 s',
    '  version      WARN below 18.16',
    '  schema       WARN unless the analytics schema is the version this build writes',
    '  read-only    the reader of KEYWARD_CLICKHOUSE_READER_URL: FAIL when it can write, WARN at readonly=1',
  ].join('\n'),
  example: 'keyward doctor',
  async run(invocation, runtime) {
    const roles: RedisRole[] = ['primary'];
    if (!runtime.localIsPrimary) roles.push('local');
    // Checked with counting off too: the nodes still read the counts stored there.
    if (!runtime.analyticsIsPrimary) roles.push('analytics');
    const clickhouse = runtime.config.clickhouse;
    const checks = (
      await Promise.all([
        ...roles.map((role) => checkRole(runtime, role)),
        ...(clickhouse ? [checkClickHouse(clickhouse)] : []),
      ])
    ).flat();
    if (runtime.localIsPrimary) {
      checks.push({
        target: 'local',
        check: 'reachable',
        status: 'ok',
        detail: 'KEYWARD_LOCAL_REDIS_URL is the primary: fast buckets live there too',
      });
    }
    if (runtime.analyticsIsPrimary) {
      checks.push({
        target: 'analytics',
        check: 'reachable',
        status: 'ok',
        detail: 'KEYWARD_ANALYTICS_REDIS_URL is the primary: usage counts live there too',
      });
    }
    const ok = checks.every((check) => check.status !== 'fail');
    emit(invocation, { ok, checks }, () => humanLines(checks));
    return ok ? 0 : 1;
  },
};

export const doctorCommands: readonly CommandSpec[] = [doctor];
