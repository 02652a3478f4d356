import { listAuditLogs, type ListAuditLogsInput } from '../operations/auditLogs/list';
import { runOperation } from '../operations/operation';
import type { CommandSpec } from './framework';
import { emit, isoTime, table } from './output';
import { operatorCaller, operatorServices, workspaceArgument, workspaceOption } from './services';
import { integerFlag, validateAs } from './validate';

/** `keyward audit`: a workspace's audit log, newest first, through auditLogs.list. */
const audit: CommandSpec = {
  path: ['audit'],
  brief: "show a workspace's audit log, newest first",
  summary:
    "Prints a workspace's audit log, newest first: the time, who (root key id, or operator for this command line), the operation, its target and a summary of each management write. --json prints auditLogs.list's answer, whose cursor --cursor takes to read on.",
  options: {
    workspace: workspaceOption,
    limit: { type: 'string', value: 'N', description: 'entries to show, 1 to 100 (default 20)' },
    cursor: { type: 'string', value: 'ID', description: 'start after this entry (older ones)' },
    target: { type: 'string', value: 'ID', description: 'only entries about this key, API, …' },
    operation: {
      type: 'string',
      value: 'NAME',
      description: 'only entries of this operation (keys.createKey)',
    },
  },
  example:
    'keyward audit --workspace ws_1ChFjYcXVVm7ah74PHsyRc --target key_1ChFjUG4o6VLuzbLGABNDC',
  async run(invocation, runtime) {
    const limit = integerFlag(invocation.string('limit'), '--limit', audit) ?? 20;
    const cursor = invocation.string('cursor');
    const targetId = invocation.string('target');
    const operation = invocation.string('operation');
    const input = validateAs<ListAuditLogsInput>(
      listAuditLogs,
      {
        limit,
        ...(cursor !== undefined ? { cursor } : {}),
        ...(targetId !== undefined ? { targetId } : {}),
        ...(operation !== undefined ? { operation } : {}),
      },
      { limit: '--limit', cursor: '--cursor', targetId: '--target', operation: '--operation' },
      audit,
    );
    const ws = await workspaceArgument(invocation, runtime);
    const page = await runOperation(
      listAuditLogs,
      await operatorServices(runtime),
      operatorCaller(ws),
      input,
    );
    emit(invocation, { workspaceId: ws, ...page }, () => [
      ...(page.entries.length === 0
        ? [`no audit entries in ${ws}`]
        : table(
            ['TIME', 'ROOT KEY', 'OPERATION', 'TARGET', 'SUMMARY'],
            page.entries.map((entry) => [
              isoTime(entry.time),
              entry.rootKeyId,
              entry.operation,
              `${entry.target.type} ${entry.target.id}`,
              JSON.stringify(entry.summary),
            ]),
          )),
      ...(page.cursor !== undefined ? [`more: --cursor ${page.cursor}`] : []),
    ]);
    return 0;
  },
};

export const auditCommands: readonly CommandSpec[] = [audit];
