import { createApi } from '../../../operations/apis/createApi';
import { object } from '../../../operations/schemas';
import { defineV2Route } from '../route';

export const v2CreateApi = defineV2Route({
  name: 'apis.createApi',
  operation: createApi,
  input: object({ name: { type: 'string', minLength: 3, maxLength: 256 } }, ['name']),
  output: object({ apiId: { type: 'string' } }, ['apiId']),
  toInput: (body: { name: string }) => ({ name: body.name }),
  toBody: (created) => ({ data: { apiId: created.apiId } }),
});
