import { randomBytes } from 'node:crypto';
import type { Redis } from 'ioredis';
import { Unkey } from 'unkey-api-v2';
import { names } from '../../src/store/names';
import { eventually } from '../support/helpers';
import { adminRedis, closeRedis, snapshotKeyspace } from '../support/keyspace';
import { client, type Client } from '../support/rpc';
import { startTopology, type Topology } from '../support/topology';

/**
 * Recoverable keys (issue 25): sealed by the vault at creation, opened by getKey and listKeys
 * with `decrypt`, each opening audited and counted. Node 0 has the vault; node 1 has none; node
 * 2 has a vault of other key material.
 */
const vaultKey = `k1:${randomBytes(32).toString('base64')}`;

let topology: Topology;
let primary: Redis;
let api: Client;
let apiId: string;
/** Node 1: no KEYWARD_VAULT_KEYS. Node 2: a vault key of the same id, other material. */
let withoutVault: Client;
let otherVault: Client;

beforeAll(async () => {
  topology = await startTopology({ nodes: 1, env: { KEYWARD_VAULT_KEYS: vaultKey } });
  const bare = await topology.addNode({ env: { KEYWARD_VAULT_KEYS: '' } });
  const other = await topology.addNode({
    env: { KEYWARD_VAULT_KEYS: `k1:${randomBytes(32).toString('base64')}` },
  });
  primary = await adminRedis(topology.primary.url);
  api = client(topology.nodes[0]!.url, topology.rootKey);
  withoutVault = client(bare.url, topology.rootKey);
  otherVault = client(other.url, topology.rootKey);
  apiId = (await api.post<{ apiId: string }>('apis.createApi', { name: 'recoverable' })).body.apiId;
});
afterAll(async () => {
  if (primary) await closeRedis(primary);
  await topology?.stop();
});

async function recoverable(body: Record<string, unknown> = {}) {
  const created = await api.post<{ keyId: string; key: string }>('keys.createKey', {
    apiId,
    recoverable: true,
    ...body,
  });
  expect(created.status).toBe(200);
  return created.body;
}

/** Every value of every Redis key, streams included, as text. */
async function everyValue(): Promise<string> {
  const snapshot = await snapshotKeyspace(primary);
  const parts: string[] = [];
  for (const [name, content] of snapshot) {
    parts.push(name, content);
    if (content === 'stream "(stream)"') {
      parts.push(JSON.stringify(await primary.xrange(name, '-', '+')));
    }
  }
  return parts.join('\n');
}

test('a recoverable key is shown again with decrypt, and only then; its plaintext is nowhere in Redis', async () => {
  const made = [await recoverable({ name: 'first' }), await recoverable({ prefix: 'sk' })];
  const plain = await api.post<{ keyId: string; key: string }>('keys.createKey', { apiId });
  for (const { keyId, key } of made) {
    const read = await api.get<Record<string, unknown>>('keys.getKey', { keyId, decrypt: 'true' });
    expect(read.status).toBe(200);
    expect(read.body.plaintext).toBe(key);
    const without = await api.get<Record<string, unknown>>('keys.getKey', { keyId });
    expect(without.body).not.toHaveProperty('plaintext');
    // The view says the key is recoverable, so a client knows a decrypt is worth asking for.
    expect(without.body.recoverable).toBe(true);
    // It verifies as any key does: the hot path never opens the vault.
    expect((await api.post('keys.verifyKey', { key })).body).toMatchObject({ valid: true });
  }
  // A key that is not recoverable answers without a plaintext, as Unkey's does.
  const notRecoverable = await api.get<Record<string, unknown>>('keys.getKey', {
    keyId: plain.body.keyId,
    decrypt: 'true',
  });
  expect(notRecoverable.status).toBe(200);
  expect(notRecoverable.body).not.toHaveProperty('plaintext');
  expect(notRecoverable.body).not.toHaveProperty('recoverable');
  const listed = await api.get<{ keys: { id: string; plaintext?: string }[] }>('apis.listKeys', {
    apiId,
    decrypt: 'true',
  });
  expect(Object.fromEntries(listed.body.keys.map((key) => [key.id, key.plaintext]))).toEqual({
    [made[0]!.keyId]: made[0]!.key,
    [made[1]!.keyId]: made[1]!.key,
    [plain.body.keyId]: undefined,
  });
  // Neither the plaintext nor its base64 is in any value of any Redis key; the record holds a
  // sealed form only.
  const values = await everyValue();
  for (const { key } of made) {
    expect(values).not.toContain(key);
    expect(values).not.toContain(Buffer.from(key).toString('base64'));
  }
  expect(await primary.hget(names.key(made[0]!.keyId), 'sealed')).toMatch(/^v1\.k1\./);
});

