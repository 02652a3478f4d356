import { NotFoundError } from '../errors';
import { createApi } from '../operations/apis/createApi';
import { listApis } from '../operations/apis/listApis';
import { listKeys } from '../operations/apis/listKeys';
import { runOperation, type Caller } from '../operations/operation';
import type { Services } from '../operations/services';
import type { ApiView } from '../operations/views';
import type { CommandSpec } from './framework';
import { emit, isoTime, table } from './output';
import {
  operate,
  operatorCaller,
  operatorServices,
  requireWorkspace,
  workspaceArgument,
  workspaceOption,
} from './services';
import { validateAs } from './validate';

const create: CommandSpec = {
  path: ['apis', 'create'],
  brief: 'create an API',
  summary: 'Creates an API in a workspace, as apis.createApi does.',
  options: {
    workspace: workspaceOption,
    name: {
      type: 'string',
      value: 'NAME',
      required: true,
      description: 'the name, 1–256 characters',
    },
  },
  example: 'keyward apis create --workspace ws_1ChFjYcXVVm7ah74PHsyRc --name my-api',
  async run(invocation, runtime) {
    const ws = invocation.required('workspace');
    const input = validateAs<{ name: string }>(
      createApi,
      { name: invocation.required('name') },
      { name: '--name' },
      create,
    );
    await requireWorkspace(runtime, ws);
    const created = await operate(runtime, ws, createApi, input);
    emit(invocation, created, () => [`created api ${created.apiId} (${created.name})`]);
    return 0;
  },
};

interface ApiListItem {
  id: string;
  name: string;
  createdAt: number;
  /** The number of keys in the API's index. */
  keys: number;
}

/** The API with its exact key count; undefined when it was deleted since it was listed. */
async function withKeyCount(
  services: Services,
  caller: Caller,
  api: ApiView,
): Promise<ApiListItem | undefined> {
  try {
    // A page of one: listKeys's total is exact whatever the limit, and one key is the least read.
    const { total } = await runOperation(listKeys, services, caller, { apiId: api.id, limit: 1 });
    return { id: api.id, name: api.name, createdAt: api.createdAt, keys: total };
  } catch (error) {
    if (error instanceof NotFoundError) return undefined;
    throw error;
  }
}

const list: CommandSpec = {
  path: ['apis', 'list'],
  brief: "list a workspace's APIs",
  summary:
    "Lists a workspace's APIs in creation order, with their number of keys. An API whose deletion has started is left out.",
  options: { workspace: workspaceOption },
  example: 'keyward apis list --workspace ws_1ChFjYcXVVm7ah74PHsyRc',
  async run(invocation, runtime) {
    const ws = await workspaceArgument(invocation, runtime);
    const services = await operatorServices(runtime);
    const caller = operatorCaller(ws);
    const apis: ApiListItem[] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = await runOperation(listApis, services, caller, {
        limit: 100,
        ...(cursor !== undefined ? { cursor } : {}),
      });
      const counted = await Promise.all(
        page.apis.map((api) => withKeyCount(services, caller, api)),
      );
      for (const item of counted) if (item) apis.push(item);
      if (page.cursor === undefined) break;
      cursor = page.cursor;
    }
    emit(invocation, { workspaceId: ws, apis }, () =>
      apis.length === 0
        ? [`no apis in ${ws}`]
        : table(
            ['ID', 'KEYS', 'CREATED', 'NAME'],
            apis.map((api) => [api.id, String(api.keys), isoTime(api.createdAt), api.name]),
          ),
    );
    return 0;
  },
};

export const apiCommands: readonly CommandSpec[] = [create, list];
