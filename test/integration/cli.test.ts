import { randomBytes } from 'node:crypto';
import {
  assertBuilt,
  runCli,
  runCommand,
  runCommandJson,
  runJson,
  type CliResult,
} from '../support/cliProcess';
import { freePort, startRedis, type TestRedis } from '../support/redisServer';
import { client, post } from '../support/rpc';
import { startNodeProcess, startTopology, type Topology } from '../support/topology';
import { createKey, eventually } from '../support/helpers';

/**
 * The operator command line against real Redis servers, checked against a real node: what the
 * command line creates works over HTTP, and what HTTP spends shows up in `inspect key`. Commands
 * run in this process through the binary's own `main` (runCommand), a node process's start-up
 * saved on each; those whose point is the process (exit codes and streams a shell sees, stdin, a
 * count written before exit, no Redis client keeping it alive, `serve`) are spawned (runCli).
 */
let topology: Topology;
let aofPrimary: TestRedis;
let env: Record<string, string>;
let nodeUrl: string;

beforeAll(async () => {
  assertBuilt();
  [topology, aofPrimary] = await Promise.all([
    startTopology({ nodes: 1 }),
    startRedis({ appendOnly: true }),
  ]);
  nodeUrl = topology.nodes[0]!.url;
  env = {
    KEYWARD_REDIS_URL: topology.primary.url,
    KEYWARD_LOCAL_REDIS_URL: topology.locals[0]!.url,
    KEYWARD_REDIS_COMMAND_TIMEOUT_MS: '1000',
  };
});
afterAll(async () => {
  await topology?.stop();
  await aofPrimary?.dispose();
});

function expectUsageError(result: CliResult, message: RegExp): void {
  expect(result.code).toBe(2);
  expect(result.stdout).toBe('');
  expect(result.stderr).toMatch(message);
  expect(result.stderr).toMatch(/usage: keyward/);
}

function expectOperationalError(result: CliResult, message: RegExp): void {
  expect(result.code).toBe(1);
  expect(result.stdout).toBe('');
  expect(result.stderr).toMatch(message);
  expect(result.stderr.trimEnd().split('\n')).toHaveLength(1);
}

interface RootCreated {
  workspaceId: string;
  keyId: string;
  key: string;
}

describe('help and usage errors', () => {
  test('--help lists every command; each command has its own help; usage errors exit 2', async () => {
    const [
      overview,
      commandHelp,
      helpCommand,
      serveHelp,
      version,
      bare,
      unknown,
      unknownSub,
      missingArg,
      missingOption,
      unknownFlag,
      badValue,
      badRatelimit,
    ] = await Promise.all([
      // The binary itself: what a shell sees, exit code and streams, once for each kind of exit.
      runCli(['--help']),
      runCommand(['keys', 'create', '--help']),
      runCommand(['help', 'doctor']),
      runCommand(['serve', '--help']),
      runCommand(['--version']),
      runCli([]),
      runCommand(['frobnicate']),
      runCommand(['keys', 'frobnicate']),
      runCommand(['keys', 'get', '--workspace', 'ws_x']),
      runCommand(['keys', 'get', 'key_x']),
      // node:util's parse errors are of another realm than jest's Error: spawned, as shipped.
      runCli(['root', 'list', '--workspace', 'ws_x', '--bogus']),
      runCommand([
        'keys',
        'create',
        '--workspace',
        'ws_x',
        '--api',
        'api_x',
        '--remaining',
        'lots',
      ]),
      runCommand([
        'keys',
        'create',
        '--workspace',
        'ws_x',
        '--api',
        'api_x',
        '--ratelimit',
        'fast:0/1/1',
      ]),
    ]);
    expect(overview.code).toBe(0);
    for (const command of [
      'serve',
      'root create',
      'root list',
      'root revoke',
      'apis create',
      'apis list',
      'keys create',
      'keys get',
      'keys verify',
      'keys revoke',
      'inspect key',
      'audit',
      'usage key',
      'usage api',
      'usage ratelimit',
      'doctor',
    ]) {
      expect(overview.stdout).toContain(`  ${command} `);
    }
    expect(commandHelp.code).toBe(0);
    expect(commandHelp.stdout).toMatch(/^usage: keyward keys create --workspace ws_… --api api_…/);
    expect(commandHelp.stdout).toContain('--ratelimit TYPE:L/R/MS');
    expect(helpCommand.code).toBe(0);
    expect(helpCommand.stdout).toContain('appendonly');
    expect(serveHelp.code).toBe(0);
    expect(serveHelp.stdout).toMatch(/^usage: keyward serve/);
    expect(version.stdout).toMatch(/^\d+\.\d+\.\d+/);

    expectUsageError(bare, /missing command/);
    expectUsageError(unknown, /unknown command "frobnicate"/);
    expectUsageError(unknownSub, /unknown command "keys frobnicate"/);
    expectUsageError(missingArg, /missing <keyId>/);
    expectUsageError(missingOption, /missing --workspace ws_…/);
    expectUsageError(unknownFlag, /unknown option '--bogus'/);
    expectUsageError(badValue, /--remaining: must be a whole number/);
    expectUsageError(badRatelimit, /--ratelimit \(limit\): must be >= 1/);
  });
});

