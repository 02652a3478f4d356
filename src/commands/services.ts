import { randomUUID } from 'node:crypto';
import { OPERATOR } from '../domain/audit';
import { NotFoundError } from '../errors';
import { looksLikeId, newId } from '../keys/ids';
import type { BucketRedis } from '../limiter/tokenBucket';
import { runOperation, type Caller, type Operation } from '../operations/operation';
import type { Services } from '../operations/services';
import { RedisClock } from '../redis/clock';
import { RootKeyStore } from '../store/rootKeyStore';
import type { Invocation, OptionSpec } from './framework';
import type { Runtime } from './runtime';
import { assembleServices } from '../wiring';

/**
 * The `services` of src/operations, built as src/node.ts builds them, so that commands run the
 * very operations behind the HTTP API (same checks, same scripts, same invalidations). Two
 * differences: no invalidation listener, so the caches are never trusted and every read goes to
 * the primary; and the local Redis is connected only when a fast bucket is actually consulted.
 * Usage counts are read where the nodes write them (KEYWARD_ANALYTICS_REDIS_URL, or the primary)
 * when `analytics` asks for it, so that other commands never need that Redis.
 */
export async function operatorServices(
  runtime: Runtime,
  options: { analytics?: boolean } = {},
): Promise<Services> {
  const primary = await runtime.redis('primary');
  const clock = new RedisClock(primary);
  // One reading is enough for a command that lives a second; a node re-measures every 10 s.
  await clock.sync();
  const local: BucketRedis = {
    tokenBucketV1Buffer: async (bucketKey, ...args) =>
      (await runtime.redis('local')).tokenBucketV1Buffer(bucketKey, ...args),
    multiBucketV1Buffer: async (numberOfKeys, ...args) =>
      (await runtime.redis('local')).multiBucketV1Buffer(numberOfKeys, ...args),
  };
  // Never trusted, so never answering from memory: a small bound is all a command needs.
  return assembleServices({
    config: runtime.config,
    primary,
    local,
    now: clock.now,
    maxCacheEntries: 16,
    ...(options.analytics ? { analytics: await runtime.redis('analytics') } : {}),
    // Each process its own flush marker: two commands at once must not read each other's.
    nodeId: `cli:${randomUUID()}`,
  });
}

/** Runs an operation as the operator of a workspace, on the services a node would give it. */
export async function operate<Uses extends keyof Services, Input, Output extends object>(
  runtime: Runtime,
  workspaceId: string,
  operation: Operation<Uses, Input, Output>,
  input: Input,
): Promise<Output> {
  return runOperation(
    operation,
    await operatorServices(runtime),
    operatorCaller(workspaceId),
    input,
  );
}

/**
 * The operator at the command line: no root key, but everything in the named workspace, as a
 * root key with `*` would have. The id is not an `rk_` id, so it can never name a stored key.
 */
export function operatorCaller(workspaceId: string): Caller {
  return {
    rootKey: { id: OPERATOR, workspaceId, permissions: ['*'], createdAt: 0 },
    requestId: newId('req'),
    logFields: {},
  };
}

/**
 * The root-key store on the primary, for src/operations/rootKeys.ts: root keys are made out of
 * band, so their functions take the store rather than running as operations.
 */
export async function rootKeyStore(runtime: Runtime): Promise<RootKeyStore> {
  return new RootKeyStore(await runtime.redis('primary'), runtime.config.auditMaxEntries);
}

/** Refuses a workspace that does not exist: writes would otherwise create orphans in it. */
export async function requireWorkspace(runtime: Runtime, workspaceId: string): Promise<void> {
  const exists =
    looksLikeId('ws', workspaceId) &&
    (await (await rootKeyStore(runtime)).workspaceExists(workspaceId));
  if (!exists) throw new NotFoundError('workspace', `workspace ${workspaceId} not found`);
}

/** The `--workspace` a command names, refused unless that workspace exists. */
export async function workspaceArgument(invocation: Invocation, runtime: Runtime): Promise<string> {
  const workspaceId = invocation.required('workspace');
  await requireWorkspace(runtime, workspaceId);
  return workspaceId;
}

export const workspaceOption: OptionSpec = {
  type: 'string',
  value: 'ws_…',
  required: true,
  description: 'the workspace',
};
