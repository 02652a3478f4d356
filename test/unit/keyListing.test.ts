import {
  KEY_LISTING_SHARDS,
  listingIndex,
  listingIndexes,
  listingShard,
} from '../../src/store/keyListing';
import { identityListingIndex, identityListingIndexes } from '../../src/store/identityStore';
import { names } from '../../src/store/names';

test('the shard of a key never changes: a listing entry is found where it was written', () => {
  expect(['key_1', 'key_b', 'key_c', 'key_1ChRzEihw23L7oBsYeWPTg'].map(listingShard)).toEqual([
    14, 0, 6, 8,
  ]);
  expect(listingIndex('api_1', 'key_1')).toBe(names.apiKeyShard('api_1', 14));
});

test('an API has one listing index per shard, each its own name', () => {
  const indexes = listingIndexes('api_1');
  expect(indexes).toHaveLength(KEY_LISTING_SHARDS);
  expect(new Set(indexes).size).toBe(KEY_LISTING_SHARDS);
  expect(indexes[8]).toBe('keyward:apikeys:{api_1.8fd}');
});

test("an identity's listing shard is pinned the same way, per workspace", () => {
  // The ids of docs/redis.md's redis-cli sessions, in the shards shown there.
  expect(identityListingIndex('ws_1ChNg3drU4Yqjg1MnGg19t', 'id_1ChNg3dyEF654HEaNsCvB1')).toBe(
    'keyward:identities:{ws_1ChNg3drU4Yqjg1MnGg19t.8fd}',
  );
  expect(identityListingIndex('ws_1ChNg3drU4Yqjg1MnGg19t', 'id_1ChNg3e2q1bEcQ9obHbBGj')).toBe(
    'keyward:identities:{ws_1ChNg3drU4Yqjg1MnGg19t.4db}',
  );
  const indexes = identityListingIndexes('ws_1');
  expect(new Set(indexes).size).toBe(KEY_LISTING_SHARDS);
  expect(indexes).toContain(identityListingIndex('ws_1', 'id_1'));
});
