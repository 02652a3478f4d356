import fc from 'fast-check';
import { json } from '../support/hostile';
import {
  getOperations,
  postOperations,
  queryText,
  type PostOperation,
} from '../support/hostileOperations';
import {
  printable,
  property,
  rejectedWith,
  rootKey,
  useHostileTarget,
} from '../support/hostileTarget';

/**
 * Hostile input, the Authorization header: whatever is wrong with it, the same 401.
 * What every answer must hold, and the node they are sent to: test/support/hostileTarget.ts.
 */
useHostileTarget();

describe('authentication', () => {
  test('any bad Authorization header is the same 401 with WWW-Authenticate, whatever the body', async () => {
    const latin1 = fc.string({
      unit: fc
        .integer({ min: 0x20, max: 0xff })
        .filter((c) => c < 0x7f || c > 0x9f)
        .map((c) => String.fromCharCode(c)),
      maxLength: 80,
    });
    const badAuthorization = fc.oneof(
      latin1.filter((value) => value.trim() !== ''),
      latin1.map((value) => `Bearer kwroot_${value}`),
      fc.constantFrom(
        'Bearer',
        'Bearer ',
        'Basic a2V5OnNlY3JldA==',
        'Token abc',
        'bearer',
        `Bearer ${'k'.repeat(513)}`,
        `Bearer ${'k'.repeat(5000)}`,
      ),
      fc.constant(null),
      // The real root key, damaged: a character changed, cut, extended, without its scheme.
      fc.nat().map((n) => {
        const i = n % rootKey.length;
        const swapped = rootKey[i] === 'a' ? 'b' : 'a';
        return `Bearer ${rootKey.slice(0, i)}${swapped}${rootKey.slice(i + 1)}`;
      }),
      fc
        .constantFrom(
          () => `Bearer ${rootKey.slice(0, -1)}`,
          () => `Bearer ${rootKey}x`,
          () => rootKey,
          () => `Bearer ${rootKey} ${rootKey}`,
          () => `Bearer ${rootKey.toUpperCase()}`,
        )
        .map((make) => make()),
    );
    const bodies = fc.oneof(
      fc.constant('{oops'),
      fc.constant(''),
      fc.jsonValue({ maxDepth: 2 }).map(json),
    );
    const wires = fc
      .tuple(fc.constantFrom(...postOperations, ...getOperations), badAuthorization, bodies)
      .map(([op, authorization, body]) => {
        const isPost = postOperations.includes(op as PostOperation);
        const headers: Record<string, string> = isPost ? { 'content-type': 'text/plain' } : {};
        if (authorization !== null) headers.authorization = authorization;
        return printable({
          method: isPost ? 'POST' : 'GET',
          path: `/v1/${op.name}${isPost ? '' : `?${queryText(op.base())}`}`,
          headers,
          ...(isPost ? { body } : {}),
          label: `authorization ${JSON.stringify(authorization)?.slice(0, 40)}`,
        });
      });
    const messages = new Set<string>();
    await property(wires, () => (response) => {
      rejectedWith(401)(response);
      messages.add((JSON.parse(response.text) as { error: { message: string } }).error.message);
    });
    expect(messages.size).toBe(1);
  });
});
