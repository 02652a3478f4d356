import { createHash } from 'node:crypto';
import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { ClientContext, Cluster, Redis, Result } from 'ioredis';
import { expandIncludes, luaFolder } from './luaIncludes';
import { numberOfKeys, SCRIPTS, type ScriptName, type ScriptSpec } from './scriptTable';

export const LUA_DIR = join(__dirname, '..', '..', 'lua');

type ScriptArg = string | number;

type Each<T extends readonly unknown[], V> = { -readonly [I in keyof T]: V };

/**
 * A command's arguments, from its table entry: one string per KEYS, one argument per ARGV, then
 * any number for `moreArgv`. `-n` scripts take the number of keys first; scripts whose callers
 * leave trailing ARGV off build their arguments as a list, so only the first key is fixed.
 */
type Args<S extends ScriptSpec> = S extends { keysPerItem: readonly string[] }
  ? [numberOfKeys: number, ...keysAndArgs: ScriptArg[]]
  : S extends { trailingArgvOptional: true }
    ? [firstKey: string, ...keysAndArgs: ScriptArg[]]
    : [
        ...Each<S['keys'], string>,
        ...Each<S['argv'], ScriptArg>,
        ...(S extends { moreArgv: string } ? ScriptArg[] : []),
      ];

type Reply<S extends ScriptSpec> = {
  integer: number;
  integers: number[];
  string: string;
}[S['reply']];

type Command<N extends ScriptName, Context extends ClientContext> = (
  ...args: Args<(typeof SCRIPTS)[N]>
) => Result<Reply<(typeof SCRIPTS)[N]>, Context>;

/** `tokenBucketV1`, …, and `tokenBucketV1Buffer` for the entries that ask for it. */
type ScriptCommands<Context extends ClientContext> = {
  [N in ScriptName as (typeof SCRIPTS)[N]['command']]: Command<N, Context>;
} & {
  [
    N in ScriptName as (typeof SCRIPTS)[N] extends { buffer: true }
      ? `${(typeof SCRIPTS)[N]['command']}Buffer`
      : never
  ]: Command<N, Context>;
};

/**
 * Every script is registered with defineCommand under its table's command name. ioredis sends EVALSHA and
 * falls back to EVAL on NOSCRIPT, so a restarted Redis needs nothing from us. Redis knows a
 * script by the SHA-1 of its text, so two releases can never run each other's scripts; V1 marks
 * the command names of the first released contract.
 */
declare module 'ioredis' {
  // eslint-disable-next-line @typescript-eslint/no-empty-object-type
  interface RedisCommander<Context> extends ScriptCommands<Context> {}
}

export interface ScriptFile {
  name: ScriptName;
  command: string;
  /** Undefined for variadic scripts (`-n.lua`), whose callers pass the count first. */
  numberOfKeys: number | undefined;
  /** The text sent to Redis: the file with its includes expanded. */
  lua: string;
  /** SHA-1 of `lua`: the name Redis knows the script by (EVALSHA, SCRIPT LOAD). */
  sha1: string;
}

/**
 * The number of keys a file name states must be the table's: the name is what a reader of lua/
 * goes by. `-n` files are the variadic ones.
 */
function checkFileName(name: string, spec: ScriptSpec): void {
  const match = /^[a-z-]+-(\d+|n)\.lua$/.exec(spec.file);
  if (!match) throw new Error(`lua/${spec.file}: name must be <name>-<numberOfKeys or n>.lua`);
  const keys = numberOfKeys(spec);
  if (match[1] !== (keys === undefined ? 'n' : String(keys))) {
    throw new Error(
      `lua/${spec.file}: the script table gives ${name} ${keys ?? 'a varying number of'} keys`,
    );
  }
}

/**
 * Every script of the table, its includes expanded. Start-up work, done once: a missing file or
 * include, an include cycle, or a script in lua/ that the table does not list stops the node
 * before it serves anything.
 */
export function loadScripts(dir: string = LUA_DIR): ScriptFile[] {
  const source = luaFolder(dir);
  const listed = new Set<string>(Object.values(SCRIPTS).map((spec) => spec.file));
  const unlisted = readdirSync(dir).filter((file) => file.endsWith('.lua') && !listed.has(file));
  if (unlisted.length > 0) {
    throw new Error(`lua/: ${unlisted.join(', ')} not in src/redis/scriptTable.ts`);
  }
  return (Object.keys(SCRIPTS) as ScriptName[]).map((name) => {
    const spec: ScriptSpec = SCRIPTS[name];
    checkFileName(name, spec);
    const lua = expandIncludes(spec.file, source);
    return {
      name,
      command: spec.command,
      numberOfKeys: numberOfKeys(spec),
      lua,
      sha1: createHash('sha1').update(lua).digest('hex'),
    };
  });
}

let cached: ScriptFile[] | undefined;

export function defineScripts(redis: Redis | Cluster): void {
  cached ??= loadScripts();
  for (const script of cached) {
    redis.defineCommand(script.command, {
      lua: script.lua,
      ...(script.numberOfKeys !== undefined ? { numberOfKeys: script.numberOfKeys } : {}),
    });
  }
}
