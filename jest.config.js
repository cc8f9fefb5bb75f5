const { availableParallelism } = require('node:os');

/** What every project shares: TypeScript through ts-jest, Node's environment, the test PATH. */
const common = {
  preset: 'ts-jest',
  testEnvironment: 'node',
  testMatch: ['**/*.test.ts'],
  // Each file transpiled alone (tsconfig.jest.json: isolatedModules), without type checks: `tsc` checks types.
  transform: { '^.+\\.ts$': ['ts-jest', { tsconfig: 'tsconfig.jest.json' }] },
  setupFiles: ['<rootDir>/test/kube/path-setup.ts'],
};

/** @type {import('jest').Config} */
module.exports = {
  // unit: in process, no server, laid out as src/ is (`npx jest --selectProjects unit` runs them alone);
  // scenarios: the controller and the CLI as processes, against the simulators of test/sim/;
  // real: real servers started on loopback (the Kubernetes control plane, MariaDB, S3, etcd, Prometheus...).
  projects: [
    { ...common, displayName: 'unit', roots: ['<rootDir>/test/unit'] },
    { ...common, displayName: 'scenarios', roots: ['<rootDir>/test/scenarios'] },
    { ...common, displayName: 'real', roots: ['<rootDir>/test/real'] },
  ],
  // One line at the end for each file that skipped tests for want of a server (test/support/requires.ts).
  reporters: ['default', '<rootDir>/test/support/skip-reporter.js'],
  // Most suites wait on servers (the API server, the simulators, the controller's timings) far more
  // than they compute: on 2 cores one suite at a time left the CPUs idle 60% of the run. Half again
  // as many workers as CPUs, at least 2 and at most 4 (each real-API suite runs its own control plane).
  maxWorkers: Math.min(4, Math.max(2, Math.ceil(availableParallelism() * 1.5))),
};
