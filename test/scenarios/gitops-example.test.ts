/**
 * The example GitOps repository (examples/gitops): its Flux objects fit its rendered output, and its
 * GitHub Actions workflow, run step by step as the runner would (bash -e, GITHUB_OUTPUT and
 * GITHUB_STEP_SUMMARY files, `${{ }}` values filled in, `gh` recorded), posts the impact report and
 * fails a pull request whose committed dist/ is stale. Needs the built CLI (`npm run build`).
 */
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  copyFileSync,
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parse, parseAllDocuments, stringify } from 'yaml';
import { version } from '../../package.json';
import { assertValidK8sObjects } from '../support/k8s-schema';
import { kustomizeBuild } from '../support/kustomize';
import { GIT, KUBECTL, requires } from '../support/requires';
import { TEST_DIR } from '../support/paths';

type Obj = Record<string, any>;
const root = join(TEST_DIR, '..');
const example = join(root, 'examples/gitops');
const workflow = parse(readFileSync(join(example, '.github/workflows/tidb-gitops.yaml'), 'utf8')) as Obj;

let tmp: string;
beforeAll(() => {
  tmp = mkdtempSync(join(tmpdir(), 'tidb-gitops-example-'));
});
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe('the Flux objects', () => {
  const dist = parseAllDocuments(readFileSync(join(example, 'dist/tidb.basic.k8s.yaml'), 'utf8')).map((d) => d.toJS() as Obj);
  const flux = ['namespace.yaml', 'tidb-clusters.yaml'].map((f) => parse(readFileSync(join(example, 'flux', f), 'utf8')) as Obj);

  it('apply dist/, prune, and judge StatefulSets by their revisions', () => {
    const ks = flux.find((o) => o.kind === 'Kustomization')!;
    expect(ks.apiVersion).toBe('kustomize.toolkit.fluxcd.io/v1');
    expect(existsSync(join(example, ks.spec.path))).toBe(true);
    expect(ks.spec.prune).toBe(true);
    expect(ks.spec.wait).toBe(true);
    const check = ks.spec.healthCheckExprs.find((h: Obj) => h.kind === 'StatefulSet' && h.apiVersion === 'apps/v1');
    // What the expressions decide is tested in test/scenarios/health/flux.test.ts, with a real CEL implementation.
    expect(check.inProgress).toContain("metadata.?annotations[?'tidb-gitops.io/replicas'].hasValue()");
    expect(check.failed).toContain("'tidb-gitops.io/refused'");
  });

  requires(KUBECTL).test(
    'split dist/: the volume sizes ConfigMap in a Kustomization of its own, everything else in the main one (real kustomize)',
    () => {
      const build = (file: string) => {
        const ks = parse(readFileSync(join(example, 'flux', file), 'utf8')) as Obj;
        const dir = mkdtempSync(join(tmp, 'ks-'));
        // Flux builds the path as kustomize would, with the Kustomization's patches on top.
        copyFileSync(join(example, 'dist/tidb.basic.k8s.yaml'), join(dir, 'dist.yaml'));
        writeFileSync(join(dir, 'kustomization.yaml'), stringify({ resources: ['dist.yaml'], patches: ks.spec.patches }));
        const out = kustomizeBuild(dir);
        expect(out.stderr).toBe('');
        return out.objects.map((o) => `${o.kind}/${o.metadata.name}`).sort();
      };
      const all = dist.map((o) => `${o.kind}/${o.metadata.name}`).sort();
      expect(build('tidb-cluster-volume-sizes.yaml')).toEqual(['ConfigMap/basic-volume-sizes']);
      expect(build('tidb-clusters.yaml')).toEqual(all.filter((n) => n !== 'ConfigMap/basic-volume-sizes'));
    },
  );

  it('create the namespace the rendered objects live in, and the objects are valid', () => {
    assertValidK8sObjects(flux.filter((o) => o.kind === 'Namespace'));
    const namespaces = new Set(dist.map((o) => o.metadata.namespace));
    expect([...namespaces]).toEqual([flux.find((o) => o.kind === 'Namespace')!.metadata.name]);
    assertValidK8sObjects(dist);
  });
});

interface StepRun {
  name: string;
  status: number;
  stdout: string;
  stderr: string;
}

