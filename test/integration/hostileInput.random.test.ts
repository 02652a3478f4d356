import fc from 'fast-check';
import { expectSecurityHeaders } from '../support/envelope';
import { LIMIT_MAX, badPermissionQuery, json } from '../support/hostile';
import { getOperations, postOperations, queryText } from '../support/hostileOperations';
import {
  RUNS,
  fixture,
  getWire,
  post,
  property,
  rejectedWith,
  sendWithoutWrites,
  useHostileTarget,
} from '../support/hostileTarget';

/**
 * Hostile input, anything at all: random JSON and random queries to any operation, prototype
 * pollution, verifyKey bodies that name no key.
 * What every answer must hold, and the node they are sent to: test/support/hostileTarget.ts.
 */
useHostileTarget();

describe('verifyKey', () => {
  test('a malformed permission query is 400 whether or not the key exists', async () => {
    // Regression: the query used to be judged only for a live key, so an unknown key hid a
    // malformed query behind NOT_FOUND; it is 400 whatever the key's state.
    const wires = fc
      .tuple(badPermissionQuery(), fc.constantFrom('unknown-key', fixture.key))
      .map(([query, key]) =>
        post(
          'keys.verifyKey',
          `{"key":${json(key)},"authorization":{"permissions":${query}}}`,
          `${key === fixture.key ? 'live' : 'unknown'} key, query ${query.slice(0, 40)}`,
        ),
      );
    await property(wires, () => rejectedWith(400));
  });

  test('well-formed bodies with unknown keys get a verdict, never an error, and write nothing', async () => {
    const bodies = fc
      .record(
        {
          key: fc.string({ unit: 'binary', minLength: 1, maxLength: 512 }),
          apiId: fc.string({ minLength: 1, maxLength: 64 }),
          ratelimit: fc.record({ cost: fc.integer({ min: 0, max: LIMIT_MAX }) }),
          remaining: fc.record({ cost: fc.integer({ min: 0, max: LIMIT_MAX }) }),
        },
        { requiredKeys: ['key'] },
      )
      .filter((body) => body.key !== fixture.key)
      .map((body) => post('keys.verifyKey', json(body), 'unknown key'));
    await property(bodies, () => (response) => {
      expect(response.status).toBe(200);
      expectSecurityHeaders(response.headers);
      const verdict = JSON.parse(response.text) as { valid: boolean; code: string };
      expect(verdict.valid).toBe(false);
      // apiId names an API this root key may verify but that does not hold the key.
      expect(['NOT_FOUND']).toContain(verdict.code);
    });
  });
});

describe('anything at all', () => {
  test('random JSON to any operation is answered, never with a 5xx, and changes nothing', async () => {
    const wires = fc
      .tuple(fc.constantFrom(...postOperations), fc.jsonValue({ maxDepth: 4 }))
      // A createApi with a string name would be valid; every other shape of it is not.
      .filter(
        ([op, value]) =>
          !(
            op.name === 'apis.createApi' &&
            typeof value === 'object' &&
            value !== null &&
            'name' in value
          ),
      )
      .map(([op, value]) => post(op.name, json(value), 'random JSON'));
    await property(
      wires,
      (wire) => (response) => {
        if (wire.path.endsWith('keys.verifyKey') && response.status === 200) {
          expect((JSON.parse(response.text) as { code: string }).code).toBe('NOT_FOUND');
          expectSecurityHeaders(response.headers);
        } else rejectedWith()(response);
      },
      RUNS * 2,
    );
  });

  test('random queries to any read are answered, never with a 5xx, and change nothing', async () => {
    const wires = fc
      .tuple(
        fc.constantFrom(...getOperations),
        fc.array(
          fc.tuple(
            fc.constantFrom(
              'apiId',
              'keyId',
              'limit',
              'cursor',
              'ownerId',
              'externalId',
              'namespaceId',
              'namespaceName',
              'identifier',
              'x',
            ),
            fc.string({ unit: 'binary', maxLength: 70 }),
          ),
          { maxLength: 5 },
        ),
      )
      .map(([op, entries]) => {
        const query = queryText(entries);
        return getWire(
          op.name,
          query,
          'random query',
          entries.map(([, value]) => value),
        );
      });
    await property(
      wires,
      (wire) => (response) => {
        // apis.listApis takes no required parameter: a random query can be a valid read.
        if (response.status === 200) expectSecurityHeaders(response.headers);
        else rejectedWith(undefined, wire.echoes)(response);
      },
      RUNS * 2,
    );
  });

  test('__proto__ and constructor in bodies pollute nothing', async () => {
    const polluting = [
      '{"__proto__":{"polluted":1},"name":5}',
      '{"constructor":{"prototype":{"polluted":1}},"name":5}',
      `{"apiId":${json(fixture.apiId)},"meta":{"__proto__":{"polluted":1},"a":{"__proto__":{"polluted":1}}},"byteLength":1}`,
    ];
    for (const body of polluting) {
      for (const op of ['apis.createApi', 'keys.createKey', 'keys.updateKey'])
        await sendWithoutWrites(post(op, body, 'prototype pollution'), rejectedWith(400));
    }
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.prototype.hasOwnProperty.call(Object.prototype, 'polluted')).toBe(false);
  });
});
