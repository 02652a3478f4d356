/**
 * The order jest runs suites in on a fresh clone (CI, `make test` after a clone), where it has no
 * timings of its own and would start them by file size: the slowest first, by the seconds in
 * test/suiteSeconds.json (one `make test` of this machine; a suite not listed took under 5 s),
 * so that two workers end together instead of one finishing the two authorization matrices
 * alone. Refresh the file when a suite's time changes much; a stale entry costs only order.
 */
const { statSync } = require('node:fs');
const { relative } = require('node:path');
const Sequencer = require('@jest/test-sequencer').default;
const seconds = require('./suiteSeconds.json');

class SlowFirstSequencer extends Sequencer {
  sort(tests) {
    const root = `${__dirname}/..`;
    const known = (test) => seconds[relative(root, test.path)] ?? 0;
    const size = (test) => statSync(test.path).size;
    return [...tests].sort((a, b) => known(b) - known(a) || size(b) - size(a));
  }
}

module.exports = SlowFirstSequencer;
