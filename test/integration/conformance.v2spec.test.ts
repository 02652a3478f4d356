import * as spec from '../conformance/v2/spec';
import { ConformanceRunner, describeCorpus } from '../conformance/runner';
import { startTopology, type Topology } from '../support/topology';

/**
 * The conformance corpus (test/conformance, docs/testing.md): the bounds of Unkey's v2 OpenAPI
 * spec, one past each, replayed over HTTP against one node.
 */
let topology: Topology;
let runner: ConformanceRunner;

beforeAll(async () => {
  topology = await startTopology({ nodes: 1 });
  runner = new ConformanceRunner(topology);
});
afterAll(() => topology.stop());

for (const [name, cases] of Object.entries(spec)) {
  const routes = [...new Set(cases.map((entry) => entry.route))];
  for (const route of routes) {
    describeCorpus(
      'v2',
      `v2 ${route}: spec ${name}`,
      cases.filter((entry) => entry.route === route),
      () => runner,
    );
  }
}
