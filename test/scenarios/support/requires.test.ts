/**
 * The gate of every test that needs something outside node_modules (test/support/requires.ts) and the
 * reporter that names what was missing (test/support/skip-reporter.js), run as `npm test` runs them:
 * Jest on a fixture, once as on a developer's machine and once as in CI.
 */
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { TEST_DIR } from '../../support/paths';

const root = join(TEST_DIR, '..');

function jest(ci: boolean) {
  const env = { ...process.env, CI: ci ? 'true' : '' };
  const args = [
    require.resolve('jest/bin/jest'),
    '--rootDir',
    root,
    // One of the Jest projects (each takes the same roots), with the setup and reporters they share.
    '--selectProjects',
    'unit',
    '--roots',
    '<rootDir>/test/fixtures/requires',
    '--testMatch',
    '**/*.spec.ts',
    '--ci',
  ];
  return spawnSync(process.execPath, args, { cwd: root, env, encoding: 'utf8' });
}

test('outside CI: the gated tests are skipped, and the run ends with one line naming what is missing and what installs it', () => {
  const r = jest(false);
  expect(r.status).toBe(0);
  expect(r.stderr).toMatch(/Tests:\s+2 skipped, 1 passed, 3 total/);
  const lines = r.stderr.split('\n');
  const at = lines.findIndex((l) => l.startsWith('1 test file(s) skipped tests'));
  expect(lines.slice(at + 1, at + 2)).toEqual([
    '  test/fixtures/requires/gated.spec.ts: skipped, needs a server that is not: /usr/bin/nothing not found (Debian package nothing); `bash scripts/test.sh` installs it',
  ]);
}, 60_000);

test('in CI: a missing requirement fails the run, saying what is missing', () => {
  const r = jest(true);
  expect(r.status).toBe(1);
  expect(r.stderr).toMatch(/Tests:\s+1 failed, 1 skipped, 1 passed, 3 total/);
  expect(r.stderr).toContain(
    'needs a server that is not: /usr/bin/nothing not found (Debian package nothing); `bash scripts/test.sh` installs it, and CI runs after it',
  );
}, 60_000);
