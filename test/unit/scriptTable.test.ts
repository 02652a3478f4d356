import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { LUA_DIR, loadScripts } from '../../src/redis/scripts';
import {
  resultDecoder,
  SCRIPTS,
  type ScriptName,
  type ScriptSpec,
} from '../../src/redis/scriptTable';

const scripts = loadScripts();

describe('the script table', () => {
  const entries = Object.entries(SCRIPTS) as [ScriptName, ScriptSpec][];

  test.each(entries)(
    '%s: the header of its file states every KEYS and ARGV it lists',
    (_, spec) => {
      const text = readFileSync(join(LUA_DIR, spec.file), 'utf8');
      expect(text.startsWith('--[[')).toBe(true);
      const header = text.slice(0, text.indexOf(']]'));
      spec.keys.forEach((_key, i) => expect(header).toContain(`KEYS[${i + 1}]`));
      spec.argv.forEach((_arg, i) => expect(header).toContain(`ARGV[${i + 1}]`));
      expect(header).toMatch(/Returns/);
    },
  );

  test('registers each script under its versioned command, with the keys its file name states', () => {
    expect(
      scripts
        .map(({ command, numberOfKeys }) => ({ command, numberOfKeys }))
        .sort((a, b) => a.command.localeCompare(b.command)),
    ).toEqual([
      { command: 'createKeyV1', numberOfKeys: 5 },
      { command: 'deleteKeyV1', numberOfKeys: 4 },
      { command: 'ensureNamespaceV1', numberOfKeys: 2 },
      { command: 'importKeysV1', numberOfKeys: undefined },
      { command: 'setOverrideV1', numberOfKeys: 3 },
      { command: 'tokenBucketV1', numberOfKeys: 2 },
      { command: 'tombstoneApiV1', numberOfKeys: 2 },
      { command: 'updateCreditsV1', numberOfKeys: 1 },
      { command: 'updateKeyV1', numberOfKeys: 3 },
    ]);
  });

  test('refuses to load when lua/ holds a script the table does not list', () => {
    const dir = mkdtempSync(join(tmpdir(), 'keyward-lua-'));
    try {
      cpSync(LUA_DIR, dir, { recursive: true });
      writeFileSync(join(dir, 'stray-1.lua'), 'return 1\n');
      expect(() => loadScripts(dir)).toThrow('lua/: stray-1.lua not in src/redis/scriptTable.ts');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('resultDecoder', () => {
  test('maps each code to its outcome', () => {
    const tokenBucket = resultDecoder('tokenBucket');
    expect([0, 1, 2].map(tokenBucket)).toEqual(['refused', 'admitted', 'out_of_credits']);
    const deleteKey = resultDecoder('deleteKey');
    expect([1, -1, -2].map(deleteKey)).toEqual(['deleted', 'not_found', 'version_moved']);
    expect(resultDecoder('setOverride')('')).toBe('namespace_not_found');
  });

  test('a script that answers values: undefined for a value', () => {
    expect(resultDecoder('createKey')(7)).toBeUndefined();
    expect(resultDecoder('createKey')(-2)).toBe('hash_exists');
    expect(resultDecoder('updateCredits')(0)).toBeUndefined();
    expect(resultDecoder('setOverride')('ovr_1')).toBeUndefined();
  });

  test('a code a codes-only script cannot answer is a broken contract', () => {
    expect(() => resultDecoder('tokenBucket')(3)).toThrow(
      'tokenBucketV1: result code 3 is not in its table',
    );
    expect(() => resultDecoder('tombstoneApi')(-2)).toThrow('tombstoneApiV1');
  });
});
