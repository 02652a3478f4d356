import fc from 'fast-check';
import { allKeys } from '../support/keyspace';
import { client } from '../support/rpc';
import { rawRequest, type RawResponse } from '../support/rawHttp';
import { expectErrorEnvelope, expectSecurityHeaders, header } from '../support/envelope';
import { json } from '../support/hostile';
import { queryText } from '../support/hostileOperations';
import {
  base,
  fixture,
  getWire,
  post,
  primary,
  property,
  rejectedWith,
  rootKey,
  sendWithoutChanges,
  sendWithoutWrites,
  useHostileTarget,
  type Wire,
} from '../support/hostileTarget';

/**
 * Hostile input, ids and names: ids that do not exist, or that spell other Redis structures, and
 * namespace names that spell another namespace’s.
 * What every answer must hold, and the node they are sent to: test/support/hostileTarget.ts.
 */
useHostileTarget();

describe('ids that do not exist', () => {
  const unknownId = fc.oneof(
    fc.string({ unit: 'binary', minLength: 1, maxLength: 64 }),
    fc.string({ unit: 'grapheme-ascii', minLength: 1, maxLength: 64 }),
    fc.constantFrom(
      '*',
      '../',
      '%00',
      "' OR 1=1 --",
      '{ws}',
      'keyward:*',
      '\r\n',
      '\u0000',
      'api_',
      'key_',
    ),
    fc.stringMatching(/^(api|key)_[1-9A-HJ-NP-Za-km-z]{22}$/),
  );

  test('are 404 NOT_FOUND (verifyKey: the NOT_FOUND verdict) and write nothing', async () => {
    const wires = fc
      .tuple(
        fc.constantFrom(
          'apis.getApi',
          'apis.listKeys',
          'keys.getKey',
          'keys.getBucket',
          'keys.getVerifications',
          'keys.getRecentVerifications',
          'apis.deleteApi',
          'keys.createKey',
          'keys.updateKey',
          'keys.updateRemaining',
          'keys.deleteKey',
          'keys.rerollKey',
          'keys.verifyKey',
          'migrations.createKeys',
          'ratelimits.getOverride',
          'ratelimits.listOverrides',
          'ratelimits.getUsage',
          'ratelimits.setOverride',
          'ratelimits.deleteOverride',
          'identities.getIdentity',
          'identities.getIdentity by externalId',
          'identities.updateIdentity',
          'identities.deleteIdentity',
        ),
        unknownId,
      )
      .filter(
        ([, id]) =>
          ![fixture.apiId, fixture.keyId, fixture.key, fixture.identityId].includes(id) &&
          id !== fixture.identityExternalId,
      )
      .map(([operation, id]): Wire => {
        const echoes = [id];
        switch (operation) {
          case 'keys.verifyKey':
            return post(operation, json({ key: id }), 'unknown key');
          case 'apis.getApi':
          case 'apis.listKeys':
            return getWire(operation, queryText([['apiId', id]]), 'unknown apiId', echoes);
          case 'keys.getKey':
          case 'keys.getBucket':
          case 'keys.getVerifications':
          case 'keys.getRecentVerifications':
            return getWire(operation, queryText([['keyId', id]]), 'unknown keyId', echoes);
          case 'ratelimits.getOverride':
          case 'ratelimits.listOverrides':
          case 'ratelimits.getUsage':
            return getWire(
              operation,
              queryText([
                ['namespaceId', id],
                ['identifier', 'x'],
              ]),
              'unknown namespaceId',
              echoes,
            );
          case 'ratelimits.setOverride':
          case 'ratelimits.deleteOverride': {
            const body = { namespaceId: id, identifier: 'x', limit: 1, duration: 1000 };
            return { ...post(operation, json(body), 'unknown namespaceId'), echoes };
          }
          case 'migrations.createKeys': {
            const body = [{ apiId: id, plaintext: `unknown-api-${id}`, remaining: 5 }];
            return { ...post(operation, json(body), 'unknown apiId'), echoes };
          }
          case 'identities.getIdentity':
            return getWire(
              operation,
              queryText([['identityId', id]]),
              'unknown identityId',
              echoes,
            );
          case 'identities.getIdentity by externalId':
            return getWire(
              'identities.getIdentity',
              queryText([['externalId', id]]),
              'unknown externalId',
              echoes,
            );
          case 'identities.updateIdentity':
          case 'identities.deleteIdentity': {
            const body = { identityId: id, meta: { x: 1 } };
            return { ...post(operation, json(body), 'unknown identityId'), echoes };
          }
          case 'apis.deleteApi':
            return { ...post(operation, json({ apiId: id }), 'unknown apiId'), echoes };
          case 'keys.createKey':
            // With credits: they are written before the key and must be taken back.
            return {
              ...post(operation, json({ apiId: id, remaining: 5 }), 'unknown apiId'),
              echoes,
            };
          case 'keys.rerollKey':
            return {
              ...post(operation, json({ keyId: id, expiration: 0 }), 'unknown keyId'),
              echoes,
            };
          case 'keys.updateRemaining':
            return {
              ...post(operation, json({ keyId: id, op: 'set', value: 1 }), 'unknown keyId'),
              echoes,
            };
          default:
            return { ...post(operation, json({ keyId: id }), 'unknown keyId'), echoes };
        }
      });
    await property(wires, (wire) => (response) => {
      if (wire.path.endsWith('keys.verifyKey')) {
        expect(response.status).toBe(200);
        expectSecurityHeaders(response.headers);
        expect(JSON.parse(response.text)).toEqual({
          valid: false,
          code: 'NOT_FOUND',
          requestId: header(response.headers, 'x-request-id'),
        });
      } else rejectedWith(404, wire.echoes)(response);
    });
  });

  test('an id that names another Redis structure of the API is not found either', async () => {
    // Regression: an id like `<apiId>:keys` spelled the API's key index (a zset) and answered 500
    // (WRONGTYPE); ids that keyward cannot have made are now simply not found.
    const hostile = [`${fixture.apiId}:keys`, `${fixture.apiId}:owner:${fixture.ownerId}`];
    for (const apiId of hostile) {
      const check = rejectedWith(undefined, [apiId]);
      await sendWithoutWrites(
        getWire('apis.getApi', queryText([['apiId', apiId]]), 'zset id', [apiId]),
        check,
      );
      await sendWithoutWrites(
        getWire('apis.listKeys', queryText([['apiId', apiId]]), 'zset id', [apiId]),
        check,
      );
      await sendWithoutWrites(
        { ...post('keys.createKey', json({ apiId, remaining: 5 }), 'zset id'), echoes: [apiId] },
        check,
      );
      await sendWithoutWrites(
        { ...post('apis.deleteApi', json({ apiId }), 'zset id'), echoes: [apiId] },
        check,
      );
    }
  });
});

