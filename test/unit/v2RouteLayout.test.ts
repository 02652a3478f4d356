import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { v2Routes } from '../../src/dialects/v2/registry';

/**
 * The v2 tree mirrors src/operations: the route that speaks operation `service.method` is the
 * module src/dialects/v2/service/method.ts, and every module of a service folder but its shared
 * ones is a registered route. Adding an operation to v2 is then one module and one registry line.
 */
const V2 = join(__dirname, '../../src/dialects/v2');
/** Modules a service folder shares among its routes. */
const SHARED = new Set(['shapes.ts', 'links.ts']);

describe('the v2 route tree', () => {
  test.each(v2Routes.map((route) => [route.name, route]))(
    '%s sits where its operation sits',
    (_name, route) => {
      const [service, method] = route.operation.name.split('.') as [string, string];
      const path = join(V2, service, `${method}.ts`);
      expect(existsSync(path)).toBe(true);
      // eslint-disable-next-line @typescript-eslint/no-require-imports
      const exported = Object.values(require(path) as Record<string, unknown>);
      expect(exported).toContain(route);
    },
  );

  test('every route module of a service folder is registered', () => {
    const registered = new Set<string>(v2Routes.map((route) => route.operation.name));
    const modules = readdirSync(V2, { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .flatMap((folder) =>
        readdirSync(join(V2, folder.name))
          .filter((file) => file.endsWith('.ts') && !SHARED.has(file))
          .map((file) => `${folder.name}.${file.slice(0, -3)}`),
      );
    expect(modules.length).toBeGreaterThan(30);
    expect(modules.filter((name) => !registered.has(name))).toEqual([]);
  });
});
