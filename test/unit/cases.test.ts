import { casesMismatch, casesOf } from '../cases';
import { operations } from '../../src/operations/registry';

// The suites that go over every operation (the authorization matrix, the hostile-input suites, the
// wire corpus) find its cases by its name: test/cases/<service>/<method>.ts.
test('every operation of src/operations/registry.ts has a cases file, and every cases file an operation', () => {
  expect(casesMismatch()).toEqual({ withoutCases: [], withoutOperation: [] });
  for (const op of operations) {
    const cases = casesOf(op.name);
    // The matrix calls each operation at least once.
    expect([op.name, cases.authz.length > 0]).toEqual([op.name, true]);
  }
});
