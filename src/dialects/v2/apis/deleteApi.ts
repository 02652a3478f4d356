import { deleteApi } from '../../../operations/apis/deleteApi';
import { object } from '../../../operations/schemas';
import { defineV2Route } from '../route';
import { apiId } from './shapes';

export const v2DeleteApi = defineV2Route({
  name: 'apis.deleteApi',
  operation: deleteApi,
  input: object({ apiId }, ['apiId']),
  output: object({}),
  toInput: (body: { apiId: string }) => ({ apiId: body.apiId }),
  toBody: () => ({ data: {} }),
});
