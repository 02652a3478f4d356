import { names } from '../../src/store/names';
import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';
import pino from 'pino';
import type { RunningNode } from '../../src/node';
import { createRootKey } from '../../src/operations/rootKeys';
import { RootKeyStore } from '../../src/store/rootKeyStore';
import type { TestRedis } from '../support/redisServer';
import { startTopology, type Topology } from '../support/topology';
import { adminRedis, allKeys, closeRedis } from '../support/keyspace';
import { eventually } from '../support/helpers';

/**
 * Secrets stay secret. A whole session (root keys, APIs, keys, verifications of every verdict,
 * updates, deletes, requests with wrong root keys, a failure of the primary) runs against a node
 * whose logger, at `trace`, writes into memory. Afterwards no plaintext key or root key appears
 * in the logs, and neither does its SHA-256: the hash is the handle of the record in Redis and
 * a verifier of the key (unsalted, so a weak imported key could be brute-forced from it), and
 * nothing in operating a node needs it in a log. And after createKey, no answer ever carries a
 * key's plaintext or hash.
 *
 * The logger here is a bare `pino({ level: 'trace' })`, without the redaction paths of
 * src/logger.ts: the test holds the code to never hand a secret to the logger at all.
 */
let topology: Topology;
let redis: TestRedis;
let node: RunningNode;
let admin: Redis;
const logLines: string[] = [];
/** The vault's key-encryption key: it must never reach a log line or an answer either. */
const VAULT_MATERIAL = Buffer.alloc(32, 42).toString('base64');
/** Every response body after createKey's own: none may carry key material. */
const answers: { label: string; text: string }[] = [];
/** Every secret the session used or sent: plaintexts of keys and root keys, right or wrong. */
const secrets = new Map<string, string>();

beforeAll(async () => {
  const logger = pino({ level: 'trace' }, { write: (line: string) => void logLines.push(line) });
  // No node-local Redis: fast buckets live on the primary too, so stopping it below fails every
  // kind of verification and logs the driver's errors.
  topology = await startTopology({
    nodes: 1,
    localRedis: false,
    logger,
    env: {
      KEYWARD_REDIS_COMMAND_TIMEOUT_MS: '2000',
      LOG_LEVEL: 'trace',
      KEYWARD_VAULT_KEYS: `logged:${VAULT_MATERIAL}`,
    },
  });
  redis = topology.primary;
  node = topology.nodes[0]!;
  admin = await adminRedis(redis.url);
});

afterAll(async () => {
  if (admin) await closeRedis(admin);
  if (topology) await topology.stop();
});