test('every decryption is on the audit log and counted; the entry holds no plaintext', async () => {
  const { keyId, key } = await recoverable();
  const count = async () => {
    const text = await (await fetch(`${topology.nodes[0]!.url}/metrics`)).text();
    return Number(/^keyward_key_decryptions_total (\d+)/m.exec(text)?.[1] ?? 'NaN');
  };
  const before = await count();
  await api.get('keys.getKey', { keyId, decrypt: 'true' });
  expect(await count()).toBe(before + 1);
  let entry: Record<string, unknown> | undefined;
  await eventually(
    async () => {
      const page = await api.get<{ entries: Record<string, unknown>[] }>('auditLogs.list', {
        targetId: keyId,
      });
      entry = page.body.entries.find((one) => one.operation === 'keys.getKey');
      return entry !== undefined;
    },
    { what: 'the decryption on the audit log' },
  );
  expect(entry).toMatchObject({
    operation: 'keys.getKey',
    target: { type: 'key', id: keyId },
    summary: { apiId, decrypted: true },
  });
  expect(JSON.stringify(entry)).not.toContain(key);
});

test('permissions: recoverable needs encrypt_key, decrypt needs decrypt_key; nothing is created without', async () => {
  const scoped = async (permissions: string[]) =>
    client(
      topology.nodes[0]!.url,
      (await topology.newRootKey({ workspaceId: topology.workspaceId, permissions })).key,
    );
  const creator = await scoped([`api.${apiId}.create_key`, `api.${apiId}.read_key`]);
  const before = (await api.get<{ total: number }>('apis.listKeys', { apiId })).body.total;
  const refused = await creator.post('keys.createKey', { apiId, recoverable: true });
  expect(refused.status).toBe(403);
  expect(JSON.stringify(refused.body)).toContain(`api.${apiId}.encrypt_key`);
  expect((await api.get<{ total: number }>('apis.listKeys', { apiId })).body.total).toBe(before);
  const sealer = await scoped([`api.${apiId}.create_key`, 'api.*.encrypt_key']);
  expect((await sealer.post('keys.createKey', { apiId, recoverable: true })).status).toBe(200);

  const { keyId } = await recoverable();
  const reader = await scoped([`api.${apiId}.read_key`]);
  const getRefused = await reader.get('keys.getKey', { keyId, decrypt: 'true' });
  expect(getRefused.status).toBe(403);
  expect(JSON.stringify(getRefused.body)).toContain(`api.${apiId}.decrypt_key`);
  expect((await reader.get('apis.listKeys', { apiId, decrypt: 'true' })).status).toBe(403);
  expect((await reader.get('keys.getKey', { keyId })).status).toBe(200);
  const opener = await scoped([`api.${apiId}.read_key`, `api.${apiId}.decrypt_key`]);
  expect((await opener.get('keys.getKey', { keyId, decrypt: 'true' })).status).toBe(200);
});

test('a node without a vault refuses both with 412 naming KEYWARD_VAULT_KEYS; one with other material cannot open', async () => {
  const { keyId } = await recoverable();
  const before = (await api.get<{ total: number }>('apis.listKeys', { apiId })).body.total;
  const create = await withoutVault.post('keys.createKey', { apiId, recoverable: true });
  expect(create.status).toBe(412);
  expect(create.body).toMatchObject({
    error: { code: 'PRECONDITION_FAILED', message: expect.stringContaining('KEYWARD_VAULT_KEYS') },
  });
  expect((await api.get<{ total: number }>('apis.listKeys', { apiId })).body.total).toBe(before);
  for (const read of [
    withoutVault.get('keys.getKey', { keyId, decrypt: 'true' }),
    withoutVault.get('apis.listKeys', { apiId, decrypt: 'true' }),
  ]) {
    expect((await read).status).toBe(412);
  }
  // Without decrypt, the same node reads the key as any other.
  expect((await withoutVault.get('keys.getKey', { keyId })).status).toBe(200);
  const wrong = await otherVault.get('keys.getKey', { keyId, decrypt: 'true' });
  expect(wrong.status).toBe(412);
  expect(wrong.body).toMatchObject({
    error: {
      code: 'PRECONDITION_FAILED',
      message: `key ${keyId} cannot be decrypted here: the stored ciphertext does not open: it was altered, or belongs to another key`,
    },
  });
});

test('a sealed form copied onto another key, or altered, does not open', async () => {
  const source = await recoverable();
  const target = await recoverable();
  const sealed = (await primary.hget(names.key(source.keyId), 'sealed'))!;
  await primary.hset(names.key(target.keyId), 'sealed', sealed);
  const copied = await api.get<Record<string, unknown>>('keys.getKey', {
    keyId: target.keyId,
    decrypt: 'true',
  });
  expect(copied.status).toBe(412);
  expect(JSON.stringify(copied.body)).not.toContain(source.key);
  const parts = sealed.split('.');
  const body = Buffer.from(parts[3]!, 'base64url');
  body[body.length - 1]! ^= 1;
  parts[3] = body.toString('base64url');
  await primary.hset(names.key(source.keyId), 'sealed', parts.join('.'));
  expect((await api.get('keys.getKey', { keyId: source.keyId, decrypt: 'true' })).status).toBe(412);
});

