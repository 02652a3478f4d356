import type { Unkey } from '@unkey/api';
import { ok, v1Sdk } from '../support/v1Sdk';
import { client, type Client } from '../support/rpc';
import { startTopology, type Topology } from '../support/topology';

/**
 * Unkey v1's rules to the field (issue 23, section 2, "v1"): each as Unkey's own v1 route and its
 * tests have it, driven through the published v1 SDK (`@unkey/api` 0.38) where it has the call,
 * and over plain HTTP for what it does not show.
 */
let topology: Topology;
let unkey: Unkey;
let api: Client;

beforeAll(async () => {
  topology = await startTopology({ nodes: 1 });
  unkey = v1Sdk(topology.nodes[0]!.url, topology.rootKey);
  api = client(topology.nodes[0]!.url, topology.rootKey);
});
afterAll(() => topology.stop());

async function newApi(name: string): Promise<string> {
  return (await ok(unkey.apis.create({ name }))).apiId;
}

describe('keys.createKey', () => {
  test('takes permission and role names of 1-512 characters of any kind, as Unkey v1', async () => {
    const apiId = await newApi('short names');
    const long = 'p'.repeat(512);
    const { keyId } = await ok(
      unkey.keys.create({ apiId, permissions: ['a', 'has space', long], roles: ['r', 'é role'] }),
    );
    const view = (
      await api.get<{ permissions: string[]; roles: string[] }>('keys.getKey', { keyId })
    ).body;
    expect(view.permissions).toEqual(['a', 'has space', long].sort());
    expect(view.roles).toEqual(['r', 'é role'].sort());
    // Outside 1-512: 400 naming the field, and nothing made.
    for (const permissions of [[''], ['q'.repeat(513)]]) {
      const refused = await api.post('keys.createKey', { apiId, permissions });
      expect(refused.status).toBe(400);
      expect(JSON.stringify(refused.body)).toContain('permissions[0]');
    }
    const roleRefused = await api.post('keys.createKey', { apiId, roles: [''] });
    expect(roleRefused.status).toBe(400);
    expect((await api.get<{ total: number }>('apis.listKeys', { apiId })).body.total).toBe(1);
  });
});
