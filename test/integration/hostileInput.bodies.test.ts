import fc from 'fast-check';
import { operations as routes } from '../../src/operations/registry';
import { casesMismatch } from '../cases';
import { diffKeyspace, dumpKeyspace } from '../support/keyspace';
import { rawExchange, rawRequest, statusOf } from '../support/rawHttp';
import { expectSecurityHeaders } from '../support/envelope';
import {
  DEEP_JSON,
  INVALID_JSON,
  INVALID_UTF8,
  extraFields,
  json,
  objectText,
} from '../support/hostile';
import {
  bodyOf,
  getOperations,
  inputObject,
  postOperations,
  queryText,
} from '../support/hostileOperations';
import {
  MiB,
  RUNS,
  base,
  getWire,
  post,
  primary,
  printable,
  property,
  rejectedWith,
  rootKey,
  sendWithoutWrites,
  useHostileTarget,
} from '../support/hostileTarget';

/**
 * Hostile input, POST bodies: every field of every operation broken or left out, bodies that are
 * not JSON objects, other content types, oversized bodies.
 * What every answer must hold, and the node they are sent to: test/support/hostileTarget.ts.
 */
useHostileTarget();

test('every operation of src/operations/registry.ts is fuzzed here', () => {
  // Each operation of the registry has its valid input in its cases file (test/cases/), and no
  // cases file is left over.
  expect(casesMismatch()).toEqual({ withoutCases: [], withoutOperation: [] });
  // The split by method is the declared one.
  expect(postOperations.map((op) => op.name)).toEqual(
    routes.filter((route) => route.method === 'POST').map((route) => route.name),
  );
  expect(getOperations.map((op) => op.name)).toEqual(
    routes.filter((route) => route.method === 'GET').map((route) => route.name),
  );
  for (const op of [...postOperations, ...getOperations]) {
    const route = routes.find((candidate) => candidate.name === op.name)!;
    const declared = inputObject(route);
    // Every declared field is broken (breakers() throws, naming it, for one it cannot break), and
    // the fields left out are the declared required ones, plus any the operation's check requires.
    const breakers = op.breakers();
    expect([op.name, Object.keys(declared.properties).filter((f) => !(f in breakers))]).toEqual([
      op.name,
      [],
    ]);
    expect([op.name, declared.required.filter((f) => !op.required.includes(f))]).toEqual([
      op.name,
      [],
    ]);
    // The valid input names only declared fields, and every required one.
    const given = op.base().map(([name]) => name);
    expect([op.name, given.filter((f) => !(f in declared.properties))]).toEqual([op.name, []]);
    expect([op.name, op.required.filter((f) => !given.includes(f))]).toEqual([op.name, []]);
  }
});

describe('the valid inputs the fuzzing breaks are accepted as they are', () => {
  // Without this, a "400" below could come from a base input that was never valid.
  test.each(postOperations.filter((op) => !op.name.includes('delete')).map((op) => [op.name, op]))(
    '%s',
    async (_, op) => {
      const response = await rawRequest(base, post(op.name, bodyOf(op, op.base()), 'valid'));
      expect(response.status).toBe(op.validStatus ?? 200);
      expectSecurityHeaders(response.headers);
    },
  );

  test.each(getOperations.map((op) => [op.name, op]))('%s', async (_, op) => {
    const response = await rawRequest(base, getWire(op.name, queryText(op.base()), 'valid'));
    expect(response.status).toBe(200);
  });
});

