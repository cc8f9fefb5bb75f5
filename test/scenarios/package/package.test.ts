/**
 * The npm package as users get it: `npm pack` ships the bundles, the library's types and the Argo CD
 * files and nothing else; installed as a CLI it pulls in no dependency; installed into a cdk8s app, at
 * both ends of the peer range, it compiles under strict TypeScript, shares the app's cdk8s (no nested
 * copy) and synthesizes what the CLI renders. Needs the built package (`npm run build`) and the npm
 * registry (for cdk8s and constructs).
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { TEST_DIR } from '../../support/paths';

const root = join(TEST_DIR, '..');
const pkg = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const example = join(root, 'examples/basic/tidb-cluster.yaml');
const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
const npmEnv = {
  ...process.env,
  npm_config_audit: 'false',
  npm_config_fund: 'false',
  npm_config_update_notifier: 'false',
  npm_config_loglevel: 'error',
};

/** The peer versions the range is tested at: its lowest release and the newest within it. */
const lowest = (range: string) => /^\^(\d+\.\d+\.\d+)$/.exec(range)?.[1];
const PEERS = [
  { cdk8s: lowest(pkg.peerDependencies.cdk8s)!, constructs: lowest(pkg.peerDependencies.constructs)! },
  { cdk8s: pkg.peerDependencies.cdk8s, constructs: pkg.peerDependencies.constructs },
];

let tmp: string;
let tarball: string;
let packed: { path: string; size: number }[];
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'tidb-gitops-pkg-'));
  // The build ran already (`npm test` runs it first), so the pack runs no script.
  const out = execFileSync(npm, ['pack', '--json', '--ignore-scripts', '--pack-destination', tmp], {
    cwd: root,
    env: npmEnv,
    encoding: 'utf8',
  });
  const [info] = JSON.parse(out);
  tarball = join(tmp, info.filename);
  packed = info.files;
}, 60_000);
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

test('the range of each peer is a caret range, so its lowest release can be tested', () => {
  expect(PEERS[0].cdk8s).toMatch(/^2\.\d+\.\d+$/);
  expect(PEERS[0].constructs).toMatch(/^10\.\d+\.\d+$/);
  expect(pkg.dependencies).toBeUndefined();
  expect(pkg.peerDependenciesMeta).toEqual({ cdk8s: { optional: true }, constructs: { optional: true } });
  expect(pkg.scripts.prepare).toBeUndefined();
  expect(pkg.scripts.prepack).toBe('npm run build');
});

