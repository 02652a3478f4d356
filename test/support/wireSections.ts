import { DEEP_JSON, INVALID_UTF8 } from './hostile';
import { MiB, PER_HOUR, enc, field } from './wireScenario';
import type { WireStep } from '../cases/types';

/**
 * The wire corpus's steps that are about no one operation: transport (liveness, unknown operations,
 * wrong verbs), authentication, bodies (content type, malformed JSON, size), hostile input, and the
 * root keys the scenario makes and ends with. test/support/wireCorpus.ts says when each runs.
 */
export const sharedSteps: Readonly<Record<string, WireStep>> = {
  async transport(w) {
    const { c } = w;
    await c.get('liveness', 'liveness', '', { auth: 'none' });
    await c.method('liveness: POST is 405', 'POST', '/v1/liveness', { auth: 'none' });
    await c.postRaw('404: unknown method', 'keys.nope', '{}');
    await c.postRaw('404: unknown service', 'nope.createKey', '{}');
    await c.postRaw('404: v3 path', '/v3/keys.createKey', '{}');
    await c.postRaw('404: operation in the wrong case', 'keys.createkey', '{}');
    await c.postRaw('404: data-plane path with a trailing slash', '/v1/keys.verifyKey/', '{}');
    await c.method('404: a 300-character path', 'POST', `/v1/${'x'.repeat(300)}`);
    await c.method('404: dot segments are not resolved', 'GET', '/v1/../v1/liveness');
    await c.method('404: encoded NUL in the path', 'POST', '/v1/keys.createKey%00');
    await c.method('405: GET on a POST operation', 'GET', '/v1/keys.createKey');
    await c.method('405: POST on a GET operation', 'POST', '/v1/keys.getKey');
    await c.method('405: PUT on verifyKey (left to Koa)', 'PUT', '/v1/keys.verifyKey');
    await c.method('405: GET on ratelimits.limit', 'GET', '/v1/ratelimits.limit');
    await c.method('405: OPTIONS on createKey', 'OPTIONS', '/v1/keys.createKey');
  },
  async authentication(w) {
    const { c } = w;
    // Before anything else, on both HTTP doors.
    await c.post(
      '401: createApi without Authorization',
      'apis.createApi',
      { name: 'x' },
      { auth: 'none' },
    );
    await c.post(
      '401: createApi with Basic',
      'apis.createApi',
      { name: 'x' },
      { auth: { header: 'Basic dXNlcjpwYXNz' } },
    );
    await c.post(
      '401: createApi with an unknown root key',
      'apis.createApi',
      { name: 'x' },
      { auth: { header: 'Bearer kwroot_unknownUnknownUnknown' } },
    );
    await c.post(
      '401: createApi with Bearer and no key',
      'apis.createApi',
      { name: 'x' },
      { auth: { header: 'Bearer ' } },
    );
    await c.post(
      '401: createApi with a 600-character bearer',
      'apis.createApi',
      { name: 'x' },
      { auth: { header: `Bearer ${'a'.repeat(600)}` } },
    );
    await c.postRaw('401: auth is checked before the body is read', 'apis.createApi', '{"name":', {
      auth: 'none',
    });
    await c.postRaw('401: auth is checked before the content type', 'apis.createApi', 'x', {
      auth: 'none',
      contentType: 'text/plain',
    });
    await c.post(
      '401: verifyKey without Authorization',
      'keys.verifyKey',
      { key: 'x' },
      { auth: 'none' },
    );
    await c.post(
      '401: ratelimits.limit with Basic',
      'ratelimits.limit',
      { identifier: 'x' },
      { auth: { header: 'Basic dXNlcjpwYXNz' } },
    );
    await c.get('401: getApi without Authorization', 'apis.getApi', 'apiId=api_missing', {
      auth: 'none',
    });
  },
  // A root key that may read and verify API A's keys, which can only be made once A exists.
  async scopedRootKey(w) {
    const { c, context } = w;
    const apiA = w.got('apiA');
    c.rootKeys.set(
      'scoped',
      (
        await context.newRootKey({
          workspaceId: context.workspaceId,
          permissions: [`api.${apiA}.read_key`, `api.${apiA}.verify_key`],
        })
      ).key,
    );
  },
  async bodies(w) {
    const { c, context } = w;
    await c.postRaw('415: text/plain', 'apis.createApi', '{"name":"x"}', {
      contentType: 'text/plain',
    });
    await c.postRaw('415: no content type', 'apis.createApi', '{"name":"x"}', {
      contentType: null,
    });
    await c.postRaw('415: application/json-patch+json', 'apis.createApi', '{"name":"x"}', {
      contentType: 'application/json-patch+json',
    });
    await c.postRaw('415: verifyKey with text/plain', 'keys.verifyKey', '{"key":"x"}', {
      contentType: 'text/plain',
    });
    await c.postRaw('400: truncated JSON', 'apis.createApi', '{"name":');
    await c.postRaw('400: empty body', 'apis.createApi', '');
    await c.postRaw('400: no body at all', 'apis.createApi', undefined);
    await c.postRaw('400: trailing garbage', 'apis.createApi', '{"name":"x"} x');
    await c.postRaw('400: trailing comma', 'apis.createApi', '{"name":"x",}');
    await c.postRaw('400: an array body', 'apis.createApi', '["x"]');
    await c.postRaw('400: a null body', 'apis.createApi', 'null');
    await c.postRaw('400: a string body', 'apis.createApi', '"name"');
    await c.postRaw(
      '400: invalid UTF-8',
      'apis.createApi',
      Buffer.concat([Buffer.from('{"name":"'), INVALID_UTF8[0]!, Buffer.from('"}')]),
    );
    await c.postRaw(
      '400: overlong UTF-8',
      'apis.createApi',
      Buffer.concat([Buffer.from('{"name":"'), INVALID_UTF8[3]!, Buffer.from('"}')]),
    );
    await c.postRaw('400: verifyKey truncated JSON', 'keys.verifyKey', '{"key":');
    await c.postRaw('400: ratelimits.limit empty body', 'ratelimits.limit', '');
    await c.postRaw(
      'createApi: a byte-order mark before the JSON',
      'apis.createApi',
      '\ufeff{"name":"bom"}',
    );
    const padTo = (size: number, name: string) => {
      const head = `{"name":"${name}","pad":"`;
      return `${head}${'y'.repeat(size - head.length - 2)}"}`;
    };
    await c.postRaw('createApi: a body of exactly 1 MiB', 'apis.createApi', padTo(MiB, 'at-limit'));
    await c.postRaw('413: createApi, 1 MiB and 1 byte', 'apis.createApi', padTo(MiB + 1, 'over'));
    await c.postRaw('413: verifyKey, 1 MiB and 1 byte', 'keys.verifyKey', padTo(MiB + 1, 'over'));
    await c.send('413: createApi, chunked without a length', {
      method: 'POST',
      path: '/v1/apis.createApi',
      headers: {
        authorization: `Bearer ${context.rootKey}`,
        'content-type': 'application/json',
      },
      chunks: [Buffer.alloc(700 * 1024, 0x20), Buffer.alloc(700 * 1024, 0x20)],
    });
  },
  async hostile(w) {
    const { c } = w;
    const apiA = w.got('apiA');
    const k1 = w.got('k1');
    const k3 = w.got('k3');
    const k4 = w.got('k4');
    await c.postRaw('hostile: 100 000 nested arrays', 'apis.createApi', DEEP_JSON[1]!);
    await c.postRaw('hostile: 100 000 unclosed arrays', 'apis.createApi', DEEP_JSON[0]!);
    await c.postRaw('hostile: 100 000 nested objects', 'apis.createApi', DEEP_JSON[2]!);
    await c.postRaw('hostile: 100 000 nested arrays on verifyKey', 'keys.verifyKey', DEEP_JSON[1]!);
    await c.postRaw(
      'hostile: meta nested 100 000 levels',
      'keys.createKey',
      `{"apiId":${JSON.stringify(apiA)},"meta":${'{"a":'.repeat(100_000)}1${'}'.repeat(100_000)}}`,
    );
    await c.postRaw(
      'hostile: permission query nested 100 000 levels',
      'keys.verifyKey',
      `{"key":${JSON.stringify(k1.key)},"authorization":{"permissions":${'{"or":['.repeat(100_000)}"x"${']}'.repeat(100_000)}}}`,
    );
    await c.postRaw(
      'hostile: byteLength 1e2',
      'keys.createKey',
      `{"apiId":${JSON.stringify(apiA)},"byteLength":1e2}`,
    );
    await c.postRaw(
      'hostile: byteLength 400 digits',
      'keys.createKey',
      `{"apiId":${JSON.stringify(apiA)},"byteLength":1${'0'.repeat(400)}}`,
    );
    await c.postRaw(
      'hostile: remaining -1e400',
      'keys.createKey',
      `{"apiId":${JSON.stringify(apiA)},"remaining":-1e400}`,
    );
    await c.postRaw(
      'hostile: duplicate names, the last wins',
      'apis.createApi',
      '{"name":"first","name":"second"}',
    );
    await c.postRaw(
      'hostile: __proto__ instead of name',
      'apis.createApi',
      '{"__proto__":{"name":"polluted"}}',
    );
    await c.postRaw(
      'hostile: __proto__ beside name',
      'apis.createApi',
      '{"name":"proto","__proto__":{"admin":true}}',
    );
    await c.postRaw(
      'hostile: constructor.prototype beside name',
      'apis.createApi',
      '{"name":"ctor","constructor":{"prototype":{"admin":true}}}',
    );
    const protoKey = await c.postRaw(
      'hostile: meta with __proto__ and constructor',
      'keys.createKey',
      `{"apiId":${JSON.stringify(apiA)},"meta":{"__proto__":{"isAdmin":true},"constructor":{"prototype":{"x":1}},"plain":1}}`,
    );
    if (protoKey.status === 200) {
      await c.get(
        'hostile: getKey of the meta with __proto__',
        'keys.getKey',
        `keyId=${field(protoKey, 'keyId', 'proto key')}`,
      );
      await w.verify('hostile: verify the meta with __proto__', {
        key: field(protoKey, 'key', 'proto key'),
      });
    }
    await c.post('hostile: apiId __proto__', 'keys.createKey', { apiId: '__proto__' });
    await c.get('hostile: getApi __proto__', 'apis.getApi', 'apiId=__proto__');
    await c.get('hostile: query __proto__[x]', 'apis.listApis', '__proto__%5Bx%5D=1');
    await c.post('hostile: unicode name', 'apis.createApi', { name: 'ключ 🔑 مفتاح' });
    await c.post('hostile: right-to-left override in a name', 'apis.createApi', {
      name: 'abc\u202edef',
    });
    await c.postRaw('hostile: lone surrogate name', 'apis.createApi', '{"name":"\\ud800"}');
    await c.post('hostile: 256 emoji name', 'apis.createApi', { name: '🔑'.repeat(256) });
    await c.post('hostile: 257 emoji name', 'apis.createApi', { name: '🔑'.repeat(257) });
    const nul = await c.post('hostile: name with a NUL', 'apis.createApi', { name: 'a\u0000b' });
    if (nul.status === 200) {
      await c.get(
        'hostile: getApi of the name with a NUL',
        'apis.getApi',
        `apiId=${field(nul, 'apiId', 'nul')}`,
      );
    }
    await c.post('hostile: 100 000-character name', 'apis.createApi', {
      name: 'x'.repeat(100_000),
    });
    await c.post('hostile: 100 000-character key', 'keys.verifyKey', { key: 'k'.repeat(100_000) });
    await c.get('hostile: apiId percent-encoded unicode', 'apis.getApi', `apiId=${enc('ключ🔑')}`);
    await c.get('hostile: apiId with an encoded NUL', 'apis.getApi', 'apiId=%00');
    await c.get('hostile: broken percent-encoding', 'apis.getApi', 'apiId=%E0%A4%A');
    await c.post('hostile: apiId is an object', 'apis.deleteApi', { apiId: {} });
    await c.post('hostile: keyId is an array', 'keys.updateKey', { keyId: ['x'] });
    await c.post('hostile: identifier is an object', 'ratelimits.limit', {
      identifier: {},
      ...PER_HOUR,
    });
    await c.post('hostile: op is null', 'keys.updateRemaining', {
      keyId: k4.keyId,
      op: null,
      value: 1,
    });
    await c.post('hostile: updateKey with every field null', 'keys.updateKey', {
      keyId: k3.keyId,
      name: null,
      ownerId: null,
      meta: null,
      expires: null,
      ratelimit: null,
      remaining: null,
      refill: null,
    });
  },
  // The node still lives after all of it, and the read-only root key is refused every write.
  async end(w) {
    const { c } = w;
    await c.get('liveness at the end', 'liveness', '', { auth: 'none' });
    await c.get('narrow root key: listApis is allowed', 'apis.listApis', 'limit=1', {
      auth: 'narrow',
    });
    await c.post('narrow root key: createApi', 'apis.createApi', { name: 'x' }, { auth: 'narrow' });
    await c.post(
      'narrow root key: createKey',
      'keys.createKey',
      { apiId: 'api_missing' },
      { auth: 'narrow' },
    );
    await c.get('narrow root key: getKey', 'keys.getKey', 'keyId=key_missing', { auth: 'narrow' });
    await c.get('narrow root key: listKeys', 'apis.listKeys', 'apiId=api_missing', {
      auth: 'narrow',
    });
  },
};
