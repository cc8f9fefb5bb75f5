const { availableParallelism } = require('node:os');

/** @type {import('jest').Config} */
module.exports = {
  preset: 'ts-jest',
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
  transform: { '^.+\\.ts$': ['ts-jest', { isolatedModules: true }] },
  setupFiles: ['<rootDir>/test/kube/path-setup.ts'],
  // One line at the end for each file that skipped tests for want of a server (test/support/requires.ts).
  reporters: ['default', '<rootDir>/test/support/skip-reporter.js'],
  // Most suites wait on servers (the API server, the simulators, the controller's timings) far more
  // than they compute: on 2 cores one suite at a time left the CPUs idle 60% of the run. Half again
  // as many workers as CPUs, at least 2 and at most 4 (each real-API suite runs its own control plane).
  maxWorkers: Math.min(4, Math.max(2, Math.ceil(availableParallelism() * 1.5))),
};
