import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

const root = join(__dirname, '..');

test('README generated sections (defaults, supported fields) match the code', () => {
  // scripts/docs.mjs reads the built library, which `npm test` builds first.
  const r = spawnSync(process.execPath, [join(root, 'scripts/docs.mjs'), '--check'], { encoding: 'utf8' });
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
});

test('.ci/run runs the test command the README gives', () => {
  expect(readFileSync(join(root, 'README.md'), 'utf8')).toMatch(/^npm test\s/m);
  expect(readFileSync(join(root, '.ci/run'), 'utf8')).toMatch(/^npm test$/m);
});
