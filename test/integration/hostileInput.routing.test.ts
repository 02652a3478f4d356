import fc from 'fast-check';
import { diffKeyspace, dumpKeyspace } from '../support/keyspace';
import { rawExchange, statusOf } from '../support/rawHttp';
import { expectErrorEnvelope, expectSecurityHeaders, header } from '../support/envelope';
import { ALL_PATHS } from '../support/hostileOperations';
import {
  auth,
  base,
  primary,
  printable,
  property,
  rejectedWith,
  useHostileTarget,
} from '../support/hostileTarget';

/**
 * Hostile input, paths and methods: known paths with other methods, odd paths, requests the HTTP
 * parser itself refuses.
 * What every answer must hold, and the node they are sent to: test/support/hostileTarget.ts.
 */
useHostileTarget();

describe('routing', () => {
  test('a known path with another method is 405 with Allow, before authentication', async () => {
    const wires = fc
      .tuple(
        fc.constantFrom(...ALL_PATHS),
        fc.constantFrom(
          'PUT',
          'DELETE',
          'PATCH',
          'OPTIONS',
          'TRACE',
          'PROPFIND',
          'MKCOL',
          'LOCK',
          'GET',
          'POST',
          'HEAD',
        ),
        fc.constantFrom<Record<string, string>>({}, auth(), { authorization: 'Bearer nope' }),
      )
      .filter(([{ allow }, method]) => !allow.split(', ').includes(method))
      .map(([{ path, allow }, method, headers]) =>
        printable({ method, path, headers, label: `${method} where ${allow}`, echoes: [path] }),
      );
    await property(wires, (wire) => (response) => {
      expect(response.status).toBe(405);
      const allow = ALL_PATHS.find((p) => p.path === wire.path)!.allow;
      expect(header(response.headers, 'allow')).toBe(allow);
      if (wire.method === 'HEAD') expectSecurityHeaders(response.headers);
      else expectErrorEnvelope(405, response.headers, response.text);
    });
  });

  test('odd paths are 404 in the envelope', async () => {
    const routeNames = new Set(ALL_PATHS.map((p) => p.path));
    const odd = fc
      .oneof(
        fc
          .string({ unit: fc.constantFrom(...'abcXYZ019._-~:@!$'.split('')), maxLength: 40 })
          .map((s) => `/v1/${s}`),
        fc.constantFrom(...ALL_PATHS).chain(({ path }) =>
          fc.constantFrom(
            path.toUpperCase(),
            `${path}/`,
            `/${path}`,
            path.replace('/v1/', '/v1//'),
            path.replace('/v1/', '/V1/'),
            // /v2/ is the v2 dialect's, with its own envelope (v2Dialect.test.ts).
            path.replace('/v1/', '/v3/'),
            path.replace('/v1/', '/v1/../v1/'),
            path.replace('/v1/', '/v1/./'),
            `${path}/..`,
            `${path}.json`,
            `${path};x`,
            `${path}%00`,
            `${path}%`,
            path.replace('.', '%2E'),
            path.replace('/v1/', '/v1/%2e%2e/v1/'),
            path.slice(0, -1),
          ),
        ),
        // `/` is a page (it leads to the dashboard): operability.test.ts.
        fc.constantFrom(
          '//',
          '/v1',
          '/v1/',
          '/v1/%',
          '/v1/%zz',
          '/v1/%E0%A4%A',
          `/v1/${'a'.repeat(8000)}`,
        ),
      )
      // A mangling can leave a path as it was (no '.' in /v1/liveness to escape): that is a route.
      .filter((path) => !routeNames.has(path));
    const wires = fc
      .tuple(odd, fc.constantFrom('GET', 'POST'), fc.boolean())
      .map(([path, method, authenticated]) =>
        printable({
          method,
          path,
          headers: authenticated ? { ...auth(), 'content-type': 'application/json' } : {},
          ...(method === 'POST' ? { body: '{}' } : {}),
          label: 'odd path',
          echoes: [path.slice(0, 128)],
        }),
      );
    await property(wires, (wire) => rejectedWith(404, wire.echoes));
  });

  test('what the HTTP parser itself refuses still gets a 4xx answer, not a hang', async () => {
    // These never reach keyward's middleware: Node answers them, without the envelope.
    const requests = [
      'FOO /v1/liveness HTTP/1.1\r\nHost: x\r\n\r\n',
      'GET /v1/liveness HTTP/9.9\r\nHost: x\r\n\r\n',
      'GET /v1/\u00e9 HTTP/1.1\r\nHost: x\r\n\r\n',
      'GET /v1/liveness HTTP/1.1\r\nHost: x\r\nContent-Length: -1\r\n\r\n',
      'POST /v1/apis.createApi HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\nContent-Length: 2\r\n\r\nxx',
      `GET /v1/liveness HTTP/1.1\r\nHost: x\r\nX-Big: ${'x'.repeat(20_000)}\r\n\r\n`,
      `GET /v1/apis.getApi?apiId=${'x'.repeat(20_000)} HTTP/1.1\r\nHost: x\r\n\r\n`,
      'GET /v1/liveness HTTP/1.1\r\nHost: x\r\nBad Header: y\r\n\r\n',
    ];
    const before = await dumpKeyspace(primary);
    for (const request of requests) {
      const status = statusOf(await rawExchange(base, Buffer.from(request, 'latin1')));
      expect([request.slice(0, 60), status >= 400 && status < 500]).toEqual([
        request.slice(0, 60),
        true,
      ]);
    }
    expect(diffKeyspace(before, await dumpKeyspace(primary))).toEqual([]);
  });
});
