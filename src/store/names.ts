/**
 * Every Redis key name keyward uses, in one place. A record is tagged by its own identity, so
 * that one workspace spreads over every master of a Redis Cluster: a key and what only it holds
 * (its permission and role sets, credits, buckets, audit outbox) by its id, the entry that finds
 * it from its hash by that hash, an API's listing and usage counts by the API and a shard; an
 * identity by its id, its externalId entry by workspace and externalId, the listing by shard; an
 * API's record by its id; a permission or role by its id.
 * Records that one write must change in one step share a tag; writes that span tags take the
 * steps docs/redis.md lists. Some workspace records still carry the workspace's tag `{ws_…}`
 * (see `legacy` for the names the previous release gave keys, identities, namespaces, API
 * records, permissions and roles).
 */
const PREFIX = 'keyward';

/**
 * The text that ends the tag of each of 16 shards (usage counts, an API's key listing, the
 * journal, a namespace's overrides): the shard's hex digit and two letters chosen so that the 16
 * tags of one owner fall in 16 different sixteenths of the slot range, whatever the owner (a
 * CRC-16 of text ending in these is the owner's part XOR theirs: test/unit/usageShards.test.ts
 * proves it). Masters that hold even contiguous ranges get even shares: on three, 5, 5 and 6.
 * Never change them: what is already written would no longer be found.
 */
const SHARD_TAGS = [
  '0aa',
  '1ab',
  '2bb',
  '3ba',
  '4db',
  '5da',
  '6fb',
  '7fa',
  '8fd',
  '9fc',
  'aaa',
  'bdc',
  'cbc',
  'dbc',
  'edb',
  'fad',
] as const;

const usageTag = (ws: string, scope: 'v' | 'rl', owner: string, shard: number) =>
  `${ws}:${scope}:${owner}:${SHARD_TAGS[shard]!}`;

