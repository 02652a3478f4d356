import { parseArgs } from 'node:util';
import type { Runtime } from './runtime';

/**
 * The command line's skeleton: every command declares its arguments and options once, and both
 * parsing (node:util parseArgs, strict) and `--help` are derived from that declaration, so the
 * help text cannot drift from what is accepted.
 */
export interface OptionSpec {
  type: 'string' | 'boolean';
  /** The placeholder shown in help: `--workspace ws_…`. */
  value?: string;
  description: string;
  required?: boolean;
}

export interface ArgSpec {
  name: string;
  description: string;
}

export interface Invocation {
  /** `--json`: machine-readable output on stdout. */
  json: boolean;
  /** The positional arguments, as many as the command declares. */
  args: readonly string[];
  string(name: string): string | undefined;
  /** A required option's value: the parser has already refused its absence. */
  required(name: string): string;
  flag(name: string): boolean;
}

export interface CommandSpec {
  /** The words that name the command: `['keys', 'create']`. */
  path: readonly string[];
  /** One line for the overview of `keyward --help`. */
  brief: string;
  /** The first paragraph of the command's `--help`. */
  summary: string;
  /** Positional arguments; all of them are required. */
  args?: readonly ArgSpec[];
  options?: Readonly<Record<string, OptionSpec>>;
  /** Further paragraphs for `--help`. */
  notes?: string;
  example?: string;
  /** Resolves with the exit code; -1 means "keep running" (serve). */
  run(invocation: Invocation, runtime: Runtime): Promise<number>;
}

/** Bad command-line input: exit code 2, with the relevant usage on stderr. */
export class UsageError extends Error {
  constructor(
    message: string,
    /** Whose usage to print; undefined for the whole command line (unless `usage` says). */
    readonly command?: CommandSpec,
    /** Usage text to print instead (a command group's). */
    readonly usage?: string,
  ) {
    super(message);
  }
}

const COMMON_OPTIONS: Readonly<Record<string, OptionSpec>> = {
  json: { type: 'boolean', description: 'print machine-readable JSON' },
  help: { type: 'boolean', description: 'show this help' },
};

function optionsOf(command: CommandSpec): [string, OptionSpec][] {
  return [...Object.entries(command.options ?? {}), ...Object.entries(COMMON_OPTIONS)];
}

function optionUsage(name: string, option: OptionSpec): string {
  return option.type === 'string' ? `--${name} ${option.value ?? 'VALUE'}` : `--${name}`;
}

export function usageLine(command: CommandSpec): string {
  const parts = ['keyward', ...command.path];
  for (const [name, option] of Object.entries(command.options ?? {})) {
    parts.push(option.required ? optionUsage(name, option) : `[${optionUsage(name, option)}]`);
  }
  for (const arg of command.args ?? []) parts.push(`<${arg.name}>`);
  parts.push('[--json]');
  return parts.join(' ');
}

/** What a usage error prints: the command's synopsis and where to read more. */
export function commandUsage(command: CommandSpec): string {
  return `usage: ${usageLine(command)}\nrun "keyward ${command.path.join(' ')} --help" for details\n`;
}

export function commandHelp(command: CommandSpec): string {
  const lines = [`usage: ${usageLine(command)}`, '', command.summary];
  if (command.args?.length) {
    lines.push('', 'arguments:');
    const width = Math.max(...command.args.map((arg) => arg.name.length + 2));
    for (const arg of command.args) {
      lines.push(`  ${`<${arg.name}>`.padEnd(width)}  ${arg.description}`);
    }
  }
  const options = optionsOf(command).map(([name, option]) => ({
    flag: name === 'help' ? '-h, --help' : optionUsage(name, option),
    description: option.required ? `${option.description} (required)` : option.description,
  }));
  const width = Math.max(...options.map((option) => option.flag.length));
  lines.push('', 'options:');
  for (const option of options) lines.push(`  ${option.flag.padEnd(width)}  ${option.description}`);
  if (command.notes) lines.push('', command.notes);
  if (command.example) lines.push('', 'example:', `  ${command.example}`);
  return `${lines.join('\n')}\n`;
}

/** `--help` anywhere before a `--` asks for help, whatever else is wrong with the line. */
export function wantsHelp(args: readonly string[]): boolean {
  for (const arg of args) {
    if (arg === '--') return false;
    if (arg === '--help' || arg === '-h') return true;
  }
  return false;
}

/** parseArgs' messages carry advice for scripts; keep their first sentence. */
function firstSentence(message: string): string {
  const end = message.indexOf('. ');
  return (end === -1 ? message : message.slice(0, end)).replace(/\.$/, '');
}

export function parseInvocation(command: CommandSpec, args: string[]): Invocation {
  const parseOptions: Record<string, { type: 'string' | 'boolean'; short?: string }> = {};
  for (const [name, option] of optionsOf(command)) {
    parseOptions[name] = { type: option.type, ...(name === 'help' ? { short: 'h' } : {}) };
  }
  let parsed: ReturnType<typeof parseArgs>;
  try {
    parsed = parseArgs({ args, options: parseOptions, strict: true, allowPositionals: true });
  } catch (error) {
    throw new UsageError(
      firstSentence(error instanceof Error ? error.message : String(error)),
      command,
    );
  }
  const values = parsed.values as Record<string, string | boolean | undefined>;
  const declared = command.args ?? [];
  const missing = declared[parsed.positionals.length];
  if (missing) throw new UsageError(`missing <${missing.name}>`, command);
  const extra = parsed.positionals[declared.length];
  if (extra !== undefined) throw new UsageError(`unexpected argument "${extra}"`, command);
  for (const [name, option] of Object.entries(command.options ?? {})) {
    if (option.required && values[name] === undefined) {
      throw new UsageError(`missing ${optionUsage(name, option)}`, command);
    }
  }
  const string = (name: string) => {
    const value = values[name];
    return typeof value === 'string' ? value : undefined;
  };
  return {
    json: values.json === true,
    args: parsed.positionals,
    string,
    required: (name) => {
      const value = string(name);
      if (value === undefined) throw new UsageError(`missing --${name}`, command);
      return value;
    },
    flag: (name) => values[name] === true,
  };
}
