import { readFileSync } from 'node:fs';
import { join, posix } from 'node:path';

/**
 * Reads a file of lua/ by its path relative to lua/ (`includes/credits.lua`); undefined when
 * there is no such file.
 */
export type LuaSource = (path: string) => string | undefined;

/** The files of a lua/ folder on disk. */
export function luaFolder(dir: string): LuaSource {
  return (path) => {
    try {
      return readFileSync(join(dir, path), 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  };
}

/** Anything that starts like an include, so that a misspelt one fails instead of staying a comment. */
const INCLUDE_LIKE = /^\s*---\s*@include\b/;
const INCLUDE = /^---\s*@include\s+"([^"]+)"\s*$/;

/**
 * `includes/credits` → `includes/credits.lua`, relative to lua/. A path that leaves lua/ is
 * refused: what a script runs must ship with it.
 */
function includePath(target: string): string | undefined {
  const withExtension = target.endsWith('.lua') ? target : `${target}.lua`;
  const path = posix.normalize(withExtension);
  if (path.startsWith('../') || path === '..' || posix.isAbsolute(path)) return undefined;
  return path;
}

/**
 * The text Redis runs for the script at `path` (relative to lua/): each line
 * `--- @include "includes/<name>"` replaced by that file, itself expanded, as BullMQ does. A file
 * is pulled in once per script, at its first include (its functions are then defined once); a
 * later include of it adds nothing. An include cycle or a missing file is an error naming the
 * chain of files that led to it. Deterministic, so the result's SHA-1 can be pinned.
 */
export function expandIncludes(path: string, source: LuaSource): string {
  const included = new Set<string>();
  const expand = (file: string, chain: readonly string[]): string => {
    const text = source(file);
    if (text === undefined) {
      throw new Error(
        chain.length === 0
          ? `lua/${file}: no such file`
          : `lua/${chain[chain.length - 1]}: includes lua/${file}, which does not exist (${[...chain, file].join(' → ')})`,
      );
    }
    included.add(file);
    const here = [...chain, file];
    return text
      .split('\n')
      .map((line, index) => {
        if (!INCLUDE_LIKE.test(line)) return line;
        const where = `lua/${file}:${index + 1}`;
        const target = INCLUDE.exec(line)?.[1];
        if (target === undefined) {
          throw new Error(`${where}: an include must read --- @include "includes/<name>"`);
        }
        const resolved = includePath(target);
        if (resolved === undefined) throw new Error(`${where}: "${target}" is outside lua/`);
        if (here.includes(resolved)) {
          throw new Error(`${where}: include cycle ${[...here, resolved].join(' → ')}`);
        }
        if (included.has(resolved)) return undefined;
        // The included text, without its last newline: the line it replaces keeps its own.
        return expand(resolved, here).replace(/\n$/, '');
      })
      .filter((line): line is string => line !== undefined)
      .join('\n');
  };
  return expand(path, []);
}