describe('root keys', () => {
  test('create, list (never a hash), revoke: a revoked root key is refused by the node', async () => {
    const ops = await runCommandJson<RootCreated>(['root', 'create', '--name', 'ops'], env);
    expect(Object.keys(ops).sort()).toEqual(['key', 'keyId', 'workspaceId']);
    expect(ops.key).toMatch(/^kwroot_/);
    // The output of `root create` stays one JSON line without --json, for scripts.
    const ciLine = await runCommand(
      [
        'root',
        'create',
        '--workspace',
        ops.workspaceId,
        '--name',
        'ci',
        '--permissions',
        'api.*.verify_key',
      ],
      env,
    );
    expect(ciLine.code).toBe(0);
    const ci = JSON.parse(ciLine.stdout) as RootCreated;
    expect(ci.workspaceId).toBe(ops.workspaceId);

    const args = ['root', 'list', '--workspace', ops.workspaceId];
    const [listed, table] = await Promise.all([
      runCommandJson<{ workspaceId: string; rootKeys: Record<string, unknown>[] }>(args, env),
      runCommand(args, env),
    ]);
    expect(listed.rootKeys).toEqual([
      { id: ops.keyId, name: 'ops', permissions: ['*'], createdAt: expect.any(Number) },
      {
        id: ci.keyId,
        name: 'ci',
        permissions: ['api.*.verify_key'],
        createdAt: expect.any(Number),
      },
    ]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(
      new RegExp(`^${ci.keyId}\\s+ci\\s+\\S+\\s+api\\.\\*\\.verify_key$`, 'm'),
    );
    for (const output of [JSON.stringify(listed), table.stdout]) {
      expect(output).not.toContain(ops.key);
      expect(output).not.toMatch(/hash/i);
    }

    const verifyUnknown = () => post(nodeUrl, 'keys.verifyKey', { key: 'nope' }, ci.key);
    expect((await verifyUnknown()).status).toBe(200);
    const revoked = await runCommandJson(
      ['root', 'revoke', '--workspace', ops.workspaceId, ci.keyId],
      env,
    );
    expect(revoked).toEqual({ rootKeyId: ci.keyId, revoked: true });
    // Invalidations reach the node over pub/sub, a moment later.
    await eventually(async () => (await verifyUnknown()).status === 401, {
      what: 'root key refused',
    });

    const [again, listedAfter] = await Promise.all([
      runCommand(['root', 'revoke', '--workspace', ops.workspaceId, ci.keyId], env),
      runCommandJson<{ rootKeys: { id: string }[] }>(args, env),
    ]);
    expectOperationalError(again, /root key rk_\w+ not found/);
    expect(listedAfter.rootKeys.map((key) => key.id)).toEqual([ops.keyId]);

    // Each root-key write is in the workspace's audit log, by the operator, never a key in it.
    const audit = await runCommandJson<{
      entries: { rootKeyId: string; operation: string; target: { id: string } }[];
    }>(['audit', '--workspace', ops.workspaceId], env);
    expect(audit.entries.map((e) => [e.rootKeyId, e.operation, e.target.id])).toEqual([
      ['operator', 'rootKeys.revokeRootKey', ci.keyId],
      ['operator', 'rootKeys.createRootKey', ci.keyId],
      ['operator', 'rootKeys.createRootKey', ops.keyId],
    ]);
    expect(JSON.stringify(audit)).not.toContain(ops.key);
    expect(JSON.stringify(audit)).not.toContain(ci.key);
  });
});

describe('apis and keys', () => {
  let ws: string;
  let rootKey: string;

  beforeAll(async () => {
    const created = await runCommandJson<RootCreated>(['root', 'create', '--name', 'keys'], env);
    ws = created.workspaceId;
    rootKey = created.key;
  });

  test('apis create and list; keys created by the command line verify over HTTP', async () => {
    const [api, other] = await Promise.all([
      runCommandJson<{ apiId: string; name: string }>(
        ['apis', 'create', '--workspace', ws, '--name', 'payments'],
        env,
      ),
      runCommand(['apis', 'create', '--workspace', ws, '--name', 'search'], env),
    ]);
    expect(api).toEqual({ apiId: expect.stringMatching(/^api_/), name: 'payments' });
    expect(other.stdout).toMatch(/^created api api_\w+ \(search\)$/m);
    const otherApiId = /(api_\w+)/.exec(other.stdout)![1]!;

    const createArgs = ['keys', 'create', '--workspace', ws, '--api', api.apiId];
    const [consistent, fastLines] = await Promise.all([
      runCommandJson<{ keyId: string; key: string }>(
        [...createArgs, '--prefix', 'sk', '--name', 'alice', '--owner', 'user_alice'].concat([
          '--ratelimit',
          'consistent:3/1/60000',
          '--remaining',
          '10',
        ]),
        env,
      ),
      runCommand([...createArgs, '--ratelimit', 'fast:5/1/60000'], env),
    ]);
    expect(consistent.key).toMatch(/^sk_/);
    expect(fastLines.code).toBe(0);
    const fast = {
      keyId: /^keyId\s+(key_\w+)$/m.exec(fastLines.stdout)![1]!,
      key: /^key\s+(\S+)$/m.exec(fastLines.stdout)![1]!,
    };

    const http = client(nodeUrl, rootKey);
    const [listed, listTable, first, firstFast] = await Promise.all([
      runCommandJson<{ apis: { id: string; name: string; keys: number; createdAt: number }[] }>(
        ['apis', 'list', '--workspace', ws],
        env,
      ),
      runCommand(['apis', 'list', '--workspace', ws], env),
      http.post('keys.verifyKey', { key: consistent.key, apiId: api.apiId }),
      http.post('keys.verifyKey', { key: fast.key }),
    ]);
    expect(
      listed.apis.map(({ name, keys }) => ({ name, keys })).sort((a, b) => b.keys - a.keys),
    ).toEqual([
      { name: 'payments', keys: 2 },
      { name: 'search', keys: 0 },
    ]);
    expect(listTable.stdout).toMatch(new RegExp(`^${api.apiId}\\s+2\\s+\\S+\\s+payments$`, 'm'));
    // The command line's writes are in the audit log, by the operator.
    const [audited, auditTable] = await Promise.all([
      runCommandJson<{ entries: { rootKeyId: string; target: { id: string } }[]; cursor?: string }>(
        ['audit', '--workspace', ws, '--operation', 'keys.createKey', '--limit', '1'],
        env,
      ),
      runCommand(['audit', '--workspace', ws, '--target', consistent.keyId], env),
    ]);
    expect(audited.entries).toHaveLength(1);
    expect(audited.entries[0]!.rootKeyId).toBe('operator');
    expect(audited.cursor).toMatch(/^\d+-\d+(-\d+)?$/);
    expect(auditTable.stdout).toMatch(
      new RegExp(`operator\\s+keys\\.createKey\\s+key ${consistent.keyId}`),
    );
    expect(first.body).toMatchObject({
      valid: true,
      code: 'VALID',
      keyId: consistent.keyId,
      name: 'alice',
      ownerId: 'user_alice',
      remaining: 9,
      ratelimit: { limit: 3, remaining: 2 },
    });
    expect(firstFast.body).toMatchObject({ valid: true, ratelimit: { limit: 5, remaining: 4 } });

    // The command line spends like any verification: a token and a credit.
    const [verdict, fromStdin, unknownKey, wrongApi] = await Promise.all([
      runCommandJson<Record<string, unknown>>(
        ['keys', 'verify', '--workspace', ws, consistent.key],
        env,
      ),
      // Reading stdin is the process's own: spawned.
      runCli(['keys', 'verify', '--workspace', ws, '-'], env, `${fast.key}\n`),
      runCommandJson(['keys', 'verify', '--workspace', ws, 'sk_unknown'], env),
      runCommandJson(['keys', 'verify', '--workspace', ws, '--api', otherApiId, fast.key], env),
    ]);
    expect(verdict).toMatchObject({
      valid: true,
      code: 'VALID',
      keyId: consistent.keyId,
      remaining: 8,
      ratelimit: { limit: 3, remaining: 1 },
      requestId: expect.stringMatching(/^req_/),
    });
    expect(fromStdin.stdout).toMatch(/^code\s+VALID$/m);
    // A FORBIDDEN verdict spends nothing, so this is the one token the stdin verification took.
    expect(fromStdin.stdout).toMatch(/^ratelimit\.remaining\s+3$/m);
    expect(unknownKey).toEqual({ valid: false, code: 'NOT_FOUND', requestId: expect.any(String) });
    expect(wrongApi).toMatchObject({ valid: false, code: 'FORBIDDEN', keyId: fast.keyId });

    // getKey over HTTP and `keys get` show the same record.
    const [viaHttp, viaCli, getLines] = await Promise.all([
      http.get('keys.getKey', { keyId: consistent.keyId }),
      runCommandJson(['keys', 'get', '--workspace', ws, consistent.keyId], env),
      runCommand(['keys', 'get', '--workspace', ws, consistent.keyId], env),
    ]);
    expect(viaCli).toEqual(viaHttp.body);
    expect(viaCli).toMatchObject({ remaining: 8 });
    expect(getLines.stdout).toMatch(/^ratelimit\.type\s+consistent$/m);
    expect(getLines.stdout).not.toContain(consistent.key);

    const revoked = await runCommandJson(['keys', 'revoke', '--workspace', ws, fast.keyId], env);
    expect(revoked).toEqual({ keyId: fast.keyId, deleted: true });
    const [gone, noApi, noWorkspace] = await Promise.all([
      runCommand(['keys', 'get', '--workspace', ws, fast.keyId], env),
      runCommand(['keys', 'create', '--workspace', ws, '--api', 'api_1111111111111111111111'], env),
      runCommand(['apis', 'list', '--workspace', 'ws_1111111111111111111111'], env),
      eventually(
        async () =>
          (await http.post('keys.verifyKey', { key: fast.key })).body.code === 'NOT_FOUND',
        { what: 'revoked key refused' },
      ),
    ]);
    expectOperationalError(gone, /key key_\w+ not found/);
    expectOperationalError(noApi, /api api_1+ not found/);
    expectOperationalError(noWorkspace, /workspace ws_1+ not found/);
  });

  test('inspect key shows the live bucket in the Redis that holds it, without spending', async () => {
    const { apiId } = await runCommandJson<{ apiId: string }>(
      ['apis', 'create', '--workspace', ws, '--name', 'inspected'],
      env,
    );
    const create = (ratelimit: string) =>
      runCommandJson<{ keyId: string; key: string }>(
        ['keys', 'create', '--workspace', ws, '--api', apiId, '--ratelimit', ratelimit],
        env,
      );
    const [consistent, fast] = await Promise.all([
      create('consistent:3/1/60000'),
      create('fast:5/1/60000'),
    ]);
    const http = client(nodeUrl, rootKey);
    for (const key of [consistent.key, consistent.key, fast.key]) {
      expect((await http.post('keys.verifyKey', { key })).body.valid).toBe(true);
    }

    interface Bucket {
      redis: string;
      inUse: boolean;
      exists: boolean;
      stored: { tokens: number; last: number } | null;
      pttlMs: number | null;
      now: number;
      tokens: number | null;
      nextRefillAt: number | null;
    }
    type Inspection = { key: { id: string }; credits: unknown; buckets: Bucket[] };
    const inspect = (keyId: string) =>
      runCommandJson<Inspection>(['inspect', 'key', '--workspace', ws, keyId], env);

    const seen = await inspect(consistent.keyId);
    expect(seen.key.id).toBe(consistent.keyId);
    expect(seen.credits).toBeNull();
    const [primary, local] = seen.buckets;
    expect(primary).toMatchObject({ redis: 'primary', inUse: true, exists: true, tokens: 1 });
    expect(primary!.stored!.tokens).toBe(1);
    expect(primary!.pttlMs).toBeGreaterThan(60_000);
    expect(primary!.pttlMs).toBeLessThanOrEqual(120_000);
    expect(primary!.nextRefillAt).toBe(primary!.stored!.last + 60_000);
    expect(local).toMatchObject({ redis: 'local', inUse: false, exists: false, stored: null });
    const [again, fastSeen, human] = await Promise.all([
      inspect(consistent.keyId),
      inspect(fast.keyId),
      runCommand(['inspect', 'key', '--workspace', ws, fast.keyId], env),
    ]);
    // Reading spent nothing: a second look finds the same tokens.
    expect(again.buckets[0]!.tokens).toBe(1);
    expect(fastSeen.buckets[0]).toMatchObject({ redis: 'primary', inUse: false, exists: false });
    expect(fastSeen.buckets[1]).toMatchObject({
      redis: 'local',
      inUse: true,
      exists: true,
      tokens: 4,
    });
    expect(human.code).toBe(0);
    expect(human.stdout).toMatch(/^ {2}local \(fast, in use\): 4 of 5 tokens, next refill /m);
    expect(human.stdout).toMatch(/^ {4}stored tokens 4 at .*PTTL \d+ ms/m);
  });

  test('keys get and keys verify print v1’s answers: the key’s own permissions, the identity without its limits', async () => {
    const http = client(nodeUrl, rootKey);
    const { apiId } = await runCommandJson<{ apiId: string }>(
      ['apis', 'create', '--workspace', ws, '--name', 'v1 views'],
      env,
    );
    await http.post('identities.createIdentity', {
      externalId: 'cli_views',
      ratelimits: [{ name: 'requests', limit: 10, duration: 60_000 }],
    });
    await http.post('permissions.createRole', { name: 'cli.reader', permissions: ['cli.read'] });
    const created = await http.post<{ keyId: string; key: string }>('keys.createKey', {
      apiId,
      externalId: 'cli_views',
      permissions: ['cli.own'],
      roles: ['cli.reader'],
    });
    const { keyId, key } = created.body;
    const [viaHttp, viaCli] = await Promise.all([
      http.get<Record<string, unknown>>('keys.getKey', { keyId }),
      runCommandJson<Record<string, unknown>>(['keys', 'get', '--workspace', ws, keyId], env),
    ]);
    expect(viaCli).toEqual(viaHttp.body);
    expect(viaCli).toMatchObject({ permissions: ['cli.own'], roles: ['cli.reader'] });
    expect(viaCli.identity).toEqual({ id: expect.any(String), externalId: 'cli_views', meta: {} });
    const verdict = await runCommandJson<Record<string, unknown>>(
      ['keys', 'verify', '--workspace', ws, key],
      env,
    );
    expect(verdict).toMatchObject({ valid: true, permissions: ['cli.own', 'cli.read'] });
    expect(verdict.identity).toEqual(viaCli.identity);
  });

  test('keys get --decrypt prints a recoverable key with its plaintext, audited; 412 without a vault', async () => {
    // The node of this file has no vault: one that has seals the key, as in production.
    const vaultKey = `k1:${randomBytes(32).toString('base64')}`;
    const sealer = await topology.addNode({ env: { KEYWARD_VAULT_KEYS: vaultKey } });
    let sealed: { keyId: string; key: string };
    let plain: { keyId: string; key: string };
    try {
      const http = client(sealer.url, rootKey);
      const { apiId } = (await http.post<{ apiId: string }>('apis.createApi', { name: 'vaulted' }))
        .body;
      [sealed, plain] = await Promise.all([
        http
          .post<{ keyId: string; key: string }>('keys.createKey', { apiId, recoverable: true })
          .then((answer) => answer.body),
        http
          .post<{ keyId: string; key: string }>('keys.createKey', { apiId })
          .then((answer) => answer.body),
      ]);
    } finally {
      await sealer.close();
    }
    const withVault = { ...env, KEYWARD_VAULT_KEYS: vaultKey };
    const get = (keyId: string, extra: string[], environment: Record<string, string>) =>
      runCommand(['keys', 'get', '--workspace', ws, keyId, ...extra], environment);
    const [json, lines, plainKey, noDecrypt, noVault] = await Promise.all([
      runCommandJson<Record<string, unknown>>(
        ['keys', 'get', '--workspace', ws, sealed.keyId, '--decrypt'],
        withVault,
      ),
      get(sealed.keyId, ['--decrypt'], withVault),
      runCommandJson<Record<string, unknown>>(
        ['keys', 'get', '--workspace', ws, plain.keyId, '--decrypt'],
        withVault,
      ),
      get(sealed.keyId, [], withVault),
      get(sealed.keyId, ['--decrypt'], env),
    ]);
    expect(json).toMatchObject({ id: sealed.keyId, recoverable: true, plaintext: sealed.key });
    expect(lines.code).toBe(0);
    expect(lines.stdout).toMatch(new RegExp(`^id\\s+${sealed.keyId}$`, 'm'));
    expect(lines.stdout).toMatch(new RegExp(`^plaintext\\s+${sealed.key}$`, 'm'));
    // A key that is not recoverable says so by the field's absence, and has nothing to show.
    expect(plainKey).toMatchObject({ id: plain.keyId });
    expect(plainKey).not.toHaveProperty('recoverable');
    expect(plainKey).not.toHaveProperty('plaintext');
    // Without --decrypt the key is shown as ever, never its plaintext.
    expect(noDecrypt.code).toBe(0);
    expect(noDecrypt.stdout).toMatch(/^recoverable\s+true$/m);
    expect(noDecrypt.stdout).not.toContain(sealed.key);
    expectOperationalError(noVault, /KEYWARD_VAULT_KEYS/);
    // Two decryptions of the sealed key (the JSON and the lines), by the operator; none of the other.
    const audited = await runCommandJson<{
      entries: { rootKeyId: string; operation: string; target: { id: string } }[];
    }>(['audit', '--workspace', ws, '--operation', 'keys.getKey'], env);
    expect(
      audited.entries
        .filter((entry) => entry.rootKeyId === 'operator')
        .map((entry) => entry.target.id),
    ).toEqual([sealed.keyId, sealed.keyId]);
  });
});

describe('usage', () => {
  let analytics: TestRedis;
  let counted: Topology;
  let usageEnv: Record<string, string>;

  beforeAll(async () => {
    analytics = await startRedis();
    // Two nodes counting into a Redis of its own: the command line must read them there.
    counted = await startTopology({
      nodes: 2,
      env: { KEYWARD_ANALYTICS_FLUSH_MS: '100', KEYWARD_ANALYTICS_REDIS_URL: analytics.url },
    });
    usageEnv = {
      KEYWARD_REDIS_URL: counted.primary.url,
      KEYWARD_LOCAL_REDIS_URL: counted.locals[0]!.url,
      KEYWARD_ANALYTICS_REDIS_URL: analytics.url,
      KEYWARD_REDIS_COMMAND_TIMEOUT_MS: '1000',
    };
  });
  afterAll(async () => {
    await counted?.stop();
    await analytics?.dispose();
  });

  interface Row {
    time?: number;
    keyId?: string;
    identifier?: string;
    total: number;
    [outcome: string]: unknown;
  }
  const sumOf = (rows: readonly Row[], field: string) =>
    rows.reduce((sum, row) => sum + Number(row[field] ?? 0), 0);

  test('usage key, api and ratelimit read what every node counted, in the analytics Redis', async () => {
    const ws = counted.workspaceId;
    const [nodeA, nodeB] = counted.nodes.map((node) => client(node.url, counted.rootKey));
    const { apiId } = (await nodeA!.post<{ apiId: string }>('apis.createApi', { name: 'used' }))
      .body;
    const busy = await createKey(nodeA!, apiId, {
      ratelimit: { type: 'consistent', limit: 2, refillRate: 1, refillInterval: 3_600_000 },
    });
    // Credits of its own: its one verification spends one (issue 26 part 5, the CREDITS column).
    const quiet = await createKey(nodeA!, apiId, { remaining: 5 });
    const codes: unknown[] = [];
    for (const [node, key] of [
      [nodeA, busy.key],
      [nodeB, busy.key],
      [nodeB, busy.key],
      [nodeA, quiet.key],
    ] as const) {
      codes.push((await node!.post('keys.verifyKey', { key, tags: ['path=/a'] })).body.code);
    }
    expect(codes).toEqual(['VALID', 'VALID', 'RATE_LIMITED', 'VALID']);
    const limit = { namespace: 'cli.ns', limit: 1, duration: 3_600_000 };
    for (const [node, identifier] of [
      [nodeA, 'ursula'],
      [nodeB, 'ursula'],
      [nodeB, 'victor'],
    ] as const) {
      expect((await node!.post('ratelimits.limit', { ...limit, identifier })).status).toBe(200);
    }
    const ratelimit = ['usage', 'ratelimit', '--workspace', ws];
    await eventually(
      async () => {
        const [limits, keys] = await Promise.all([
          runCommandJson<{ usage: Row[] }>([...ratelimit, '--by-identifier', 'cli.ns'], usageEnv),
          runCommandJson<{ usage: Row[] }>(['usage', 'api', '--workspace', ws, apiId], usageEnv),
        ]);
        return sumOf(limits.usage, 'total') === 3 && sumOf(keys.usage, 'total') === 4;
      },
      { what: 'both nodes to flush' },
    );

    const [keyJson, apiMinutes, keyTable, deletedKey] = await Promise.all([
      runCommandJson<{ apiId: string; granularity: string; usage: Row[] }>(
        ['usage', 'key', '--workspace', ws, busy.keyId],
        usageEnv,
      ),
      runCommandJson<{ usage: Row[] }>(
        ['usage', 'api', '--workspace', ws, '--start', '10m', '--group-by', 'minute', apiId],
        usageEnv,
      ),
      runCommand(['usage', 'key', '--workspace', ws, busy.keyId], usageEnv),
      nodeA!
        .post('keys.deleteKey', { keyId: quiet.keyId })
        .then(() =>
          runCommandJson<{ usage: Row[] }>(
            ['usage', 'key', '--workspace', ws, '--api', apiId, quiet.keyId],
            usageEnv,
          ),
        ),
    ]);
    // The last 24 hours by hour, every hour a row.
    expect(keyJson).toMatchObject({ apiId, granularity: 'hour' });
    expect(keyJson.usage).toHaveLength(25);
    expect([sumOf(keyJson.usage, 'valid'), sumOf(keyJson.usage, 'rateLimited')]).toEqual([2, 1]);
    // Redis keeps an API's minutes, summed over its keys (docs/decisions.md, "Per-key minutes").
    const minutes = apiMinutes.usage.map((row) => row.time!);
    for (let i = 1; i < minutes.length; i++) expect(minutes[i]! - minutes[i - 1]!).toBe(60_000);
    expect(sumOf(apiMinutes.usage, 'total')).toBe(4);
    expect(keyTable.stdout).toMatch(/^TIME\s+VALID\s+RATE_LIMITED\s+TOTAL$/m);
    expect(keyTable.stdout).toMatch(/^\d{4}-\d\d-\d\dT\d\d:00:00\.000Z\s+2\s+1\s+3$/m);
    // A deleted key's counts remain, read through its API.
    expect(sumOf(deletedKey.usage, 'valid')).toBe(1);

    const [byKey, byTagTable, limitsJson, byIdentifier, oneIdentifier, fromPrimary] =
      await Promise.all([
        runCommandJson<{ usage: Row[] }>(
          ['usage', 'api', '--workspace', ws].concat([
            '--group-by',
            'key',
            '--order-by',
            'total',
            '--order',
            'desc',
            apiId,
          ]),
          usageEnv,
        ),
        runCommand(['usage', 'api', '--workspace', ws, '--group-by', 'tag', apiId], usageEnv),
        runCommandJson<{ namespace: string; usage: Row[] }>([...ratelimit, 'cli.ns'], usageEnv),
        runCommand([...ratelimit, '--by-identifier', 'cli.ns'], usageEnv),
        runCommandJson<{ usage: Row[] }>(
          [...ratelimit, '--identifier', 'victor', 'cli.ns'],
          usageEnv,
        ),
        runCommandJson<{ usage: Row[] }>(
          [...ratelimit, '--by-identifier', 'cli.ns'],
          Object.fromEntries(
            Object.entries(usageEnv).filter(([name]) => name !== 'KEYWARD_ANALYTICS_REDIS_URL'),
          ),
        ),
      ]);
    expect(byKey.usage.map((row) => [row.keyId, row.total])).toEqual([
      [busy.keyId, 3],
      [quiet.keyId, 1],
    ]);
    expect(byTagTable.stdout).toMatch(
      /^TAG\s+VALID\s+RATE_LIMITED\s+TOTAL\s+CREDITS\npath=\/a\s+3\s+1\s+4\s+1$/m,
    );
    expect(limitsJson.namespace).toBe('cli.ns');
    expect(limitsJson.usage).toHaveLength(25);
    expect([sumOf(limitsJson.usage, 'passed'), sumOf(limitsJson.usage, 'limited')]).toEqual([2, 1]);
    expect(byIdentifier.stdout).toBe(
      'IDENTIFIER  PASSED  LIMITED  TOTAL\nursula      1       1        2\nvictor      1       0        1\n',
    );
    expect(sumOf(oneIdentifier.usage, 'total')).toBe(1);
    // The primary holds no counts: without KEYWARD_ANALYTICS_REDIS_URL there are none to read.
    expect(fromPrimary.usage).toEqual([]);

    const [
      noNamespace,
      noKey,
      badStart,
      badGranularity,
      limitAlone,
      badGroup,
      backwards,
      keyMinutes,
    ] = await Promise.all([
      runCommand([...ratelimit, 'never.used'], usageEnv),
      runCommand(['usage', 'key', '--workspace', ws, 'key_1ChFjUG4o6VLuzbLGABNDC'], usageEnv),
      runCommand([...ratelimit, '--start', 'yesterday', 'cli.ns'], usageEnv),
      runCommand([...ratelimit, '--granularity', 'week', 'cli.ns'], usageEnv),
      runCommand([...ratelimit, '--limit', '5', 'cli.ns'], usageEnv),
      runCommand(['usage', 'api', '--workspace', ws, '--group-by', 'key,week', apiId], usageEnv),
      runCommand(
        ['usage', 'key', '--workspace', ws, '--start', '1h', '--end', '2h', busy.keyId],
        usageEnv,
      ),
      runCommand(
        ['usage', 'key', '--workspace', ws, '--granularity', 'minute', busy.keyId],
        usageEnv,
      ),
    ]);
    expectOperationalError(noNamespace, /namespace never\.used not found/);
    expectOperationalError(noKey, /key key_1ChFjUG4o6VLuzbLGABNDC not found/);
    expectUsageError(badStart, /--start: must be unix ms, an ISO 8601 date/);
    expectUsageError(badGranularity, /--granularity: must be one of minute, hour, day/);
    expectUsageError(limitAlone, /--limit: only with --by-identifier/);
    expectUsageError(badGroup, /--group-by: must be one of key, identity/);
    expectUsageError(backwards, /--start: must be before --end/);
    // A key's minutes are ClickHouse's: on Redis the command says so and what to ask instead.
    expectUsageError(keyMinutes, /minutes of a key are kept only in ClickHouse.*group by hour/);
  });

  test('keys verify is counted, and written before it exits; an analytics Redis away spends nothing', async () => {
    const ws = counted.workspaceId;
    const node = client(counted.nodes[0]!.url, counted.rootKey);
    const { apiId } = (await node.post<{ apiId: string }>('apis.createApi', { name: 'by hand' }))
      .body;
    const made = await createKey(node, apiId, { remaining: 10 });
    const verify = ['keys', 'verify', '--workspace', ws, made.key];
    const keyUsage = ['usage', 'key', '--workspace', ws, made.keyId];
    type Verdict = { code: string; remaining: number };
    const remaining = async () =>
      (await node.get<{ remaining: number }>('keys.getKey', { keyId: made.keyId })).body.remaining;

    // A process of its own: the count must be written before the process exits.
    expect(await runJson<Verdict>(verify, usageEnv)).toMatchObject({ code: 'VALID', remaining: 9 });
    // Read at once, no waiting for a flush: the command wrote its count before it exited.
    const once = await runCommandJson<{ usage: Row[] }>(keyUsage, usageEnv);
    expect([sumOf(once.usage, 'valid'), sumOf(once.usage, 'total')]).toEqual([1, 1]);

    const deadUrl = `redis://127.0.0.1:${await freePort()}`;
    const away = await runCommand(verify, { ...usageEnv, KEYWARD_ANALYTICS_REDIS_URL: deadUrl });
    expectOperationalError(away, /analytics Redis \(redis:\/\/127\.0\.0\.1:\d+\) is unreachable/);
    expect(await remaining()).toBe(9);

    // Counting off: the command needs no analytics Redis, and counts nothing.
    const off = { ...usageEnv, KEYWARD_ANALYTICS: 'off', KEYWARD_ANALYTICS_REDIS_URL: deadUrl };
    expect(await runCommandJson<Verdict>(verify, off)).toMatchObject({
      code: 'VALID',
      remaining: 8,
    });
    const after = await runCommandJson<{ usage: Row[] }>(keyUsage, usageEnv);
    expect(sumOf(after.usage, 'total')).toBe(1);
  });
});

describe('serve', () => {
  test('runs a node until SIGTERM, and keys created by the command line verify on it', async () => {
    const root = await runCommandJson<RootCreated>(['root', 'create'], env);
    const [served, { apiId }] = await Promise.all([
      startNodeProcess({ env }),
      runCommandJson<{ apiId: string }>(
        ['apis', 'create', '--workspace', root.workspaceId, '--name', 'a'],
        env,
      ),
    ]);
    try {
      const { key } = await runCommandJson<{ key: string }>(
        ['keys', 'create', '--workspace', root.workspaceId, '--api', apiId],
        env,
      );
      const verdict = await post(served.url, 'keys.verifyKey', { key, apiId }, root.key);
      expect(verdict.body).toMatchObject({ valid: true, code: 'VALID' });
    } finally {
      expect(await served.stop()).toBe(0);
    }
  });
});

describe('operational errors', () => {
  test('an unreachable Redis or a bad configuration is exit 1 with one line', async () => {
    const deadPort = await freePort();
    const [unreachable, badConfig] = await Promise.all([
      // Spawned: a client left connecting to the dead Redis must not keep the process alive.
      runCli(['root', 'list', '--workspace', 'ws_x'], {
        KEYWARD_REDIS_URL: `redis://127.0.0.1:${deadPort}`,
      }),
      runCommand(['root', 'list', '--workspace', 'ws_x'], { KEYWARD_REDIS_URL: 'http://nope' }),
    ]);
    expectOperationalError(
      unreachable,
      /primary Redis \(redis:\/\/127\.0\.0\.1:\d+\) is unreachable/,
    );
    expectOperationalError(badConfig, /KEYWARD_REDIS_URL: must be a redis:\/\/ or rediss:\/\/ URL/);
  });
});

describe('doctor', () => {
  interface Check {
    target: string;
    check: string;
    status: 'ok' | 'warn' | 'fail';
    detail: string;
  }

  test('warns about a primary without AOF, passes with AOF, fails on an unreachable Redis', async () => {
    const deadPort = await freePort();
    const [withoutAof, withAof, localDown] = await Promise.all([
      runCommand(['doctor'], env),
      // A deadline far above any PING on a saturated test machine: this run must see no warning.
      runCommand(['doctor', '--json'], {
        ...env,
        KEYWARD_REDIS_URL: aofPrimary.url,
        KEYWARD_REDIS_COMMAND_TIMEOUT_MS: '10000',
      }),
      runCommand(['doctor'], { ...env, KEYWARD_LOCAL_REDIS_URL: `redis://127.0.0.1:${deadPort}` }),
    ]);

    expect(withoutAof.code).toBe(0);
    expect(withoutAof.stdout).toMatch(/^WARN\s+primary\s+persistence\s+appendonly no/m);
    expect(withoutAof.stdout).not.toMatch(/^FAIL/m);
    for (const line of withoutAof.stdout.trimEnd().split('\n')) {
      expect(line).toMatch(/^(OK|WARN|FAIL)\s+(primary|local|analytics)\s+\w+\s+\S/);
    }
    expect(withoutAof.stdout).toMatch(
      /^OK\s+analytics\s+reachable\s+KEYWARD_ANALYTICS_REDIS_URL is the primary/m,
    );

    expect(withAof.code).toBe(0);
    const report = JSON.parse(withAof.stdout) as { ok: boolean; checks: Check[] };
    expect(report.ok).toBe(true);
    expect(report.checks.filter((check) => check.status !== 'ok')).toEqual([]);
    const status = (target: string, check: string) =>
      report.checks.find((c) => c.target === target && c.check === check)?.status;
    expect(status('primary', 'persistence')).toBe('ok');
    for (const target of ['primary', 'local']) {
      expect(status(target, 'reachable')).toBe('ok');
      expect(status(target, 'scripts')).toBe('ok');
      expect(status(target, 'clock')).toBe('ok');
      expect(status(target, 'version')).toBe('ok');
    }
    expect(status('local', 'persistence')).toBeUndefined();

    expect(localDown.code).toBe(1);
    expect(localDown.stdout).toMatch(/^FAIL\s+local\s+reachable\s+connect ECONNREFUSED/m);
    expect(localDown.stdout).toMatch(/^OK\s+primary\s+scripts/m);
  });

  test('checks KEYWARD_ANALYTICS_REDIS_URL, counting off or not, as a Redis that holds counts', async () => {
    const deadPort = await freePort();
    // The node-local Redis stands in for an analytics Redis: no AOF there.
    const [off, down] = await Promise.all([
      runCommand(['doctor', '--json'], {
        ...env,
        KEYWARD_ANALYTICS: 'off',
        KEYWARD_ANALYTICS_REDIS_URL: topology.locals[0]!.url,
        KEYWARD_REDIS_COMMAND_TIMEOUT_MS: '10000',
      }),
      runCommand(['doctor'], {
        ...env,
        KEYWARD_ANALYTICS_REDIS_URL: `redis://127.0.0.1:${deadPort}`,
      }),
    ]);

    expect(off.code).toBe(0);
    const report = JSON.parse(off.stdout) as { ok: boolean; checks: Check[] };
    const analytics = report.checks.filter((check) => check.target === 'analytics');
    expect(analytics.map(({ check, status }) => [check, status])).toEqual([
      ['reachable', 'ok'],
      ['version', 'ok'],
      ['persistence', 'warn'],
      ['memory', 'ok'],
      ['clock', 'ok'],
    ]);
    expect(analytics[0]!.detail).toContain(topology.locals[0]!.url);
    expect(analytics[2]!.detail).toMatch(/^appendonly no: a restart loses the usage counts/);

    expect(down.code).toBe(1);
    expect(down.stdout).toMatch(/^FAIL\s+analytics\s+reachable\s+connect ECONNREFUSED/m);
    expect(down.stdout).toMatch(/^OK\s+local\s+scripts/m);
  });
});
