import { execFile, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { freePort, hasExited, redisCli, spawnRedisServer, stopProcess } from './redisServer';
import { eventually } from './helpers';

const run = promisify(execFile);

/** A real Redis Cluster of redis-server processes: `masters` masters, `replicas` replicas each. */
export interface TestCluster {
  nodes: { host: string; port: number }[];
  /** `host:port,host:port,…` for KEYWARD_REDIS_CLUSTER_NODES. */
  seeds: string;
  /** Promotes a replica of the master serving `slot`, gracefully (CLUSTER FAILOVER). */
  failoverSlot(slot: number): Promise<{ oldMaster: number; newMaster: number }>;
  /**
   * Partitions the master serving `slot` from its replicas: it takes a password (the clients
   * already connected stay authenticated) and drops its replicas' links, so that they cannot
   * come back. Nothing it writes from then on reaches them.
   */
  cutReplicationOf(slot: number): Promise<void>;
  /**
   * SIGKILLs the master serving `slot` (a crash, not CLUSTER FAILOVER) and waits until the
   * cluster has promoted one of its replicas (`forced`: by CLUSTER FAILOVER TAKEOVER, when no
   * election took within 15 s).
   */
  killMasterOf(
    slot: number,
  ): Promise<{ oldMaster: number; newMaster: number; killedAt: number; forced: boolean }>;
  /** The port of the live master that serves `slot`. */
  masterOf(slot: number): Promise<number>;
  cli(port: number, ...args: string[]): Promise<string>;
  stop(): Promise<void>;
}

const waitFor = (check: () => Promise<boolean>, what: string) =>
  eventually(check, { what: `redis cluster: ${what}`, timeoutMs: 10_000, intervalMs: 50 });

/** What cutReplicationOf makes a master ask of every new connection. */
const PARTITION_PASSWORD = 'partitioned';

export async function startRedisCluster(masters = 3, replicas = 1): Promise<TestCluster> {
  const partitioned = new Set<number>();
  // A partitioned master asks new connections for the password its replicas lack.
  const cli = (port: number, ...args: string[]) =>
    partitioned.has(port)
      ? redisCli(port, '-a', PARTITION_PASSWORD, '--no-auth-warning', ...args)
      : redisCli(port, ...args);
  /** A replica can take over only once it has synced with its master. */
  const replicasInSync = async () => {
    for (const port of ports) {
      await waitFor(async () => {
        const role = (await cli(port, 'ROLE')).split('\n');
        return role[0] === 'master' || role[3] === 'connected' || !live(port);
      }, `replica ${port} in sync`);
    }
  };
  const live = (port: number) => {
    const child = processes[ports.indexOf(port)];
    return child !== undefined && !hasExited(child);
  };
  const dir = mkdtempSync(join(tmpdir(), 'keyward-cluster-'));
  const ports: number[] = [];
  const processes: ChildProcess[] = [];
  const logFile = (port: number) => `node-${port}.log`;
  /** The end of a node's log, for an error that a failover did not happen. */
  const logTail = (port: number, lines = 25) => {
    try {
      const text = readFileSync(join(dir, logFile(port)), 'utf8')
        .trimEnd()
        .split('\n');
      return `log of ${port}:\n${text.slice(-lines).join('\n')}`;
    } catch {
      return `no log of ${port}`;
    }
  };
  const stop = async () => {
    await Promise.all(processes.map((child) => stopProcess(child)));
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (let i = 0; i < masters * (1 + replicas); i++) {
      const port = await freePort();
      ports.push(port);
      const child = spawnRedisServer(port, dir, [
        '--appendonly',
        'no',
        '--cluster-enabled',
        'yes',
        '--cluster-config-file',
        `nodes-${port}.conf`,
        '--cluster-node-timeout',
        '2000',
        // Role changes are logged at `notice`: a failover that did not happen is told by them.
        '--loglevel',
        'notice',
        '--logfile',
        logFile(port),
      ]);
      processes.push(child);
    }
    for (const port of ports)
      await waitFor(async () => (await cli(port, 'PING')) === 'PONG', `PING ${port}`);
    await run('redis-cli', [
      '--cluster',
      'create',
      ...ports.map((port) => `127.0.0.1:${port}`),
      '--cluster-replicas',
      String(replicas),
      '--cluster-yes',
    ]);
    for (const port of ports) {
      await waitFor(
        async () => (await cli(port, 'CLUSTER', 'INFO')).includes('cluster_state:ok'),
        `state ok on ${port}`,
      );
    }
    await replicasInSync();
  } catch (error) {
    await stop();
    throw error;
  }

  /** CLUSTER NODES lines: `<id> <ip:port@cport> <flags> <master-id> … <slot ranges>`. */
  const clusterNodes = async () =>
    (await cli(ports.find(live)!, 'CLUSTER', 'NODES')).split('\n').map((line) => {
      const [id, address, flags, master, , , , , ...slots] = line.trim().split(' ');
      return {
        id: id!,
        port: Number(address!.split('@')[0]!.split(':')[1]),
        flags: flags!,
        master: master!,
        slots,
      };
    });
  const masterOf = async (slot: number): Promise<number> => {
    for (const node of await clusterNodes()) {
      if (!node.flags.includes('master') || node.flags.includes('fail') || !live(node.port))
        continue;
      for (const range of node.slots) {
        const [from, to] = range.split('-').map(Number);
        if (slot >= from! && slot <= (to ?? from)!) return node.port;
      }
    }
    throw new Error(`no master serves slot ${slot}`);
  };

  return {
    nodes: ports.map((port) => ({ host: '127.0.0.1', port })),
    seeds: ports.map((port) => `127.0.0.1:${port}`).join(','),
    masterOf,
    cli,
    stop,
    cutReplicationOf: async (slot) => {
      const master = await masterOf(slot);
      await cli(master, 'CONFIG', 'SET', 'requirepass', PARTITION_PASSWORD);
      partitioned.add(master);
      await cli(master, 'CLIENT', 'KILL', 'TYPE', 'replica');
    },
    killMasterOf: async (slot) => {
      const oldMaster = await masterOf(slot);
      const before = await clusterNodes();
      const oldId = before.find((node) => node.port === oldMaster)!.id;
      const replicaPorts = before.filter((node) => node.master === oldId).map((node) => node.port);
      const killedAt = performance.now();
      await stopProcess(processes[ports.indexOf(oldMaster)]!, 'SIGKILL');
      let newMaster = oldMaster;
      const promoted = (timeoutMs: number) =>
        eventually(
          async () => {
            newMaster = await masterOf(slot).catch(() => oldMaster);
            return newMaster !== oldMaster;
          },
          { timeoutMs, intervalMs: 100, onTimeout: 'return' },
        );
      // Redis's own failover takes 3-5 s here. Masters refuse to vote twice for one shard within
      // two node timeouts, so on a loaded machine, shortly after another failover of the same
      // shard, elections can miss each other for long: the replica then takes over without a
      // vote, as an operator would, so that the test goes on to what it is about.
      // A replica may also win its election and still not get the slots: when the dead master's
      // config epoch came from an earlier TAKEOVER (an epoch bumped without consensus), the
      // winner can draw the same epoch, and the other masters keep the slots with the dead one
      // (a claim must carry a greater epoch). A fresh epoch (CLUSTER BUMPEPOCH) makes its claim
      // win, as an operator would settle it.
      let forced = false;
      if (!(await promoted(15_000))) {
        const candidate = (await clusterNodes()).find(
          (node) => replicaPorts.includes(node.port) && live(node.port),
        );
        if (candidate !== undefined) {
          forced = true;
          const settle = candidate.flags.includes('master')
            ? ['CLUSTER', 'BUMPEPOCH']
            : ['CLUSTER', 'FAILOVER', 'TAKEOVER'];
          await cli(candidate.port, ...settle).catch(() => undefined);
          await promoted(15_000);
        }
      }
      if (newMaster === oldMaster) {
        const view = await cli(ports.find(live)!, 'CLUSTER', 'NODES');
        const logs = replicaPorts.map((port) => logTail(port)).join('\n');
        throw new Error(`no replica of ${oldMaster} promoted for slot ${slot}:\n${view}\n${logs}`);
      }
      return { oldMaster, newMaster, killedAt, forced };
    },
    failoverSlot: async (slot) => {
      const oldMaster = await masterOf(slot);
      const nodes = await clusterNodes();
      const oldId = nodes.find((node) => node.port === oldMaster)!.id;
      const replica = nodes.find(
        (node) => node.flags.includes('slave') && node.master === oldId,
      )?.port;
      if (replica === undefined) throw new Error(`no replica of ${oldMaster}`);
      await cli(replica, 'CLUSTER', 'FAILOVER');
      await waitFor(async () => (await cli(replica, 'ROLE')).startsWith('master'), 'failover');
      await waitFor(async () => (await masterOf(slot)) === replica, 'slot map update');
      await replicasInSync();
      return { oldMaster, newMaster: replica };
    },
  };
}
