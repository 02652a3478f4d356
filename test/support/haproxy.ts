import { spawn, type ChildProcess } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join } from 'node:path';
import { freePort } from './redisServer';
import { sleep } from './helpers';

/**
 * An HAProxy in front of local keyward nodes, configured from deploy/haproxy-local.cfg.in, the
 * template scripts/cluster.sh renders too: the test exercises the load-balancer policy that the
 * cluster ships, not a copy of it.
 */
export interface LoadBalancer {
  url: string;
  port: number;
  /** One command on the runtime API (`show stat`, `set server keyward/n1 state maint`, …). */
  command(line: string): Promise<string>;
  /** How the load balancer sees a node: `UP`, `DOWN`, `MAINT`, …, and its sessions in flight. */
  server(name: string): Promise<{ status: string; sessions: number }>;
  /** Resolves once every node is `UP` (health check passed), or rejects after `timeoutMs`. */
  waitUntilUp(names: string[], timeoutMs?: number): Promise<void>;
  /** The access log so far (one line per request, with retries and termination state). */
  log(): string;
  stop(): Promise<void>;
}

export interface BackendServer {
  name: string;
  port: number;
}

const TEMPLATE = join(__dirname, '..', '..', 'deploy', 'haproxy-local.cfg.in');

export function renderHaproxyConfig(options: {
  name: string;
  bind: string;
  adminSocket: string;
  servers: BackendServer[];
}): string {
  const servers = options.servers
    .map((server) => `  server ${server.name} 127.0.0.1:${server.port}`)
    .join('\n');
  return readFileSync(TEMPLATE, 'utf8')
    .split('\n')
    .map((line) => (line.trim() === '@SERVERS@' ? servers : line))
    .join('\n')
    .replaceAll('@LB_NAME@', options.name)
    .replaceAll('@LB_BIND@', options.bind)
    .replaceAll('@ADMIN_SOCKET@', options.adminSocket);
}

function runtimeCommand(socketPath: string, line: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(socketPath);
    let answer = '';
    socket.setTimeout(5_000, () => socket.destroy(new Error(`${socketPath}: no answer`)));
    socket.on('connect', () => socket.write(`${line}\n`));
    socket.on('data', (chunk) => (answer += chunk.toString()));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
  });
}

const processes = new Set<ChildProcess>();
process.on('exit', () => {
  for (const child of processes) child.kill('SIGKILL');
});

export async function startHaproxy(options: {
  binary: string;
  /** A directory of the test's own for the config, the admin socket and the log. */
  dir: string;
  servers: BackendServer[];
}): Promise<LoadBalancer> {
  const port = await freePort();
  const adminSocket = join(options.dir, 'haproxy.sock');
  const configFile = join(options.dir, 'haproxy.cfg');
  const logFile = join(options.dir, 'haproxy.log');
  writeFileSync(
    configFile,
    renderHaproxyConfig({
      name: 'scaleout',
      bind: `127.0.0.1:${port}`,
      adminSocket,
      servers: options.servers,
    }),
  );
  let log = '';
  const child = spawn(options.binary, ['-db', '-f', configFile], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  processes.add(child);
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const collect = (chunk: Buffer) => {
    log += chunk.toString();
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);

  const command = (line: string) => runtimeCommand(adminSocket, line);
  const server = async (name: string) => {
    for (const row of (await command('show stat')).split('\n')) {
      const fields = row.split(',');
      // CSV columns: pxname, svname, …, scur (5th), …, status (18th).
      if (fields[0] === 'keyward' && fields[1] === name) {
        return { status: fields[17] ?? '', sessions: Number(fields[4] ?? 0) };
      }
    }
    throw new Error(`the load balancer has no server ${name}`);
  };
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      await exited;
    }
    processes.delete(child);
    writeFileSync(logFile, log);
  };
  const waitUntilUp = async (names: string[], timeoutMs = 15_000) => {
    const started = Date.now();
    for (;;) {
      const states = await Promise.all(names.map((name) => server(name).catch(() => undefined)));
      if (states.every((state) => state?.status === 'UP')) return;
      if (child.exitCode !== null) throw new Error(`haproxy exited: ${log}`);
      if (Date.now() - started > timeoutMs) {
        throw new Error(`nodes not UP at the load balancer: ${JSON.stringify(states)}`);
      }
      await sleep(50);
    }
  };
  try {
    await waitUntilUp(options.servers.map((s) => s.name));
  } catch (error) {
    await stop();
    throw error;
  }
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    command,
    server,
    waitUntilUp,
    log: () => log,
    stop,
  };
}
