#!/usr/bin/env node
import { apiCommands } from './commands/apis';
import { doctorCommands } from './commands/doctor';
import {
  commandHelp,
  commandUsage,
  parseInvocation,
  UsageError,
  wantsHelp,
  type CommandSpec,
} from './commands/framework';
import { migrateCommands } from './commands/migrate';
import { clickhouseCommands } from './commands/clickhouse';
import { vaultCommands } from './commands/vault';
import { auditCommands } from './commands/audit';
import { webhookCommands } from './commands/webhooks';
import { identityCommands } from './commands/identities';
import { usageCommands } from './commands/usage';
import { inspectCommands } from './commands/inspect';
import { keyCommands } from './commands/keys';
import { rootCommands } from './commands/root';
import { Runtime } from './commands/runtime';
import { serveCommands } from './commands/serve';
import { BadRequestError } from './errors';
import { isRedisUnavailable } from './redis/failures';
import { VERSION } from './version';

const COMMANDS: readonly CommandSpec[] = [
  ...serveCommands,
  ...rootCommands,
  ...apiCommands,
  ...keyCommands,
  ...inspectCommands,
  ...auditCommands,
  ...webhookCommands,
  ...identityCommands,
  ...usageCommands,
  ...doctorCommands,
  ...migrateCommands,
  ...clickhouseCommands,
  ...vaultCommands,
];

/** Words that name a group of commands (`keys`), as opposed to a command of its own (`doctor`). */
const GROUPS = new Set(COMMANDS.filter((c) => c.path.length > 1).map((c) => c.path[0]));

function listing(commands: readonly CommandSpec[]): string[] {
  const width = Math.max(...commands.map((c) => c.path.join(' ').length));
  return commands.map((c) => `  ${c.path.join(' ').padEnd(width)}  ${c.brief}`);
}

function overview(): string {
  return [
    'usage: keyward <command> [arguments] [--json]',
    '',
    'The operator command line of keyward. Commands talk to Redis directly and are configured by',
    'the same KEYWARD_* variables as a node (KEYWARD_REDIS_URL, KEYWARD_LOCAL_REDIS_URL,',
    'KEYWARD_REDIS_CLUSTER_NODES, …).',
    '',
    'commands:',
    ...listing(COMMANDS),
    '',
    'Every command takes --json (one line of JSON on stdout) and --help.',
    'exit codes: 0 done, 1 operational error (not found, Redis unreachable, a failed check),',
    '            2 usage error (unknown command or option, missing argument, invalid value)',
    'keyward --version prints the version; keyward help <command> the help of a command.',
    '',
  ].join('\n');
}

function groupUsage(group: string): string {
  const commands = COMMANDS.filter((c) => c.path[0] === group);
  return [`usage: keyward ${group} <command> …`, '', 'commands:', ...listing(commands), ''].join(
    '\n',
  );
}

type Resolution =
  { kind: 'print'; text: string } | { kind: 'run'; command: CommandSpec; rest: string[] };

function isHelpFlag(word: string | undefined): boolean {
  return word === '--help' || word === '-h';
}

/** Finds the command that the leading words name, or the help that they ask for. */
function resolve(argv: readonly string[]): Resolution {
  const [first, second, ...rest] = argv;
  if (first === undefined) throw new UsageError('missing command');
  if (isHelpFlag(first)) return { kind: 'print', text: overview() };
  if (first === '--version') return { kind: 'print', text: `${VERSION}\n` };
  if (first === 'help') {
    if (second === undefined) return { kind: 'print', text: overview() };
    const resolved = resolve([second, ...rest, '--help']);
    return resolved.kind === 'print'
      ? resolved
      : { kind: 'print', text: commandHelp(resolved.command) };
  }
  if (GROUPS.has(first)) {
    if (second === undefined)
      throw new UsageError(`missing ${first} command`, undefined, groupUsage(first));
    if (isHelpFlag(second)) return { kind: 'print', text: groupUsage(first) };
    const command = COMMANDS.find((c) => c.path[0] === first && c.path[1] === second);
    if (!command) {
      throw new UsageError(`unknown command "${first} ${second}"`, undefined, groupUsage(first));
    }
    return { kind: 'run', command, rest };
  }
  const command = COMMANDS.find((c) => c.path.length === 1 && c.path[0] === first);
  if (!command) throw new UsageError(`unknown command "${first}"`);
  return { kind: 'run', command, rest: argv.slice(1) };
}

function messageOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  // ioredis' own words ("Command timed out") do not say which side failed.
  return isRedisUnavailable(error) && !message.includes('Redis')
    ? `Redis unreachable: ${message}`
    : message;
}

/** Usage errors exit 2 with the usage on stderr; everything else 1 with one line. */
function report(error: unknown): number {
  if (error instanceof UsageError) {
    const usage = error.usage ?? (error.command ? commandUsage(error.command) : overview());
    process.stderr.write(`keyward: ${error.message}\n${usage}`);
    return 2;
  }
  process.stderr.write(`keyward: ${messageOf(error).split('\n')[0]}\n`);
  return 1;
}

/** Runs one command line; resolves with the exit code, or -1 while `serve` keeps running. */
export async function main(argv: readonly string[], runtime = new Runtime()): Promise<number> {
  try {
    const resolution = resolve(argv);
    if (resolution.kind === 'print') {
      process.stdout.write(resolution.text);
      return 0;
    }
    const { command, rest } = resolution;
    if (wantsHelp(rest)) {
      process.stdout.write(commandHelp(command));
      return 0;
    }
    const invocation = parseInvocation(command, rest);
    try {
      return await command.run(invocation, runtime);
    } catch (error) {
      // The operations' input checks speak of fields; here the input came from flags.
      if (error instanceof BadRequestError) throw new UsageError(error.message, command);
      throw error;
    }
  } catch (error) {
    return report(error);
  } finally {
    await runtime.close();
  }
}

if (require.main === module) {
  // `keyward apis list | head -1`: a reader that stops early is not an error.
  process.stdout.on('error', (error: NodeJS.ErrnoException) => {
    if (error.code === 'EPIPE') process.exit(0);
    throw error;
  });
  void main(process.argv.slice(2)).then((code) => {
    if (code < 0) return;
    process.exitCode = code;
    // A Redis client still winding down must not keep the operator's shell waiting.
    setTimeout(() => process.exit(code), 1000).unref();
  });
}
