import { createApi } from '../../operations/apis/createApi';
import { getApi } from '../../operations/apis/getApi';
import { object } from '../../operations/schemas';
import { defineV2Route } from './route';

const apiId = { type: 'string', minLength: 3, maxLength: 255, pattern: '^[a-zA-Z0-9_]+$' } as const;

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
