import type { Override } from '../../../domain/overrides';
import { listOverrides } from '../../../operations/ratelimits/listOverrides';
import { identifier, namespaceName, object, pageLimit } from '../../../operations/schemas';
import { v2Pagination } from '../lists';
import { defineV2Route } from '../route';
import { namespaceRef, overrideOutput, v2Override } from './shapes';

export const v2ListOverrides = defineV2Route({
  name: 'ratelimit.listOverrides',
  operation: listOverrides,
  input: object({ namespace: namespaceName, cursor: identifier, limit: pageLimit }, ['namespace']),
  output: { type: 'array', items: overrideOutput },
  toInput: (body: { namespace: string; cursor?: string; limit?: number }) => ({
    ...namespaceRef(body.namespace),
    ...(body.cursor !== undefined ? { cursor: body.cursor } : {}),
    ...(body.limit !== undefined ? { limit: body.limit } : {}),
  }),
  toBody: (page: { overrides: Override[]; cursor?: string }) => ({
    data: page.overrides.map(v2Override),
    pagination: v2Pagination(page.cursor),
  }),
});
