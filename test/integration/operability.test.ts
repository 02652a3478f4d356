import { spawnSync } from 'node:child_process';
import { startTopology, type Topology } from '../support/topology';
import { client } from '../support/rpc';
import { v2Routes } from '../../src/dialects/v2/registry';
import { operations as routes } from '../../src/operations/registry';
import { ERROR_CODES } from '../../src/http/openapi';

let topology: Topology;
let base: string;

beforeAll(async () => {
  topology = await startTopology({ nodes: 1 });
  base = topology.nodes[0]!.url;
});
afterAll(() => topology.stop());

describe('GET /openapi.json', () => {
  test('is a valid OpenAPI 3.1 document listing every route and every error code', async () => {
    const response = await fetch(`${base}/openapi.json`);
    expect(response.status).toBe(200);
    const document = (await response.json()) as {
      openapi: string;
      paths: Record<string, Record<string, unknown>>;
      components: {
        schemas: {
          ErrorEnvelope: { properties: { error: { properties: { code: { enum: string[] } } } } };
        };
      };
    };
    // The validator is an ES module and jest runs CommonJS: validate in a child Node process.
    const validation = spawnSync(
      process.execPath,
      [
        '--input-type=module',
        '-e',
        `import { Validator } from '@seriousme/openapi-schema-validator';
         let text = ''; for await (const chunk of process.stdin) text += chunk;
         const result = await new Validator().validate(JSON.parse(text));
         process.stdout.write(JSON.stringify(result));`,
      ],
      { input: JSON.stringify(document), encoding: 'utf8', cwd: process.cwd() },
    );
    expect(validation.stderr).toBe('');
    const result = JSON.parse(validation.stdout) as { valid: boolean; errors?: unknown };
    expect(result.errors).toBeUndefined();
    expect(result.valid).toBe(true);
    expect(document.openapi).toBe('3.1.0');
    for (const route of routes) {
      expect(document.paths[`/v1/${route.name}`]).toHaveProperty(route.method.toLowerCase());
    }
    for (const route of v2Routes) {
      expect(document.paths[`/v2/${route.name}`]).toHaveProperty('post');
    }
    expect(document.paths['/v1/liveness']).toHaveProperty('get');
    expect(
      document.components.schemas.ErrorEnvelope.properties.error.properties.code.enum.sort(),
    ).toEqual(Object.keys(ERROR_CODES).sort());
  });

  test('GET parameters and POST bodies come from the validation schemas', async () => {
    const document = (await (await fetch(`${base}/openapi.json`)).json()) as {
      paths: Record<
        string,
        Record<
          string,
          {
            parameters?: { name: string; required: boolean }[];
            requestBody?: { content: Record<string, { schema: { required?: string[] } }> };
          }
        >
      >;
    };
    const listKeys = document.paths['/v1/apis.listKeys']!.get!;
    expect(listKeys.parameters?.find((p) => p.name === 'apiId')).toMatchObject({ required: true });
    expect(listKeys.parameters?.find((p) => p.name === 'cursor')).toMatchObject({
      required: false,
    });
    expect(
      document.paths['/v1/keys.createKey']!.post!.requestBody!.content['application/json']!.schema
        .required,
    ).toEqual(['apiId']);
  });
});

describe('reference pages', () => {
  test('/docs renders every operation without external resources', async () => {
    const response = await fetch(`${base}/docs`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/html');
    const html = await response.text();
    for (const route of routes) expect(html).toContain(`/v1/${route.name}`);
    for (const route of v2Routes) expect(html).toContain(`/v2/${route.name}`);
    expect(html).not.toMatch(/<(script|link)[^>]+(src|href)="https?:/);
    // Each operation with what it does, what it needs and what it answers.
    const section = html.slice(html.indexOf('<code>/v1/keys.createKey</code>'));
    const createKey = section.slice(0, section.indexOf('<h2', 1));
    expect(createKey).toContain('Needs the root-key permission');
    expect(createKey).toContain('api.');
    expect(createKey).toContain('<h3>Input</h3>');
    expect(createKey).toContain('<h3>Answer (200)</h3>');
    expect(createKey).toMatch(/&quot;keyId&quot;/);
    expect(createKey).toContain(`<p>${routes.find((r) => r.name === 'keys.createKey')!.summary}`);
  });

  test('/ and /dashboard/ lead to the dashboard', async () => {
    for (const path of ['/', '/dashboard/']) {
      const response = await fetch(`${base}${path}`, { redirect: 'manual' });
      expect({ path, status: response.status, location: response.headers.get('location') }).toEqual(
        { path, status: 302, location: '/dashboard' },
      );
    }
    const page = await fetch(`${base}/`);
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('<html');
  });

  test('/docs/errors has an anchor for every code an envelope links to', async () => {
    const html = await (await fetch(`${base}/docs/errors`)).text();
    for (const code of Object.keys(ERROR_CODES))
      expect(html).toContain(`id="${code.toLowerCase()}"`);
    const envelope = (await (await fetch(`${base}/v1/nope.nope`)).json()) as {
      error: { docs: string };
    };
    expect(envelope.error.docs).toBe('/docs/errors#not_found');
  });
});

describe('GET /metrics', () => {
  test('exposes request, verification, Redis, cache and process metrics', async () => {
    const api = client(base, topology.rootKey);
    const apiId = (await api.post<{ apiId: string }>('apis.createApi', { name: 'metrics' })).body
      .apiId;
    const { key } = (
      await api.post<{ key: string }>('keys.createKey', {
        apiId,
        ratelimit: { type: 'fast', limit: 1, refillRate: 1, refillInterval: 60_000 },
      })
    ).body;
    await api.post('keys.verifyKey', { key });
    await api.post('keys.verifyKey', { key });
    await api.post('keys.verifyKey', { key: 'unknown' });
    const response = await fetch(`${base}/metrics`);
    expect(response.status).toBe(200);
    const text = await response.text();
    expect(text).toMatch(
      /keyward_http_requests_total\{operation="keys.verifyKey",status="200"\} 3/,
    );
    expect(text).toMatch(/keyward_verifications_total\{code="VALID",mode="fast"\} 1/);
    expect(text).toMatch(/keyward_verifications_total\{code="RATE_LIMITED",mode="fast"\} 1/);
    expect(text).toMatch(/keyward_verifications_total\{code="NOT_FOUND",mode="none"\} 1/);
    // Two verifications, plus the management calls' per-root-key bucket on the same Redis.
    const scripts = /keyward_redis_command_duration_seconds_count\{role="local"\} (\d+)/.exec(text);
    expect(Number(scripts?.[1])).toBeGreaterThanOrEqual(2);
    expect(text).toMatch(/keyward_cache_events\{cache="keys",event="miss"\} \d+/);
    expect(text).toContain('keyward_process_cpu_seconds_total');
    expect(text).toContain('keyward_http_request_duration_seconds_bucket');
  });
});

describe('metrics protected by a token', () => {
  let protectedTopology: Topology;
  beforeAll(async () => {
    protectedTopology = await startTopology({
      nodes: 1,
      env: { KEYWARD_METRICS_TOKEN: 'scrape-me' },
    });
  });
  afterAll(() => protectedTopology.stop());

  test('needs the bearer token', async () => {
    const url = `${protectedTopology.nodes[0]!.url}/metrics`;
    expect((await fetch(url)).status).toBe(401);
    expect((await fetch(url, { headers: { authorization: 'Bearer wrong' } })).status).toBe(401);
    expect((await fetch(url, { headers: { authorization: 'Bearer scrape-me' } })).status).toBe(200);
  });
});
