import { readdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Cluster, Redis, Result } from 'ioredis';
import { expandIncludes, luaFolder } from './luaIncludes';

export const LUA_DIR = join(__dirname, '..', '..', 'lua');

type ScriptArg = string | number;

/**
 * Every script in lua/ is registered with defineCommand under `<camelName>V1`. ioredis sends
 * EVALSHA and falls back to EVAL on NOSCRIPT, so a restarted Redis needs nothing from us. Redis
 * knows a script by the SHA-1 of its text, so two releases can never run each other's scripts;
 * V1 marks the command names of the first released contract.
 */
declare module 'ioredis' {
  interface RedisCommander<Context> {
    tokenBucketV1(bucketKey: string, ...args: ScriptArg[]): Result<number[], Context>;
    /** The same script; its integer replies skip ioredis's buffer-to-string pass. */
    tokenBucketV1Buffer(bucketKey: string, ...args: ScriptArg[]): Result<number[], Context>;
    createKeyV1(...keysAndArgs: ScriptArg[]): Result<number, Context>;
    updateKeyV1(...keysAndArgs: ScriptArg[]): Result<number, Context>;
    deleteKeyV1(...keysAndArgs: ScriptArg[]): Result<number, Context>;
    tombstoneApiV1(...keysAndArgs: ScriptArg[]): Result<number, Context>;
    updateCreditsV1(...keysAndArgs: ScriptArg[]): Result<number, Context>;
    ensureNamespaceV1(...keysAndArgs: ScriptArg[]): Result<string, Context>;
    setOverrideV1(...keysAndArgs: ScriptArg[]): Result<string, Context>;
    /** Variadic: the first argument is the number of keys. */
    importKeysV1(numberOfKeys: number, ...keysAndArgs: ScriptArg[]): Result<number[], Context>;
  }
}

interface ScriptFile {
  command: string;
  /** Undefined for variadic scripts (`-n.lua`), whose callers pass the count first. */
  numberOfKeys: number | undefined;
  /** The text sent to Redis: the file with its includes expanded. */
  lua: string;
}

/**
 * `token-bucket-2.lua` → command `tokenBucketV1`, 2 keys (BullMQ's naming convention);
 * `import-keys-n.lua` → `importKeysV1`, with the number of keys given per call. Includes are
 * expanded here, once at start-up: a missing include or a cycle stops the node before it serves.
 */
export function loadScripts(dir: string = LUA_DIR): ScriptFile[] {
  const source = luaFolder(dir);
  return readdirSync(dir)
    .filter((file) => file.endsWith('.lua'))
    .map((file) => {
      const match = /^([a-z-]+)-(\d+|n)\.lua$/.exec(file);
      if (!match) throw new Error(`lua/${file}: name must be <name>-<numberOfKeys or n>.lua`);
      const [, name, keys] = match as unknown as [string, string, string];
      const camel = name.replace(/-([a-z])/g, (_, c: string) => c.toUpperCase());
      return {
        command: `${camel}V1`,
        numberOfKeys: keys === 'n' ? undefined : Number(keys),
        lua: expandIncludes(file, source),
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