export const names = {
  invalidationChannel: `${PREFIX}:invalidate`,
  /** A subscriber's own channel for the probes that show its cluster node still hears PUBLISH. */
  invalidationProbe: (subscriberId: string) => `${PREFIX}:invalidate:probe:${subscriberId}`,

  workspace: (ws: string) => `${PREFIX}:{${ws}}:workspace`,
  /**
   * The workspace's API index (zset of ids, every score 0): placed by what it lists, so under the
   * workspace's tag, while each API's record is under its own.
   */
  apis: (ws: string) => `${PREFIX}:{${ws}}:apis`,
  /**
   * An API's record, tagged by its id (its audit outbox shares the tag): every key creation
   * takes a sequence number from it, which must not all land in the workspace's slot.
   */
  api: (apiId: string) => `${PREFIX}:api:{${apiId}}`,
  /** A key record, tagged by the key's id like everything only it holds. */
  key: (keyId: string) => `${PREFIX}:key:{${keyId}}`,
  /** A key's latest verification as the nodes' flushes noted it (unix ms, a string; expires). */
  lastUsed: (keyId: string) => `${PREFIX}:lastused:{${keyId}}`,
  /** The ids of the permissions (roles) a key holds directly: sets beside its record. */
  keyPermissions: (keyId: string) => `${PREFIX}:key:{${keyId}}:perms`,
  keyRoles: (keyId: string) => `${PREFIX}:key:{${keyId}}:roles`,
  /** The id of the key of a workspace with this hash: what a verification looks up first. */
  keyByHash: (ws: string, hash: string) => `${PREFIX}:keyhash:{${hash}}:${ws}`,
  /**
   * One shard of an API's keys in creation order (zset: keyId scored by its sequence number). A
   * key's shard follows from its id (src/store/keyListing.ts), so an API of many keys spreads.
   */
  apiKeyShard: (apiId: string, shard: number) =>
    `${PREFIX}:apikeys:{${apiId}.${SHARD_TAGS[shard]!}}`,
  /** An API's keys of one owner (zset, like a shard). API ids have no `.`: no two pairs collide. */
  ownerKeyIndex: (apiId: string, ownerId: string) => `${PREFIX}:ownerkeys:{${apiId}.${ownerId}}`,
  /**
   * Writes that span slots and have not finished (zset: JSON of the write → when it began), in
   * shards so that no one slot takes every management write. A repair finishes or undoes what a
   * node that died left in them (src/store/unfinishedWrites.ts).
   */
  unfinished: (shard: number) => `${PREFIX}:unfinished:{${SHARD_TAGS[shard]!}}`,
  /** Set once no record of the previous layout is left: nodes then stop looking for them. */
  layoutMigrated: `${PREFIX}:layout:keys-by-id`,
  rootKeyIds: (ws: string) => `${PREFIX}:{${ws}}:rootkeys`,
  /**
   * A rate-limit namespace (hash: id, name, createdAt), tagged by its workspace and name: what
   * decides which id a name has. Names are free text (today's schema allows `A-Za-z0-9_.:/-`,
   * an older writer more): a `}` in one would end the tag early (`a}b` tagged `ws_1:a`), which
   * still puts one name in one slot, and no two names share a key, since the name runs to the
   * end of it.
   */
  namespace: (ws: string, name: string) => `${PREFIX}:rlns:{${ws}:${name}}`,
  /**
   * The name of the namespace with this id (string), tagged by the id; it counts only while the
   * namespace record names the same id (a creation writes it first: docs/redis.md).
   */
  namespaceName: (ws: string, namespaceId: string) => `${PREFIX}:rlnsid:{${namespaceId}}:${ws}`,
  /**
   * One of 16 shards of a namespace's overrides, by identifier (overrideShard in
   * src/store/ratelimitStore.ts): a hash identifier → JSON and a zset of those identifiers, all
   * scored 0, for paging, under one tag with the outbox of their writes' audit entries
   * (names.overrideTag).
   */
  overrideTag: (namespaceId: string, shard: number) => `${namespaceId}.${SHARD_TAGS[shard]!}`,
  overrides: (namespaceId: string, shard: number) =>
    `${PREFIX}:overrides:{${namespaceId}.${SHARD_TAGS[shard]!}}`,
  overrideOrder: (namespaceId: string, shard: number) =>
    `${PREFIX}:overrides:{${namespaceId}.${SHARD_TAGS[shard]!}}:order`,
  /** Set once no namespace of the previous layout is left: nodes then stop looking for them. */
  namespacesMigrated: `${PREFIX}:layout:namespaces-by-id`,
  /**
   * A permission's (a role's) record, tagged by its id (its audit outbox shares the tag). It is
   * `pending` while its creation is under way, and a tombstone for a while after its deletion.
   */
  permission: (id: string) => `${PREFIX}:perm:{${id}}`,
  role: (id: string) => `${PREFIX}:role:{${id}}`,
  /** The ids of a role's permissions, beside its record. */
  rolePermissions: (id: string) => `${PREFIX}:role:{${id}}:perms`,
  /**
   * Never written (a permission has no members): named so that the scripts serving both kinds
   * get a members key in the record's slot.
   */
  permissionMembers: (id: string) => `${PREFIX}:perm:{${id}}:members`,
  /**
   * Per kind, the workspace's index of names → ids, under the workspace's tag: what makes a name
   * unique, and the one place a node reads to know the workspace's permissions and roles. An
   * entry there is what makes its record count (docs/redis.md, "Creating a permission or role").
   */
  permissionNames: (ws: string) => `${PREFIX}:{${ws}}:permnames`,
  roleNames: (ws: string) => `${PREFIX}:{${ws}}:rolenames`,
  /** Set once no permission (role) of the previous layout is left. */
  permissionsMigrated: `${PREFIX}:layout:permissions-by-id`,
  rolesMigrated: `${PREFIX}:layout:roles-by-id`,
  /**
   * An identity's record, tagged by its id like a key's (its audit outbox and its named limits'
   * buckets share the tag). While a creation is under way it is `pending`; a deletion leaves a
   * tombstone (docs/redis.md, "Writes across slots").
   */
  identity: (identityId: string) => `${PREFIX}:identity:{${identityId}}`,
  /**
   * The id of the identity that took this externalId in the workspace (a string, claimed with
   * SET NX): tagged by both, so that one workspace's externalIds spread. Workspace ids have no
   * `:`, so no two pairs share a name.
   */
  identityByExternalId: (ws: string, externalId: string) =>
    `${PREFIX}:identityext:{${ws}:${externalId}}`,
  /**
   * One shard of a workspace's identity listing (zset of ids, every score 0, so in id order,
   * which is creation order); an identity's shard follows from its id (identityListingShard).
   */
  identityShard: (ws: string, shard: number) =>
    `${PREFIX}:identities:{${ws}.${SHARD_TAGS[shard]!}}`,
  /** Set once no identity of the previous layout is left: nodes then stop looking for them. */
  identityLayoutMigrated: `${PREFIX}:layout:identities-by-id`,
  /** Set once no API record of the previous layout is left. */
  apiLayoutMigrated: `${PREFIX}:layout:apis-by-id`,
  /**
   * The workspace's own audit stream: the entries of writes to records under the workspace's tag
   * (permissions and roles), appended in the write's own step, and
   * what the previous release relayed. Entries of other writes go to the shards below.
   */
  audit: (ws: string) => `${PREFIX}:{${ws}}:audit`,
  /**
   * One of 16 shards of the workspace's audit log (stream): where the relay (lua/relay-audit-2.lua)
   * appends the outbox entries of key, root key, identity and API writes, the shard chosen by the
   * entry's token, so that a busy workspace's log spreads over the masters. A reader merges the
   * shards and the workspace's own stream by entry id (src/store/auditLog.ts).
   */
  auditShard: (ws: string, shard: number) => `${PREFIX}:audit:{${ws}.${SHARD_TAGS[shard]!}}`,
  /**
   * The marker of an outbox entry relayed to a shard, named by the entry's token, in the shard's
   * slot (the relay sets it in the same step as the append); it expires by itself.
   */
  auditRelayed: (ws: string, shard: number, token: string) =>
    `${PREFIX}:audit:{${ws}.${SHARD_TAGS[shard]!}}:relayed:${token}`,
  /**
   * The audit outbox of a hash tag (a key id, for its credits; a root key's hash, for its record):
   * entries of writes in that slot, waiting to be relayed to their workspace's stream.
   */
  auditOutbox: (tag: string) => `${PREFIX}:audit-outbox:{${tag}}`,
  /** Every outbox a write may have appended to lately (zset: name → registrations): the sweep's. */
  auditOutboxes: `${PREFIX}:audit-outboxes`,
  rootKey: (hash: string) => `${PREFIX}:rootkey:{${hash}}`,
  bucket: (bucketId: string) => `${PREFIX}:bucket:{${bucketId}}`,
  /**
   * A region's lease on a consistent bucket, on the node-local Redis its nodes share
   * (lua/lease-spend-1.lua): `keyward:lease:` and the bucket's name, whose hash tag it keeps.
   */
  localLease: (bucketKey: string) => `${PREFIX}:lease:${bucketKey}`,
  /**
   * A named limit's bucket, tagged by its owner (a key, whose credits share the tag, or an
   * identity): `keyward:bucket:{key_…}:tokens`. A key's `default` limit is names.bucket(keyId).
   */
  namedBucket: (ownerId: string, name: string) => `${PREFIX}:bucket:{${ownerId}}:${name}`,
  /** A key's usage credits: tagged like its bucket, so one script can decide both. */
  credits: (keyId: string) => `${PREFIX}:credits:{${keyId}}`,
  /**
   * Usage analytics (docs/redis.md, "Usage analytics"): a hash per API (or namespace), shard,
   * granularity and bucket start (Unix ms), fields src/domain/usage.ts names. A shard's hashes
   * and its flush markers share the tag names.usageTag gives: one part of a flush is one MULTI in
   * one slot, with the marker that says it landed; the shards of one API are in 16 slots.
   */
  usageTag,
  usageVerifications: (ws: string, apiId: string, shard: number, g: string, start: number) =>
    `${PREFIX}:usage:{${usageTag(ws, 'v', apiId, shard)}}:${g}:${start}`,
  usageLimits: (ws: string, namespaceId: string, shard: number, g: string, start: number) =>
    `${PREFIX}:usage:{${usageTag(ws, 'rl', namespaceId, shard)}}:${g}:${start}`,
  /**
   * An API's verification counts since the spans (src/domain/usage.ts, SPAN_OF), under the same
   * shard tags: a key's hours of a day (`h`) and days of a month (`d`), per key and identity
   * (`subject`: spanSubject), an API's minutes of an hour summed over the shard's keys (`m`),
   * and per shard the subjects counted in a day's hours (`hk`) and in a month's days (`dk`), so
   * a reader of a whole API finds the keys' hashes without a SCAN. `start`: the span's Unix ms.
   */
  usageKeySpan: (
    ws: string,
    apiId: string,
    shard: number,
    span: 'day' | 'month',
    start: number,
    subject: string,
  ) =>
    `${PREFIX}:usage:{${usageTag(ws, 'v', apiId, shard)}}:${span === 'day' ? 'h' : 'd'}:${start}:${subject}`,
  usageSubjects: (ws: string, apiId: string, shard: number, span: 'day' | 'month', start: number) =>
    `${PREFIX}:usage:{${usageTag(ws, 'v', apiId, shard)}}:${span === 'day' ? 'hk' : 'dk'}:${start}`,
  usageApiMinutes: (ws: string, apiId: string, shard: number, hourStart: number) =>
    `${PREFIX}:usage:{${usageTag(ws, 'v', apiId, shard)}}:m:${hourStart}`,
  /** The sequence number of a node's last flush that landed in this shard (`tag`: usageTag). */
  usageFlushed: (tag: string, nodeId: string) => `${PREFIX}:usage:{${tag}}:flushed:${nodeId}`,
  /**
   * That the old hash of the move `token` was added into this shard (src/store/migration/
   * usageCounts.ts): a move run again after an interruption adds nothing twice.
   */
  usageMoved: (tag: string, token: string) => `${PREFIX}:usage:{${tag}}:moved:${token}`,
  /**
   * The previous release's usage counts, a hash per API (namespace) and bucket, tagged by
   * workspace: read beside the shards until `keyward migrate` has moved them.
   */
  legacyUsageVerifications: (ws: string, apiId: string, g: string, start: number) =>
    `${PREFIX}:{${ws}}:usage:v:${apiId}:${g}:${start}`,
  legacyUsageLimits: (ws: string, namespaceId: string, g: string, start: number) =>
    `${PREFIX}:{${ws}}:usage:rl:${namespaceId}:${g}:${start}`,
  /**
   * An old hash being moved, renamed in its own slot under a fresh `token` first: a node of the
   * previous release that still counts into the old name starts a new hash, moved later, rather
   * than adding to one that is about to be deleted.
   */
  /**
   * A workspace's webhooks (docs/webhooks.md): a hash per webhook and the set of their ids, under
   * the workspace's tag, so that a creation, its set entry and its audit entry (the workspace's
   * own stream) are one MULTI. Each keeps its latest delivery attempts in a capped list beside it.
   */
  webhook: (ws: string, webhookId: string) => `${PREFIX}:{${ws}}:webhook:${webhookId}`,
  webhooks: (ws: string) => `${PREFIX}:{${ws}}:webhooks`,
  webhookDeliveries: (ws: string, webhookId: string) =>
    `${PREFIX}:{${ws}}:webhook:${webhookId}:deliveries`,
  /**
   * The delivery queue of every workspace, in one slot (events are rare by construction: each
   * fires once per key and state): a zset of event ids by the Unix ms they are due (a claimed
   * one is pushed back by its lease, so a node that dies mid-delivery leaves it due again), a
   * hash of event id → job JSON, and the markers that make an event fire once
   * (`once:<webhookId>:<keyId>:<state>`, SET NX in the script that queues the event).
   */
  webhookDue: `${PREFIX}:{webhooks}:due`,
  webhookJobs: `${PREFIX}:{webhooks}:jobs`,
  webhookOnce: (webhookId: string, keyId: string, state: string) =>
    `${PREFIX}:{webhooks}:once:${webhookId}:${keyId}:${state}`,
  /**
   * The workspaces that have, or had, a webhook wanting key.expiring (a set): what the expiring
   * sweep walks, since there is no list of workspaces. Added to before the webhook's own MULTI
   * (another slot), never removed: a superset costs the sweep one read of a workspace's webhooks.
   */
  webhookExpiringWorkspaces: `${PREFIX}:{webhooks}:expiring:workspaces`,
  /**
   * Set (to the Unix ms) once the workspaces whose webhooks were created before that set existed
   * were added to it (a SCAN for `webhooks(ws)`): the first sweep of a deployment does it.
   */
  webhookExpiringBackfilled: `${PREFIX}:{webhooks}:expiring:backfilled`,
  /** Held (SET NX PX, the node's id) by the one node that sweeps for key.expiring this period. */
  webhookExpiringLock: `${PREFIX}:{webhooks}:expiring:lock`,
  legacyUsageMoving: (
    ws: string,
    token: string,
    scope: 'v' | 'rl',
    owner: string,
    g: string,
    start: number,
  ) => `${PREFIX}:{${ws}}:usage:moving:${token}:${scope}:${owner}:${g}:${start}`,
} as const;

