import { ConflictError, NotFoundError } from '../../errors';
import { newId } from '../../keys/ids';
import { DEFAULT_BYTE_LENGTH, generateKey } from '../../keys/keyMaterial';
import { defineOperation } from '../operation';
import {
  byteLength,
  id,
  newKeyFields as newKeyFieldsSchema,
  object,
  plaintextKey,
} from '../schemas';
import { newKeyFields, type KeyFieldsInput } from './fields';

export interface CreateKeyInput extends KeyFieldsInput {
  apiId: string;
  prefix?: string;
  byteLength?: number;
}

export const createKey = defineOperation({
  name: 'keys.createKey',
  method: 'POST',
  plane: 'management',
  summary: 'Creates a key; the plaintext is answered once and only its hash is stored.',
  permission: {
    resource: 'api',
    action: 'create_key',
    scope: 'input',
    ids: (input: CreateKeyInput) => [input.apiId],
  },
  input: {
    type: 'object',
    required: ['apiId'],
    properties: { ...newKeyFieldsSchema, byteLength },
  },
  output: object({ keyId: id, key: plaintextKey }, ['keyId', 'key']),
  uses: ['keys', 'now'],
  async handle(deps, caller, input: CreateKeyInput): Promise<{ keyId: string; key: string }> {
    const now = deps.now();
    const fields = newKeyFields(input, now);
    const material = generateKey(input.prefix, input.byteLength ?? DEFAULT_BYTE_LENGTH);
    const keyId = newId('key', now);
    const outcome = await deps.keys.create({
      workspaceId: caller.rootKey.workspaceId,
      apiId: input.apiId,
      keyId,
      hash: material.hash,
      start: material.start,
      createdAt: now,
      fields,
    });
    if (outcome === 'api_not_found') throw new NotFoundError(`api ${input.apiId} not found`);
    // 2^-128 for generated keys; reachable only by importing a known key.
    if (outcome === 'hash_exists') throw new ConflictError('a key with this hash exists already');
    caller.logFields.keyId = keyId;
    return { keyId, key: material.plaintext };
  },
});
