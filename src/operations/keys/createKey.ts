import { ConflictError, NotFoundError } from '../../errors';
import { newId } from '../../keys/ids';
import { DEFAULT_BYTE_LENGTH, generateKey } from '../../keys/keyMaterial';
import { defineOperation, type Caller } from '../operation';
import { keyLinkName } from '../permissions/schemas';
import type { Services } from '../services';
import { carryOut, namedRefs, planLinks, type LinkPlan } from './links';
import {
  byteLength,
  id,
  newKeyFields as newKeyFieldsSchema,
  object,
  plaintextKey,
} from '../schemas';
import { newKeyFields, type KeyFieldsInput } from './fields';
import { linkIdentity } from './identityLink';
import { vaultToSeal } from './recoverable';
import { auditEntry, changedFields } from '../audit';

export interface CreateKeyInput extends KeyFieldsInput {
  apiId: string;
  prefix?: string;
  byteLength?: number;
  /** By name; missing ones are created when the root key may (Unkey v1's createKey). */
  permissions?: string[];
  roles?: string[];
  /** Sealed by the vault so that getKey and listKeys can show it again (`decrypt`). */
  recoverable?: boolean;
}

/** The key's permissions and roles, planned (every refusal) before anything is written. */
async function planKeyLinks(
  deps: Pick<Services, 'rbac'>,
  caller: Caller,
  input: CreateKeyInput,
): Promise<LinkPlan[]> {
  if (input.permissions === undefined && input.roles === undefined) return [];
  const catalogue = await deps.rbac.catalogue(caller.rootKey.workspaceId);
  return [
    planLinks(caller, 'permissions', namedRefs(input.permissions), catalogue, 'keyLink'),
    planLinks(caller, 'roles', namedRefs(input.roles), catalogue, 'keyLink'),
  ];
}

const createKeyInput = {
  type: 'object',
  required: ['apiId'],
  properties: {
    ...newKeyFieldsSchema,
    byteLength,
    // Any 1–512 characters, as Unkey v1's createKey takes them (docs/decisions.md).
    permissions: { type: 'array', maxItems: 100, items: keyLinkName },
    roles: { type: 'array', maxItems: 100, items: keyLinkName },
    recoverable: { type: 'boolean' },
  },
} as const;

export const createKey = defineOperation({
  name: 'keys.createKey',
  method: 'POST',
  plane: 'management',
  summary:
    'Creates a key; the plaintext is answered once and only its hash is stored (and, for a recoverable key, its plaintext sealed by the vault).',
  permission: {
    resource: 'api',
    action: 'create_key',
    scope: 'input',
    ids: (input: CreateKeyInput) => [input.apiId],
  },
  input: createKeyInput,
  output: object({ keyId: id, key: plaintextKey }, ['keyId', 'key']),
  uses: ['keys', 'now', 'rbac', 'directory', 'identities', 'vault'],
  async handle(deps, caller, input: CreateKeyInput): Promise<{ keyId: string; key: string }> {
    const ws = caller.rootKey.workspaceId;
    const vault = input.recoverable ? vaultToSeal(deps, caller, input.apiId) : undefined;
    const now = deps.now();
    const fields = newKeyFields(input, now);
    const plans = await planKeyLinks(deps, caller, input);
    if (plans.length > 0 || fields.ownerId) {
      // Created permissions, roles or an identity would outlive a key refused for its API: look
      // before creating them.
      if (!(await deps.directory.liveApi(ws, input.apiId))) {
        throw new NotFoundError('api', `api ${input.apiId} not found`);
      }
    }
    const material = generateKey(input.prefix, input.byteLength ?? DEFAULT_BYTE_LENGTH);
    const keyId = newId('key', now);
    if (vault) fields.sealed = vault.seal(material.plaintext, { workspaceId: ws, keyId });
    const audit = auditEntry(caller, 'keys.createKey', 'key', keyId, {
      apiId: input.apiId,
      fields: changedFields(createKeyInput, input, ['apiId', 'prefix', 'byteLength']),
    });
    if (plans.length > 0 || fields.ownerId) {
      await linkIdentity(deps, ws, fields, now, { create: audit });
    }
    let keyAudit = audit;
    let links: { permissionIds?: string[]; roleIds?: string[] } = {};
    if (plans.length > 0) {
      const [permissions = [], roles = []] = await Promise.all(
        plans.map(async (plan) =>
          (await carryOut(deps, caller, plan, 'keys.createKey')).map((l) => l.id),
        ),
      );
      // Written with the key's record, which it commits with them: its creation entry names them.
      links = { permissionIds: permissions, roleIds: roles };
      keyAudit = {
        ...audit,
        summary: { ...audit.summary, permissionIds: permissions, roleIds: roles },
      };
    }
    const outcome = await deps.keys.create(
      {
        workspaceId: ws,
        apiId: input.apiId,
        keyId,
        hash: material.hash,
        start: material.start,
        createdAt: now,
        fields,
        ...links,
      },
      keyAudit,
    );
    if (outcome === 'api_not_found') throw new NotFoundError('api', `api ${input.apiId} not found`);
    // 2^-128 for generated keys; reachable only by importing a known key.
    if (outcome === 'hash_exists')
      throw new ConflictError('key', 'a key with this hash exists already');
    caller.logFields.keyId = keyId;
    return { keyId, key: material.plaintext };
  },
});