/**
 * The names the previous release gave a key, an identity, a rate-limit namespace and their
 * indexes and overrides, all under the workspace's tag. Nodes read them while such records remain
 * (each kind until its marker is set); `keyward migrate` moves them (docs/redis.md).
 */
export const legacy = {
  key: (ws: string, keyId: string) => `${PREFIX}:{${ws}}:key:${keyId}`,
  keyPermissions: (ws: string, keyId: string) => `${PREFIX}:{${ws}}:key:${keyId}:perms`,
  keyRoles: (ws: string, keyId: string) => `${PREFIX}:{${ws}}:key:${keyId}:roles`,
  keyHashes: (ws: string) => `${PREFIX}:{${ws}}:keyhashes`,
  apiKeys: (ws: string, apiId: string) => `${PREFIX}:{${ws}}:api:${apiId}:keys`,
  ownerKeys: (ws: string, apiId: string, ownerId: string) =>
    `${PREFIX}:{${ws}}:api:${apiId}:owner:${ownerId}`,
  /** Every legacy key record (and its sets, which the reader skips). */
  keyPattern: `${PREFIX}:{ws_*}:key:*`,
  /** The previous release's identities: a record, the externalId hash and the listing zset. */
  identity: (ws: string, id: string) => `${PREFIX}:{${ws}}:identity:${id}`,
  identityNames: (ws: string) => `${PREFIX}:{${ws}}:identitynames`,
  identities: (ws: string) => `${PREFIX}:{${ws}}:identities`,
  /** Every legacy identity record. */
  identityPattern: `${PREFIX}:{ws_*}:identity:*`,
  // Namespace names are free text (with `:`), so names and ids lived under different fixed
  // words: no name could spell another namespace's keys.
  namespace: (ws: string, name: string) => `${PREFIX}:{${ws}}:rlns:name:${name}`,
  namespaceName: (ws: string, namespaceId: string) => `${PREFIX}:{${ws}}:rlns:id:${namespaceId}`,
  overrides: (ws: string, namespaceId: string) =>
    `${PREFIX}:{${ws}}:rlns:id:${namespaceId}:overrides`,
  overrideOrder: (ws: string, namespaceId: string) =>
    `${PREFIX}:{${ws}}:rlns:id:${namespaceId}:order`,
  /** Every legacy namespace record; its id entry and overrides move with it. */
  namespacePattern: `${PREFIX}:{ws_*}:rlns:name:*`,
  /** The previous release's API record (its index, names.apis, did not move). */
  api: (ws: string, apiId: string) => `${PREFIX}:{${ws}}:api:${apiId}`,
  /** Every legacy API record, and the legacy key listings under it (readers skip those). */
  apiPattern: `${PREFIX}:{ws_*}:api:*`,
  /** The previous release's permissions and roles (their index of names did not move). */
  permission: (ws: string, id: string) => `${PREFIX}:{${ws}}:perm:${id}`,
  role: (ws: string, id: string) => `${PREFIX}:{${ws}}:role:${id}`,
  rolePermissions: (ws: string, id: string) => `${PREFIX}:{${ws}}:role:${id}:perms`,
  /** Never written, as names.permissionMembers. */
  permissionMembers: (ws: string, id: string) => `${PREFIX}:{${ws}}:perm:${id}:members`,
  permissionPattern: `${PREFIX}:{ws_*}:perm:*`,
  /** Every legacy role record, and its set of permissions (readers skip those). */
  rolePattern: `${PREFIX}:{ws_*}:role:*`,
} as const;