async function call(
  label: string,
  method: 'GET' | 'POST',
  path: string,
  rootKey: string,
  body?: unknown,
): Promise<{ status: number; body: Record<string, unknown> }> {
  const response = await fetch(`${node.url}/v1/${path}`, {
    method,
    headers: { authorization: `Bearer ${rootKey}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    signal: AbortSignal.timeout(5_000),
  });
  const text = await response.text();
  // createKey's and rerollKey's own answers carry the new key once, by design; every other answer
  // is checked.
  if (!/^keys\.(createKey|rerollKey)/.test(path)) answers.push({ label, text });
  return { status: response.status, body: JSON.parse(text) as Record<string, unknown> };
}

/** The forms in which a secret could leak: itself, its random part, its SHA-256 in any encoding. */
function forms(secret: string): string[] {
  const digest = createHash('sha256').update(secret, 'utf8').digest();
  const random = secret.includes('_') ? secret.slice(secret.lastIndexOf('_') + 1) : secret;
  return [
    secret,
    random,
    digest.toString('base64'),
    digest.toString('base64url'),
    digest.toString('hex'),
    // As it would appear inside a JSON string.
    JSON.stringify(digest.toString('base64')).slice(1, -1),
  ];
}

test('a whole session leaks no key or root key, nor their hashes, into logs or answers', async () => {
  const store = new RootKeyStore(admin);
  const root = await createRootKey(store, { name: 'ops' });
  const scoped = await createRootKey(store, {
    workspaceId: root.workspaceId,
    permissions: ['api.*.verify_key'],
  });
  const stranger = await createRootKey(store, {});
  for (const rk of [root, scoped, stranger]) secrets.set(`root key ${rk.keyId}`, rk.key);

  const apiId = String(
    (await call('createApi', 'POST', 'apis.createApi', root.key, { name: 'session' })).body.apiId,
  );
  const keyBodies = [
    { apiId, prefix: 'sk_live', name: 'with prefix', ownerId: 'alice', meta: { plan: 'pro' } },
    { apiId, byteLength: 64 },
    { apiId, ratelimit: { type: 'consistent', limit: 1, refillRate: 1, refillInterval: 60_000 } },
    { apiId, ratelimit: { async: true, limit: 1, duration: 60_000 } },
    { apiId, expires: Date.now() + 60_000, enabled: true },
  ];
  const keys: { keyId: string; key: string }[] = [];
  for (const body of keyBodies) {
    const created = await call('createKey', 'POST', 'keys.createKey', root.key, body);
    expect(created.status).toBe(200);
    const { keyId, key } = created.body as { keyId: string; key: string };
    keys.push({ keyId, key });
    secrets.set(`key ${keyId}`, key);
  }

  for (const { keyId, key } of keys) {
    for (let i = 0; i < 2; i++) {
      // The second verification of a rate-limited key is RATE_LIMITED.
      const verdict = await call('verify', 'POST', 'keys.verifyKey', root.key, { key });
      expect(verdict.status).toBe(200);
    }
    expect(
      (await call('verify with apiId', 'POST', 'keys.verifyKey', scoped.key, { key, apiId }))
        .status,
    ).toBe(200);
    expect((await call('getKey', 'GET', `keys.getKey?keyId=${keyId}`, root.key)).status).toBe(200);
    expect(
      (
        await call('updateKey', 'POST', 'keys.updateKey', root.key, {
          keyId,
          name: 'renamed',
          meta: null,
        })
      ).status,
    ).toBe(200);
  }
  const [first, second] = keys as [(typeof keys)[0], (typeof keys)[0]];
  // Usage credits, the dashboard's reads, rate limits and overrides.
  expect(
    (
      await call('credits', 'POST', 'keys.updateRemaining', root.key, {
        keyId: second.keyId,
        op: 'set',
        value: 1,
      })
    ).status,
  ).toBe(200);
  expect(
    (await call('verify credits', 'POST', 'keys.verifyKey', root.key, { key: second.key })).status,
  ).toBe(200);
  expect(
    (await call('verify no credits', 'POST', 'keys.verifyKey', root.key, { key: second.key })).body
      .code,
  ).toBe('USAGE_EXCEEDED');
  for (const { keyId } of keys) {
    expect((await call('getBucket', 'GET', `keys.getBucket?keyId=${keyId}`, root.key)).status).toBe(
      200,
    );
    expect(
      (await call('getVerifications', 'GET', `keys.getVerifications?keyId=${keyId}`, root.key))
        .status,
    ).toBe(200);
  }
  expect((await call('listApis', 'GET', 'apis.listApis', root.key)).status).toBe(200);
  expect(
    (
      await call('setOverride', 'POST', 'ratelimits.setOverride', root.key, {
        namespaceName: 'email',
        identifier: 'user_*',
        limit: 1,
        duration: 60_000,
      })
    ).status,
  ).toBe(200);
  for (let i = 0; i < 2; i++) {
    expect(
      (
        await call('limit', 'POST', 'ratelimits.limit', root.key, {
          namespace: 'email',
          identifier: 'user_1',
          limit: 5,
          duration: 60_000,
        })
      ).status,
    ).toBe(200);
  }
  expect(
    (
      await call(
        'getOverride',
        'GET',
        'ratelimits.getOverride?namespaceName=email&identifier=user_*',
        root.key,
      )
    ).status,
  ).toBe(200);
  expect(
    (await call('listOverrides', 'GET', 'ratelimits.listOverrides?namespaceName=email', root.key))
      .status,
  ).toBe(200);
  expect(
    (
      await call('deleteOverride', 'POST', 'ratelimits.deleteOverride', root.key, {
        namespaceName: 'email',
        identifier: 'user_*',
      })
    ).status,
  ).toBe(200);
  // Imported keys: by plaintext, and by hash (the hash of a plaintext only its users know).
  const importedPlaintext = 'legacy_4f9a8c7e6d5b4a3928171605f4e3d2c1';
  const importedByHash = 'legacy_0a1b2c3d4e5f60718293a4b5c6d7e8f9';
  secrets.set('imported key', importedPlaintext);
  secrets.set('key imported by hash', importedByHash);
  const imported = await call('import', 'POST', 'migrations.createKeys', root.key, [
    { apiId, plaintext: importedPlaintext, prefix: 'legacy' },
    {
      apiId,
      hash: {
        value: createHash('sha256').update(importedByHash).digest('base64'),
        variant: 'sha256_base64',
      },
      start: 'legacy_0a1b',
    },
  ]);
  expect(imported.status).toBe(200);
  // Importing either again is a conflict; its answer must not echo the key either.
  expect(
    (
      await call('import again', 'POST', 'migrations.createKeys', root.key, [
        { apiId, plaintext: importedPlaintext },
      ])
    ).status,
  ).toBe(409);
  for (const key of [importedPlaintext, importedByHash]) {
    expect(
      (await call('verify imported', 'POST', 'keys.verifyKey', root.key, { key })).body.code,
    ).toBe('VALID');
  }
  for (const keyId of imported.body.keyIds as string[]) {
    const got = await call('getKey imported', 'GET', `keys.getKey?keyId=${keyId}`, root.key);
    expect(got.body.start).toMatch(/^legacy_/);
  }
  // Rerolls: a new secret for the prefixed key (an hour's grace), and for the last key at once.
  for (const [old, expiration] of [
    [first, 3_600_000],
    [keys[4]!, 0],
  ] as const) {
    const rerolled = await call('reroll', 'POST', 'keys.rerollKey', root.key, {
      keyId: old.keyId,
      expiration,
    });
    expect(rerolled.status).toBe(200);
    const { keyId, key } = rerolled.body as { keyId: string; key: string };
    secrets.set(`key ${keyId}`, key);
    expect(
      (await call('verify rerolled', 'POST', 'keys.verifyKey', root.key, { key })).body.code,
    ).toBe('VALID');
    expect(
      (await call('verify old', 'POST', 'keys.verifyKey', root.key, { key: old.key })).body.code,
    ).toBe(expiration === 0 ? 'EXPIRED' : 'VALID');
  }
  expect(
    (
      await call('disable', 'POST', 'keys.updateKey', root.key, {
        keyId: first.keyId,
        enabled: false,
      })
    ).status,
  ).toBe(200);
  expect(
    (await call('verify disabled', 'POST', 'keys.verifyKey', root.key, { key: first.key })).body
      .code,
  ).toBe('DISABLED');
  expect(
    (
      await call('verify wrong api', 'POST', 'keys.verifyKey', root.key, {
        key: second.key,
        apiId: 'api_other',
      })
    ).body.code,
  ).toBe('FORBIDDEN');
  expect(
    (await call('listKeys', 'GET', `apis.listKeys?apiId=${apiId}&limit=2`, root.key)).status,
  ).toBe(200);
  const page2 = await call(
    'listKeys',
    'GET',
    `apis.listKeys?apiId=${apiId}&ownerId=alice`,
    root.key,
  );
  // alice's key, and the key that replaced it.
  expect(page2.body.total).toBe(2);
  expect((await call('getApi', 'GET', `apis.getApi?apiId=${apiId}`, root.key)).status).toBe(200);

  // Failing requests: wrong root keys of every kind in the Authorization header.
  const wrongRootKeys = [
    `${root.key.slice(0, -1)}${root.key.endsWith('a') ? 'b' : 'a'}`,
    'kwroot_4KAT6XdWFUK1MLidyAC3RehpKFVNj7JjN',
    first.key, // a key, not a root key
    `${root.key}${root.key}`,
  ];
  wrongRootKeys.forEach((wrong, i) => secrets.set(`wrong root key ${i}`, wrong));
  for (const wrong of wrongRootKeys) {
    expect(
      (await call('wrong root key', 'POST', 'keys.verifyKey', wrong, { key: second.key })).status,
    ).toBe(401);
    expect((await call('wrong root key', 'GET', `apis.getApi?apiId=${apiId}`, wrong)).status).toBe(
      401,
    );
    expect((await call('wrong root key', 'POST', 'keys.createKey', wrong, { apiId })).status).toBe(
      401,
    );
  }
  // Right root key, wrong rights or wrong workspace.
  expect(
    (await call('forbidden', 'POST', 'keys.deleteKey', scoped.key, { keyId: second.keyId })).status,
  ).toBe(403);
  expect(
    (await call('other workspace', 'GET', `keys.getKey?keyId=${second.keyId}`, stranger.key))
      .status,
  ).toBe(404);
  expect(
    (await call('other workspace', 'POST', 'keys.verifyKey', stranger.key, { key: second.key }))
      .body.code,
  ).toBe('NOT_FOUND');
  // Bad input in the body next to a key.
  expect(
    (
      await call('bad input', 'POST', 'keys.verifyKey', root.key, {
        key: second.key,
        ratelimit: { cost: -1 },
      })
    ).status,
  ).toBe(400);
  expect(
    (
      await call('bad input', 'POST', 'keys.verifyKey', root.key, {
        key: `${second.key}x`.repeat(40),
      })
    ).status,
  ).toBe(400);

  // Deletions, then the verdicts of what is gone.
  expect(
    (await call('deleteKey', 'POST', 'keys.deleteKey', root.key, { keyId: second.keyId })).status,
  ).toBe(200);
  expect(
    (await call('verify deleted', 'POST', 'keys.verifyKey', root.key, { key: second.key })).body
      .code,
  ).toBe('NOT_FOUND');

  // The primary fails: 503s and warnings with the driver's errors, which must not carry secrets.
  await redis.stop();
  try {
    for (const { key } of keys)
      await call('primary down', 'POST', 'keys.verifyKey', root.key, { key });
    expect((await call('primary down', 'POST', 'keys.createKey', root.key, { apiId })).status).toBe(
      503,
    );
    expect(
      (
        await call('primary down', 'POST', 'keys.updateKey', root.key, {
          keyId: first.keyId,
          name: 'x',
        })
      ).status,
    ).toBe(503);
  } finally {
    await redis.restart();
  }
  // The restarted primary kept nothing (no AOF here); the node reconnects and answers again.
  await eventually(async () => (await fetch(`${node.url}/v1/liveness`)).status === 200, {
    intervalMs: 50,
    onTimeout: 'return',
  });

  // The log is the one of this whole session: one access line per request at least.
  const log = logLines.join('');
  expect(logLines.length).toBeGreaterThanOrEqual(answers.length);
  expect(log).toContain(first.keyId);
  expect(log).toContain('"status":401');
  expect(log).toContain('"status":503');

  for (const [name, secret] of secrets) {
    for (const form of forms(secret)) {
      if (log.includes(form)) throw new Error(`the log holds ${name} (as ${form.slice(0, 12)}…)`);
      for (const answer of answers) {
        if (answer.text.includes(form)) {
          throw new Error(
            `the answer to ${answer.label} holds ${name}: ${answer.text.slice(0, 300)}`,
          );
        }
      }
    }
  }
});

test('what is stored of a key is its hash and start, never its plaintext', async () => {
  // The session above ended with a restart that emptied the primary: make a fresh key.
  await eventually(async () => (await admin.ping()) === 'PONG', {
    intervalMs: 50,
    onTimeout: 'return',
  });
  const root = await createRootKey(new RootKeyStore(admin), {});
  const apiId = String(
    (await call('createApi', 'POST', 'apis.createApi', root.key, { name: 'x' })).body.apiId,
  );
  const created = await call('createKey', 'POST', 'keys.createKey', root.key, {
    apiId,
    prefix: 'sk',
  });
  const { keyId, key } = created.body as { keyId: string; key: string };
  const hash = createHash('sha256').update(key).digest('base64');

  const values: string[] = [];
  for (const name of await allKeys(admin)) {
    values.push(name);
    const type = await admin.type(name);
    if (type === 'hash') values.push(...Object.entries(await admin.hgetall(name)).flat());
    if (type === 'zset') values.push(...(await admin.zrange(name, 0, -1)));
  }
  const stored = values.join('\n');
  expect(stored).not.toContain(key);
  expect(stored).not.toContain(key.slice('sk_'.length));
  expect(stored).not.toContain(root.key);
  expect(stored).not.toContain(root.key.slice('kwroot_'.length));
  expect(stored).toContain(hash);
  expect(await admin.hget(`keyward:key:{${keyId}}`, 'start')).toBe(key.slice(0, 'sk_'.length + 4));

  // The answers that describe the key show its start, not its hash.
  const got = await call('getKey', 'GET', `keys.getKey?keyId=${keyId}`, root.key);
  expect(got.body.start).toBe(key.slice(0, 'sk_'.length + 4));
  expect(Object.keys(got.body)).not.toContain('hash');
  expect(Object.keys(got.body)).not.toContain('key');
  const listed = await call('listKeys', 'GET', `apis.listKeys?apiId=${apiId}`, root.key);
  const [view] = listed.body.keys as Record<string, unknown>[];
  expect(view).toEqual(got.body);
});

test('a recoverable key reaches only the answer that decrypts it: no log line, no other answer, no error', async () => {
  const root = await createRootKey(new RootKeyStore(admin), { name: 'vault' });
  const apiId = String(
    (await call('createApi', 'POST', 'apis.createApi', root.key, { name: 'vault' })).body.apiId,
  );
  const from = logLines.length;
  const created = await call('createKey', 'POST', 'keys.createKey', root.key, {
    apiId,
    recoverable: true,
  });
  const { keyId, key } = created.body as { keyId: string; key: string };
  const decrypted = await call(
    'getKey decrypt',
    'GET',
    `keys.getKey?keyId=${keyId}&decrypt=true`,
    root.key,
  );
  expect(decrypted.body.plaintext).toBe(key);
  const listed = await call(
    'listKeys decrypt',
    'GET',
    `apis.listKeys?apiId=${apiId}&decrypt=true`,
    root.key,
  );
  expect(listed.status).toBe(200);
  // A sealed form that no longer opens: its error names the key, never the plaintext.
  const sealed = (await admin.hget(names.key(keyId), 'sealed'))!;
  await admin.hset(names.key(keyId), 'sealed', `${sealed.slice(0, -2)}AA`);
  const refused = await call(
    'getKey altered',
    'GET',
    `keys.getKey?keyId=${keyId}&decrypt=true`,
    root.key,
  );
  expect(refused.status).toBe(412);
  const log = logLines.slice(from).join('');
  expect(log).toContain(keyId);
  for (const form of [...forms(key), VAULT_MATERIAL]) {
    expect(log).not.toContain(form);
    expect(JSON.stringify(refused.body)).not.toContain(form);
  }
  expect(JSON.stringify(decrypted.body)).not.toContain(VAULT_MATERIAL);
  // Nothing of the key but its sealed form in Redis.
  const stored = JSON.stringify(await admin.hgetall(names.key(keyId)));
  for (const form of forms(key).slice(0, 2)) expect(stored).not.toContain(form);
});
