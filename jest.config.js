/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    // Type checking runs once in `tsc --noEmit`; ts-jest only strips types here.
    '^.+\\.ts$': 'ts-jest',
  },
  // One compilation of each request schema per jest worker instead of per test file
  // (test/support/ajvOnce.ts).
  moduleNameMapper: { '^ajv$': '<rootDir>/test/support/ajvOnce.ts' },
  testTimeout: 30000,
  maxWorkers: 2,
  // Slowest suites first on a fresh clone, which has no timings (test/slowFirstSequencer.js).
  testSequencer: '<rootDir>/test/slowFirstSequencer.js',
};