const STORABLE_ID = /^[A-Za-z0-9_]{1,64}$/;

/**
 * Whether an id from a request may become part of a key name. keyward's ids are letters, digits
 * and `_`; anything else (`api_1:keys`) could spell another structure's name, and cannot name a
 * record that exists, so stores treat it as not found.
 */
export function isStorableId(id: string): boolean {
  return STORABLE_ID.test(id);
}

/** Messages on the invalidation channel: what a node must drop from its caches. */
export const invalidation = {
  key: (ws: string, hash: string) => `key ${ws} ${hash}`,
  /**
   * A key was created with this hash: only a "not found" entry is wrong now. A node that cached
   * the new key before this message arrived keeps it (and so keeps its fallback should the
   * primary go away). Nodes that do not know the trailing word read a plain key invalidation.
   */
  keyCreated: (ws: string, hash: string) => `key ${ws} ${hash} created`,
  api: (ws: string, apiId: string) => `api ${ws} ${apiId}`,
  rootKey: (hash: string) => `root ${hash}`,
  namespace: (ws: string, name: string) => `ns ${ws} ${name}`,
  /** A permission or role of the workspace changed: whatever a node derived from them is stale. */
  rbac: (ws: string) => `rbac ${ws}`,
  /** An identity was created, changed or deleted: a node's cached copy of it is stale. */
  identity: (ws: string, identityId: string) => `identity ${ws} ${identityId}`,
} as const;

