import { listKeys } from '../../../operations/apis/listKeys';
import { object, pageLimit } from '../../../operations/schemas';
import { v2Pagination } from '../lists';
import { defineV2Route } from '../route';
import { v2Key } from '../shapes';

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
  toBody: (page) => ({ data: page.keys.map(v2Key), pagination: v2Pagination(page.cursor) }),
});
