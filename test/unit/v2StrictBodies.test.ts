import { v2Routes } from '../../src/dialects/v2/registry';
import { open, strict } from '../../src/dialects/v2/route';
import { BadRequestError } from '../../src/errors';
import { compile } from '../../src/http/validation';
import type { JsonSchema } from '../../src/operations/operation';
import { createKey } from '../../src/operations/keys/createKey';

/**
 * v2 bodies refuse fields they do not declare, as Unkey's v2 OpenAPI spec
 * (`svc/api/openapi/spec/paths/v2/**`) says with `additionalProperties: false`, and accept them
 * exactly where the spec leaves an object open.
 */

/** `route path` of every object in a schema that lists its properties and stays open. */
function openObjects(schema: JsonSchema, at: string, found: string[]): string[] {
  const properties = schema.properties as Record<string, JsonSchema> | undefined;
  if (properties) {
    if (schema.additionalProperties !== false) found.push(at || '(body)');
    for (const [name, property] of Object.entries(properties)) {
      openObjects(property, at ? `${at}.${name}` : name, found);
    }
  }
  if (schema.items) openObjects(schema.items as JsonSchema, `${at}[]`, found);
  return found;
}

test("the objects left open are those Unkey's spec leaves open", () => {
  const open = v2Routes.flatMap((route) =>
    openObjects(route.input, '', []).map((at) => `${route.name} ${at}`),
  );
  expect(open.sort()).toEqual(
    [
      // No `additionalProperties: false` on these bodies in the spec.
      'analytics.getRatelimits (body)',
      'analytics.getVerifications (body)',
      'identities.createIdentity (body)',
      'keys.rerollKey (body)',
      // RatelimitRequest (common/RatelimitRequest.yaml) and KeysVerifyKeyRatelimit are open.
      'identities.createIdentity ratelimits[]',
      'identities.updateIdentity ratelimits[]',
      'keys.createKey ratelimits[]',
      'keys.updateKey ratelimits[]',
      'keys.verifyKey ratelimits[]',
      // Closed in the spec; keyward declares only `hash` and refuses the call anyway.
      'keys.migrateKeys keys[]',
    ].sort(),
  );
});

test('strict closes every object that lists its properties, and copies', () => {
  const item = { type: 'object', properties: { a: { type: 'integer' } } };
  const schema = {
    type: 'object',
    properties: {
      list: { type: 'array', items: item },
      free: { type: 'object' },
      loose: open({ type: 'object', properties: { inner: item } }),
    },
  };
  interface Node {
    additionalProperties?: unknown;
    properties: Record<string, Node>;
    items: Node;
  }
  const closed = strict(schema) as unknown as Node;
  expect(closed.additionalProperties).toBe(false);
  expect(closed.properties.list!.items.additionalProperties).toBe(false);
  expect(closed.properties.free!.additionalProperties).toBeUndefined();
  expect(closed.properties.loose!.additionalProperties).toBe(true);
  expect(closed.properties.loose!.properties.inner!.additionalProperties).toBe(false);
  // The operations' schemas, which v1 uses, are untouched.
  expect(item).not.toHaveProperty('additionalProperties');
  expect(createKey.input).not.toHaveProperty('additionalProperties');
});

test("an unknown field's 400 names it by its path", () => {
  const validate = compile(
    strict({
      type: 'object',
      properties: {
        credits: { type: 'object', properties: { remaining: { type: 'integer' } } },
        list: { type: 'array', items: { type: 'object', properties: { a: { type: 'integer' } } } },
      },
    }),
  );
  const refusal = (input: unknown) => {
    try {
      validate(input, 'body');
    } catch (error) {
      expect(error).toBeInstanceOf(BadRequestError);
      return (error as Error).message;
    }
    throw new Error('expected a refusal');
  };
  expect(refusal({ remainig: 5 })).toBe('remainig: is not a field of this request');
  expect(refusal({ credits: { remaining: 1, x: 1 } })).toBe(
    'credits.x: is not a field of this request',
  );
  expect(refusal({ list: [{ a: 1 }, { b: 1 }] })).toBe('list[1].b: is not a field of this request');
  expect(refusal({ ['y'.repeat(65)]: 1 })).toBe(
    `${'y'.repeat(64)}…: is not a field of this request`,
  );
});
