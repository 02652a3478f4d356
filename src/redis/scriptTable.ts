/**
 * Every Lua script, one entry each: its file, what each KEYS[i] and ARGV[i] is, what it answers
 * and what its result codes mean. The ioredis commands (their names, numberOfKeys and types, in
 * scripts.ts) and the typed outcomes the stores and the limiter see are all derived from here, so
 * a script's contract is stated once on this side (and once in its file's header).
 */

/** The reply of a script: an integer, an array of integers, or a string. */
type ReplyKind = 'integer' | 'integers' | 'string';

export interface ScriptSpec {
  /** In lua/, named `<name>-<numberOfKeys>.lua` (`-n` when the number of keys varies). */
  readonly file: string;
  /**
   * The ioredis command, versioned by its contract: V1 as first released, V2 once it took the
   * audit log's stream (or an audit outbox) and entry.
   */
  readonly command: string;
  /** KEYS[1], KEYS[2], …: what each names. */
  readonly keys: readonly string[];
  /** `-n` scripts: the KEYS each item adds after `keys`, repeated per item. */
  readonly keysPerItem?: readonly string[];
  /** ARGV[1], ARGV[2], …: what each is. */
  readonly argv: readonly string[];
  /** What the ARGV after the named ones are, when a call may pass any number of them. */
  readonly moreArgv?: string;
  /** Calls may leave trailing ARGV off (the script reads a missing one as nil). */
  readonly trailingArgvOptional?: boolean;
  readonly reply: ReplyKind;
  /** For `integers`, the result code is the reply's first element. */
  readonly codes: Readonly<Record<number | string, string>>;
  /** What any other reply is (a sequence number, a count, an id); absent: codes only. */
  readonly value?: string;
  /** Also register the `<command>Buffer` variant (integer replies skip buffer-to-string work). */
  readonly buffer?: boolean;
}

/**
 * The five credit arguments of lua/includes/credits.lua, in the one order every script that takes
 * them passes them.
 */
const CREDIT_ARGV = [
  'refillBoundary',
  'refillAmount',
  'resetNonce',
  'resetValue',
  'resetAt',
] as const;

