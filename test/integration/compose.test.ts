import { spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { loadConfig } from '../../src/config';
import {
  freePort,
  spawnRedisServer,
  spawnSentinelFromFile,
  stopProcess,
  waitForPing,
} from '../support/redisServer';
import { ensureTool } from '../support/tools';

/**
 * docker-compose.yml against the code: `docker-compose config` accepts it, every variable it
 * gives a keyward service is one src/config.ts reads, every node has a liveness health check, each
 * region's nginx sends to exactly that region's nodes on the port they listen on, and the primary
 * keeps an append-only file. With docker-compose.ha.yml on top: two replicas of the primary, three
 * Sentinels running deploy/sentinel.conf, and every node finding the primary through all three
 * with replicated durability. No container is started; a Sentinel process checks that Redis
 * accepts deploy/sentinel.conf.
 */
const compose = ensureTool('docker-compose', 'docker-compose');
if (!compose.available && compose.fatal) throw new Error(compose.reason);
if (!compose.available) console.warn(`compose.test.ts skipped: ${compose.reason}`);
const suite = compose.available ? describe : describe.skip;
const title = compose.available
  ? 'docker-compose.yml'
  : `docker-compose.yml (skipped: ${compose.reason})`;

const ROOT = join(__dirname, '..', '..');
const COMPOSE_FILE = join(ROOT, 'docker-compose.yml');
const HA_FILE = join(ROOT, 'docker-compose.ha.yml');
const SENTINEL_CONF = join(ROOT, 'deploy', 'sentinel.conf');

interface Service {
  image?: string;
  build?: unknown;
  command?: string[] | string;
  environment?: Record<string, string | null>;
  healthcheck?: { test?: string[] | string };
  labels?: Record<string, string>;
  ports?: ({ published?: string | number; target?: number } | string)[];
  volumes?: ({ source?: string; target?: string } | string)[];
  depends_on?: Record<string, unknown> | string[];
}

function run(args: string[]) {
  return spawnSync(compose.available ? compose.path : 'docker-compose', args, {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 60_000,
  });
}

function fileArgs(files: readonly string[]): string[] {
  return files.flatMap((file) => ['-f', file]);
}

/** The resolved files as JSON: compose v2 prints it itself, v1 (Debian's) prints YAML. */
function resolvedConfig(files: readonly string[]): { services: Record<string, Service> } {
  const asJson = run([...fileArgs(files), 'config', '--format', 'json']);
  if (asJson.status === 0 && asJson.stdout.trim().startsWith('{')) {
    return JSON.parse(asJson.stdout) as { services: Record<string, Service> };
  }
  const asYaml = run([...fileArgs(files), 'config']);
  if (asYaml.status !== 0) throw new Error(`docker-compose config failed: ${asYaml.stderr}`);
  // Debian's docker-compose is Python and depends on PyYAML: read its output with that.
  const converted = spawnSync(
    'python3',
    ['-c', 'import json, sys, yaml; json.dump(yaml.safe_load(sys.stdin), sys.stdout)'],
    { input: asYaml.stdout, encoding: 'utf8' },
  );
  if (converted.status !== 0) {
    throw new Error(`cannot read docker-compose's YAML output: ${converted.stderr}`);
  }
  return JSON.parse(converted.stdout) as { services: Record<string, Service> };
}

function words(value: string[] | string | undefined): string[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : value.split(/\s+/).filter(Boolean);
}

function isKeyward(service: Service): boolean {
  return service.image === 'keyward:local' || service.build !== undefined;
}

/** A keyward service that serves (its command is the image's default, `serve`). */
function isNode(service: Service): boolean {
  const command = words(service.command);
  return isKeyward(service) && (command.length === 0 || command[0] === 'serve');
}

function dependsOn(service: Service): string[] {
  const deps = service.depends_on ?? [];
  return (Array.isArray(deps) ? deps : Object.keys(deps)).sort();
}

/** `host:container[:mode]` or the long form, normalised to source and target. */
function mounts(service: Service): { source: string; target: string }[] {
  return (service.volumes ?? []).map((volume) => {
    if (typeof volume === 'string') {
      const [source = '', target = ''] = volume.split(':');
      return { source, target };
    }
    return { source: volume.source ?? '', target: volume.target ?? '' };
  });
}

function containerPorts(service: Service): number[] {
  return (service.ports ?? []).map((port) =>
    typeof port === 'string' ? Number(port.split(':').pop()) : Number(port.target),
  );
}

function environment(service: Service): Record<string, string> {
  return Object.fromEntries(
    Object.entries(service.environment ?? {}).map(([k, v]) => [k, v ?? '']),
  );
}

/** The value after `flag` in a command line, e.g. `--appendonly yes`. */
function flagValues(service: Service, flag: string, count = 1): string[] | undefined {
  const command = words(service.command);
  const at = command.indexOf(flag);
  return at < 0 ? undefined : command.slice(at + 1, at + 1 + count);
}

function hostAndPort(url: string): { host: string; port: number } {
  const parsed = new URL(url);
  return { host: parsed.hostname, port: Number(parsed.port || 6379) };
}

/** Every environment variable src/config.ts reads: `env.NAME` and names passed as strings. */
function variablesReadByConfig(): Set<string> {
  const source = readFileSync(join(ROOT, 'src', 'config.ts'), 'utf8');
  const names = new Set<string>();
  for (const match of source.matchAll(/\benv\.([A-Z][A-Z0-9_]*)\b/g)) names.add(match[1]!);
  for (const match of source.matchAll(/\benv\[\s*'([A-Z][A-Z0-9_]*)'\s*\]/g)) names.add(match[1]!);
  for (const match of source.matchAll(/'((?:KEYWARD|LOG)_[A-Z0-9_]+)'/g)) names.add(match[1]!);
  return names;
}

/** `service: VARIABLE` for every variable a keyward service gets that src/config.ts never reads. */
function unknownVariables(services: Record<string, Service>): string[] {
  const known = variablesReadByConfig();
  const unknown: string[] = [];
  for (const [name, service] of Object.entries(services).filter(([, s]) => isKeyward(s))) {
    for (const variable of Object.keys(service.environment ?? {})) {
      if (!known.has(variable)) unknown.push(`${name}: ${variable}`);
    }
  }
  return unknown;
}

/** A Sentinel configuration as its directives, in order, comments and blank lines dropped. */
function sentinelDirectives(text: string): string[][] {
  return text
    .split('\n')
    .map((line) => line.replace(/#.*$/, '').trim())
    .filter(Boolean)
    .map((line) => line.split(/\s+/));
}

/** The directive that starts with `prefix` (`['sentinel', 'monitor']`), and where it stands. */
function directive(directives: string[][], ...prefix: string[]): { at: number; args: string[] } {
  const at = directives.findIndex((words) => prefix.every((word, i) => words[i] === word));
  return { at, args: at < 0 ? [] : directives[at]!.slice(prefix.length) };
}

interface Upstream {
  name: string;
  servers: { host: string; port: number }[];
}

/** The parts of an nginx site config the deployment depends on. */
function parseNginx(text: string): {
  upstreams: Upstream[];
  listen: number[];
  proxyPass: string[];
} {
  const code = text.replace(/#.*$/gm, '');
  const upstreams: Upstream[] = [];
  for (const block of code.matchAll(/upstream\s+(\S+)\s*\{([^}]*)\}/g)) {
    const servers = [...block[2]!.matchAll(/^\s*server\s+([^\s:;]+):(\d+)/gm)].map((m) => ({
      host: m[1]!,
      port: Number(m[2]),
    }));
    upstreams.push({ name: block[1]!, servers });
  }
  const listen = [...code.matchAll(/^\s*listen\s+(?:[\d.]+:)?(\d+)/gm)].map((m) => Number(m[1]));
  const proxyPass = [...code.matchAll(/proxy_pass\s+https?:\/\/([^\s/;]+)/g)].map((m) => m[1]!);
  return { upstreams, listen, proxyPass };
}

suite(title, () => {
  let services: Record<string, Service>;
  const nodes = () => Object.entries(services).filter(([, service]) => isNode(service));

  beforeAll(() => {
    services = resolvedConfig([COMPOSE_FILE]).services;
  }, 120_000);

  test('docker-compose config accepts the file', () => {
    const result = run(['-f', COMPOSE_FILE, 'config', '-q']);
    expect(result.stderr.trim()).toBe('');
    expect(result.status).toBe(0);
    expect(
      nodes()
        .map(([name]) => name)
        .sort(),
    ).toEqual(['keyward-euw1-a', 'keyward-euw1-b', 'keyward-use1-a', 'keyward-use1-b']);
  });

  test('every variable given to a keyward service is one src/config.ts reads', () => {
    const known = variablesReadByConfig();
    expect(known).toContain('KEYWARD_REDIS_URL');
    expect(known).toContain('LOG_LEVEL');
    expect(unknownVariables(services)).toEqual([]);
    // And the values are ones the node accepts.
    for (const [name, service] of nodes()) {
      const env = environment(service);
      expect(() => loadConfig(env)).not.toThrow();
      const config = loadConfig(env);
      expect([name, config.region]).toEqual([
        name,
        name.includes('euw1') ? 'eu-west-1' : 'us-east-1',
      ]);
    }
  });

  test('every node reaches the primary and a Redis of its own in its region', () => {
    const primaries = Object.entries(services).filter(
      ([, s]) => s.labels?.['keyward.role'] === 'primary',
    );
    expect(primaries.map(([name]) => name)).toEqual(['redis-primary']);
    expect(primaries[0]![1].labels?.['keyward.region']).toBe('us-east-1');
    const localsUsed: string[] = [];
    for (const [name, service] of nodes()) {
      const config = loadConfig(environment(service));
      expect([name, hostAndPort(config.redisUrl).host]).toEqual([name, 'redis-primary']);
      const local = hostAndPort(config.localRedisUrl).host;
      localsUsed.push(local);
      const labels = services[local]?.labels ?? {};
      expect([name, local, labels['keyward.role'], labels['keyward.region']]).toEqual([
        name,
        local,
        'local',
        config.region,
      ]);
      expect(dependsOn(service)).toEqual(expect.arrayContaining(['redis-primary', local]));
    }
    expect(new Set(localsUsed).size).toBe(localsUsed.length);
  });

  test('every node has a health check on GET /v1/liveness at the port it listens on', () => {
    for (const [name, service] of nodes()) {
      const port = service.environment?.KEYWARD_PORT ?? '8080';
      const check = words(service.healthcheck?.test).join(' ');
      expect([name, check]).toEqual([
        name,
        expect.stringContaining(`http://127.0.0.1:${port}/v1/liveness`),
      ]);
    }
  });

  test("each region's nginx names exactly that region's nodes, on the port they listen on", () => {
    const balancers = Object.entries(services).filter(([, s]) => s.image?.startsWith('nginx'));
    expect(balancers.length).toBe(2);
    const regionsServed: string[] = [];
    for (const [lbName, lb] of balancers) {
      const mount = mounts(lb).find((m) => /nginx-[a-z0-9-]+\.conf$/.test(m.source));
      expect([lbName, mount?.target]).toEqual([lbName, '/etc/nginx/conf.d/default.conf']);
      const region = basename(mount!.source).replace(/^nginx-|\.conf$/g, '');
      regionsServed.push(region);
      const nginx = parseNginx(readFileSync(join(ROOT, 'deploy', basename(mount!.source)), 'utf8'));

      const expected = nodes()
        .filter(([, s]) => s.environment?.KEYWARD_REGION === region)
        .map(([name, s]) => `${name}:${s.environment?.KEYWARD_PORT ?? '8080'}`)
        .sort();
      expect(expected.length).toBeGreaterThan(0);
      const named = nginx.upstreams.flatMap((u) => u.servers.map((s) => `${s.host}:${s.port}`));
      expect([lbName, named.sort()]).toEqual([lbName, expected]);
      // Its location proxies to that upstream, it listens on the port compose publishes, and it
      // starts after those nodes.
      expect(nginx.proxyPass).toEqual(nginx.upstreams.map((u) => u.name));
      expect(containerPorts(lb)).toEqual(nginx.listen);
      expect(dependsOn(lb)).toEqual(expected.map((e) => e.split(':')[0]));
    }
    expect(regionsServed.sort()).toEqual(['eu-west-1', 'us-east-1']);
  });

  test('the primary keeps an append-only file', () => {
    expect(flagValues(services['redis-primary']!, '--appendonly')).toEqual(['yes']);
    expect(mounts(services['redis-primary']!).map((m) => m.target)).toContain('/data');
  });

  test('every node sends its analytics to the ClickHouse service, whose reader cannot write', () => {
    const clickhouse = services.clickhouse!;
    expect(clickhouse.labels?.['keyward.role']).toBe('analytics');
    expect(clickhouse.healthcheck?.test).toEqual(
      expect.arrayContaining([expect.stringMatching(/8123\/ping/)]),
    );
    for (const [name, service] of nodes()) {
      const config = loadConfig(environment(service));
      expect([name, config.clickhouse?.target.origin, config.clickhouse?.target.database]).toEqual([
        name,
        'http://clickhouse:8123',
        'keyward',
      ]);
      expect([name, config.clickhouse?.reader?.user]).toEqual([name, 'keyward_reader']);
      // ClickHouse's rollups are what the readers read: no counts in Redis beside them.
      expect([name, config.analytics.countInRedis]).toEqual([name, false]);
      expect(dependsOn(service)).toContain('clickhouse');
    }
    // The users file the service mounts: the reader's profile is readonly=2, and no password is
    // written in it (each comes from the container's environment).
    const usersFile = mounts(clickhouse).find((m) => m.target.includes('/users.d/'));
    expect(usersFile).toBeDefined();
    const users = readFileSync(join(ROOT, 'deploy', basename(usersFile!.source)), 'utf8');
    const profile = /<users>[\s\S]*<keyward_reader>[\s\S]*?<profile>(\w+)<\/profile>/.exec(
      users,
    )?.[1];
    expect(profile).toBe('keyward_reader');
    expect(users).toMatch(new RegExp(`<profiles>[\\s\\S]*<${profile}>\\s*<readonly>2</readonly>`));
    expect(users.match(/<password[^>]*>/g)).toEqual([
      '<password from_env="KEYWARD_CLICKHOUSE_PASSWORD"/>',
      '<password from_env="KEYWARD_CLICKHOUSE_PASSWORD"/>',
    ]);
  });
});

suite(`${title} with docker-compose.ha.yml`, () => {
  let services: Record<string, Service>;
  const directives = sentinelDirectives(readFileSync(SENTINEL_CONF, 'utf8'));
  const [masterName, masterHost, masterPort, quorum] = directive(
    directives,
    'sentinel',
    'monitor',
  ).args;
  const withRole = (role: string) =>
    Object.entries(services)
      .filter(([, s]) => s.labels?.['keyward.role'] === role)
      .map(([name]) => name)
      .sort();

  beforeAll(() => {
    services = resolvedConfig([COMPOSE_FILE, HA_FILE]).services;
  }, 120_000);

  test('docker-compose config accepts the two files together, with the same four nodes', () => {
    const result = run([...fileArgs([COMPOSE_FILE, HA_FILE]), 'config', '-q']);
    expect(result.stderr.trim()).toBe('');
    expect(result.status).toBe(0);
    expect(
      Object.keys(services)
        .filter((name) => isNode(services[name]!))
        .sort(),
    ).toEqual(['keyward-euw1-a', 'keyward-euw1-b', 'keyward-use1-a', 'keyward-use1-b']);
    expect(unknownVariables(services)).toEqual([]);
  });

  test('two replicas of the primary; every data server keeps an append-only file and announces its name', () => {
    const replicas = withRole('replica');
    expect(replicas).toEqual(['redis-replica-1', 'redis-replica-2']);
    for (const name of replicas) {
      const replica = services[name]!;
      expect([name, flagValues(replica, '--replicaof', 2)]).toEqual([
        name,
        ['redis-primary', '6379'],
      ]);
      expect(dependsOn(replica)).toContain('redis-primary');
    }
    // Any of them may be the primary after a failover; the Sentinels and the nodes reach each one
    // by its service name, which a container created again keeps (its address it does not).
    for (const name of ['redis-primary', ...replicas]) {
      const server = services[name]!;
      expect([name, flagValues(server, '--appendonly')]).toEqual([name, ['yes']]);
      expect([name, flagValues(server, '--replica-announce-ip')]).toEqual([name, [name]]);
      expect([name, mounts(server).map((m) => m.target)]).toEqual([
        name,
        expect.arrayContaining(['/data']),
      ]);
    }
  });

  test('three Sentinels run deploy/sentinel.conf: the primary by name, a quorum of two', () => {
    const sentinels = withRole('sentinel');
    expect(sentinels).toEqual(['sentinel-1', 'sentinel-2', 'sentinel-3']);
    expect([masterHost, masterPort]).toEqual(['redis-primary', '6379']);
    expect(Number(quorum)).toBe(Math.floor(sentinels.length / 2) + 1);
    // Host names are resolved only when these come before `sentinel monitor`.
    const monitor = directive(directives, 'sentinel', 'monitor').at;
    for (const setting of ['resolve-hostnames', 'announce-hostnames']) {
      const { at, args } = directive(directives, 'sentinel', setting);
      expect([setting, args]).toEqual([setting, ['yes']]);
      expect(at).toBeLessThan(monitor);
    }
    // A failover-timeout near down-after-milliseconds gives up promotions halfway on a busy host;
    // the floor is the one the test Sentinels use (test/support/redisServer.ts).
    const downAfter = Number(
      directive(directives, 'sentinel', 'down-after-milliseconds', masterName!).args[0],
    );
    const failoverTimeout = Number(
      directive(directives, 'sentinel', 'failover-timeout', masterName!).args[0],
    );
    expect(downAfter).toBeGreaterThan(0);
    expect(failoverTimeout).toBeGreaterThanOrEqual(Math.max(4 * downAfter, 10_000));

    for (const name of sentinels) {
      const sentinel = services[name]!;
      const mount = mounts(sentinel).find((m) => basename(m.source) === 'sentinel.conf');
      const script = words(sentinel.command).join(' ');
      expect([name, script]).toEqual([name, expect.stringContaining(`cp ${mount?.target} `)]);
      expect([name, script]).toEqual([
        name,
        expect.stringMatching(/--sentinel announce-ip "\$+SENTINEL_ANNOUNCE_HOSTNAME"/),
      ]);
      expect([name, environment(sentinel).SENTINEL_ANNOUNCE_HOSTNAME]).toEqual([name, name]);
      expect([name, words(sentinel.healthcheck?.test).join(' ')]).toEqual([
        name,
        expect.stringContaining(`ckquorum ${masterName}`),
      ]);
      expect(dependsOn(sentinel)).toEqual(['redis-primary', ...withRole('replica')]);
    }
  });

  test('every keyward service finds the primary through all three Sentinels and waits for a replica', () => {
    const port = directive(directives, 'port').args[0];
    const sentinels = withRole('sentinel');
    const replicas = withRole('replica');
    const keyward = Object.entries(services).filter(([, s]) => isKeyward(s));
    expect(keyward.map(([name]) => name)).toContain('keyward-root');
    for (const [name, service] of keyward) {
      const config = loadConfig(environment(service));
      expect([name, config.redisSentinel?.name]).toEqual([name, masterName]);
      expect([name, config.redisSentinel?.sentinels.map((s) => `${s.host}:${s.port}`)]).toEqual([
        name,
        sentinels.map((sentinel) => `${sentinel}:${port}`),
      ]);
      expect([name, config.durability.mode]).toEqual([name, 'replicated']);
      // Fewer than there are replicas: one can be lost, or resyncing, and writes still answer.
      if (config.durability.mode === 'replicated') {
        expect(config.durability.minReplicas).toBeLessThan(replicas.length);
      }
      expect(dependsOn(service)).toEqual(expect.arrayContaining(sentinels));
    }
  });
});

describe('deploy/sentinel.conf', () => {
  test('a Sentinel accepts it, and names the primary by host name', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'keyward-sentinel-conf-'));
    const primaryPort = await freePort();
    const children: ChildProcess[] = [spawnRedisServer(primaryPort, dir, [])];
    try {
      await waitForPing(primaryPort);
      const port = await freePort();
      const conf = join(dir, 'sentinel.conf');
      // The compose service names do not resolve here: `localhost` stands for `redis-primary`.
      const text = readFileSync(SENTINEL_CONF, 'utf8')
        .replace(/^port \d+$/m, `port ${port}\nbind 127.0.0.1`)
        .replace(/ redis-primary 6379 /, ` localhost ${primaryPort} `);
      expect(text).toContain(`sentinel monitor keyward localhost ${primaryPort} 2`);
      writeFileSync(conf, text);
      children.push(spawnSentinelFromFile(conf));
      await waitForPing(port);
      const asked = spawnSync('redis-cli', ['-p', String(port), 'SENTINEL', 'MASTER', 'keyward'], {
        encoding: 'utf8',
        timeout: 10_000,
      });
      expect(asked.status).toBe(0);
      const lines = asked.stdout.trim().split('\n');
      const fields = new Map<string, string>();
      for (let i = 0; i + 1 < lines.length; i += 2) fields.set(lines[i]!, lines[i + 1]!);
      // announce-hostnames: the name it was given, not the address it resolved.
      expect(fields.get('ip')).toBe('localhost');
      expect(fields.get('port')).toBe(String(primaryPort));
      expect(fields.get('quorum')).toBe('2');
    } finally {
      await Promise.all(children.map((child) => stopProcess(child)));
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
