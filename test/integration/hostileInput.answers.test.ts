import { client } from '../support/rpc';
import { rawRequest, type RawResponse } from '../support/rawHttp';
import { expectErrorEnvelope, expectSecurityHeaders } from '../support/envelope';
import { json } from '../support/hostile';
import { queryText } from '../support/hostileOperations';
import {
  MiB,
  base,
  fixture,
  getWire,
  post,
  rootKey,
  topology,
  useHostileTarget,
  type Wire,
} from '../support/hostileTarget';

/**
 * Hostile input, the answers themselves: every kind, from 200 to 429, and while the primary is
 * down.
 * What every answer must hold, and the node they are sent to: test/support/hostileTarget.ts.
 */
useHostileTarget();

describe('every kind of answer', () => {
  test('carries the security headers; errors carry the envelope and nothing internal', async () => {
    // A second node on the same Redis, allowed one management call per second: for a 429.
    const strict = await topology.addNode({
      localUrl: topology.locals[0]!.url,
      env: { KEYWARD_MANAGEMENT_RATE_LIMIT: '1' },
    });
    try {
      const limited = await topology.newRootKey({ workspaceId: topology.workspaceId });
      const scoped = await topology.newRootKey({
        workspaceId: topology.workspaceId,
        permissions: ['api.*.verify_key'],
      });
      const seen = new Map<number, string>();
      const check = async (label: string, send: () => Promise<RawResponse>, status: number) => {
        const response = await send();
        expect([label, response.status]).toEqual([label, status]);
        expectSecurityHeaders(response.headers);
        if (status >= 400) {
          expectErrorEnvelope(status, response.headers, response.text);
          expect(response.text).not.toMatch(/stack|\bat \S+:\d+/);
        }
        seen.set(status, label);
      };
      const valid = (operation: string, body: unknown) =>
        rawRequest(base, post(operation, json(body), operation));
      await check(
        'read',
        () => rawRequest(base, getWire('apis.getApi', queryText([['apiId', fixture.apiId]]), 'ok')),
        200,
      );
      await check('bad input', () => valid('apis.createApi', { name: '' }), 400);
      await check(
        'no root key',
        () => rawRequest(base, { method: 'GET', path: '/v1/apis.listApis', label: '401' } as Wire),
        401,
      );
      await check(
        'missing permission',
        () =>
          rawRequest(base, {
            ...post('apis.createApi', '{"name":"x"}', '403'),
            headers: { authorization: `Bearer ${scoped.key}`, 'content-type': 'application/json' },
          }),
        403,
      );
      await check('unknown id', () => valid('keys.deleteKey', { keyId: 'key_unknown' }), 404);
      await check(
        'wrong method',
        () => rawRequest(base, { method: 'PUT', path: '/v1/apis.createApi', label: '405' } as Wire),
        405,
      );
      await check(
        'a key twice in one import',
        () =>
          valid('migrations.createKeys', [
            { apiId: fixture.apiId, plaintext: 'twice-in-a-batch' },
            { apiId: fixture.apiId, plaintext: 'twice-in-a-batch' },
          ]),
        409,
      );
      const unlimited = await client(base, rootKey).post<{ keyId: string }>('keys.createKey', {
        apiId: fixture.apiId,
      });
      await check(
        'credits of a key without',
        () =>
          valid('keys.updateRemaining', { keyId: unlimited.body.keyId, op: 'increment', value: 1 }),
        412,
      );
      await check(
        'too large',
        () => valid('apis.createApi', { name: 'x', pad: 'x'.repeat(MiB) }),
        413,
      );
      await check(
        'not JSON',
        () =>
          rawRequest(
            base,
            post('apis.createApi', '{"name":"x"}', '415', { 'content-type': 'text/plain' }),
          ),
        415,
      );
      const strictly = (path: string) =>
        rawRequest(strict.url, {
          method: 'GET',
          path,
          headers: { authorization: `Bearer ${limited.key}` },
          label: '429',
        } as Wire);
      await strictly(`/v1/apis.getApi?apiId=${fixture.apiId}`);
      await check(
        'too many management calls',
        () => strictly(`/v1/apis.getApi?apiId=${fixture.apiId}`),
        429,
      );
      expect([...seen.keys()].sort()).toEqual([
        200, 400, 401, 403, 404, 405, 409, 412, 413, 415, 429,
      ]);
    } finally {
      await strict.close();
    }
  });
});

describe('when the primary is down', () => {
  // Last: it stops the primary. Answers are 503 in the envelope, without driver messages.
  test('management calls are 503 SERVICE_UNAVAILABLE without internals', async () => {
    await topology.primary.stop();
    try {
      const wires: Wire[] = [
        post('apis.createApi', '{"name":"x"}', 'primary down'),
        getWire('apis.getApi', queryText([['apiId', fixture.apiId]]), 'primary down'),
        post('keys.createKey', json({ apiId: fixture.apiId }), 'primary down'),
        getWire('keys.getKey', queryText([['keyId', fixture.keyId]]), 'primary down'),
      ];
      for (const wire of wires) {
        const response = await rawRequest(base, wire);
        expect(response.status).toBe(503);
        expectErrorEnvelope(503, response.headers, response.text);
      }
      const liveness = await rawRequest(base, { path: '/v1/liveness' });
      expect(liveness.status).toBe(503);
      expectSecurityHeaders(liveness.headers);
    } finally {
      await topology.primary.restart();
    }
  });
});
