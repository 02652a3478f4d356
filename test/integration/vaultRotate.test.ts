import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { names } from '../../src/store/names';
import { Vault, type VaultKey } from '../../src/vault/vault';
import { openSecret } from '../../src/webhooks/secrets';
import { assertBuilt, runCli, type CliResult } from '../support/cliProcess';
import { adminRedis, closeRedis } from '../support/keyspace';
import { client, type Client } from '../support/rpc';
import { startTopology, type Topology } from '../support/topology';

/**
 * `keyward vault rotate`, run as the operator runs it (a process) against a real Redis while a
 * node serves decryptions: keys sealed under `old` end up under `new`, a node that knows only
 * `new` then opens every one, a second run changes nothing, and a key whose sealed form was
 * altered is reported by id and skipped without stopping the others.
 */
const keyOf = (id: string): VaultKey => ({ id, key: randomBytes(32) });
const entry = ({ id, key }: VaultKey) => `${id}:${key.toString('base64')}`;
const OLD = keyOf('old');
const NEW = keyOf('new');
const BOTH = `${entry(NEW)},${entry(OLD)}`;

interface Rotation {
  kekId: string;
  scanned: number;
  rewrapped: number;
  current: number;
  skipped: number;
  gone: number;
  skippedKeys: { keyId: string; workspaceId: string; reason: string }[];
  webhooks: { scanned: number; rewrapped: number; current: number; skipped: number };
  skippedWebhooks: unknown[];
}

let topology: Topology;
let primary: Redis;
let oldNode: Client;
let apiId: string;
/** keyId → the plaintext createKey answered. */
const created = new Map<string, string>();
let corrupted: string;
/** A webhook whose secret the old vault key sealed. */
let webhook: { webhookId: string; secret: string };
const PENDING = 'key_pendingcreation';

const rotate = (args: string[] = [], vaultKeys = BOTH): Promise<CliResult> =>
  runCli(['vault', 'rotate', ...args], {
    KEYWARD_REDIS_URL: topology.primary.url,
    KEYWARD_REDIS_COMMAND_TIMEOUT_MS: '1000',
    ...(vaultKeys === '' ? {} : { KEYWARD_VAULT_KEYS: vaultKeys }),
  });

function parsed(result: CliResult): Rotation {
  const lines = result.stdout.trimEnd().split('\n');
  expect(lines).toHaveLength(1);
  return JSON.parse(lines[0]!) as Rotation;
}

const sealedOf = async (keyId: string) => (await primary.hget(names.key(keyId), 'sealed')) ?? '';

beforeAll(async () => {
  assertBuilt();
  topology = await startTopology({ nodes: 1, env: { KEYWARD_VAULT_KEYS: entry(OLD) } });
  primary = await adminRedis(topology.primary.url);
  oldNode = client(topology.nodes[0]!.url, topology.rootKey);
  apiId = (await oldNode.post<{ apiId: string }>('apis.createApi', { name: 'rotate' })).body.apiId;
  for (let i = 0; i < 7; i++) {
    const made = await oldNode.post<{ keyId: string; key: string }>('keys.createKey', {
      apiId,
      recoverable: true,
    });
    expect(made.status).toBe(200);
    created.set(made.body.keyId, made.body.key);
  }
  webhook = (
    await oldNode.post<{ webhookId: string; secret: string }>('webhooks.createWebhook', {
      url: 'https://203.0.113.10/rotate',
      events: ['key.expiring'],
    })
  ).body;
  // A key that is not recoverable has nothing to rotate.
  await oldNode.post('keys.createKey', { apiId });
  // A creation under way (pending): no key yet, neither counted nor touched.
  await primary.hset(
    names.key(PENDING),
    'id',
    PENDING,
    'workspaceId',
    topology.workspaceId,
    'sealed',
    await sealedOf([...created.keys()][1]!),
    'pending',
    '1',
  );
  // One ciphertext altered in Redis: its wrapped data key no longer opens.
  corrupted = [...created.keys()][0]!;
  const parts = (await sealedOf(corrupted)).split('.');
  parts[2] = `${parts[2]!.startsWith('A') ? 'B' : 'A'}${parts[2]!.slice(1)}`;
  await primary.hset(names.key(corrupted), 'sealed', parts.join('.'));
}, 30_000);

afterAll(async () => {
  if (primary) await closeRedis(primary);
  await topology?.stop();
});

