import * as v1 from '../conformance/v1/corpus';
import { conformanceNode, describeCorpus } from '../conformance/runner';

/**
 * The conformance corpus (test/conformance, docs/testing.md): Unkey v1's apis, keys, identities
 * and ratelimits route tests (commit `ccfc028d326c`), replayed over HTTP against one node.
 */
const runner = conformanceNode();

for (const [group, cases] of Object.entries(v1)) {
  const routes = [...new Set(cases.map((entry) => entry.route))];
  for (const route of routes) {
    describeCorpus(
      'v1',
      `v1 ${route} (${group})`,
      cases.filter((entry) => entry.route === route),
      runner,
    );
  }
}
