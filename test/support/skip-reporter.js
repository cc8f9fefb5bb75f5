/**
 * A Jest reporter that ends the run with one line per test file that skipped tests for want of
 * something outside node_modules: the title of the `needs …` test that `requires()`
 * (test/support/requires.ts) leaves, which names what is missing and the command that installs it.
 */
const { relative } = require('node:path');

const NEEDS_PREFIX = 'needs ';

class SkipReporter {
  constructor(globalConfig) {
    this.rootDir = globalConfig.rootDir;
    /** @type {Map<string, Set<string>>} file -> what it needs */
    this.skipped = new Map();
  }

  onTestResult(_test, result) {
    for (const t of result.testResults) {
      if (t.status !== 'pending' || !t.title.startsWith(NEEDS_PREFIX)) continue;
      const file = relative(this.rootDir, result.testFilePath);
      if (!this.skipped.has(file)) this.skipped.set(file, new Set());
      this.skipped.get(file).add(t.title);
    }
  }

  onRunComplete() {
    if (this.skipped.size === 0) return;
    const lines = [...this.skipped]
      .sort(([a], [b]) => (a < b ? -1 : 1))
      .flatMap(([file, needs]) => [...needs].map((n) => `  ${file}: skipped, ${n}`));
    process.stderr.write(`\n${this.skipped.size} test file(s) skipped tests that need what this machine lacks:\n${lines.join('\n')}\n`);
  }
}

module.exports = SkipReporter;
