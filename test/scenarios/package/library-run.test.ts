/**
 * The commands docs/reference.md gives to run the library's example app ("Using it as a cdk8s
 * library"), run as written in a new directory, with the packed package in place of the registry's:
 * `npm init`, `npm pkg set type=module`, the install, `node main.ts`; and the `main.mts` way for a
 * package left as `npm init` writes it. Needs the built package (`npm run build`) and the npm registry
 * (for cdk8s and constructs).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { TEST_DIR } from '../../support/paths';

const root = join(TEST_DIR, '..');
const npmEnv = {
  ...process.env,
  npm_config_audit: 'false',
  npm_config_fund: 'false',
  npm_config_update_notifier: 'false',
  npm_config_loglevel: 'error',
};
const reference = readFileSync(join(root, 'docs/reference.md'), 'utf8');

/** The fenced block of the library section that starts with `first`. */
function block(first: string): string {
  const section = reference.slice(reference.indexOf('## Using it as a cdk8s library'));
  const at = section.indexOf(`\n${first}`);
  expect(at).toBeGreaterThanOrEqual(0);
  const start = at + 1;
  return section.slice(start, section.indexOf('```', start));
}

let tmp: string;
let tarball: string;
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'tidb-gitops-library-run-'));
  const [info] = JSON.parse(
    execFileSync('npm', ['pack', '--json', '--ignore-scripts', '--pack-destination', tmp], { cwd: root, env: npmEnv, encoding: 'utf8' }),
  );
  tarball = join(tmp, info.filename);
}, 60_000);
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** A new directory beside a tidb-clusters/ holding examples/basic and its settings, with main.ts. */
function app(name: string, file: string): string {
  const dir = join(tmp, name);
  mkdirSync(join(dir, 'tidb-clusters'), { recursive: true });
  cpSync(join(root, 'examples/basic/tidb-cluster.yaml'), join(dir, 'tidb-clusters/basic.yaml'));
  writeFileSync(join(dir, 'tidb-clusters/settings.yaml'), 'apiVersion: tidb-gitops.io/v1alpha1\nkind: RenderSettings\nnamespace: tidb\n');
  writeFileSync(join(dir, file), block('// main.ts: every cluster of tidb-clusters/'));
  return dir;
}

const sh = (script: string, cwd: string) =>
  spawnSync('bash', ['-e', '-o', 'pipefail', '-c', script], { cwd, env: npmEnv, encoding: 'utf8' });

test('the commands of the reference run the app as written, and it writes what it says', () => {
  const commands = block('npm init -y')
    .split('\n')
    .map((l) => l.replace(/\s+#.*$/, ''))
    .filter(Boolean);
  expect(commands).toEqual(['npm init -y && npm pkg set type=module', 'npm install tidb-gitops cdk8s constructs', 'node main.ts']);
  const dir = app('module', 'main.ts');
  // The package as the registry would give it, from the packed file.
  const r = sh(commands.map((c) => c.replace('install tidb-gitops ', `install ${tarball} `)).join('\n'), dir);
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  expect(readdirSync(join(dir, 'dist'))).toEqual(['databases.k8s.yaml']);
  expect(readFileSync(join(dir, 'dist/databases.k8s.yaml'), 'utf8')).toContain('networking.gke.io/load-balancer-type: Internal');
}, 180_000);

test('in a package npm init left as CommonJS, node main.ts fails and node main.mts runs', () => {
  expect(reference).toContain('name the file `main.mts` and run\n`node main.mts`');
  const dir = app('commonjs', 'main.mts');
  const r = sh(`npm init -y >/dev/null\nnpm install ${tarball} cdk8s constructs\nnode main.mts`, dir);
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  expect(existsSync(join(dir, 'dist/databases.k8s.yaml'))).toBe(true);
  // Why the reference says so: the same file as main.ts is not run as a module there.
  cpSync(join(dir, 'main.mts'), join(dir, 'main.ts'));
  expect(sh('node main.ts', dir).status).not.toBe(0);
}, 180_000);