test('npm pack ships the bundles, the types, the Argo CD files, the license and notices, and nothing more', () => {
  const paths = packed.map((f) => f.path).sort();
  const fixed = [
    'LICENSE',
    'README.md',
    'argocd/health/configmap.lua',
    'argocd/health/cronjob.lua',
    'argocd/health/statefulset.lua',
    'argocd/plugin.yaml',
    'bin/tidb-gitops.js',
    'lib/THIRD-PARTY-NOTICES.txt',
    'lib/config-schemas/pd.json',
    'lib/config-schemas/tidb.json',
    'lib/config-schemas/tikv.json',
    'lib/index.js',
    'lib/inputs.js',
    'lib/kube-schema-data.json',
    'lib/tidb-gitops-controller.js',
    'lib/tidb-gitops-status.js',
    'lib/tidb-gitops.js',
    'package.json',
  ];
  expect(paths.filter((p) => !p.startsWith('lib/types/'))).toEqual(fixed);
  const types = paths.filter((p) => p.startsWith('lib/types/'));
  expect(types.every((p) => p.endsWith('.d.ts'))).toBe(true);
  expect(types).toEqual(
    expect.arrayContaining([
      'lib/types/src/index.d.ts',
      'lib/types/src/inputs.d.ts',
      'lib/types/src/render/cluster.d.ts',
      'lib/types/imports/k8s.d.ts',
    ]),
  );
  // The library's types only: nothing of the CLI, the controller, diff or the cdk8s app entry.
  expect(types.filter((p) => /\/(cli|controller|diff)\/|src\/main\.d\.ts$/.test(p))).toEqual([]);
  expect(existsSync(join(root, pkg.types))).toBe(true);
  // The notices name every package a bundle holds, with its license text.
  const notices = readFileSync(join(root, 'lib/THIRD-PARTY-NOTICES.txt'), 'utf8');
  for (const name of ['yaml', '@iarna/toml', 'js-yaml', '@grpc/grpc-js', 'cdk8s', 'constructs']) {
    expect(notices).toMatch(new RegExp(`^${name.replace('/', '\\/')} \\d+\\.\\d+\\.\\d+ \\(`, 'm'));
  }
  expect(notices).toContain('Permission is hereby granted, free of charge');
  // cdk8s ships its own copy of yaml; where it is our release, the CLI bundle holds one copy.
  const version = (dir: string) => JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8')).version;
  if (
    existsSync(join(root, 'node_modules/cdk8s/node_modules/yaml')) &&
    version('node_modules/yaml') === version('node_modules/cdk8s/node_modules/yaml')
  ) {
    const cli = readFileSync(join(root, 'lib/tidb-gitops.js'), 'utf8');
    expect(cli).toContain('node_modules/yaml/dist/index.js');
    expect(cli).not.toContain('node_modules/cdk8s/node_modules/yaml/');
  }
  expect(readFileSync(join(root, 'LICENSE'), 'utf8')).toContain('Apache License\n                           Version 2.0, January 2004');
});

