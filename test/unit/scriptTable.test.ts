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

/**
 * The SHA-1 of every script as sent to Redis (includes expanded). During a rolling upgrade old and
 * new nodes share one Redis, each running the script text it shipped with on the same keys; a
 * script that changes must do so on purpose, writing only what the previous release's scripts
 * still read correctly. Change a pin only together with the script change it stands for.
 */
const PINNED_SHA1: Record<ScriptName, string> = {
  tokenBucket: '2fecdd73e35d1aae6b7328dc2f28c134fa252eaa',
  multiBucket: '44a2c96f80400187b1696270d666a5757a40af30',
  updateCredits: 'a1fea2d1e024cc3e82b6f626d4728c22b9d6a634',
  createKey: 'e29883a98ec1967abb50417dbca60616a0aa6a81',
  importKeys: 'bec9a85cfdef6f6db36dd7ca504776f00ac87dec',
  updateKey: 'd329bd3d4f69fdcb173f4389bc2b0f80e7699c1d',
  rerollKey: '7a9d47fb44961455014d9854676b267d07e873d5',
  deleteKey: '333cf262d8b182f0960e27be281d9de55db5d621',
  tombstoneApi: 'c7fc6c9bb64d37baec9a87f3b0595d6abfb0f23e',
  ensureNamespace: '253721fd84c089f96f30fd4721b599695a437d8e',
  setOverride: 'd87513a82ed3fe011367eab83f7e4a5d9aad73f6',
  createRbacEntry: '727c2b192beb0a7ee63b0a5d2741d6ac122c0537',
  deleteRbacEntry: '5df032f80c81fff2d05c59578cc4f98c55bc70f6',
  ensureIdentity: '8d8bc9984512cd06485964a022713fd02fc772aa',
  updateIdentity: '26f7fe8806ac6fa22c545bf685a185fe139cd4cd',
  deleteIdentity: '99dd79be405e4ca1c0ee51a04e85a98452359029',
};

const scripts = loadScripts();

describe('pinned script SHA-1s', () => {
  test.each(scripts.map((script) => [script.name, script] as const))('%s', (name, script) => {
    const pinned = PINNED_SHA1[name];
    if (script.sha1 !== pinned) {
      throw new Error(
        `lua/${SCRIPTS[name].file} (with its includes) now has SHA-1 ${script.sha1}, pinned ` +
          `${pinned}. Nodes of the previous release keep running the old text on the same Redis ` +
          'and keys: if the change is meant, check that they still read what it writes, then ' +
          'update PINNED_SHA1 in test/unit/scriptTable.test.ts deliberately.',
      );
    }
  });

  test('every script of the table has a pin, and only those', () => {
    expect(Object.keys(PINNED_SHA1).sort()).toEqual(Object.keys(SCRIPTS).sort());
  });
});

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
      { command: 'createRbacEntryV1', numberOfKeys: 3 },
      { command: 'deleteIdentityV1', numberOfKeys: 3 },
      { command: 'deleteKeyV1', numberOfKeys: 4 },
      { command: 'deleteRbacEntryV1', numberOfKeys: 3 },
      { command: 'ensureIdentityV1', numberOfKeys: 3 },
      { command: 'ensureNamespaceV1', numberOfKeys: 2 },
      { command: 'importKeysV1', numberOfKeys: undefined },
      { command: 'multiBucketV1', numberOfKeys: undefined },
      { command: 'rerollKeyV1', numberOfKeys: 10 },
      { command: 'setOverrideV1', numberOfKeys: 3 },
      { command: 'tokenBucketV1', numberOfKeys: 2 },
      { command: 'tombstoneApiV1', numberOfKeys: 2 },
      { command: 'updateCreditsV1', numberOfKeys: 1 },
      { command: 'updateIdentityV1', numberOfKeys: 1 },
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
    expect([1, -1, -2, -3, -4].map(resultDecoder('rerollKey'))).toEqual([
      'rerolled',
      'not_found',
      'version_moved',
      'api_not_found',
      'hash_exists',
    ]);
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
