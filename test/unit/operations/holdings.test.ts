import { memoizedHoldings } from '../../../src/operations/keys/holdings';
import type { RbacCatalogue } from '../../../src/store/rbacStore';

const catalogue = (extra: [string, string][] = []): RbacCatalogue => ({
  permissions: new Map([['perm_read', 'docs.read'], ['perm_write', 'docs.write'], ...extra]),
  roles: new Map([['role_editor', { name: 'editor', permissionIds: ['perm_write'] }]]),
});

describe('memoizedHoldings: worked out once per key and catalogue', () => {
  test('the same key and catalogue answer the same holdings, sorted', () => {
    const key = { permissionIds: ['perm_read'], roleIds: ['role_editor'] };
    const current = catalogue();
    const first = memoizedHoldings(key, current);
    expect(memoizedHoldings(key, current)).toBe(first);
    expect(first.effectiveSorted).toEqual(['docs.read', 'docs.write']);
    expect(first.roles).toEqual(['editor']);
  });

  test('a new catalogue (a permission or role changed) is worked out again', () => {
    const key = { permissionIds: ['perm_read', 'perm_new'] };
    const before = memoizedHoldings(key, catalogue());
    expect(before.permissions).toEqual(['docs.read']);
    const after = memoizedHoldings(key, catalogue([['perm_new', 'docs.new']]));
    expect(after).not.toBe(before);
    expect(after.permissions).toEqual(['docs.new', 'docs.read']);
  });

  test('another key object (the node cached a new copy) is worked out on its own', () => {
    const current = catalogue();
    const old = memoizedHoldings({ permissionIds: ['perm_read'] }, current);
    const renewed = memoizedHoldings({ permissionIds: ['perm_write'] }, current);
    expect([old.permissions, renewed.permissions]).toEqual([['docs.read'], ['docs.write']]);
  });
});
