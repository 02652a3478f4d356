import fc from 'fast-check';
import { expectSecurityHeaders } from '../support/envelope';
import { KNOWN_FIELDS } from '../support/hostile';
import { getOperations, queryText } from '../support/hostileOperations';
import {
  RUNS,
  getWire,
  printable,
  property,
  rejectedWith,
  useHostileTarget,
} from '../support/hostileTarget';

/**
 * Hostile input, GET queries: broken, missing and repeated parameters; and liveness, whatever it is
 * sent.
 * What every answer must hold, and the node they are sent to: test/support/hostileTarget.ts.
 */
useHostileTarget();

describe('GET queries', () => {
  // A GET without parameters (listPermissions, listRoles) has nothing to break.
  const withParameters = getOperations.filter((op) => Object.keys(op.breakers()).length > 0);
  test.each(withParameters.map((op) => [op.name, op]))(
    '%s: a broken, missing or repeated parameter is 400 and writes nothing',
    async (_, op) => {
      const baseEntries = op.base();
      const breakers = op.breakers();
      const extras = fc.array(
        fc.tuple(
          fc.string({ maxLength: 10 }).filter((name) => !KNOWN_FIELDS.has(name) && name !== ''),
          fc.string({ maxLength: 20 }),
        ),
        { maxLength: 3 },
      );
      const broken = fc
        .constantFrom(...Object.keys(breakers))
        .chain((field) => fc.tuple(fc.constant(field), breakers[field]!, extras))
        .map(([field, bad, extra]) =>
          getWire(
            op.name,
            queryText([...baseEntries.filter(([name]) => name !== field), ...extra, [field, bad]]),
            `${field}=${bad.slice(0, 40)}`,
          ),
        );
      // apis.listApis has no required parameter: nothing to leave out.
      const missing = fc
        .tuple(fc.constantFrom(...(op.required.length > 0 ? op.required : [''])), extras)
        .filter(([field]) => field !== '')
        .map(([field, extra]) =>
          getWire(
            op.name,
            queryText([...baseEntries.filter(([name]) => name !== field), ...extra]),
            `without ${field}`,
          ),
        );
      const repeated = fc
        .tuple(fc.constantFrom(...baseEntries), fc.string({ maxLength: 10 }))
        .map(([[name], second]) =>
          getWire(op.name, queryText([...baseEntries, [name, second]]), `${name} twice`),
        );
      const field = op.required[0];
      const odd = fc.constantFrom(
        ...(field === undefined
          ? ['limit=1&limit', 'limit=1&limit=1', 'limit']
          : [
              field,
              `${field}[]=x`,
              `${field}[0]=x`,
              `${field.toUpperCase()}=x`,
              `${field}%00=x`,
              '=x',
              '&&&',
              `${field}=a&${field}`,
              `${field}=a&${field}=a`,
            ]),
      );
      await property(
        fc.oneof(
          broken,
          ...(op.required.length > 0 ? [missing] : []),
          repeated,
          odd.map((q) => getWire(op.name, q, `query ${q}`)),
        ),
        () => rejectedWith(400),
        RUNS * 2,
      );
    },
  );
});

describe('liveness', () => {
  test('ignores whatever query, headers and body it is sent', async () => {
    const wires = fc
      .tuple(
        fc.array(
          fc.tuple(fc.string({ maxLength: 10 }), fc.string({ unit: 'binary', maxLength: 40 })),
          { maxLength: 4 },
        ),
        fc.constantFrom<Record<string, string>>(
          {},
          { authorization: 'Bearer nope' },
          { 'content-type': 'text/plain' },
        ),
        fc.constantFrom('GET', 'HEAD'),
      )
      .map(([entries, headers, method]) =>
        printable({
          method,
          path: `/v1/liveness?${queryText(entries)}`,
          headers,
          label: 'liveness',
        }),
      );
    await property(wires, (wire) => (response) => {
      expect(response.status).toBe(200);
      expectSecurityHeaders(response.headers);
      if (wire.method === 'GET')
        expect((JSON.parse(response.text) as { status: string }).status).toBe('ok');
    });
  });
});
