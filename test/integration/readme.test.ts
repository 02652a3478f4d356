import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { shellSession, type ShellSession } from '../support/shellSession';
import { startTopology, type Topology } from '../support/topology';
import {
  compareAnswer,
  Correspondence,
  parseWalkthrough,
  printedParts,
  realParts,
  substituteExports,
  type Part,
} from '../support/walkthrough';

/**
 * The README's walk-through runs (issue 23): every ```sh block, in order, in one bash session,
 * against a node of this test's own (one node on one Redis, no node-local Redis, as `make run`),
 * with `B` and `ROOT_KEY` set as the walk-through's first steps say. Each answer must be the one
 * printed below its block, but for ids, plaintext keys and times (test/support/walkthrough.ts has
 * the rules and the skip marker).
 *
 * README_WALKTHROUGH_DUMP=<file> writes every step's real output there (JSON: the step's README
 * line, its answer's line and language, what it printed), to update the README from.
 */
const README = readFileSync(join(__dirname, '../../README.md'), 'utf8');

let topology: Topology;
let shell: ShellSession;

beforeAll(async () => {
  topology = await startTopology({
    nodes: 1,
    localRedis: false,
    // The walk-through waits 2 s for the usage counts (a node writes them at least once a
    // second); writing them every 10 ms leaves that wait a wide margin on a busy machine.
    env: { KEYWARD_ANALYTICS_FLUSH_MS: '10' },
  });
  shell = shellSession({ B: topology.nodes[0]!.url, ROOT_KEY: topology.rootKey });
});
afterAll(async () => {
  if (shell) await shell.close();
  if (topology) await topology.stop();
});

test('the walk-through is found, and every skipped block says why', () => {
  const { steps, skipped } = parseWalkthrough(README);
  expect(steps.length).toBeGreaterThan(10);
  for (const fence of skipped) expect(fence.skip).toMatch(/\w{3,}/);
});

test("every step of the README's walk-through answers what the README prints", async () => {
  const { steps } = parseWalkthrough(README);
  const seen = new Correspondence();
  const failures: string[] = [];
  const dump: { line: number; answerLine?: number; lang?: string; stdout: string }[] = [];
  let previous: { printed: Part[]; real: Part[] } | undefined;
  for (const step of steps) {
    let script = step.script;
    try {
      script = substituteExports(script, previous?.printed ?? [], previous?.real ?? []);
    } catch (error) {
      failures.push(`README line ${step.line}: ${(error as Error).message}`);
    }
    const { stdout, stderr, status } = await shell.run(script);
    dump.push({
      line: step.line,
      ...(step.answer ? { answerLine: step.answer.line, lang: step.answer.lang } : {}),
      stdout,
    });
    const where = `README line ${step.line} (\`${step.script.split('\n')[0]}\`)`;
    if (status !== 0 || stderr !== '')
      failures.push(`${where}: exit status ${status}, stderr ${JSON.stringify(stderr)}`);
    if (!step.answer) {
      if (stdout !== '')
        failures.push(`${where}: printed ${JSON.stringify(stdout)}, the README shows no answer`);
      continue;
    }
    const printed = printedParts(step.answer);
    const real = realParts(step.answer, stdout);
    const diffs = compareAnswer(printed, real, seen);
    if (diffs.length > 0)
      failures.push(`${where}, answer at line ${step.answer.line}:\n  ${diffs.join('\n  ')}`);
    previous = { printed, real };
  }
  if (process.env.README_WALKTHROUGH_DUMP)
    writeFileSync(process.env.README_WALKTHROUGH_DUMP, JSON.stringify(dump, null, 2));
  expect(failures).toEqual([]);
}, 120_000);