export const SCRIPTS = {
  tokenBucket: {
    file: 'token-bucket-2.lua',
    command: 'tokenBucketV1',
    keys: ['bucket', 'credits'],
    argv: [
      'limit',
      'refillRate',
      'refillInterval',
      'cost',
      'now',
      'useCredits',
      'creditCost',
      ...CREDIT_ARGV,
    ],
    // A bucket-only verification sends four ARGV instead of twelve.
    trailingArgvOptional: true,
    reply: 'integers', // { status, remaining, reset, now, creditsRemaining }
    codes: { 0: 'refused', 1: 'admitted', 2: 'out_of_credits' },
    buffer: true,
  },
  multiBucket: {
    file: 'multi-bucket-n.lua',
    command: 'multiBucketV1',
    keys: ['credits'],
    keysPerItem: ['bucket'],
    argv: ['now', 'useCredits', 'creditCost', ...CREDIT_ARGV, 'bucketCount'],
    moreArgv: 'per bucket: limit, refillRate, refillInterval, cost',
    reply: 'integers', // { status, now, creditsRemaining, per bucket: remaining, reset, exceeded }
    codes: { 0: 'refused', 1: 'admitted', 2: 'out_of_credits' },
    buffer: true,
  },
  leaseGrant: {
    file: 'lease-grant-1.lua',
    command: 'leaseGrantV1',
    keys: ['bucket'],
    argv: [
      'limit',
      'refillRate',
      'refillInterval',
      'cost',
      'now',
      'holder',
      'leaseId',
      'want',
      'maxLease',
      'ttlMs',
      'heldId',
      'unused',
      'topUp',
      'version',
    ],
    reply: 'integers', // { status, remaining, reset, now, granted, expiresAt, version }
    codes: { 0: 'refused', 1: 'admitted', 2: 'top_up_refused' },
    buffer: true,
  },
  leaseSpend: {
    file: 'lease-spend-1.lua',
    command: 'leaseSpendV1',
    keys: ['lease'],
    argv: ['cost', 'now', 'renewWithinMs'],
    // { status, tokens, reset, now, leaseId, granted, grantedAt, version, expiresAt }
    reply: 'integers',
    codes: { 1: 'spent', 2: 'closed', 3: 'none', 4: 'expired' },
    buffer: true,
  },
  leaseInstall: {
    file: 'lease-install-1.lua',
    command: 'leaseInstallV1',
    keys: ['lease'],
    argv: [
      'leaseId',
      'granted',
      'lifetimeMs',
      'resetInMs',
      'keepMs',
      'now',
      'fromVersion',
      'version',
    ],
    reply: 'integer',
    codes: { 1: 'installed', 0: 'not_installed' },
  },
  updateCredits: {
    file: 'update-credits-2.lua',
    command: 'updateCreditsV2',
    keys: ['credits', 'auditOutbox'],
    argv: ['op', 'value', ...CREDIT_ARGV, 'outboxEntry'],
    reply: 'integer',
    codes: { [-1]: 'would_go_negative' },
    value: 'the new remaining (≥ 0)',
  },
  putKey: {
    file: 'put-key-3.lua',
    command: 'putKeyV1',
    keys: ['record', 'permissions', 'roles'],
    argv: ['permissionCount', 'roleCount'],
    moreArgv: 'permission ids, role ids, then field, value pairs of the record',
    reply: 'integer',
    codes: { 1: 'written', [-1]: 'exists' },
  },
  commitKey: {
    file: 'commit-key-2.lua',
    command: 'commitKeyV1',
    keys: ['record', 'auditOutbox'],
    argv: ['channel', 'message', 'outboxEntry'],
    reply: 'string',
    codes: { '0': 'committed_before', '-1': 'gone' },
    value: "the id of the creation's entry in the key's outbox: committed",
  },
  discardPendingKey: {
    file: 'discard-pending-key-3.lua',
    command: 'discardPendingKeyV1',
    keys: ['record', 'permissions', 'roles'],
    argv: [],
    reply: 'integer',
    codes: { 1: 'discarded', 0: 'kept', [-1]: 'absent' },
  },
  nextKeySeq: {
    file: 'next-key-seq-1.lua',
    command: 'nextKeySeqV2',
    keys: ['api'],
    argv: ['count', 'workspaceId'],
    reply: 'integer',
    codes: { [-1]: 'api_not_found' },
    value: 'the last sequence number taken (≥ 1)',
  },
  updateKey: {
    file: 'update-key-2.lua',
    command: 'updateKeyV3',
    keys: ['record', 'auditOutbox'],
    argv: ['version', 'channel', 'message', 'outboxEntry', 'setCount'],
    moreArgv: 'setCount field, value pairs to set, then fields to delete',
    reply: 'integer',
    codes: { 1: 'updated', [-1]: 'not_found', [-2]: 'version_moved' },
  },
  tombstoneKey: {
    file: 'tombstone-key-5.lua',
    command: 'tombstoneKeyV1',
    keys: ['record', 'permissions', 'roles', 'credits', 'auditOutbox'],
    argv: ['version', 'channel', 'message', 'outboxEntry', 'deletedAt', 'tombstoneTtlMs'],
    reply: 'integer',
    codes: { 1: 'deleted', [-1]: 'not_found', [-2]: 'version_moved' },
  },
  rewrapSealed: {
    file: 'rewrap-sealed-1.lua',
    command: 'rewrapSealedV1',
    keys: ['record'],
    argv: ['oldSealed', 'newSealed'],
    reply: 'integer',
    codes: { 1: 'rewrapped', 0: 'kept' },
  },
  dropLegacyKey: {
    file: 'drop-legacy-key-6.lua',
    command: 'dropLegacyKeyV1',
    keys: ['record', 'permissions', 'roles', 'keyHashes', 'apiKeys', 'ownerKeys'],
    argv: ['keyId', 'hash'],
    reply: 'integer',
    codes: { 1: 'dropped' },
  },
  touchKey: {
    file: 'touch-key-2.lua',
    command: 'touchKeyV1',
    keys: ['record', 'lastUsed'],
    argv: ['lastUsedAt', 'ttlMs'],
    reply: 'integer',
    codes: { 1: 'set', 0: 'kept', [-1]: 'not_live' },
  },
  queueWebhookEvent: {
    file: 'queue-webhook-event-3.lua',
    command: 'queueWebhookEventV1',
    keys: ['marker', 'due', 'jobs'],
    argv: ['markerTtlMs', 'eventId', 'job'],
    reply: 'integer',
    codes: { 1: 'queued', 0: 'already' },
  },
  rewrapWebhookSecret: {
    file: 'rewrap-webhook-secret-1.lua',
    command: 'rewrapWebhookSecretV1',
    keys: ['webhook'],
    argv: ['oldSealed', 'newSealed'],
    reply: 'integer',
    codes: { 1: 'rewrapped', 0: 'kept' },
  },
  claimWebhookDeliveries: {
    file: 'claim-webhook-deliveries-2.lua',
    command: 'claimWebhookDeliveriesV1',
    keys: ['due', 'jobs'],
    argv: ['leaseMs', 'max'],
    reply: 'string',
    codes: {},
    value: 'a JSON array of [eventId, job]',
  },
  deleteIfEqual: {
    file: 'delete-if-equal-1.lua',
    command: 'deleteIfEqualV1',
    keys: ['string'],
    argv: ['value'],
    reply: 'integer',
    codes: { 1: 'deleted', 0: 'kept' },
  },
  tombstoneApi: {
    file: 'tombstone-api-2.lua',
    command: 'tombstoneApiV3',
    keys: ['api', 'auditOutbox'],
    argv: ['workspaceId', 'deletedAt', 'channel', 'message', 'outboxEntry'],
    reply: 'integer',
    codes: { 1: 'deleted', 0: 'deleted_before', [-1]: 'not_found' },
  },
  ensureNamespace: {
    file: 'ensure-namespace-1.lua',
    command: 'ensureNamespaceV2',
    keys: ['namespace'],
    argv: ['newId', 'name', 'createdAt'],
    reply: 'string',
    codes: {},
    value: 'the namespace id',
  },
  setOverride: {
    file: 'set-override-3.lua',
    command: 'setOverrideV3',
    keys: ['overrides', 'overrideOrder', 'auditOutbox'],
    argv: ['identifier', 'newId', 'override', 'channel', 'message', 'outboxEntry'],
    reply: 'string',
    codes: {},
    value: 'the override id',
  },
  deleteOverride: {
    file: 'delete-override-3.lua',
    command: 'deleteOverrideV2',
    keys: ['overrides', 'overrideOrder', 'auditOutbox'],
    argv: ['identifier', 'channel', 'message', 'outboxEntry'],
    reply: 'integer',
    codes: { 1: 'deleted', [-1]: 'not_found' },
  },
  dropLegacyNamespace: {
    file: 'drop-legacy-namespace-4.lua',
    command: 'dropLegacyNamespaceV1',
    keys: ['record', 'namespaceName', 'overrides', 'overrideOrder'],
    argv: ['copiedOverrides'],
    reply: 'integer',
    codes: { 1: 'dropped', 0: 'changed' },
  },
  putRecordWithMembers: {
    file: 'put-record-with-members-2.lua',
    command: 'putRecordWithMembersV1',
    keys: ['record', 'members'],
    argv: ['memberCount'],
    moreArgv: 'memberCount members, then the record: field, value pairs',
    reply: 'integer',
    codes: { 1: 'written', [-1]: 'exists' },
  },
  releaseName: {
    file: 'release-name-1.lua',
    command: 'releaseNameV1',
    keys: ['names'],
    argv: ['name', 'id', 'channel', 'message'],
    reply: 'integer',
    codes: { 1: 'released', 0: 'not_held' },
  },
  tombstoneRbacEntry: {
    file: 'tombstone-rbac-entry-3.lua',
    command: 'tombstoneRbacEntryV1',
    keys: ['record', 'members', 'auditOutbox'],
    argv: ['workspaceId', 'outboxEntry', 'deletedAt', 'tombstoneTtlMs'],
    reply: 'integer',
    codes: { 1: 'deleted', [-1]: 'not_found' },
  },
  setRolePermissions: {
    file: 'set-role-permissions-3.lua',
    command: 'setRolePermissionsV1',
    keys: ['role', 'members', 'auditOutbox'],
    argv: ['workspaceId', 'channel', 'message', 'outboxEntry'],
    moreArgv: 'the permission ids',
    reply: 'integer',
    codes: { 1: 'set', [-1]: 'not_found' },
  },
  putRecord: {
    file: 'put-record-1.lua',
    command: 'putRecordV1',
    keys: ['record'],
    argv: [],
    moreArgv: 'field, value pairs of the record',
    reply: 'integer',
    codes: { 1: 'written', [-1]: 'exists' },
  },
  commitIdentity: {
    file: 'commit-identity-2.lua',
    command: 'commitIdentityV1',
    keys: ['record', 'auditOutbox'],
    argv: ['channel', 'message'],
    reply: 'integer',
    codes: { 1: 'committed', 0: 'committed_before', [-1]: 'gone' },
  },
  discardPendingIdentity: {
    file: 'discard-pending-identity-1.lua',
    command: 'discardPendingIdentityV1',
    keys: ['record'],
    argv: [],
    reply: 'integer',
    codes: { 1: 'discarded', 0: 'kept', [-1]: 'absent' },
  },
  updateIdentity: {
    file: 'update-identity-3.lua',
    command: 'updateIdentityV4',
    keys: ['record', 'auditOutbox', 'credits'],
    argv: [
      'workspaceId',
      'channel',
      'message',
      'outboxEntry',
      'creditsOp',
      'creditsRemaining',
      'creditsFrom',
      'setCount',
    ],
    moreArgv: 'setCount field, value pairs to set, then fields to delete',
    reply: 'integer',
    codes: { 1: 'updated', [-1]: 'not_found' },
  },
  renameIdentity: {
    file: 'rename-identity-2.lua',
    command: 'renameIdentityV1',
    keys: ['record', 'auditOutbox'],
    argv: ['mode', 'workspaceId', 'channel', 'message', 'from', 'to', 'outboxEntry', 'setCount'],
    moreArgv: 'commit: setCount field, value pairs to set, then fields to delete',
    trailingArgvOptional: true,
    reply: 'integer',
    codes: { 1: 'done', 0: 'renamed_otherwise', [-1]: 'not_found' },
  },
  tombstoneIdentity: {
    file: 'tombstone-identity-2.lua',
    command: 'tombstoneIdentityV1',
    keys: ['record', 'auditOutbox'],
    argv: ['workspaceId', 'channel', 'message', 'outboxEntry', 'deletedAt', 'tombstoneTtlMs'],
    reply: 'integer',
    codes: { 1: 'deleted', [-1]: 'not_found' },
  },
  dropLegacyIdentity: {
    file: 'drop-legacy-identity-3.lua',
    command: 'dropLegacyIdentityV1',
    keys: ['record', 'externalIds', 'order'],
    argv: ['identityId', 'externalId'],
    reply: 'integer',
    codes: { 1: 'dropped' },
  },
  revokeRootKey: {
    file: 'revoke-root-key-2.lua',
    command: 'revokeRootKeyV1',
    keys: ['record', 'auditOutbox'],
    argv: ['channel', 'message', 'outboxEntry'],
    reply: 'integer',
    codes: { 1: 'deleted', [-1]: 'not_found' },
  },
  relayAudit: {
    file: 'relay-audit-2.lua',
    command: 'relayAuditV1',
    keys: ['audit', 'marker'],
    argv: ['markerTtlMs', 'auditEntry'],
    reply: 'integer',
    codes: { 1: 'appended', 0: 'relayed_before' },
  },
  takeOutboxEntry: {
    file: 'take-outbox-entry-1.lua',
    command: 'takeOutboxEntryV1',
    keys: ['auditOutbox'],
    argv: ['entryId'],
    reply: 'integer',
    codes: {},
    value: 'the entries left',
  },
  forgetAuditOutbox: {
    file: 'forget-audit-outbox-1.lua',
    command: 'forgetAuditOutboxV1',
    keys: ['registry'],
    argv: ['outbox', 'score'],
    reply: 'integer',
    codes: { 1: 'removed', 0: 'kept' },
  },
} as const satisfies Record<string, ScriptSpec>;

