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
  /** Whether a boolean option was given. */
  flag(name: string): boolean;
  /** A required option's value: the parser has already refused its absence. */
  required(name: string): string;
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

const HELP_WIDTH = 100;

/** Greedy word wrap, keeping the text's own indentation; later lines start with `indent`. */
export function wrap(text: string, indent = '', width = HELP_WIDTH): string {
  const lead = /^ */.exec(text)?.[0] ?? '';
  const lines: string[] = [];
  let line = lead;
  let started = false;
  for (const word of text.slice(lead.length).split(' ')) {
    if (started && line.length + 1 + word.length > width) {
      lines.push(line);
      line = indent + word;
    } else {
      line = started ? `${line} ${word}` : line + word;
      started = true;
    }
  }
  lines.push(line);
  return lines.join('\n');
}

/** A two-column list (`  name  description`) whose descriptions wrap under themselves. */
function columns(rows: readonly [string, string][]): string[] {
  const width = Math.max(...rows.map(([name]) => name.length));
  const indent = ' '.repeat(width + 4);
  return rows.map(([name, description]) => wrap(`  ${name.padEnd(width)}  ${description}`, indent));
}

export function commandHelp(command: CommandSpec): string {
  const lines = [wrap(`usage: ${usageLine(command)}`, '         '), '', wrap(command.summary)];
  if (command.args?.length) {
    lines.push('', 'arguments:');
    lines.push(...columns(command.args.map((arg) => [`<${arg.name}>`, arg.description])));
  }
  lines.push('', 'options:');
  lines.push(
    ...columns(
      optionsOf(command).map(([name, option]) => [
        name === 'help' ? '-h, --help' : optionUsage(name, option),
        option.required ? `${option.description} (required)` : option.description,
      ]),
    ),
  );
  // Lines of notes that are indented are laid out by hand already.
  if (command.notes) {
    lines.push(
      '',
      ...command.notes.split('\n').map((line) => (line.startsWith(' ') ? line : wrap(line))),
    );
  }
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
  const line = message.split('\n')[0] ?? '';
  const end = line.indexOf('. ');
  const sentence = (end === -1 ? line : line.slice(0, end)).replace(/\.$/, '');
  return sentence.charAt(0).toLowerCase() + sentence.slice(1);
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
    flag: (name) => values[name] === true,
    required: (name) => {
      const value = string(name);
      if (value === undefined) throw new UsageError(`missing --${name}`, command);
      return value;
    },
  };
}
