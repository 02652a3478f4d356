import { invalidation, parseInvalidation } from '../../src/store/names';

describe('invalidation messages', () => {
  test('each kind reads back as what was written', () => {
    expect(parseInvalidation(invalidation.key('ws_1', 'h+/='))).toEqual({
      kind: 'key',
      workspaceId: 'ws_1',
      hash: 'h+/=',
      created: false,
    });
    expect(parseInvalidation(invalidation.keyCreated('ws_1', 'h+/='))).toEqual({
      kind: 'key',
      workspaceId: 'ws_1',
      hash: 'h+/=',
      created: true,
    });
    expect(parseInvalidation(invalidation.api('ws_1', 'api_1'))).toEqual({
      kind: 'api',
      workspaceId: 'ws_1',
      apiId: 'api_1',
    });
    expect(parseInvalidation(invalidation.rootKey('h'))).toEqual({ kind: 'root', hash: 'h' });
    expect(parseInvalidation(invalidation.namespace('ws_1', 'email'))).toEqual({
      kind: 'ns',
      workspaceId: 'ws_1',
      name: 'email',
    });
    expect(parseInvalidation(invalidation.rbac('ws_1'))).toEqual({
      kind: 'rbac',
      workspaceId: 'ws_1',
    });
    expect(parseInvalidation(invalidation.identity('ws_1', 'id_1'))).toEqual({
      kind: 'identity',
      workspaceId: 'ws_1',
      identityId: 'id_1',
    });
  });

  test('a "created" message is a plain key invalidation to a reader that ignores the last word', () => {
    // What a node of the previous version does with it during a rolling upgrade.
    const [kind, workspaceId, hash] = invalidation.keyCreated('ws_1', 'h').split(' ');
    expect([kind, workspaceId, hash]).toEqual(invalidation.key('ws_1', 'h').split(' '));
  });

  test('unknown or truncated messages are ignored', () => {
    expect(parseInvalidation('key ws_1')).toBeUndefined();
    expect(parseInvalidation('identity ws_1')).toBeUndefined();
    expect(parseInvalidation('bogus a b')).toBeUndefined();
    expect(parseInvalidation('')).toBeUndefined();
  });
});
