import type { Redis } from 'ioredis';
import { allKeys } from './keyspace';

/**
 * The consistency rules of one workspace's records in the primary (docs/redis.md), checked
 * directly in Redis. They hold after every write, whole or not started: a crash may lose a write
 * that was in flight, never leave half of one.
 */
export interface WorkspaceState {
  /** One line per broken rule; empty when the workspace is consistent. */
  violations: string[];
  /** API id → record. */
  apis: Map<string, Record<string, string>>;
  /** Key id → record. */
  keys: Map<string, Record<string, string>>;
  /** API id → ids in its `…:keys` index. */
  keyIndex: Map<string, Map<string, number>>;
  /** `<apiId> <ownerId>` → ids in that owner index. */
  ownerIndex: Map<string, Map<string, number>>;
}

async function zsetOf(redis: Redis, name: string): Promise<Map<string, number>> {
  const flat = await redis.zrange(name, 0, -1, 'WITHSCORES');
  const members = new Map<string, number>();
  for (let i = 0; i < flat.length; i += 2) members.set(flat[i] as string, Number(flat[i + 1]));
  return members;
}

export async function inspectWorkspace(redis: Redis, ws: string): Promise<WorkspaceState> {
  const prefix = `keyward:{${ws}}:`;
  const names = await allKeys(redis, `keyward:{${ws}}:*`);
  const state: WorkspaceState = {
    violations: [],
    apis: new Map(),
    keys: new Map(),
    keyIndex: new Map(),
    ownerIndex: new Map(),
  };
  const v = (line: string) => state.violations.push(line);
  let hashIndex: Record<string, string> = {};
  let apiIndex = new Map<string, number>();

  for (const name of names) {
    const rest = name.slice(prefix.length);
    let match: RegExpExecArray | null;
    if (rest === 'keyhashes') hashIndex = await redis.hgetall(name);
    else if (rest === 'apis') apiIndex = await zsetOf(redis, name);
    else if (rest === 'workspace' || rest === 'rootkeys') continue;
    else if ((match = /^api:([^:]+)$/.exec(rest))) {
      state.apis.set(match[1] as string, await redis.hgetall(name));
    } else if ((match = /^api:([^:]+):keys$/.exec(rest))) {
      state.keyIndex.set(match[1] as string, await zsetOf(redis, name));
    } else if ((match = /^api:([^:]+):owner:(.*)$/.exec(rest))) {
      state.ownerIndex.set(`${match[1]} ${match[2]}`, await zsetOf(redis, name));
    } else if ((match = /^key:(.+)$/.exec(rest))) {
      state.keys.set(match[1] as string, await redis.hgetall(name));
    }
    // Other names (added by later features) are not covered by these rules.
  }

  // Every hash in the index names a live record whose hash maps back.
  for (const [hash, keyId] of Object.entries(hashIndex)) {
    const record = state.keys.get(keyId);
    if (!record) v(`keyhashes ${hash} → ${keyId}: no record`);
    else if (record.hash !== hash) v(`keyhashes ${hash} → ${keyId}: record hash is ${record.hash}`);
  }

  const seqsByApi = new Map<string, Set<number>>();
  for (const [keyId, record] of state.keys) {
    for (const field of [
      'id',
      'workspaceId',
      'apiId',
      'hash',
      'start',
      'createdAt',
      'seq',
      'version',
      'enabled',
    ]) {
      if (record[field] === undefined) v(`key ${keyId}: no ${field}`);
    }
    if (record.id !== keyId) v(`key ${keyId}: id field is ${record.id}`);
    if (record.workspaceId !== ws) v(`key ${keyId}: workspaceId is ${record.workspaceId}`);
    const apiId = record.apiId ?? '';
    const seq = Number(record.seq);
    if (hashIndex[record.hash ?? ''] !== keyId) v(`key ${keyId}: its hash is not indexed to it`);
    if (!state.apis.has(apiId)) v(`key ${keyId}: its API ${apiId} has no record`);
    if (state.keyIndex.get(apiId)?.get(keyId) !== seq) {
      v(`key ${keyId}: not in ${apiId}'s key index with score ${seq}`);
    }
    for (const [owner, members] of state.ownerIndex) {
      const [ownerApi, ownerId] = [
        owner.slice(0, owner.indexOf(' ')),
        owner.slice(owner.indexOf(' ') + 1),
      ];
      const belongs = ownerApi === apiId && record.ownerId === ownerId;
      if (members.has(keyId) && !belongs)
        v(`key ${keyId}: in owner index ${owner} it does not belong to`);
      if (belongs && members.get(keyId) !== seq)
        v(`key ${keyId}: owner index ${owner} score is not ${seq}`);
    }
    if (
      record.ownerId !== undefined &&
      !state.ownerIndex.get(`${apiId} ${record.ownerId}`)?.has(keyId)
    ) {
      v(`key ${keyId}: not in the owner index of ${record.ownerId}`);
    }
    const seqs = seqsByApi.get(apiId) ?? new Set<number>();
    if (seqs.has(seq)) v(`key ${keyId}: seq ${seq} is used twice in ${apiId}`);
    seqs.add(seq);
    seqsByApi.set(apiId, seqs);
  }

  for (const [apiId, members] of state.keyIndex) {
    if (!state.apis.has(apiId)) v(`key index of ${apiId}: no API record`);
    for (const keyId of members.keys()) {
      const record = state.keys.get(keyId);
      if (!record) v(`key index of ${apiId}: ${keyId} has no record`);
      else if (record.apiId !== apiId)
        v(`key index of ${apiId}: ${keyId} belongs to ${record.apiId}`);
    }
  }
  for (const [owner, members] of state.ownerIndex) {
    for (const keyId of members.keys()) {
      if (!state.keys.has(keyId)) v(`owner index ${owner}: ${keyId} has no record`);
    }
  }

  for (const [apiId, record] of state.apis) {
    const deleted = record.deletedAt !== undefined;
    if (record.id !== apiId) v(`api ${apiId}: id field is ${record.id}`);
    if (!deleted && !apiIndex.has(apiId)) {
      v(`api ${apiId}: live but not in the workspace's API index`);
    }
    if (deleted && apiIndex.has(apiId)) v(`api ${apiId}: marked deleted but still indexed`);
    const maxSeq = Math.max(0, ...(seqsByApi.get(apiId) ?? []));
    if (Number(record.keySeq) < maxSeq) v(`api ${apiId}: keySeq ${record.keySeq} < seq ${maxSeq}`);
  }
  for (const apiId of apiIndex.keys()) {
    if (!state.apis.has(apiId)) v(`API index: ${apiId} has no record`);
  }
  return state;
}

/** Root keys of the workspace: every index entry's record exists and names the workspace. */
export async function rootKeyViolations(redis: Redis, ws: string): Promise<string[]> {
  const violations: string[] = [];
  for (const [id, hash] of Object.entries(await redis.hgetall(`keyward:{${ws}}:rootkeys`))) {
    const record = await redis.hgetall(`keyward:rootkey:{${hash}}`);
    if (record.id !== id || record.workspaceId !== ws)
      violations.push(`root key ${id}: record ${JSON.stringify(record)}`);
  }
  return violations;
}
