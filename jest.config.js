/** @type {import('jest').Config} */
module.exports = {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: {
    // Type checking runs once in `tsc --noEmit`; ts-jest only strips types here.
    '^.+\\.ts$': 'ts-jest',
  },
  testTimeout: 30000,
  maxWorkers: 2,
};