describe('rate-limit namespace names', () => {
  test('a name that spells another namespace’s Redis names changes nothing of it', async () => {
    // Found by this test: namespace names may contain ':', and while a namespace record was
    // `keyward:{ws}:rlns:<name>` and namespace <id>'s overrides `keyward:{ws}:rlns:<id>:overrides`,
    // POST /v1/ratelimits.limit {"namespace":"<id>:overrides",…} wrote `id`, `name`, `createdAt`
    // into that namespace's overrides hash, and its limit and getOverride answered 500 from then
    // on. Fixed in a98bd55 (names and ids under separate key words); kept as a regression test.
    const admin = client(base, rootKey);
    const set = await admin.post('ratelimits.setOverride', {
      namespaceName: 'victim',
      identifier: 'user_1',
      limit: 5,
      duration: 60_000,
    });
    expect(set.status).toBe(200);
    // The namespace's id, wherever the layout keeps it: the hash whose `name` is "victim".
    let victimId: string | null = null;
    for (const name of await allKeys(primary, 'keyward:*')) {
      if ((await primary.type(name)) !== 'hash') continue;
      if ((await primary.hget(name, 'name')) === 'victim')
        victimId = await primary.hget(name, 'id');
    }
    expect(victimId).toMatch(/^rlns_/);
    const answered = (response: RawResponse) => {
      expect(response.status).toBeLessThan(500);
      if (response.status >= 400)
        expectErrorEnvelope(response.status, response.headers, response.text, [victimId!]);
    };
    const spellings = [
      `${victimId}:overrides`,
      `${victimId}:overrides:order`,
      `${victimId}:order`,
      `id:${victimId}`,
      `id:${victimId}:overrides`,
      `id:${victimId}:order`,
      'name:victim',
      'victim}',
      `${victimId}.0aa}`,
    ];
    for (const name of spellings) {
      const wires: Wire[] = [
        post(
          'ratelimits.limit',
          json({ namespace: name, identifier: 'x', limit: 5, duration: 1000 }),
          name,
        ),
        post(
          'ratelimits.setOverride',
          json({ namespaceName: name, identifier: 'y', limit: 5, duration: 1000 }),
          name,
        ),
        getWire(
          'ratelimits.getOverride',
          queryText([
            ['namespaceName', name],
            ['identifier', 'name'],
          ]),
          name,
        ),
        getWire('ratelimits.listOverrides', queryText([['namespaceName', name]]), name),
        post(
          'ratelimits.deleteOverride',
          json({ namespaceName: name, identifier: 'user_1' }),
          name,
        ),
      ];
      for (const wire of wires) await sendWithoutChanges(wire, answered);
    }
    // The victim namespace still answers.
    const limited = await rawRequest(
      base,
      post(
        'ratelimits.limit',
        json({ namespace: 'victim', identifier: 'user_1', limit: 9, duration: 1000 }),
        'victim',
      ),
    );
    expect(limited.status).toBe(200);
    const got = await rawRequest(
      base,
      getWire(
        'ratelimits.getOverride',
        queryText([
          ['namespaceName', 'victim'],
          ['identifier', 'user_1'],
        ]),
        'victim',
      ),
    );
    expect(got.status).toBe(200);
  });
});
