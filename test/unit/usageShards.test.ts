import { randomBytes } from 'node:crypto';
import { USAGE_SHARDS, usageShard } from '../../src/domain/usage';
import { names } from '../../src/store/names';

/** Redis Cluster's key slot of a hash tag: CRC-16/XMODEM of its text, modulo 16384. */
function slotOf(tag: string): number {
  let crc = 0;
  for (const byte of Buffer.from(tag)) {
    crc ^= byte << 8;
    for (let i = 0; i < 8; i++) crc = crc & 0x8000 ? ((crc << 1) ^ 0x1021) & 0xffff : crc << 1;
  }
  return crc % 16384;
}

const randomId = (prefix: string) => `${prefix}_${randomBytes(11).toString('base64url')}`;

test('the slot function is Redis Cluster’s', () => {
  // CLUSTER KEYSLOT foo and somekey, as Redis answers them.
  expect(slotOf('foo')).toBe(12182);
  expect(slotOf('somekey')).toBe(11058);
});

test('the names of a usage shard', () => {
  expect(names.usageVerifications('ws_1', 'api_1', 3, 'minute', 60_000)).toBe(
    'keyward:usage:{ws_1:v:api_1:3ba}:minute:60000',
  );
  expect(names.usageLimits('ws_1', 'rlns_1', 15, 'day', 0)).toBe(
    'keyward:usage:{ws_1:rl:rlns_1:fad}:day:0',
  );
  expect(names.usageFlushed(names.usageTag('ws_1', 'v', '-', 0), 'node')).toBe(
    'keyward:usage:{ws_1:v:-:0aa}:flushed:node',
  );
  // The spans of a shard: the same tag, so one flush of the shard is one MULTI in one slot.
  expect(names.usageKeySpan('ws_1', 'api_1', 3, 'day', 0, 'key_1:id_1')).toBe(
    'keyward:usage:{ws_1:v:api_1:3ba}:h:0:key_1:id_1',
  );
  expect(names.usageKeySpan('ws_1', 'api_1', 3, 'month', 0, 'key_1:')).toBe(
    'keyward:usage:{ws_1:v:api_1:3ba}:d:0:key_1:',
  );
  expect(names.usageSubjects('ws_1', 'api_1', 3, 'day', 0)).toBe(
    'keyward:usage:{ws_1:v:api_1:3ba}:hk:0',
  );
  expect(names.usageSubjects('ws_1', 'api_1', 3, 'month', 0)).toBe(
    'keyward:usage:{ws_1:v:api_1:3ba}:dk:0',
  );
  expect(names.usageApiMinutes('ws_1', 'api_1', 3, 3_600_000)).toBe(
    'keyward:usage:{ws_1:v:api_1:3ba}:m:3600000',
  );
});

test('the shard of a subject never changes (counts already written are found by it)', () => {
  expect(['key_1', 'key_b', 'key_c', '', 'user@example.com'].map(usageShard)).toEqual([
    14, 0, 6, 0, 1,
  ]);
});

test('whatever the owner, its 16 shards fall in 16 different sixteenths of the slots', () => {
  for (let i = 0; i < 500; i++) {
    const ws = randomId('ws');
    const owner = i % 3 === 0 ? '-' : randomId(i % 3 === 1 ? 'api' : 'rlns');
    const scope = i % 3 === 2 ? 'rl' : 'v';
    const sixteenths = new Set<number>();
    for (let shard = 0; shard < USAGE_SHARDS; shard++) {
      sixteenths.add(slotOf(names.usageTag(ws, scope, owner, shard)) >> 10);
    }
    expect(sixteenths.size).toBe(16);
  }
});

test('so three masters holding even ranges get 5, 5 and 6 shards of any owner', () => {
  const masterOf = (slot: number) => (slot <= 5460 ? 0 : slot <= 10922 ? 1 : 2);
  for (let i = 0; i < 200; i++) {
    const ws = randomId('ws');
    const apiId = randomId('api');
    const perMaster = [0, 0, 0];
    for (let shard = 0; shard < USAGE_SHARDS; shard++) {
      perMaster[masterOf(slotOf(names.usageTag(ws, 'v', apiId, shard)))]! += 1;
    }
    expect(Math.max(...perMaster)).toBeLessThanOrEqual(6);
    expect(Math.min(...perMaster)).toBeGreaterThanOrEqual(4);
  }
});

test('an API’s key listing spreads the same way: its 16 shards in 16 sixteenths of the slots', () => {
  for (let i = 0; i < 500; i++) {
    const apiId = randomId('api');
    const sixteenths = new Set<number>();
    for (let shard = 0; shard < 16; shard++) {
      const tag = /\{(.*)\}/.exec(names.apiKeyShard(apiId, shard))![1]!;
      sixteenths.add(slotOf(tag) >> 10);
    }
    expect(sixteenths.size).toBe(16);
  }
});
