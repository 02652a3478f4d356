import { createApi } from '../operations/apis/createApi';
import { runOperation } from '../operations/operation';
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
      createApi,
      { name: invocation.required('name') },
      { name: '--name' },
      create,
    );
    await requireWorkspace(runtime, ws);
    const created = await runOperation(
      createApi,
      await operatorServices(runtime),
      operatorCaller(ws),
      input,
    );
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
    const store = new ApiStore(redis, () => undefined);
    // The same live-API listing as apis.listApis, page by page, with each API's key count.
    const apis: ApiListItem[] = [];
    let afterId: string | undefined;
    for (;;) {
      const page = await store.list(ws, { limit: 100, ...(afterId ? { afterId } : {}) });
      const counts = await Promise.all(
        page.apis.map((api) => redis.zcard(names.apiKeys(ws, api.id))),
      );
      page.apis.forEach((api, i) =>
        apis.push({ id: api.id, name: api.name, createdAt: api.createdAt, keys: counts[i] ?? 0 }),
      );
      if (page.next === undefined) break;
      afterId = page.next;
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
