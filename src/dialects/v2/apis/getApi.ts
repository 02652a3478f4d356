import { getApi } from '../../../operations/apis/getApi';
import { object } from '../../../operations/schemas';
import { defineV2Route } from '../route';
import { apiId } from './shapes';

export const v2GetApi = defineV2Route({
  name: 'apis.getApi',
  operation: getApi,
  input: object({ apiId }, ['apiId']),
  output: object({ id: { type: 'string' }, name: { type: 'string' } }, ['id', 'name']),
  toInput: (body: { apiId: string }) => ({ apiId: body.apiId }),
  toBody: (api) => ({ data: { id: api.id, name: api.name } }),
});
