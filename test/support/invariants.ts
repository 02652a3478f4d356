import type { Cluster, Redis } from 'ioredis';
import { allKeys } from './keyspace';

/**
 * The consistency rules of one workspace's records in the primary (docs/redis.md, "Writes
 * across slots"), checked directly in Redis. Some hold at every instant, whatever step a crash
 * interrupted: a live key (committed, not deleted) is found from its hash, listed in its API's
 * shard, and its API exists; a live identity is found from its externalId and listed in its
 * shard; every entry of the API index names an API record. With `exact`, for a state where every
 * write finished (or was repaired): every index entry also names a live key (identity) that
 * agrees with it, every live API is indexed and no deleted one is, and nothing pending is left.
 */
export interface WorkspaceState {
  /** One line per broken rule; empty when the workspace is consistent. */
  violations: string[];
  /** API id → record. */
  apis: Map<string, Record<string, string>>;
  /** Key id → record, live keys only. */
  keys: Map<string, Record<string, string>>;
  /** Key id → record of a creation that did not commit. */
  pending: Map<string, Record<string, string>>;
  /** API id → ids in its listing (every shard). */
  keyIndex: Map<string, Map<string, number>>;
  /** `<apiId> <ownerId>` → ids in that owner index. */
  ownerIndex: Map<string, Map<string, number>>;
  /** Identity id → record, live identities only. */
  identities: Map<string, Record<string, string>>;
  /** Identity id → record of a creation that did not commit. */
  pendingIdentities: Map<string, Record<string, string>>;
}

async function zsetOf(redis: Redis | Cluster, name: string): Promise<Map<string, number>> {
  const flat = await redis.zrange(name, 0, -1, 'WITHSCORES');
  const members = new Map<string, number>();
  for (let i = 0; i < flat.length; i += 2) members.set(flat[i] as string, Number(flat[i + 1]));
  return members;
}

export async function inspectWorkspace(
  redis: Redis | Cluster,
  ws: string,
  options: { exact?: boolean } = {},
): Promise<WorkspaceState> {
  const state: WorkspaceState = {
    violations: [],
    apis: new Map(),
    keys: new Map(),
    pending: new Map(),
    keyIndex: new Map(),
    ownerIndex: new Map(),
    identities: new Map(),
    pendingIdentities: new Map(),
  };
  const v = (line: string) => state.violations.push(line);
  const hashIndex: Record<string, string> = {};
  let apiIndex = new Map<string, number>();
  /** Every record under a key's own tag of this workspace, tombstones included. */
  const records = new Map<string, Record<string, string>>();

  const prefix = `keyward:{${ws}}:`;
  for (const name of await allKeys(redis, `${prefix}*`)) {
    const rest = name.slice(prefix.length);
    if (rest === 'apis') apiIndex = await zsetOf(redis, name);
    else if (/^(key:|keyhashes$|api:|identity:|identitynames$|identities$)/.test(rest)) {
      v(`${name}: a record of the previous layout`);
    }
  }
  for (const name of await allKeys(redis, 'keyward:api:{*}')) {
    const record = await redis.hgetall(name);
    // A removed API's record is a tombstone that expires by itself: the API is gone.
    if (record.workspaceId === ws && record.removedAt === undefined) {
      state.apis.set(name.slice('keyward:api:{'.length, -1), record);
    }
  }
  for (const name of await allKeys(redis, 'keyward:key:{*}')) {
    const record = await redis.hgetall(name);
    if (record.workspaceId === ws) records.set(name.slice('keyward:key:{'.length, -1), record);
  }
  for (const name of await allKeys(redis, `keyward:keyhash:{*}:${ws}`)) {
    const hash = name.slice('keyward:keyhash:{'.length, name.length - ws.length - 2);
    hashIndex[hash] = (await redis.get(name)) ?? '';
  }
  for (const name of await allKeys(redis, 'keyward:apikeys:{*}')) {
    const [apiId] = name.slice('keyward:apikeys:{'.length, -1).split('.');
    const members = state.keyIndex.get(apiId as string) ?? new Map<string, number>();
    for (const [id, seq] of await zsetOf(redis, name)) members.set(id, seq);
    state.keyIndex.set(apiId as string, members);
  }
  for (const name of await allKeys(redis, 'keyward:ownerkeys:{*}')) {
    const tag = name.slice('keyward:ownerkeys:{'.length, -1);
    const dot = tag.indexOf('.');
    state.ownerIndex.set(`${tag.slice(0, dot)} ${tag.slice(dot + 1)}`, await zsetOf(redis, name));
  }
  // Listings of other workspaces' APIs are not this workspace's business.
  for (const apiId of [...state.keyIndex.keys()]) {
    if (!state.apis.has(apiId) && ![...records.values()].some((r) => r.apiId === apiId)) {
      state.keyIndex.delete(apiId);
    }
  }
  for (const owner of [...state.ownerIndex.keys()]) {
    const apiId = owner.slice(0, owner.indexOf(' '));
    if (!state.apis.has(apiId) && ![...records.values()].some((r) => r.apiId === apiId)) {
      state.ownerIndex.delete(owner);
    }
  }
  for (const [keyId, record] of records) {
    if (record.pending !== undefined) state.pending.set(keyId, record);
    else if (record.deletedAt === undefined) state.keys.set(keyId, record);
  }
  if (options.exact && state.pending.size > 0) {
    v(`pending keys left: ${[...state.pending.keys()].join(', ')}`);
  }

  // Every hash entry names a record (live, pending or deleted) whose hash maps back; with
  // `exact`, a live one.
  for (const [hash, keyId] of Object.entries(hashIndex)) {
    const record = records.get(keyId);
    if (!record) {
      if (options.exact) v(`hash ${hash} → ${keyId}: no record`);
    } else if (record.hash !== hash) v(`hash ${hash} → ${keyId}: record hash is ${record.hash}`);
    else if (options.exact && !state.keys.has(keyId)) v(`hash ${hash} → ${keyId}: not live`);
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
    const apiId = record.apiId ?? '';
    const seq = Number(record.seq);
    if (hashIndex[record.hash ?? ''] !== keyId) v(`key ${keyId}: its hash is not indexed to it`);
    if (!state.apis.has(apiId)) v(`key ${keyId}: its API ${apiId} has no record`);
    if (state.keyIndex.get(apiId)?.get(keyId) !== seq) {
      v(`key ${keyId}: not in ${apiId}'s listing with score ${seq}`);
    }
    // An owner change moves the key between owner indexes after its record: only `exact`.
    if (
      options.exact &&
      record.ownerId !== undefined &&
      state.ownerIndex.get(`${apiId} ${record.ownerId}`)?.get(keyId) !== seq
    ) {
      v(`key ${keyId}: not in the owner index of ${record.ownerId} with score ${seq}`);
    }
    const seqs = seqsByApi.get(apiId) ?? new Set<number>();
    if (seqs.has(seq)) v(`key ${keyId}: seq ${seq} is used twice in ${apiId}`);
    seqs.add(seq);
    seqsByApi.set(apiId, seqs);
  }

  if (options.exact) {
    for (const [apiId, members] of state.keyIndex) {
      for (const keyId of members.keys()) {
        const record = state.keys.get(keyId);
        if (!record) v(`listing of ${apiId}: ${keyId} is no live key`);
        else if (record.apiId !== apiId)
          v(`listing of ${apiId}: ${keyId} belongs to ${record.apiId}`);
      }
    }
    for (const [owner, members] of state.ownerIndex) {
      for (const keyId of members.keys()) {
        const record = state.keys.get(keyId);
        if (!record || `${record.apiId} ${record.ownerId}` !== owner) {
          v(`owner index ${owner}: ${keyId} does not belong`);
        }
      }
    }
  }

  for (const [apiId, record] of state.apis) {
    const deleted = record.deletedAt !== undefined;
    if (record.id !== apiId) v(`api ${apiId}: id field is ${record.id}`);
    // A creation indexes its record after writing it, a deletion unindexes it after marking it.
    if (options.exact && !deleted && !apiIndex.has(apiId)) {
      v(`api ${apiId}: live but not in the workspace's API index`);
    }
    if (options.exact && deleted && apiIndex.has(apiId)) {
      v(`api ${apiId}: marked deleted but still indexed`);
    }
    const maxSeq = Math.max(
      0,
      ...[...records.values()].filter((r) => r.apiId === apiId).map((r) => Number(r.seq ?? 0)),
    );
    if (Number(record.keySeq) < maxSeq) v(`api ${apiId}: keySeq ${record.keySeq} < seq ${maxSeq}`);
  }
  for (const apiId of apiIndex.keys()) {
    if (!state.apis.has(apiId)) v(`API index: ${apiId} has no record`);
  }
  await inspectIdentities(redis, ws, state, options);
  return state;
}

