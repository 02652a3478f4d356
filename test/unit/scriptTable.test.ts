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
  tokenBucket: 'bef36fb498317527b9e5fd2ca976a88cfe769b5e',
  multiBucket: '97d065bbe119b494b2634aedf427d8ead67cad20',
  leaseGrant: '34a31295ec55137c52e1a8a2f630c730a1b561d2',
  leaseSpend: '1bcab469931e057f6178b1c5b8aaed72982e3c3c',
  leaseInstall: 'd5e0bbb9a3289b0991807391f1894053beb8c6b1',
  updateCredits: 'd46e64737fdd03ee2cea17721205e59c618fadca',
  putKey: 'bd492ae34ea59724e47c75ea4c6d065ff2086039',
  commitKey: '4e2029188cce337277fbe98a3ad6264e572af06d',
  discardPendingKey: '139cd11caddd656bc8edf6d7510003946e7509b1',
  nextKeySeq: '81e70e09bbf66410ec73de9421aaf9d8e67a0b01',
  updateKey: '287e441737838532e43d10b56fa9e9408b44fc6f',
  tombstoneKey: '1293232379177f7b872626b7386b00da330434e3',
  rewrapSealed: '6d3b6bf1941d413c90e898505056ce7907646172',
  dropLegacyKey: 'c9898b9cb03dc52a858cc8f4d7f327344d3a1d96',
  dropLegacyNamespace: '9088ea96d3cada20d78120f68d029d09e0d8a0fd',
  deleteIfEqual: 'e0b2c766f556bedfeb284723273b8b8513cc8b2e',
  queueWebhookEvent: 'd2230221cacd849b1fbda766f5b3b743b010a368',
  claimWebhookDeliveries: '688dfc500d3b216bece422f1acd198fb9e79f563',
  rewrapWebhookSecret: '949b38edffb67e8b3468f059f4b8c49302d157b5',
  touchKey: 'a5c88379959cdd10c51d8ee61e9bcd98cf212f7f',
  tombstoneApi: '011d213efd16f2eb6967de3571c30abf6c274bcd',
  ensureNamespace: '0ed6b0b486bd30d6d5c7948794f64e577031cba7',
  setOverride: '9bdc3d1dbc5166ed48ba3c0df8c2acf68470366c',
  deleteOverride: '310c4811011709d4ab70b81947b813373a111eef',
  putRecordWithMembers: '0024730999e2e87b151d470b7ec1ed63736d2485',
  releaseName: 'f144dfdb333d00d7387a61d6742fed228e3e6744',
  tombstoneRbacEntry: '16e31c75583fffa8c01b70fc7eca19269ba97322',
  setRolePermissions: 'cf65e8244a150ee60ed666a72e53119577370728',
  putRecord: '67fdf5d24d086622e34b7d0520111e4ac4e84ed9',
  commitIdentity: '62546bd22cf62a428b945db5e9649312f7519324',
  discardPendingIdentity: '5171544201ac0b1913a9c5449164aa9b2c988a87',
  updateIdentity: '6573f5e96c28693af32b7eb9c80956c755d7f938',
  renameIdentity: 'c5ec6a6da373e3af6d91c05a5237046661a85fe0',
  tombstoneIdentity: '2040f664bdfb9f88ec4b787ffd9206b8575a0ea2',
  dropLegacyIdentity: 'ed89c033e1856742152cb80e8e898748855bafdc',
  revokeRootKey: '924aeea4960dd72077cb660b7c021a25d715993b',
  relayAudit: '92c58e9c60f99311e56ecdf9ac343c5cd2e9896f',
  takeOutboxEntry: '6a0d6013ec8958d544e4a46fb04c234d38f10344',
  forgetAuditOutbox: 'd4a2e42f52e52ca442733f868204dfcb23b0b1d5',
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
      { command: 'claimWebhookDeliveriesV1', numberOfKeys: 2 },
      { command: 'commitIdentityV1', numberOfKeys: 2 },
      { command: 'commitKeyV1', numberOfKeys: 2 },
      { command: 'deleteIfEqualV1', numberOfKeys: 1 },
      { command: 'deleteOverrideV2', numberOfKeys: 3 },
      { command: 'discardPendingIdentityV1', numberOfKeys: 1 },
      { command: 'discardPendingKeyV1', numberOfKeys: 3 },
      { command: 'dropLegacyIdentityV1', numberOfKeys: 3 },
      { command: 'dropLegacyKeyV1', numberOfKeys: 6 },
      { command: 'dropLegacyNamespaceV1', numberOfKeys: 4 },
      { command: 'ensureNamespaceV2', numberOfKeys: 1 },
      { command: 'forgetAuditOutboxV1', numberOfKeys: 1 },
      { command: 'leaseGrantV1', numberOfKeys: 1 },
      { command: 'leaseInstallV1', numberOfKeys: 1 },
      { command: 'leaseSpendV1', numberOfKeys: 1 },
      { command: 'multiBucketV1', numberOfKeys: undefined },
      { command: 'nextKeySeqV2', numberOfKeys: 1 },
      { command: 'putKeyV1', numberOfKeys: 3 },
      { command: 'putRecordV1', numberOfKeys: 1 },
      { command: 'putRecordWithMembersV1', numberOfKeys: 2 },
      { command: 'queueWebhookEventV1', numberOfKeys: 3 },
      { command: 'relayAuditV1', numberOfKeys: 2 },
      { command: 'releaseNameV1', numberOfKeys: 1 },
      { command: 'renameIdentityV1', numberOfKeys: 2 },
      { command: 'revokeRootKeyV1', numberOfKeys: 2 },
      { command: 'rewrapSealedV1', numberOfKeys: 1 },
      { command: 'rewrapWebhookSecretV1', numberOfKeys: 1 },
      { command: 'setOverrideV3', numberOfKeys: 3 },
      { command: 'setRolePermissionsV1', numberOfKeys: 3 },
      { command: 'takeOutboxEntryV1', numberOfKeys: 1 },
      { command: 'tokenBucketV1', numberOfKeys: 2 },
      { command: 'tombstoneApiV3', numberOfKeys: 2 },
      { command: 'tombstoneIdentityV1', numberOfKeys: 2 },
      { command: 'tombstoneKeyV1', numberOfKeys: 5 },
      { command: 'tombstoneRbacEntryV1', numberOfKeys: 3 },
      { command: 'touchKeyV1', numberOfKeys: 2 },
      { command: 'updateCreditsV2', numberOfKeys: 2 },
      { command: 'updateIdentityV4', numberOfKeys: 3 },
      { command: 'updateKeyV3', numberOfKeys: 2 },
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
    const tombstoneKey = resultDecoder('tombstoneKey');
    expect([1, -1, -2].map(tombstoneKey)).toEqual(['deleted', 'not_found', 'version_moved']);
    expect(['0', '-1', '1795253180542-0'].map(resultDecoder('commitKey'))).toEqual([
      'committed_before',
      'gone',
      undefined,
    ]);
    expect([1, -1].map(resultDecoder('deleteOverride'))).toEqual(['deleted', 'not_found']);
  });

  test('a script that answers values: undefined for a value', () => {
    expect(resultDecoder('nextKeySeq')(7)).toBeUndefined();
    expect(resultDecoder('nextKeySeq')(-1)).toBe('api_not_found');
    expect(resultDecoder('updateCredits')(0)).toBeUndefined();
    expect(resultDecoder('setOverride')('ovr_1')).toBeUndefined();
  });

  test('a code a codes-only script cannot answer is a broken contract', () => {
    expect(() => resultDecoder('tokenBucket')(3)).toThrow(
      'tokenBucketV1: result code 3 is not in its table',
    );
    expect(() => resultDecoder('tombstoneApi')(-2)).toThrow('tombstoneApiV3');
  });
});