export type Invalidation =
  | { kind: 'key'; workspaceId: string; hash: string; created: boolean }
  | { kind: 'api'; workspaceId: string; apiId: string }
  | { kind: 'root'; hash: string }
  | { kind: 'ns'; workspaceId: string; name: string }
  | { kind: 'rbac'; workspaceId: string }
  | { kind: 'identity'; workspaceId: string; identityId: string };

/**
 * Told of every invalidation a store write has published (or, for a namespace's creation, that
 * this node alone must apply): the node applies it to its own caches at once, so a write is
 * read back on the node that made it without waiting for its own message to come round.
 */
export type Announce = (message: Invalidation) => void;

export function parseInvalidation(message: string): Invalidation | undefined {
  const [kind, a, b, c] = message.split(' ');
  if (kind === 'key' && a && b) return { kind, workspaceId: a, hash: b, created: c === 'created' };
  if (kind === 'api' && a && b) return { kind, workspaceId: a, apiId: b };
  if (kind === 'root' && a) return { kind, hash: a };
  if (kind === 'ns' && a && b) return { kind, workspaceId: a, name: b };
  if (kind === 'rbac' && a) return { kind, workspaceId: a };
  if (kind === 'identity' && a && b) return { kind, workspaceId: a, identityId: b };
  return undefined;
}
