import { names } from '../../src/store/names';
import { OVERRIDE_SHARDS, overrideShard } from '../../src/store/ratelimitStore';

test("an identifier's shard never changes: an override is found where it was written", () => {
  expect(['user_1', 'user_*', 'customer_42', 'a'].map(overrideShard)).toEqual([0, 12, 11, 3]);
  expect(names.overrides('rlns_1', overrideShard('user_*'))).toBe('keyward:overrides:{rlns_1.cbc}');
  expect(names.overrideOrder('rlns_1', 0)).toBe('keyward:overrides:{rlns_1.0aa}:order');
  // The shard's audit outbox shares its tag, so its scripts stay in one slot.
  expect(names.auditOutbox(names.overrideTag('rlns_1', 0))).toBe(
    'keyward:audit-outbox:{rlns_1.0aa}',
  );
});

test('a namespace has one shard per tag, each its own name', () => {
  const shards = Array.from({ length: OVERRIDE_SHARDS }, (_, shard) =>
    names.overrides('rlns_1', shard),
  );
  expect(new Set(shards).size).toBe(OVERRIDE_SHARDS);
});

test('a namespace is named by workspace and name, its id entry by id', () => {
  expect(names.namespace('ws_1', 'email.outbound')).toBe('keyward:rlns:{ws_1:email.outbound}');
  expect(names.namespaceName('ws_1', 'rlns_1')).toBe('keyward:rlnsid:{rlns_1}:ws_1');
  // A `}` ends the tag early, but the name still runs to the end: two names, two keys.
  expect(names.namespace('ws_1', 'a}b')).not.toBe(names.namespace('ws_1', 'a}c'));
});
