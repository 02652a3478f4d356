import { createApi } from '../operations/apis';
import { ApiStore } from '../store/apiStore';
import { names } from '../store/names';
import type { CommandSpec } from './framework';
import { emit, isoTime, table } from './output';
import { operatorCaller, operatorServices, requireWorkspace, workspaceOption } from './services';
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
      'apis.createApi',
      { name: invocation.required('name') },
      { name: '--name' },
      create,
    );
    await requireWorkspace(runtime, ws);
    const created = await createApi(await operatorServices(runtime), operatorCaller(ws), input);
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

const list: CommandSpec = {
  path: ['apis', 'list'],
  brief: "list a workspace's APIs",
  summary:
    "Lists a workspace's APIs in creation order, with their number of keys. An API whose deletion has started is left out.",
  options: { workspace: workspaceOption },
  example: 'keyward apis list --workspace ws_1ChFjYcXVVm7ah74PHsyRc',
  async run(invocation, runtime) {
    const ws = invocation.required('workspace');
    await requireWorkspace(runtime, ws);
    const redis = await runtime.redis('primary');
    const store = new ApiStore(redis);
    const ids = await redis.zrange(names.apis(ws), 0, -1);
    const found = await Promise.all(
      ids.map(async (apiId): Promise<ApiListItem | undefined> => {
        const [api, keys] = await Promise.all([
          store.get(ws, apiId),
          redis.zcard(names.apiKeys(ws, apiId)),
        ]);
        // The index and a deletion's tombstone are written together; skip either sign of one.
        if (!api || api.deletedAt !== undefined) return undefined;
        return { id: api.id, name: api.name, createdAt: api.createdAt, keys };
      }),
    );
    const apis = found.filter((api): api is ApiListItem => api !== undefined);
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
