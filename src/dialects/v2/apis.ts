import { createApi } from '../../operations/apis/createApi';
import { deleteApi } from '../../operations/apis/deleteApi';
import { getApi } from '../../operations/apis/getApi';
import { listKeys } from '../../operations/apis/listKeys';
import { object, pageLimit } from '../../operations/schemas';
import { defineV2Route } from './route';
import { v2Key } from './shapes';

/** getApi's and deleteApi's `apiId`, as Unkey's spec bounds it. */
const apiId = { type: 'string', minLength: 8, maxLength: 255, pattern: '^[a-zA-Z0-9_]+$' } as const;

export const v2CreateApi = defineV2Route({
  name: 'apis.createApi',
  operation: createApi,
  input: object({ name: { type: 'string', minLength: 3, maxLength: 256 } }, ['name']),
  output: object({ apiId: { type: 'string' } }, ['apiId']),
  toInput: (body: { name: string }) => ({ name: body.name }),
  toBody: (created) => ({ data: { apiId: created.apiId } }),
});

export const v2GetApi = defineV2Route({
  name: 'apis.getApi',
  operation: getApi,
  input: object({ apiId }, ['apiId']),
  output: object({ id: { type: 'string' }, name: { type: 'string' } }, ['id', 'name']),
  toInput: (body: { apiId: string }) => ({ apiId: body.apiId }),
  toBody: (api) => ({ data: { id: api.id, name: api.name } }),
});

export const v2DeleteApi = defineV2Route({
  name: 'apis.deleteApi',
  operation: deleteApi,
  input: object({ apiId }, ['apiId']),
  output: object({}),
  toInput: (body: { apiId: string }) => ({ apiId: body.apiId }),
  toBody: () => ({ data: {} }),
});

interface V2ListKeysBody {
  apiId: string;
  limit?: number;
  cursor?: string;
  externalId?: string;
  decrypt?: boolean;
  revalidateKeysCache?: boolean;
}

/**
 * A page of an API's keys, each as getKey shows it, and `pagination` with the cursor of the next
 * page when there is one. `revalidateKeysCache` changes nothing: listKeys reads the keys from the
 * primary on every call.
 */
export const v2ListKeys = defineV2Route({
  name: 'apis.listKeys',
  operation: listKeys,
  input: object(
    {
      // Unkey's spec asks only for a non-empty apiId here: one of no id's form is a 404.
      apiId: { type: 'string', minLength: 1 },
      limit: pageLimit,
      cursor: { type: 'string', minLength: 1 },
      externalId: { type: 'string', minLength: 1 },
      decrypt: { type: 'boolean' },
      revalidateKeysCache: { type: 'boolean' },
    },
    ['apiId'],
  ),
  output: { type: 'array', items: { type: 'object' } },
  toInput(body: V2ListKeysBody) {
    return {
      apiId: body.apiId,
      ...(body.decrypt !== undefined ? { decrypt: body.decrypt } : {}),
      ...(body.limit !== undefined ? { limit: body.limit } : {}),
      ...(body.cursor !== undefined ? { cursor: body.cursor } : {}),
      ...(body.externalId !== undefined ? { externalId: body.externalId } : {}),
    };
  },
  toBody: (page) => ({
    data: page.keys.map(v2Key),
    pagination:
      page.cursor === undefined ? { hasMore: false } : { cursor: page.cursor, hasMore: true },
  }),
});
