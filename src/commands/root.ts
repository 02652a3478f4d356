import { createRootKey, listRootKeys, revokeRootKey } from '../operations/rootKeys';
import type { CommandSpec } from './framework';
import { emit, isoTime, table } from './output';
import { requireWorkspace, rootKeyStore, workspaceArgument, workspaceOption } from './services';

const create: CommandSpec = {
  path: ['root', 'create'],
  brief: 'create a root key (and a workspace, unless --workspace names one)',
  summary:
    'Creates a root key and prints {"workspaceId","keyId","key"} as one JSON line, with or without --json. The plaintext is shown this once; only its hash is stored.',
  options: {
    name: { type: 'string', value: 'NAME', description: 'a name to recognise the key by' },
    workspace: {
      type: 'string',
      value: 'ws_…',
      description: 'an existing workspace (default: a new workspace, born with this key)',
    },
    permissions: {
      type: 'string',
      value: 'LIST',
      description: 'comma-separated resource.id.action permissions, or * (default: *)',
    },
  },
  example: `keyward root create --name ci --permissions 'api.*.create_key,api.*.verify_key'`,
  async run(invocation, runtime) {
    const name = invocation.string('name');
    const workspaceId = invocation.string('workspace');
    const permissions = invocation.string('permissions');
    const created = await createRootKey(await rootKeyStore(runtime), {
      ...(workspaceId !== undefined ? { workspaceId } : {}),
      ...(name !== undefined ? { name } : {}),
      ...(permissions !== undefined
        ? {
            permissions: permissions
              .split(',')
              .map((p) => p.trim())
              .filter(Boolean),
          }
        : {}),
    });
    // Scripts (make run) read this line; it stays JSON in both modes.
    process.stdout.write(`${JSON.stringify(created)}\n`);
    return 0;
  },
};

const list: CommandSpec = {
  path: ['root', 'list'],
  brief: "list a workspace's root keys",
  summary:
    "Lists a workspace's root keys: ids, names, permissions and creation times (never hashes).",
  options: { workspace: workspaceOption },
  example: 'keyward root list --workspace ws_1ChFjYcXVVm7ah74PHsyRc',
  async run(invocation, runtime) {
    const ws = await workspaceArgument(invocation, runtime);
    const rootKeys = await listRootKeys(await rootKeyStore(runtime), ws);
    emit(invocation, { workspaceId: ws, rootKeys }, () =>
      rootKeys.length === 0
        ? [`no root keys in ${ws}`]
        : table(
            ['ID', 'NAME', 'CREATED', 'PERMISSIONS'],
            rootKeys.map((key) => [
              key.id,
              key.name ?? '-',
              isoTime(key.createdAt),
              key.permissions.join(' '),
            ]),
          ),
    );
    return 0;
  },
};

const revoke: CommandSpec = {
  path: ['root', 'revoke'],
  brief: 'revoke a root key',
  summary:
    'Revokes a root key: its record is deleted and every node drops it from its cache as the invalidation arrives.',
  options: { workspace: workspaceOption },
  args: [{ name: 'rootKeyId', description: 'the root key id (rk_…)' }],
  example: 'keyward root revoke --workspace ws_1ChFjYcXVVm7ah74PHsyRc rk_1ChFjYcXULbXC1rfiTfwp5',
  async run(invocation, runtime) {
    const ws = invocation.required('workspace');
    const [rootKeyId = ''] = invocation.args;
    await requireWorkspace(runtime, ws);
    await revokeRootKey(await rootKeyStore(runtime), ws, rootKeyId);
    emit(invocation, { rootKeyId, revoked: true }, () => [`revoked root key ${rootKeyId}`]);
    return 0;
  },
};

export const rootCommands: readonly CommandSpec[] = [create, list, revoke];