function install(dir: string, specs: string[]): void {
  mkdirSync(dir, { recursive: true });
  if (!existsSync(join(dir, 'package.json'))) writeFileSync(join(dir, 'package.json'), '{"name":"app","version":"1.0.0","private":true}\n');
  const r = spawnSync(npm, ['install', '--ignore-scripts', '--no-package-lock', ...specs], { cwd: dir, env: npmEnv, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`npm install ${specs.join(' ')} failed:\n${r.stderr}`);
}

/** Bytes under a directory. */
function du(dir: string): number {
  return readdirSync(dir, { withFileTypes: true }).reduce((sum, e) => {
    const p = join(dir, e.name);
    return sum + (e.isDirectory() ? du(p) : e.isFile() ? statSync(p).size : 0);
  }, 0);
}

test('installed as a CLI it brings no dependency, and renders', () => {
  const prefix = join(tmp, 'global');
  // Scripts are allowed here: the package has none that run on install, so nothing is built.
  const r = spawnSync(npm, ['install', '--global', '--foreground-scripts', '--prefix', prefix, tarball], { env: npmEnv, encoding: 'utf8' });
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  expect(r.stdout).not.toMatch(/> tidb-gitops@/);
  expect(Object.keys(pkg.scripts).filter((s) => /^(pre|post)?install$|^prepare$/.test(s))).toEqual([]);
  const modules = join(prefix, 'lib/node_modules');
  expect(readdirSync(modules)).toEqual(['tidb-gitops']);
  expect(existsSync(join(modules, 'tidb-gitops/node_modules'))).toBe(false);
  const size = du(join(modules, 'tidb-gitops'));
  console.log(`installed package: ${(size / 1e6).toFixed(2)} MB in ${packed.length} files`);
  expect(size).toBeLessThan(8e6);
  const bin = join(prefix, 'bin/tidb-gitops');
  expect(execFileSync(bin, ['--version'], { encoding: 'utf8' }).trim()).toBe(pkg.version);
  const rendered = execFileSync(bin, ['render', example], { encoding: 'utf8' });
  const local = execFileSync(process.execPath, [join(root, 'bin/tidb-gitops.js'), 'render', example], { encoding: 'utf8' });
  expect(rendered).toBe(local);
  // kubectl finds `kubectl-tidb_gitops` on the PATH: `kubectl tidb-gitops status`.
  expect(execFileSync(join(prefix, 'bin/kubectl-tidb_gitops'), ['status', '--help'], { encoding: 'utf8' })).toContain(
    'kubectl tidb-gitops status [CLUSTER]',
  );
}, 120_000);

test('without cdk8s, tidb-gitops/inputs loads and validates, and the main entry says what it needs', () => {
  const app = join(tmp, 'no-cdk8s');
  install(app, [tarball]);
  expect(existsSync(join(app, 'node_modules/cdk8s'))).toBe(false);
  const script = `
    const { loadClusterInputs, InputError } = require('tidb-gitops/inputs');
    const read = loadClusterInputs([${JSON.stringify(example)}], { namespace: 'tidb' });
    console.log(read.clusters.map((c) => c.resolved.namespace + '/' + c.resolved.name + ' ' + c.resolved.tikv.replicas).join());
    try { loadClusterInputs([${JSON.stringify(join(root, 'test/fixtures/readme/cluster.yaml'))}]); } catch (e) { console.log(e instanceof InputError, e.problems.length); }
    try { require('tidb-gitops'); } catch (e) { console.log(e.message); }
  `;
  const r = spawnSync(process.execPath, ['-e', script], { cwd: app, encoding: 'utf8' });
  expect(r.stderr).toBe('');
  expect(r.stdout.split('\n')).toEqual([
    'tidb/basic 1',
    'true 3',
    "tidb-gitops: its cdk8s constructs need the packages cdk8s and constructs (npm install cdk8s constructs); to load and validate TidbClusters without them, require 'tidb-gitops/inputs'",
    '',
  ]);
}, 120_000);

const APP = `import { App, Chart } from 'cdk8s';
import { readFileSync } from 'node:fs';
import { parse } from 'yaml';
import { SpecError, TidbClusterChart, type TidbClusterManifest } from 'tidb-gitops';
import { SpecError as InputsSpecError } from 'tidb-gitops/inputs';

const app = new App({ outdir: process.argv[3] });
const cluster = parse(readFileSync(process.argv[2], 'utf8')) as TidbClusterManifest;
const chart = new TidbClusterChart(app, 'basic', { cluster, namespace: 'tidb' });
const asChart: Chart = chart;
try {
  new TidbClusterChart(app, 'broken', { cluster: { ...cluster, spec: { ...cluster.spec, pd: { replicas: -1 } } } as TidbClusterManifest });
} catch (e) {
  // Each entry bundles its own copy of the class; the error is one to both.
  if (!(e instanceof SpecError) || !(e instanceof InputsSpecError)) throw e;
}
console.log(asChart.node.id, chart.resolved.name);
app.synth();
`;

/** The example app of docs/reference.md ("Using it as a cdk8s library"), as written there. */
function referenceApp(): string {
  const doc = readFileSync(join(root, 'docs/reference.md'), 'utf8');
  const at = doc.indexOf('```ts\n// main.ts: every cluster of tidb-clusters/');
  expect(at).toBeGreaterThanOrEqual(0);
  const start = doc.indexOf('\n', at) + 1;
  return doc.slice(start, doc.indexOf('```', start));
}

describe.each(PEERS)('in a cdk8s app with cdk8s $cdk8s and constructs $constructs', (peers) => {
  test('compiles strictly, shares one cdk8s, and synthesizes what the CLI renders', () => {
    const app = join(tmp, `app-${peers.cdk8s}`.replace(/[^\w.-]/g, '_'));
    // yaml only for the app's own reading of the input; tidb-gitops itself brings none.
    install(app, [tarball, `cdk8s@${peers.cdk8s}`, `constructs@${peers.constructs}`, 'yaml@2']);
    const modules = join(app, 'node_modules');
    expect(existsSync(join(modules, 'tidb-gitops/node_modules'))).toBe(false);
    const list = JSON.parse(
      execFileSync(npm, ['ls', '--all', '--json', 'cdk8s', 'constructs'], { cwd: app, env: npmEnv, encoding: 'utf8' }),
    );
    expect(Object.keys(list.dependencies).sort()).toEqual(['cdk8s', 'constructs', 'tidb-gitops']);
    expect(list.dependencies['tidb-gitops'].dependencies.cdk8s.version).toBe(list.dependencies.cdk8s.version);
    expect(list.dependencies['tidb-gitops'].dependencies.constructs.version).toBe(list.dependencies.constructs.version);

    mkdirSync(join(modules, '@types'), { recursive: true });
    symlinkSync(join(root, 'node_modules/@types/node'), join(modules, '@types/node'));
    writeFileSync(join(app, 'main.ts'), APP);
    writeFileSync(join(app, 'reference.ts'), referenceApp());
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'commonjs',
          strict: true,
          esModuleInterop: true,
          skipLibCheck: false,
          types: ['node'],
          outDir: 'out',
        },
        files: ['main.ts', 'reference.ts'],
      }),
    );
    const tsc = spawnSync(process.execPath, [join(root, 'node_modules/typescript/bin/tsc'), '-p', app], { encoding: 'utf8' });
    expect(tsc.stdout + tsc.stderr).toBe('');
    expect(tsc.status).toBe(0);

    const dist = join(app, 'dist');
    const run = spawnSync(process.execPath, [join(app, 'out/main.js'), example, dist], { cwd: app, encoding: 'utf8' });
    expect(run.stderr).toBe('');
    expect(run.stdout).toBe('basic basic\n');
    expect(readdirSync(dist)).toEqual(['basic.k8s.yaml']);
    const synthesized = parseAllDocuments(readFileSync(join(dist, 'basic.k8s.yaml'), 'utf8')).map((d) => d.toJS());
    const cli = execFileSync(process.execPath, [join(root, 'bin/tidb-gitops.js'), 'render', '--namespace', 'tidb', example], {
      encoding: 'utf8',
    });
    const rendered = parseAllDocuments(cli).map((d) => d.toJS());
    const key = (o: any) => `${o.kind}/${o.metadata.name}`;
    expect(synthesized.map(key).sort()).toEqual(rendered.map(key).sort());
    for (const o of rendered) expect(synthesized.find((s) => key(s) === key(o))).toEqual(o);

    // The reference's app, run where its inputs are: the CLI's objects, its Namespace, its annotation.
    const repo = join(app, 'repo');
    mkdirSync(join(repo, 'tidb-clusters'), { recursive: true });
    writeFileSync(join(repo, 'tidb-clusters/basic.yaml'), readFileSync(example));
    writeFileSync(
      join(repo, 'tidb-clusters/tidb-gitops.yaml'),
      'apiVersion: tidb-gitops.io/v1alpha1\nkind: RenderSettings\nnamespace: tidb\n',
    );
    const ref = spawnSync(process.execPath, [join(app, 'out/reference.js')], {
      cwd: repo,
      encoding: 'utf8',
      env: { PATH: process.env.PATH },
    });
    expect(ref.stderr).toBe('');
    expect(ref.status).toBe(0);
    expect(readdirSync(join(repo, 'dist'))).toEqual(['databases.k8s.yaml']);
    const ours = parseAllDocuments(readFileSync(join(repo, 'dist/databases.k8s.yaml'), 'utf8')).map((d) => d.toJS());
    const expected = parseAllDocuments(
      execFileSync(process.execPath, [join(root, 'bin/tidb-gitops.js'), 'render', 'tidb-clusters'], { cwd: repo, encoding: 'utf8' }),
    ).map((d) => d.toJS());
    const service = expected.find((o) => key(o) === 'Service/basic-tidb');
    service.metadata.annotations = { ...service.metadata.annotations, 'networking.gke.io/load-balancer-type': 'Internal' };
    expect(ours.map(key).sort()).toEqual(['Namespace/tidb', ...expected.map(key)].sort());
    for (const o of expected) expect(ours.find((s) => key(s) === key(o))).toEqual(o);
  }, 180_000);
});
