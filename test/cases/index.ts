import { existsSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { operations } from '../../src/operations/registry';
import { isOperationCases, type OperationCases } from './types';

/**
 * The cases of each operation, found by its name: `keys.createKey` is test/cases/keys/createKey.ts,
 * as src/operations/keys/createKey.ts. Loading by name rather than from a list of imports is what
 * lets a new operation's cases file be the only test change it needs.
 */
const fileOf = (name: string): string => join(__dirname, ...name.split('.')) + '.ts';

const loaded = new Map<string, OperationCases>();

/** The cases of one operation, or undefined when it has no cases file. */
export function findCases(name: string): OperationCases | undefined {
  const known = loaded.get(name);
  if (known) return known;
  const file = fileOf(name);
  if (!existsSync(file)) return undefined;
  // A synchronous require, not import(): the suites build their test tables while jest collects
  // them, before anything asynchronous may run.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const exported: unknown = (require(file) as { cases?: unknown }).cases;
  if (!isOperationCases(exported)) {
    throw new Error(`${file}: export its cases as \`export const cases = defineCases({ … })\``);
  }
  if (exported.operation !== name) {
    throw new Error(`${file} is where ${name}'s cases go, but it names ${exported.operation}`);
  }
  loaded.set(name, exported);
  return exported;
}

/** The cases of one operation; a missing file fails naming the operation. */
export function casesOf(name: string): OperationCases {
  const cases = findCases(name);
  if (!cases) {
    throw new Error(`${name} has no cases: write ${fileOf(name)} (test/cases/types.ts says what)`);
  }
  return cases;
}

/** The operation each cases file under test/cases/<service>/ is named for. */
function namesOfFiles(): string[] {
  return readdirSync(__dirname)
    .filter((entry) => statSync(join(__dirname, entry)).isDirectory())
    .flatMap((service) =>
      readdirSync(join(__dirname, service))
        .filter((file) => file.endsWith('.ts'))
        .map((file) => `${service}.${file.slice(0, -'.ts'.length)}`),
    );
}

/**
 * What keeps the cases and the registry one to one: operations without a cases file, and cases
 * files whose path names no operation. Both empty when they agree.
 */
export function casesMismatch(): { withoutCases: string[]; withoutOperation: string[] } {
  const registered = operations.map((op): string => op.name);
  return {
    withoutCases: registered.filter((name) => findCases(name) === undefined),
    withoutOperation: namesOfFiles()
      .filter((name) => !registered.includes(name))
      .map((name) => `test/cases/${name.split('.').join('/')}.ts`),
  };
}