test('the published v2 client creates a recoverable key and reads its plaintext back', async () => {
  const unkey = new Unkey({ rootKey: topology.rootKey, serverURL: topology.nodes[0]!.url });
  // An API of its own: another test altered a sealed form in the shared one, which a listing
  // with decrypt would meet.
  const { apiId } = (await unkey.apis.createApi({ name: 'recoverable-v2' })).data;
  const { data } = await unkey.keys.createKey({ apiId, recoverable: true, name: 'v2' });
  const read = await unkey.keys.getKey({ keyId: data.keyId, decrypt: true });
  expect(read.data).toMatchObject({ keyId: data.keyId, plaintext: data.key });
  const without = await unkey.keys.getKey({ keyId: data.keyId });
  expect(without.data.plaintext).toBeUndefined();
  const pages = [];
  for await (const page of await unkey.apis.listKeys({ apiId, decrypt: true, limit: 100 })) {
    pages.push(...page.result.data);
  }
  expect(pages.find((key) => key.keyId === data.keyId)?.plaintext).toBe(data.key);
});

test('v2: the same permissions', async () => {
  const { key } = await topology.newRootKey({
    workspaceId: topology.workspaceId,
    permissions: [`api.${apiId}.create_key`, `api.${apiId}.read_key`],
  });
  const unkey = new Unkey({ rootKey: key, serverURL: topology.nodes[0]!.url });
  const status = (call: Promise<unknown>) =>
    call.then(
      () => 200,
      (error: { error?: { status?: number } }) => error.error?.status,
    );
  expect(await status(unkey.keys.createKey({ apiId, recoverable: true }))).toBe(403);
  const { keyId } = await recoverable();
  expect(await status(unkey.keys.getKey({ keyId, decrypt: true }))).toBe(403);
  expect(await status(unkey.keys.getKey({ keyId }))).toBe(200);
});

test('an import by plaintext can be recoverable; by hash it cannot; it needs encrypt_key', async () => {
  const plaintext = `imported_${randomBytes(12).toString('hex')}`;
  const imported = await api.post<{ keyIds: string[] }>('migrations.createKeys', [
    { apiId, plaintext, recoverable: true },
  ]);
  expect(imported.status).toBe(200);
  const [keyId] = imported.body.keyIds;
  const read = await api.get<{ plaintext?: string }>('keys.getKey', {
    keyId: keyId!,
    decrypt: 'true',
  });
  expect(read.body.plaintext).toBe(plaintext);

  const byHash = await api.post('migrations.createKeys', [
    {
      apiId,
      hash: { value: Buffer.alloc(32, 1).toString('base64'), variant: 'sha256_base64' },
      recoverable: true,
    },
  ]);
  expect(byHash.status).toBe(400);
  expect(JSON.stringify(byHash.body)).toContain('[0].recoverable');
  const { key } = await topology.newRootKey({
    workspaceId: topology.workspaceId,
    permissions: [`api.${apiId}.create_key`],
  });
  const refused = await client(topology.nodes[0]!.url, key).post('migrations.createKeys', [
    { apiId, plaintext: `${plaintext}_2`, recoverable: true },
  ]);
  expect(refused.status).toBe(403);
  // All or none: nothing of the refused batch was written.
  expect((await api.post('keys.verifyKey', { key: `${plaintext}_2` })).body).toMatchObject({
    valid: false,
  });
});

test('a recoverable key rerolls into a recoverable key, which needs encrypt_key', async () => {
  const old = await recoverable();
  const rerolled = await api.post<{ keyId: string; key: string }>('keys.rerollKey', {
    keyId: old.keyId,
    expiration: 0,
  });
  expect(rerolled.status).toBe(200);
  const read = await api.get<{ plaintext?: string }>('keys.getKey', {
    keyId: rerolled.body.keyId,
    decrypt: 'true',
  });
  expect(read.body.plaintext).toBe(rerolled.body.key);

  const { key } = await topology.newRootKey({
    workspaceId: topology.workspaceId,
    permissions: [`api.${apiId}.create_key`, `api.${apiId}.read_key`],
  });
  const creator = client(topology.nodes[0]!.url, key);
  const refused = await creator.post('keys.rerollKey', {
    keyId: rerolled.body.keyId,
    expiration: 0,
  });
  expect(refused.status).toBe(403);
  expect(JSON.stringify(refused.body)).toContain(`api.${apiId}.encrypt_key`);
  // A key that is not recoverable rerolls without it.
  const plain = await creator.post<{ keyId: string }>('keys.createKey', { apiId });
  expect(
    (await creator.post('keys.rerollKey', { keyId: plain.body.keyId, expiration: 0 })).status,
  ).toBe(200);
});
