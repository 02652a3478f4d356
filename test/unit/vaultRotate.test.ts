import { names } from '../../src/store/names';
import { keyIdOfRecord } from '../../src/store/vaultRotation';

/**
 * SCAN's `keyward:key:{*}` also matches what sits beside a key record (its permission and role
 * sets): only the records themselves are rotated.
 */
test('keyIdOfRecord: the id of a key record, and nothing else the pattern matches', () => {
  expect(keyIdOfRecord(names.key('key_abc'))).toBe('key_abc');
  expect(keyIdOfRecord(names.keyPermissions('key_abc'))).toBeUndefined();
  expect(keyIdOfRecord(names.keyRoles('key_abc'))).toBeUndefined();
  expect(keyIdOfRecord(names.key(''))).toBeUndefined();
  expect(keyIdOfRecord('keyward:key:{a}:x}')).toBeUndefined();
  expect(keyIdOfRecord(names.api('api_1'))).toBeUndefined();
});
