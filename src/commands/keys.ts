import { readFileSync } from 'node:fs';
import type { RatelimitInput } from '../limiter/ratelimitConfig';
import { createKey, type CreateKeyInput } from '../operations/keys/createKey';
import { deleteKey } from '../operations/keys/deleteKey';
import { getKey } from '../operations/keys/getKey';
import { v1KeyView, v1Verification } from '../dialects/v1/views';
import { verifyKey, type VerifyKeyInput } from '../operations/keys/verifyKey';
import { runOperation } from '../operations/operation';
import { UsageError, type CommandSpec } from './framework';
import { emit, fieldLines } from './output';
import {
  operate,
  operatorCaller,
  operatorServices,
  requireWorkspace,
  workspaceArgument,
  workspaceOption,
} from './services';
import { integerFlag, validateAs } from './validate';

const keyIdArg = { name: 'keyId', description: 'the key id (key_…)' };

const RATELIMIT = /^(fast|consistent):(\d{1,16})\/(\d{1,16})\/(\d{1,16})$/;

/** `consistent:100/10/1000`: a bucket of 100 tokens that gains 10 every 1000 ms. */
export function parseRatelimit(value: string, command: CommandSpec): RatelimitInput {
  const match = RATELIMIT.exec(value);
  if (!match) {
    throw new UsageError(
      '--ratelimit: must be fast|consistent:LIMIT/REFILL_RATE/INTERVAL_MS, e.g. consistent:100/10/1000',
      command,
    );
  }
  const [, type, limit, refillRate, refillInterval] = match as unknown as [
    string,
    'fast' | 'consistent',
    string,
    string,
    string,
  ];
  return {
    type,
    limit: Number(limit),
    refillRate: Number(refillRate),
    refillInterval: Number(refillInterval),
  };
}

const create: CommandSpec = {
  path: ['keys', 'create'],
  brief: 'create a key; prints its plaintext once',
  summary:
    'Creates a key, as keys.createKey does, and prints its id and plaintext. The plaintext is shown this once; only its hash is stored.',
  options: {
    workspace: workspaceOption,
    api: { type: 'string', value: 'api_…', required: true, description: 'the API of the key' },
    name: { type: 'string', value: 'NAME', description: 'a name to recognise the key by' },
    prefix: {
      type: 'string',
      value: 'PREFIX',
      description: 'up to 16 of [A-Za-z0-9_-], put before the key with a _',
    },
    owner: {
      type: 'string',
      value: 'OWNER_ID',
      description: 'the ownerId (externalId) of the key',
    },
    ratelimit: {
      type: 'string',
      value: 'TYPE:L/R/MS',
      description:
        'a token bucket: fast|consistent:LIMIT/REFILL_RATE/INTERVAL_MS, e.g. consistent:100/10/1000',
    },
    remaining: { type: 'string', value: 'N', description: 'usage credits (at least 1)' },
  },
  example: `keyward keys create --workspace ws_… --api api_… --prefix sk --ratelimit consistent:3/1/60000`,
  async run(invocation, runtime) {
    const ws = invocation.required('workspace');
    const raw: Partial<CreateKeyInput> = { apiId: invocation.required('api') };
    const name = invocation.string('name');
    if (name !== undefined) raw.name = name;
    const prefix = invocation.string('prefix');
    if (prefix !== undefined) raw.prefix = prefix;
    const owner = invocation.string('owner');
    if (owner !== undefined) raw.ownerId = owner;
    const ratelimit = invocation.string('ratelimit');
    if (ratelimit !== undefined) raw.ratelimit = parseRatelimit(ratelimit, create);
    const remaining = integerFlag(invocation.string('remaining'), '--remaining', create);
    if (remaining !== undefined) raw.remaining = remaining;
    const input = validateAs<CreateKeyInput>(
      createKey,
      raw,
      {
        apiId: '--api',
        name: '--name',
        prefix: '--prefix',
        ownerId: '--owner',
        ratelimit: '--ratelimit',
        remaining: '--remaining',
      },
      create,
    );
    await requireWorkspace(runtime, ws);
    const created = await operate(runtime, ws, createKey, input);
    emit(invocation, created, () => [
      ...fieldLines(created),
      'The key is shown this once: keyward stores only its hash.',
    ]);
    return 0;
  },
};

