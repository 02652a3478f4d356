import type { ChildProcess } from 'node:child_process';
import { eventually } from './helpers';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  freePort,
  hasExited,
  redisCli,
  spawnRedisServer,
  spawnSentinel,
  stopProcess,
  waitForPing,
} from './redisServer';
import { startTcpRelay, type TcpRelay } from './tcpRelay';

/** A master, its replicas and the Sentinels that watch them, as local processes. */
export interface SentinelGroup {
  masterName: string;
  /** `host:port,…` of the Sentinels: KEYWARD_REDIS_SENTINELS. */
  sentinels: string;
  /** The ports of the master (first) and the replicas, as started. */
  ports: number[];
  /** SIGKILL one of the data servers (a crash: the Sentinels must promote a replica). */
  kill(port: number): Promise<void>;
  /**
   * Partition the replicas from the first master (they reach it through relays): nothing it
   * writes from now on reaches them, and their acknowledgements do not reach it.
   */
  cutReplication(): void;
  restoreReplication(): void;
  /** Each live server's role line and what the first Sentinel names as master. */
  describe(): Promise<string>;
  stop(): Promise<void>;
}

/** Each replica reaches the first master through a relay of its own, so a test can cut them. */
export async function startSentinelGroup(
  options: { replicas?: number; sentinels?: number; downAfterMs?: number } = {},
): Promise<SentinelGroup> {
  const { replicas = 2, sentinels = 3, downAfterMs = 400 } = options;
  const relays: TcpRelay[] = [];
  const masterName = 'keyward-test';
  const dir = mkdtempSync(join(tmpdir(), 'keyward-sentinel-'));
  const data = new Map<number, ChildProcess>();
  const quiet = ['--appendonly', 'no', '--loglevel', 'warning'];
  const masterPort = await freePort();
  const masterDir = mkdtempSync(join(dir, 'master-'));
  data.set(masterPort, spawnRedisServer(masterPort, masterDir, quiet));
  await waitForPing(masterPort);
  for (let i = 0; i < replicas; i++) {
    const port = await freePort();
    const relay = await startTcpRelay(masterPort);
    relays.push(relay);
    const replicaDir = mkdtempSync(join(dir, 'replica-'));
    data.set(
      port,
      spawnRedisServer(port, replicaDir, [
        ...quiet,
        '--replicaof',
        '127.0.0.1',
        String(relay.port),
      ]),
    );
    await waitForPing(port);
  }
  // A replica counts for WAIT, and can be promoted, only once it has synced.
  await eventually(
    async () => {
      const info = await redisCli(masterPort, 'INFO', 'replication');
      return (info.match(/state=online/g) ?? []).length === replicas;
    },
    { what: `${replicas} replicas in sync`, timeoutMs: 10_000, intervalMs: 25 },
  );
  const watchers: ChildProcess[] = [];
  const sentinelPorts: number[] = [];
  for (let i = 0; i < sentinels; i++) {
    const port = await freePort();
    watchers.push(spawnSentinel(port, dir, masterName, masterPort, downAfterMs));
    sentinelPorts.push(port);
  }
  for (const port of sentinelPorts) await waitForPing(port);
  return {
    masterName,
    sentinels: sentinelPorts.map((port) => `127.0.0.1:${port}`).join(','),
    ports: [...data.keys()],
    async kill(port) {
      const child = data.get(port);
      if (child) await stopProcess(child, 'SIGKILL');
    },
    async describe() {
      const lines: string[] = [];
      for (const [port, child] of data) {
        if (hasExited(child)) continue;
        lines.push(`${port}: ${(await redisCli(port, 'ROLE')).split('\n').join(' ')}`);
      }
      const named = await redisCli(
        sentinelPorts[0]!,
        'SENTINEL',
        'get-master-addr-by-name',
        masterName,
      ).catch(() => 'unreachable');
      lines.push(`sentinel names ${named.split('\n').join(':')}`);
      return lines.join('; ');
    },
    cutReplication() {
      for (const relay of relays) relay.cut();
    },
    restoreReplication() {
      for (const relay of relays) relay.restore();
    },
    async stop() {
      await Promise.all(watchers.map((child) => stopProcess(child)));
      await Promise.all([...data.values()].map((child) => stopProcess(child)));
      await Promise.all(relays.map((relay) => relay.close()));
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