/** Runs the workflow's job on a checkout, as the runner would, up to the first failing step. */
function runJob(
  repo: string,
  base: string,
  bin: string,
): { steps: StepRun[]; outputs: Record<string, Record<string, string>>; summary: string } {
  const job = workflow.jobs.render as Obj;
  const context: Obj = {
    github: {
      repository: 'acme/databases',
      token: 'test-token',
      event: { pull_request: { number: 7, base: { sha: base }, head: { repo: { full_name: 'acme/databases' } } } },
    },
    steps: {},
  };
  const lookup = (path: string): unknown => path.split('.').reduce<any>((o, k) => o?.[k], context);
  const fill = (text: string) => text.replace(/\$\{\{\s*([^}]+?)\s*\}\}/g, (_m, expr: string) => String(lookup(expr)));
  /** The expressions the workflow's `if:`s use: `a == b` over context paths and quoted strings. */
  const holds = (expr: string): boolean => {
    const [a, b] = expr.split('==').map((side) => side.trim());
    const value = (side: string) => (/^'.*'$/.test(side) ? side.slice(1, -1) : lookup(side));
    return value(a) === value(b);
  };
  const summaryFile = join(repo, '..', 'summary.md');
  writeFileSync(summaryFile, '');
  const steps: StepRun[] = [];
  for (const step of job.steps as Obj[]) {
    if (step.uses) continue;
    if (step.name === 'Install tidb-gitops') continue;
    if (step.if !== undefined && !holds(step.if)) continue;
    const outputFile = join(repo, '..', `output-${steps.length}`);
    writeFileSync(outputFile, '');
    const env: Record<string, string> = {
      PATH: `${bin}:${dirname(process.execPath)}:/usr/local/bin:/usr/bin:/bin`,
      HOME: join(repo, '..'),
      CI: 'true',
      GITHUB_OUTPUT: outputFile,
      GITHUB_STEP_SUMMARY: summaryFile,
      ...Object.fromEntries(Object.entries({ ...workflow.env, ...job.env, ...step.env }).map(([k, v]) => [k, fill(String(v))])),
    };
    const r = spawnSync('bash', ['--noprofile', '--norc', '-eo', 'pipefail', '-c', step.run], {
      cwd: repo,
      env,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    steps.push({ name: step.name, status: r.status ?? -1, stdout: r.stdout, stderr: r.stderr });
    if (step.id) {
      const outputs = Object.fromEntries(
        readFileSync(outputFile, 'utf8')
          .split('\n')
          .filter(Boolean)
          .map((l) => l.split('=', 2) as [string, string]),
      );
      context.steps[step.id] = { outputs };
    }
    if (r.status !== 0) break;
  }
  return { steps, outputs: context.steps, summary: readFileSync(summaryFile, 'utf8') };
}

const git = (repo: string, ...args: string[]) => {
  const r = spawnSync('git', ['-c', 'user.name=t', '-c', 'user.email=t@example.com', ...args], { cwd: repo, encoding: 'utf8' });
  if (r.status !== 0) throw new Error(`git ${args.join(' ')}: ${r.stderr}`);
  return r.stdout.trim();
};

requires(GIT).describe('the pull-request workflow', () => {
  let repo: string;
  let bin: string;
  let base: string;
  const ghLog = () => join(repo, '..', 'gh.log');

  beforeAll(() => {
    repo = join(tmp, 'repo');
    cpSync(example, repo, { recursive: true });
    git(repo, 'init', '-q', '-b', 'main');
    git(repo, 'add', '-A');
    git(repo, 'commit', '-q', '-m', 'base');
    base = git(repo, 'rev-parse', 'HEAD');
    bin = join(tmp, 'bin');
    mkdirSync(bin);
    symlinkSync(join(root, 'bin/tidb-gitops.js'), join(bin, 'tidb-gitops'));
    // `gh` records what it was asked to do, and the body it would post.
    writeFileSync(
      join(bin, 'gh'),
      `#!/bin/sh\necho "$*" >> "${join(tmp, 'gh.log')}"\nwhile [ $# -gt 0 ]; do [ "$1" = --body-file ] && cp "$2" "${join(tmp, 'gh-body.md')}"; shift; done\n`,
    );
    chmodSync(join(bin, 'gh'), 0o755);
  });

  it('installs the release this repository is at', () => {
    const install = workflow.jobs.render.steps.find((s: Obj) => s.name === 'Install tidb-gitops');
    expect(install.run).toBe('npm install --global "tidb-gitops@${TIDB_GITOPS_VERSION}"');
    expect(workflow.env.TIDB_GITOPS_VERSION).toBe(version);
    expect(workflow.permissions).toEqual({ contents: 'read', 'pull-requests': 'write' });
  });

  it('posts the impact report and fails when dist/ was not rendered again', () => {
    const file = join(repo, 'tidb-clusters/basic.yaml');
    writeFileSync(file, readFileSync(file, 'utf8').replace('version: v8.5.7', 'version: v8.5.8'));
    git(repo, 'commit', '-q', '-am', 'bump');
    const { steps, outputs, summary } = runJob(repo, base, bin);
    // Every TiKV restarts with 3 stores and 3 copies of each region: no spare store, a risk to flag.
    expect(steps.map((s) => [s.name, s.status])).toEqual([
      ['Impact report', 0],
      ['Post the report on the pull request', 0],
      ['Flag risky changes', 0],
      ['Committed output is up to date', 3],
    ]);
    const report = readFileSync(join(repo, 'impact.md'), 'utf8');
    expect(report).toContain('pd, tikv, tidb rolling restart');
    expect(report).toContain('- **tikv-no-spare-store**: every TiKV store restarts, one at a time, with 3 stores');
    expect(report).toContain('**Order**: the controller restarts PD, then TiKV, then TiDB');
    expect(report).toContain('`pingcap/tikv:v8.5.7` -> `pingcap/tikv:v8.5.8`');
    expect(outputs.report.outputs).toEqual({ risky: 'true' });
    expect(summary).toBe(report);
    expect(readFileSync(join(tmp, 'gh.log'), 'utf8')).toBe('pr comment 7 --body-file impact.md --edit-last --create-if-none\n');
    expect(readFileSync(join(tmp, 'gh-body.md'), 'utf8')).toBe(report);
    expect(steps[3].stderr).toContain('dist/tidb.basic.k8s.yaml: differs from what the inputs render');
  });

  it('passes once dist/ is rendered again, and flags a risky change', () => {
    rmSync(ghLog(), { force: true });
    const render = spawnSync(join(bin, 'tidb-gitops'), ['render', 'tidb-clusters', '-o', 'dist', '--prune'], {
      cwd: repo,
      encoding: 'utf8',
    });
    expect(render.status).toBe(0);
    git(repo, 'commit', '-q', '-am', 'render');
    let run = runJob(repo, base, bin);
    expect(run.steps.map((s) => [s.name, s.status])).toEqual([
      ['Impact report', 0],
      ['Post the report on the pull request', 0],
      ['Flag risky changes', 0],
      ['Committed output is up to date', 0],
    ]);

    const file = join(repo, 'tidb-clusters/basic.yaml');
    writeFileSync(file, readFileSync(file, 'utf8').replace(/(pd:\n(?:.*\n)*?\s+replicas:) 3/, '$1 4'));
    expect(spawnSync(join(bin, 'tidb-gitops'), ['render', 'tidb-clusters', '-o', 'dist', '--prune'], { cwd: repo }).status).toBe(0);
    git(repo, 'commit', '-q', '-am', 'four PD');
    run = runJob(repo, base, bin);
    expect(run.outputs.report.outputs).toEqual({ risky: 'true' });
    expect(run.steps.map((s) => [s.name, s.status])).toEqual([
      ['Impact report', 0],
      ['Post the report on the pull request', 0],
      ['Flag risky changes', 0],
      ['Committed output is up to date', 0],
    ]);
    expect(run.steps[2].stdout).toMatch(/^::warning title=tidb-gitops::/);
    expect(readFileSync(join(repo, 'impact.md'), 'utf8')).toMatch(/PD.*even/i);
  });

  it('skips posting for a pull request from a fork (read-only token): the report is in the summary', () => {
    const fork = { ...workflow.jobs.render.steps.find((s: Obj) => s.name === 'Post the report on the pull request') };
    expect(fork.if).toBe('github.event.pull_request.head.repo.full_name == github.repository');
  });
});