export type ScriptName = keyof typeof SCRIPTS;
type Spec<N extends ScriptName> = (typeof SCRIPTS)[N];

/** KEYS before ARGV, or for `-n` scripts the number of keys first. */
export function numberOfKeys(spec: ScriptSpec): number | undefined {
  return spec.keysPerItem ? undefined : spec.keys.length;
}

/** What a code of script N means: one union per script. */
export type Outcome<N extends ScriptName> = Spec<N>['codes'][keyof Spec<N>['codes']];

/** The part of a reply that carries the code: the reply itself, or its first element. */
export type ResultCode<N extends ScriptName> = Spec<N>['reply'] extends 'string' ? string : number;

/**
 * A decoder's answer: the outcome of a code, or for scripts whose replies may be a value (a
 * sequence number, the credits left, an id) undefined when the reply is such a value.
 */
export type Decoded<N extends ScriptName> =
  Spec<N> extends { value: string } ? Outcome<N> | undefined : Outcome<N>;

/**
 * The decoder of script N's result codes, made once per caller module: a Map lookup per call and
 * no allocation, since the verification path runs one per request. A code the table does not
 * list is a broken contract (a script and this table out of step) and throws, unless the script
 * may answer values.
 */
export function resultDecoder<N extends ScriptName>(name: N): (code: ResultCode<N>) => Decoded<N> {
  const spec: ScriptSpec = SCRIPTS[name];
  const codes = new Map<number | string, string>(
    Object.entries(spec.codes).map(([code, outcome]) => [
      spec.reply === 'string' ? code : Number(code),
      outcome,
    ]),
  );
  const answersValues = spec.value !== undefined;
  return (code) => {
    const outcome = codes.get(code);
    if (outcome === undefined && !answersValues) {
      throw new Error(`${spec.command}: result code ${String(code)} is not in its table`);
    }
    return outcome as Decoded<N>;
  };
}