describe('POST bodies', () => {
  test.each(postOperations.map((op) => [op.name, op]))(
    '%s: one broken or missing field is 400 and writes nothing',
    async (_, op) => {
      const baseEntries = op.base();
      const breakers = op.breakers();
      const broken = fc
        .constantFrom(...Object.keys(breakers))
        .chain((field) => fc.tuple(fc.constant(field), breakers[field]!, extraFields, fc.boolean()))
        .map(([field, bad, extra, repeat]) => {
          const original = baseEntries.find(([name]) => name === field);
          // repeat: the field appears twice, valid first; JSON.parse keeps the broken last one.
          const entries: [string, string][] = [
            ...baseEntries.filter(([name]) => name !== field),
            ...extra,
            ...(repeat && original ? [original] : []),
            [field, bad],
          ];
          return post(op.name, bodyOf(op, entries), `${field} := ${bad.slice(0, 60)}`);
        });
      const missing = fc
        .tuple(fc.constantFrom(...op.required), extraFields)
        .map(([field, extra]) =>
          post(
            op.name,
            bodyOf(op, [...baseEntries.filter(([name]) => name !== field), ...extra]),
            `without ${field}`,
          ),
        );
      await property(fc.oneof(broken, missing), () => rejectedWith(400), RUNS * 2);
    },
  );

  test.each(postOperations.map((op) => [op.name, op]))(
    '%s: a body that is not a JSON object, not JSON, not UTF-8 or nested 100 000 deep is 400',
    async (_, op) => {
      const item = objectText(op.base());
      const wrap = op.wrap ?? ((text: string) => text);
      const valid = wrap(item);
      // Invalid UTF-8 inside the first string value of an otherwise valid body.
      const at = valid.indexOf('":"') + 3;
      const garbage = fc.oneof(
        // migrations.createKeys: one object where an array belongs.
        fc.constant(post(op.name, op.wrap ? item : '[]', 'object for array, or array for object')),
        fc
          .jsonValue({ maxDepth: 3 })
          .filter((v) => v === null || typeof v !== 'object' || Array.isArray(v))
          .map((v) => post(op.name, json(v), 'not an object')),
        fc.constant(post(op.name, `[${valid}]`, 'the object inside an array')),
        fc.constantFrom(...INVALID_JSON).map((text) => post(op.name, text, 'not JSON')),
        fc
          .nat({ max: valid.length - 1 })
          .map((n) => post(op.name, valid.slice(0, n), `cut after ${n} bytes`)),
        fc.constantFrom(...DEEP_JSON).map((text) => post(op.name, text, 'deep nesting')),
        // In place of the first field (a string): the body is JSON but the field is not a string.
        fc
          .constantFrom(...DEEP_JSON)
          .map((text) =>
            post(
              op.name,
              wrap(`${item.slice(0, item.indexOf(':') + 1)}${text}}`),
              'deep nesting in a field',
            ),
          ),
        fc
          .constantFrom(...INVALID_UTF8)
          .map((bytes) =>
            post(
              op.name,
              Buffer.concat([Buffer.from(valid.slice(0, at)), bytes, Buffer.from(valid.slice(at))]),
              `invalid UTF-8 ${bytes.toString('hex')}`,
            ),
          ),
        fc.constant(post(op.name, '', 'empty body')),
        fc.constant(post(op.name, '\ufeff', 'only a byte order mark')),
      );
      await property(garbage, () => rejectedWith(400));
    },
  );

  test('any other content type is 415, with or without a body', async () => {
    const types = fc.oneof(
      fc.constantFrom(
        'text/plain',
        'text/json',
        'application/x-www-form-urlencoded',
        'multipart/form-data; boundary=x',
        'application/xml',
        'application/jsonp',
        'application/json-seq',
        'application/problem+json',
        'application/octet-stream',
        'json',
        'application',
        '*/*',
      ),
      fc.stringMatching(/^[a-z]{1,8}\/[a-z]{1,8}$/).filter((t) => t !== 'application/json'),
    );
    const wires = fc
      .tuple(fc.constantFrom(...postOperations), types)
      .map(([op, type]) =>
        post(op.name, bodyOf(op, op.base()), `content-type ${type}`, { 'content-type': type }),
      );
    await property(wires, () => rejectedWith(415));
    // No content type at all.
    for (const op of postOperations) {
      const wire = post(op.name, bodyOf(op, op.base()), 'no content type');
      delete (wire.headers as Record<string, string>)['content-type'];
      await sendWithoutWrites(wire, rejectedWith(415));
    }
  });

  test('a body over 1 MiB is 413, declared or streamed; 1 MiB exactly is read', async () => {
    // Exactly 1 MiB is read and judged on its content: here a name that is far too long.
    const exact = `{"name":"${'x'.repeat(MiB - 11)}"}`;
    expect(exact).toHaveLength(MiB);
    await sendWithoutWrites(post('apis.createApi', exact, 'exactly 1 MiB'), rejectedWith(400));
    for (const op of postOperations) {
      const valid = objectText(op.base());
      const padding = MiB + 1 - valid.length - 9;
      const oversized = `${valid.slice(0, -1)},"pad":"${'x'.repeat(padding)}"}`;
      expect(oversized).toHaveLength(MiB + 1);
      await sendWithoutWrites(post(op.name, oversized, '1 MiB + 1'), rejectedWith(413));
      await sendWithoutWrites(
        printable({
          ...post(op.name, '', 'streamed without length'),
          body: undefined,
          chunks: Array.from({ length: 17 }, () => Buffer.from(' '.repeat(64 * 1024))),
        }),
        rejectedWith(413),
      );
    }
    // A Content-Length above the limit is refused before a single byte of the body is read.
    const before = await dumpKeyspace(primary);
    const answer = await rawExchange(
      base,
      Buffer.from(
        `POST /v1/apis.createApi HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${rootKey}\r\n` +
          `Content-Type: application/json\r\nContent-Length: ${10 * MiB}\r\n\r\n{"name":"x"}`,
      ),
    );
    expect(statusOf(answer)).toBe(413);
    expect(answer).toMatch(/\r\nx-content-type-options: nosniff\r\n/i);
    expect(diffKeyspace(before, await dumpKeyspace(primary))).toEqual([]);
  });
});
