import {
  KEY_LISTING_SHARDS,
  listingIndex,
  listingIndexes,
  listingShard,
} from '../../src/store/keyListing';
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
