import * as identities from '../conformance/v2/identities';
import * as permissions from '../conformance/v2/permissions';
import * as ratelimit from '../conformance/v2/ratelimit';
import * as answers from '../conformance/v2/answers';
import { conformanceNode, describeCorpus } from '../conformance/runner';

/**
 * The conformance corpus (test/conformance, docs/testing.md): Unkey v2's identities.*,
 * permissions.* and ratelimit.* route tests, replayed over HTTP against one node.
 */
const runner = conformanceNode();

for (const [group, routes] of Object.entries({ identities, permissions, ratelimit })) {
  for (const [route, cases] of Object.entries(routes)) {
    describeCorpus('v2', `v2 ${cases[0]?.route ?? `${group}.${route}`}`, cases, runner);
  }
}

// The answers of Unkey's 200 tests, for this file's routes.
for (const cases of Object.values(answers)) {
  if (
    !['identities', 'permissions', 'ratelimit'].some((group) =>
      cases[0]?.route.startsWith(`${group}.`),
    )
  )
    continue;
  describeCorpus('v2', `v2 ${cases[0]!.route}: answers`, cases, runner);
}
