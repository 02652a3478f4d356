import * as spec from '../conformance/v2/spec';
import { conformanceNode, describeCorpus } from '../conformance/runner';

/**
 * The conformance corpus (test/conformance, docs/testing.md): the bounds of Unkey's v2 OpenAPI
 * spec, one past each, replayed over HTTP against one node.
 */
const runner = conformanceNode();

for (const [name, cases] of Object.entries(spec)) {
  const routes = [...new Set(cases.map((entry) => entry.route))];
  for (const route of routes) {
    describeCorpus(
      'v2',
      `v2 ${route}: spec ${name}`,
      cases.filter((entry) => entry.route === route),
      runner,
    );
  }
}
