import * as apis from '../operations/apis';
import * as keys from '../operations/keys';
import type { Caller, Services } from '../operations/services';
import { schemas, type OperationName } from './schemas';

export interface Route {
  name: OperationName;
  method: 'GET' | 'POST';
  run: (services: Services, caller: Caller, input: never) => Promise<object>;
}

/** Every authenticated RPC: `{base}/v1/{name}`, GET reads with a query, POST writes with JSON. */
export const routes: readonly Route[] = [
  { name: 'apis.createApi', method: 'POST', run: apis.createApi },
  { name: 'apis.getApi', method: 'GET', run: apis.getApi },
  { name: 'apis.deleteApi', method: 'POST', run: apis.deleteApi },
  { name: 'apis.listKeys', method: 'GET', run: apis.listKeys },
  { name: 'keys.createKey', method: 'POST', run: keys.createKey },
  { name: 'keys.getKey', method: 'GET', run: keys.getKey },
  { name: 'keys.verifyKey', method: 'POST', run: keys.verifyKey },
  { name: 'keys.updateKey', method: 'POST', run: keys.updateKey },
  { name: 'keys.deleteKey', method: 'POST', run: keys.deleteKey },
];

export function schemaOf(route: Route): (typeof schemas)[OperationName] {
  return schemas[route.name];
}