const get: CommandSpec = {
  path: ['keys', 'get'],
  brief: 'show a key',
  summary:
    'Shows a key as keys.getKey does: never its hash; its plaintext only with --decrypt, for a recoverable key.',
  options: {
    workspace: workspaceOption,
    decrypt: {
      type: 'boolean',
      description:
        "also print a recoverable key's plaintext, opened with this process's KEYWARD_VAULT_KEYS (recorded in the audit log)",
    },
  },
  args: [keyIdArg],
  notes:
    'With --decrypt, a key that is not recoverable is shown without a plaintext, and nothing is recorded. Without KEYWARD_VAULT_KEYS in the environment, --decrypt fails (exit 1) as keys.getKey answers a node without a vault (412).',
  example: 'keyward keys get --workspace ws_… key_1ChFjUG4o6VLuzbLGABNDC',
  async run(invocation, runtime) {
    const ws = await workspaceArgument(invocation, runtime);
    // v1's answer: what `GET /v1/keys.getKey` shows (docs/cli.md).
    const key = v1KeyView(
      await operate(runtime, ws, getKey, {
        keyId: invocation.args[0] ?? '',
        // Left out rather than false, so that a plain `keys get` asks exactly what it always did.
        ...(invocation.flag('decrypt') ? { decrypt: true } : {}),
      }),
    );
    emit(invocation, key, () => fieldLines(key));
    return 0;
  },
};

/** `-` reads the key from stdin, so it need not appear in `ps` or the shell's history. */
function keyArgument(value: string): string {
  if (value !== '-') return value;
  return readFileSync(0, 'utf8').split(/\r?\n/)[0]?.trim() ?? '';
}

/** How long `keys verify` tries to write its usage count, as a stopping node does. */
const USAGE_FLUSH_MS = 5_000;

const verify: CommandSpec = {
  path: ['keys', 'verify'],
  brief: 'verify a key (spends a token, like any verification)',
  summary:
    'Verifies a key as keys.verifyKey does, and prints the verdict. Like any verification it spends a rate-limit token and a usage credit (--cost 0 spends neither), and is counted in the usage analytics. Any verdict, valid or not, exits 0.',
  options: {
    workspace: workspaceOption,
    api: { type: 'string', value: 'api_…', description: 'refuse (FORBIDDEN) a key of another API' },
    cost: {
      type: 'string',
      value: 'N',
      description: 'tokens and credits to spend (default 1; 0 reads without spending)',
    },
  },
  args: [{ name: 'key', description: 'the key, or - to read it from stdin' }],
  notes:
    'When the Redis holding the bucket cannot be reached, the verdict is what a node would answer under KEYWARD_LIMITER_FAILURE (LIMITER_UNAVAILABLE, or VALID with ratelimit.evaluated false). Unless KEYWARD_ANALYTICS=off, the analytics Redis (KEYWARD_ANALYTICS_REDIS_URL, or the primary) must be reachable before anything is spent, and the count is written before the command exits.',
  example: `printf %s "$KEY" | keyward keys verify --workspace ws_… -`,
  async run(invocation, runtime) {
    const ws = invocation.required('workspace');
    const raw: VerifyKeyInput = { key: keyArgument(invocation.args[0] ?? '') };
    const apiId = invocation.string('api');
    if (apiId !== undefined) raw.apiId = apiId;
    const cost = integerFlag(invocation.string('cost'), '--cost', verify);
    // One cost for both: an operator who asks for 0 means "spend nothing at all".
    if (cost !== undefined) {
      raw.ratelimit = { cost };
      raw.remaining = { cost };
    }
    const input = validateAs<VerifyKeyInput>(
      verifyKey,
      raw,
      { key: '<key>', apiId: '--api', 'ratelimit.cost': '--cost', 'remaining.cost': '--cost' },
      verify,
    );
    await requireWorkspace(runtime, ws);
    // Counted as a node counts it. Its Redis is connected first: an analytics Redis that is away
    // refuses the command before anything is spent, rather than leave a verification uncounted.
    const services = await operatorServices(runtime, {
      analytics: runtime.config.analytics.enabled,
    });
    const verdict = v1Verification(
      await runOperation(verifyKey, services, operatorCaller(ws), input),
    );
    const unwritten = await services.usage.stop(USAGE_FLUSH_MS);
    await services.lastUse.stop();
    emit(invocation, verdict, () => fieldLines(verdict));
    if (unwritten > 0) {
      process.stderr.write(
        `keyward: the verification's usage count was not written (${runtime.describe('analytics')})\n`,
      );
    }
    return 0;
  },
};

const revoke: CommandSpec = {
  path: ['keys', 'revoke'],
  brief: 'delete a key',
  summary:
    'Deletes a key, as keys.deleteKey does: it stops verifying on every node as the invalidation arrives.',
  options: { workspace: workspaceOption },
  args: [keyIdArg],
  example: 'keyward keys revoke --workspace ws_… key_1ChFjUG4o6VLuzbLGABNDC',
  async run(invocation, runtime) {
    const ws = invocation.required('workspace');
    const keyId = invocation.args[0] ?? '';
    await requireWorkspace(runtime, ws);
    await operate(runtime, ws, deleteKey, {
      keyId,
    });
    emit(invocation, { keyId, deleted: true }, () => [`deleted key ${keyId}`]);
    return 0;
  },
};

export const keyCommands: readonly CommandSpec[] = [create, get, verify, revoke];
