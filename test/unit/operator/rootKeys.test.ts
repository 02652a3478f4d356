import type { RootKeyRecord } from '../../../src/domain/records';
import { NotFoundError } from '../../../src/errors';
import { listRootKeys, revokeRootKey } from '../../../src/operations/rootKeys';
import type { RootKeyStore } from '../../../src/store/rootKeyStore';

const WS = 'ws_test';

class FakeRootKeys implements Pick<RootKeyStore, 'list' | 'revoke'> {
  readonly revoked: [string, string][] = [];
  constructor(private readonly records: RootKeyRecord[]) {}
  async list(ws: string): Promise<RootKeyRecord[]> {
    return this.records.filter((record) => record.workspaceId === ws);
  }
  async revoke(ws: string, rootKeyId: string): Promise<boolean> {
    const found = this.records.some((r) => r.workspaceId === ws && r.id === rootKeyId);
    if (found) this.revoked.push([ws, rootKeyId]);
    return found;
  }
}

describe('listRootKeys', () => {
  test('oldest first, ties by id; a name only when the key has one', async () => {
    const store = new FakeRootKeys([
      { id: 'rk_c', workspaceId: WS, permissions: ['*'], createdAt: 20, name: 'late' },
      { id: 'rk_b', workspaceId: WS, permissions: ['api.*.read_key'], createdAt: 10 },
      {
        id: 'rk_a',
        workspaceId: WS,
        permissions: ['api.*.verify_key', 'api.*.create_key'],
        createdAt: 10,
        name: 'ci',
      },
      { id: 'rk_z', workspaceId: 'ws_other', permissions: ['*'], createdAt: 1 },
    ]);
    const listed = await listRootKeys(store, WS);
    expect(listed).toEqual([
      {
        id: 'rk_a',
        name: 'ci',
        permissions: ['api.*.verify_key', 'api.*.create_key'],
        createdAt: 10,
      },
      { id: 'rk_b', permissions: ['api.*.read_key'], createdAt: 10 },
      { id: 'rk_c', name: 'late', permissions: ['*'], createdAt: 20 },
    ]);
    // The JSON output keeps the order of fields, and no `name` key for an unnamed root key.
    expect(JSON.stringify(listed[1])).toBe(
      '{"id":"rk_b","permissions":["api.*.read_key"],"createdAt":10}',
    );
  });

  test('a workspace without root keys lists none', async () => {
    expect(await listRootKeys(new FakeRootKeys([]), WS)).toEqual([]);
  });
});

describe('revokeRootKey', () => {
  const record: RootKeyRecord = { id: 'rk_a', workspaceId: WS, permissions: ['*'], createdAt: 1 };

  test('revokes the named key of the workspace', async () => {
    const store = new FakeRootKeys([record]);
    await expect(revokeRootKey(store, WS, 'rk_a')).resolves.toBeUndefined();
    expect(store.revoked).toEqual([[WS, 'rk_a']]);
  });

  test('an unknown id, or one of another workspace, is not found', async () => {
    const store = new FakeRootKeys([record]);
    const unknown = revokeRootKey(store, WS, 'rk_nope');
    await expect(unknown).rejects.toBeInstanceOf(NotFoundError);
    await expect(unknown).rejects.toThrow('root key rk_nope not found in ws_test');
    await expect(revokeRootKey(store, 'ws_other', 'rk_a')).rejects.toThrow(
      'root key rk_a not found in ws_other',
    );
    expect(store.revoked).toEqual([]);
  });
});
