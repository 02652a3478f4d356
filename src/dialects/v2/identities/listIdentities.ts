import { listIdentities, type IdentitiesPage } from '../../../operations/identities/listIdentities';
import { id, object, pageLimit } from '../../../operations/schemas';
import { v2Pagination } from '../lists';
import { defineV2Route } from '../route';
import { identityOutput, v2IdentityOf } from './shapes';

export const v2ListIdentities = defineV2Route({
  name: 'identities.listIdentities',
  operation: listIdentities,
  input: object({ limit: pageLimit, cursor: id, search: { type: 'string', maxLength: 256 } }),
  output: { type: 'array', items: identityOutput },
  toInput(body: { limit?: number; cursor?: string; search?: string }) {
    return {
      ...(body.limit !== undefined ? { limit: body.limit } : {}),
      ...(body.cursor !== undefined ? { cursor: body.cursor } : {}),
      ...(body.search !== undefined ? { search: body.search } : {}),
    };
  },
  toBody: (page: IdentitiesPage) => ({
    data: page.identities.map((listed) => v2IdentityOf(listed, listed.meta)),
    pagination: v2Pagination(page.cursor),
  }),
});
