import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expandIncludes, luaFolder, type LuaSource } from '../../src/redis/luaIncludes';

/** A lua/ folder in memory: path relative to lua/ → text. */
const files =
  (tree: Record<string, string>): LuaSource =>
  (path) =>
    tree[path];

describe('expandIncludes', () => {
  test('replaces an include line with the file, resolved relative to lua/ with .lua added', () => {
    const source = files({
      'script-1.lua': '-- header\n--- @include "includes/a"\n\nreturn a()\n',
      'includes/a.lua': 'local function a()\n  return 1\nend\n',
    });
    expect(expandIncludes('script-1.lua', source)).toBe(
      '-- header\nlocal function a()\n  return 1\nend\n\nreturn a()\n',
    );
  });

  test('the path may name the .lua file itself', () => {
    const source = files({
      's-1.lua': '--- @include "includes/a.lua"\n',
      'includes/a.lua': 'A\n',
    });
    expect(expandIncludes('s-1.lua', source)).toBe('A\n');
  });

  test('expands includes of includes, each file once, at its first include', () => {
    const source = files({
      's-1.lua': '--- @include "includes/a"\n--- @include "includes/b"\nbody\n',
      'includes/a.lua': '--- @include "includes/common"\nA\n',
      'includes/b.lua': '--- @include "includes/common"\nB\n',
      'includes/common.lua': 'C\n',
    });
    expect(expandIncludes('s-1.lua', source)).toBe('C\nA\nB\nbody\n');
  });

  test('the same include twice in one file is pulled in once', () => {
    const source = files({
      's-1.lua': '--- @include "includes/a"\n--- @include "includes/a"\nbody',
      'includes/a.lua': 'A',
    });
    expect(expandIncludes('s-1.lua', source)).toBe('A\nbody');
  });

  test('leaves a file without includes byte for byte as it is', () => {
    const text = '--[[\n  a script\n]]\r\nreturn 1 -- @include in a comment is not one\n';
    expect(expandIncludes('s-1.lua', files({ 's-1.lua': text }))).toBe(text);
  });

  test('refuses a missing include, naming the file and the chain', () => {
    const source = files({
      's-1.lua': '--- @include "includes/a"\n',
      'includes/a.lua': '--- @include "includes/gone"\n',
    });
    expect(() => expandIncludes('s-1.lua', source)).toThrow(
      'lua/includes/a.lua: includes lua/includes/gone.lua, which does not exist (s-1.lua → includes/a.lua → includes/gone.lua)',
    );
  });

  test('refuses a missing script', () => {
    expect(() => expandIncludes('s-1.lua', files({}))).toThrow('lua/s-1.lua: no such file');
  });

  test('refuses an include cycle, naming it', () => {
    const source = files({
      's-1.lua': '--- @include "includes/a"\n',
      'includes/a.lua': '--- @include "includes/b"\n',
      'includes/b.lua': 'B\n--- @include "includes/a"\n',
    });
    expect(() => expandIncludes('s-1.lua', source)).toThrow(
      'lua/includes/b.lua:2: include cycle s-1.lua → includes/a.lua → includes/b.lua → includes/a.lua',
    );
  });

  test('refuses a file that includes itself', () => {
    const source = files({ 'includes/a.lua': '--- @include "includes/a"\n' });
    expect(() => expandIncludes('includes/a.lua', source)).toThrow('include cycle');
  });

  test('refuses a misspelt include rather than leaving it as a comment', () => {
    const source = files({ 's-1.lua': "x\n--- @include 'includes/a'\n" });
    expect(() => expandIncludes('s-1.lua', source)).toThrow(
      'lua/s-1.lua:2: an include must read --- @include "includes/<name>"',
    );
  });

  test('refuses a path outside lua/', () => {
    const source = files({ 's-1.lua': '--- @include "../secret"\n', '../secret.lua': 'x' });
    expect(() => expandIncludes('s-1.lua', source)).toThrow(
      'lua/s-1.lua:1: "../secret" is outside lua/',
    );
  });

  test('luaFolder reads files below a folder and answers undefined for a missing one', () => {
    const dir = mkdtempSync(join(tmpdir(), 'keyward-lua-'));
    try {
      mkdirSync(join(dir, 'includes'));
      writeFileSync(join(dir, 'includes', 'a.lua'), 'A\n');
      writeFileSync(join(dir, 's-1.lua'), '--- @include "includes/a"\nreturn 1\n');
      expect(expandIncludes('s-1.lua', luaFolder(dir))).toBe('A\nreturn 1\n');
      expect(luaFolder(dir)('includes/none.lua')).toBeUndefined();
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