test('without KEYWARD_VAULT_KEYS: a usage error that names the variable', async () => {
  const result = await rotate([], '');
  expect(result.code).toBe(2);
  expect(result.stdout).toBe('');
  expect(result.stderr).toMatch(/KEYWARD_VAULT_KEYS is not set/);
  expect(result.stderr).toMatch(/usage: keyward vault rotate/);
});

test('rotates every key to the first vault key while a node decrypts; an altered key is skipped', async () => {
  const good = [...created].filter(([keyId]) => keyId !== corrupted);
  for (const [keyId] of good) expect(await sealedOf(keyId)).toMatch(/^v1\.old\./);
  // What a run killed midway leaves: some keys rewrapped already, each record whole.
  const vault = new Vault([NEW, OLD]);
  for (const [keyId] of good.slice(0, 2)) {
    const sealed = await sealedOf(keyId);
    const binding = { workspaceId: topology.workspaceId, keyId };
    await primary.hset(names.key(keyId), 'sealed', vault.rewrap(sealed, binding)!);
  }

  // A node with the new key first serves decryptions throughout the run.
  const both = client(
    (await topology.addNode({ env: { KEYWARD_VAULT_KEYS: BOTH } })).url,
    topology.rootKey,
  );
  let running = true;
  const answers: unknown[] = [];
  const reader = (async () => {
    while (running) {
      for (const [keyId, key] of good) {
        const read = await both.get<{ plaintext?: string }>('keys.getKey', {
          keyId,
          decrypt: true,
        });
        answers.push(read.status === 200 && read.body.plaintext === key ? 'ok' : read);
      }
    }
  })();
  const result = await rotate(['--json']);
  running = false;
  await reader;
  expect(answers.length).toBeGreaterThan(0);
  expect(answers.filter((answer) => answer !== 'ok')).toEqual([]);

  expect(result.code).toBe(1);
  expect(parsed(result)).toEqual({
    kekId: 'new',
    scanned: 7,
    rewrapped: 4,
    current: 2,
    skipped: 1,
    gone: 0,
    skippedKeys: [{ keyId: corrupted, workspaceId: topology.workspaceId, reason: 'unreadable' }],
    webhooks: { scanned: 1, rewrapped: 1, current: 0, skipped: 0 },
    skippedWebhooks: [],
  });
  // The webhook's secret too: under the new key, and the same secret.
  const hookName = names.webhook(topology.workspaceId, webhook.webhookId);
  const sealedSecret = (await primary.hget(hookName, 'secret')) ?? '';
  expect(sealedSecret).toMatch(/^v1\.new\./);
  expect(
    openSecret(new Vault([NEW]), {
      secret: sealedSecret,
      workspaceId: topology.workspaceId,
      id: webhook.webhookId,
    }),
  ).toBe(webhook.secret);
  expect(result.stdout).not.toContain(webhook.secret);
  // No secret in what it prints.
  for (const key of created.values()) expect(result.stdout + result.stderr).not.toContain(key);
  for (const [keyId] of good) expect(await sealedOf(keyId)).toMatch(/^v1\.new\./);
  expect(await sealedOf(corrupted)).toMatch(/^v1\.old\./);
  expect(await sealedOf(PENDING)).toMatch(/^v1\.old\./);

  // The old key can go: a node with the new one only opens every rotated key.
  const newOnly = client(
    (await topology.addNode({ env: { KEYWARD_VAULT_KEYS: entry(NEW) } })).url,
    topology.rootKey,
  );
  for (const [keyId, key] of good) {
    const read = await newOnly.get<{ plaintext?: string }>('keys.getKey', { keyId, decrypt: true });
    expect({ keyId, status: read.status, plaintext: read.body.plaintext }).toEqual({
      keyId,
      status: 200,
      plaintext: key,
    });
  }

  // Again: nothing left to do, the altered key still reported, in the human form too.
  const before = await Promise.all([...created.keys()].map(sealedOf));
  const again = await rotate();
  expect(again.code).toBe(1);
  expect(again.stdout).toBe(
    'vault key new: 7 recoverable keys read, 0 re-wrapped, 6 already current, 1 skipped\n' +
      `skipped ${corrupted} (workspace ${topology.workspaceId}): unreadable\n` +
      'webhook secrets: 1 read, 0 re-wrapped, 1 already current, 0 skipped\n',
  );
  expect(await Promise.all([...created.keys()].map(sealedOf))).toEqual(before);
}, 30_000);