/** The identity rules (docs/redis.md, "Creating an identity", "Deleting an identity"). */
async function inspectIdentities(
  redis: Redis | Cluster,
  ws: string,
  state: WorkspaceState,
  options: { exact?: boolean },
): Promise<void> {
  const v = (line: string) => state.violations.push(line);
  const records = new Map<string, Record<string, string>>();
  for (const name of await allKeys(redis, 'keyward:identity:{*}')) {
    const record = await redis.hgetall(name);
    if (record.workspaceId === ws) records.set(name.slice('keyward:identity:{'.length, -1), record);
  }
  for (const [id, record] of records) {
    if (record.pending !== undefined) state.pendingIdentities.set(id, record);
    else if (record.deletedAt === undefined) state.identities.set(id, record);
  }
  const extPrefix = `keyward:identityext:{${ws}:`;
  const byExternalId = new Map<string, string>();
  for (const name of await allKeys(redis, `${extPrefix}*`)) {
    byExternalId.set(name.slice(extPrefix.length, -1), (await redis.get(name)) ?? '');
  }
  const listed = new Set<string>();
  for (const name of await allKeys(redis, `keyward:identities:{${ws}.*`)) {
    for (const id of (await zsetOf(redis, name)).keys()) listed.add(id);
  }
  for (const [id, record] of state.identities) {
    if (record.id !== id) v(`identity ${id}: id field is ${record.id}`);
    if (byExternalId.get(record.externalId ?? '') !== id) {
      v(`identity ${id}: its externalId ${record.externalId} is not indexed to it`);
    }
    if (!listed.has(id)) v(`identity ${id}: not listed`);
  }
  if (!options.exact) return;
  if (state.pendingIdentities.size > 0) {
    v(`pending identities left: ${[...state.pendingIdentities.keys()].join(', ')}`);
  }
  for (const [externalId, id] of byExternalId) {
    if (state.identities.get(id)?.externalId !== externalId) {
      v(`externalId ${externalId} → ${id}: no live identity of it`);
    }
  }
  for (const id of listed) {
    if (!state.identities.has(id)) v(`identity listing: ${id} is no live identity`);
  }
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
