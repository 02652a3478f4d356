import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { loadConfig } from '../../src/config';
import { ensureTool } from '../support/tools';

/**
 * docker-compose.yml against the code: `docker-compose config` accepts it, every variable it
 * gives a keyward service is one src/config.ts reads, every node has a liveness health check, each
 * region's nginx sends to exactly that region's nodes on the port they listen on, and the primary
 * keeps an append-only file. No container is started.
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

/** The resolved file as JSON: compose v2 prints it itself, v1 (Debian's) prints YAML. */
function resolvedConfig(): { services: Record<string, Service> } {
  const asJson = run(['-f', COMPOSE_FILE, 'config', '--format', 'json']);
  if (asJson.status === 0 && asJson.stdout.trim().startsWith('{')) {
    return JSON.parse(asJson.stdout) as { services: Record<string, Service> };
  }
  const asYaml = run(['-f', COMPOSE_FILE, 'config']);
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
    services = resolvedConfig().services;
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
    const unknown: string[] = [];
    for (const [name, service] of Object.entries(services).filter(([, s]) => isKeyward(s))) {
      for (const variable of Object.keys(service.environment ?? {})) {
        if (!known.has(variable)) unknown.push(`${name}: ${variable}`);
      }
    }
    expect(unknown).toEqual([]);
    // And the values are ones the node accepts.
    for (const [name, service] of nodes()) {
      const env = Object.fromEntries(
        Object.entries(service.environment ?? {}).map(([k, v]) => [k, v ?? '']),
      );
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
      const config = loadConfig(
        Object.fromEntries(Object.entries(service.environment ?? {}).map(([k, v]) => [k, v ?? ''])),
      );
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
    const command = words(services['redis-primary']?.command);
    const flag = command.indexOf('--appendonly');
    expect(flag).toBeGreaterThanOrEqual(0);
    expect(command[flag + 1]).toBe('yes');
    expect(mounts(services['redis-primary']!).map((m) => m.target)).toContain('/data');
  });
});
