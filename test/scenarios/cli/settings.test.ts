/**
 * One set of render settings, read the same way by `render`, `render --check`, `diff` and the Argo CD
 * plugin: a RenderSettings document among the inputs, under the environment (TIDB_GITOPS_*), under
 * the command line or the plugin's parameters; Argo CD's own destination comes last.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { layerSettings, readSettingsDocument, settingsFromEnv } from '../../../src/tidbcluster/settings';
import { TEST_DIR } from '../../support/paths';

const root = join(TEST_DIR, '..');
const BASIC = readFileSync(join(root, 'examples/basic/tidb-cluster.yaml'), 'utf8');
const SETTINGS = [
  'apiVersion: tidb-gitops.io/v1alpha1',
  'kind: RenderSettings',
  'kubeVersion: "1.33"',
  'controllerImage: registry.example.com/tidb-gitops:7',
  'namespace: from-file',
  '',
].join('\n');

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'tidb-gitops-settings-'));
  mkdirSync(join(dir, 'clusters'));
  writeFileSync(join(dir, 'clusters/basic.yaml'), BASIC);
  writeFileSync(join(dir, 'clusters/tidb-gitops.yaml'), SETTINGS);
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const cli = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(process.execPath, [join(root, 'bin/tidb-gitops.js'), ...args], {
    cwd: dir,
    encoding: 'utf8',
    env: { PATH: process.env.PATH, ...env },
  });

/** The namespaces and the controller image of a rendered stream. */
function summary(stream: string): { namespaces: string[]; image: string | undefined } {
  const objects = parseAllDocuments(stream).map((d) => d.toJS()) as { kind: string; metadata: { namespace?: string }; spec?: any }[];
  const discovery = objects.find((o) => o.kind === 'Deployment');
  return {
    namespaces: [...new Set(objects.map((o) => o.metadata.namespace ?? ''))],
    image: discovery?.spec.template.spec.containers[0].image,
  };
}

describe('settings as pure functions', () => {
  test('each setting from the first source that has it', () => {
    expect(
      layerSettings({ namespace: 'a' }, { namespace: 'b', kubeVersion: '1.32' }, { kubeVersion: '1.31', controllerImage: 'x' }),
    ).toEqual({ namespace: 'a', kubeVersion: '1.32', controllerImage: 'x' });
  });

  test('a RenderSettings document is checked strictly', () => {
    expect(
      readSettingsDocument({
        apiVersion: 'tidb-gitops.io/v1',
        kind: 'RenderSettings',
        kubeVersion: 1.32,
        namespace: 'Bad',
        image: 'x',
      }).issues.map((i) => i.path),
    ).toEqual(['apiVersion', 'image', 'kubeVersion', 'namespace']);
  });

  test('the environment is checked like a flag', () => {
    expect(settingsFromEnv({ TIDB_GITOPS_KUBE_VERSION: '1.33', TIDB_GITOPS_NAMESPACE: 'Not A Label' })).toEqual({
      settings: { kubeVersion: '1.33' },
      errors: [`TIDB_GITOPS_NAMESPACE: "Not A Label" is not a namespace (a DNS label: lowercase letters, digits and '-', at most 63)`],
    });
  });
});

describe('render', () => {
  test('takes the settings beside the clusters, under the environment, under the flags', () => {
    const fromFile = cli(['render', 'clusters']);
    expect(fromFile.status).toBe(0);
    expect(summary(fromFile.stdout)).toEqual({ namespaces: ['from-file'], image: 'registry.example.com/tidb-gitops:7' });
    // The file's settings name an image: no note about the default one.
    expect(fromFile.stderr).not.toContain('default controller image');
    expect(summary(cli(['render', 'clusters'], { TIDB_GITOPS_NAMESPACE: 'from-env' }).stdout).namespaces).toEqual(['from-env']);
    expect(summary(cli(['render', 'clusters', '-n', 'from-flag'], { TIDB_GITOPS_NAMESPACE: 'from-env' }).stdout).namespaces).toEqual([
      'from-flag',
    ]);
  });

  test('render -o and render --check agree without repeating a flag (the CI check on a PR that changes nothing)', () => {
    expect(cli(['render', 'clusters', '-o', 'dist', '--prune']).status).toBe(0);
    expect(readFileSync(join(dir, 'dist/from-file.basic.k8s.yaml'), 'utf8')).toContain('registry.example.com/tidb-gitops:7');
    const check = cli(['render', 'clusters', '-o', 'dist', '--prune', '--check']);
    expect([check.status, check.stderr]).toEqual([0, 'dist is up to date (1 file)\n']);
    // The settings document itself renders nothing and is not passed through.
    expect(spawnSync('ls', [join(dir, 'dist')], { encoding: 'utf8' }).stdout).toBe('from-file.basic.k8s.yaml\n');
  });

  test('a bad or disagreeing RenderSettings document is an error with its place, and nothing is written', () => {
    writeFileSync(
      join(dir, 'clusters/other.yaml'),
      SETTINGS.replace('namespace: from-file', 'namespace: elsewhere').replace('kubeVersion: "1.33"', 'kubeVersion: "1.33x"\nnamspace: x'),
    );
    const r = cli(['render', 'clusters', '-o', 'dist']);
    expect(r.status).toBe(1);
    expect(r.stderr.split('\n')).toEqual([
      'clusters/other.yaml: document 1: namspace (line 4): unknown field; a RenderSettings document takes kubeVersion, controllerImage, namespace and apiVersions',
      'clusters/other.yaml: document 1: kubeVersion (line 3): expected a Kubernetes version such as 1.31, got "1.33x"',
      'clusters/tidb-gitops.yaml: document 1: namespace: "from-file" differs from "elsewhere" in clusters/other.yaml: document 1; the RenderSettings of one render must agree',
      '3 problems found; nothing was rendered',
      '',
    ]);
    expect(spawnSync('ls', [dir], { encoding: 'utf8' }).stdout).toBe('clusters\n');
  });
});

describe('cdk8s synth', () => {
  test("the cdk8s app reads the same settings: the inputs' RenderSettings under the environment", () => {
    const synth = (env: Record<string, string>) =>
      spawnSync(process.execPath, [join(root, 'lib/src/main.js')], {
        cwd: dir,
        encoding: 'utf8',
        env: { PATH: process.env.PATH, TIDB_GITOPS_EXAMPLES: 'clusters', CDK8S_OUTDIR: 'synth', ...env },
      });
    expect(synth({}).status).toBe(0);
    expect(readFileSync(join(dir, 'synth/from-file.basic.k8s.yaml'), 'utf8')).toContain('registry.example.com/tidb-gitops:7');
    expect(synth({ TIDB_GITOPS_NAMESPACE: 'from-env' }).status).toBe(0);
    expect(summary(readFileSync(join(dir, 'synth/from-env.basic.k8s.yaml'), 'utf8')).namespaces).toEqual(['from-env']);
  });
});

describe('the Argo CD plugin', () => {
  const generate = (env: Record<string, string>) => {
    const r = spawnSync(process.execPath, [join(root, 'bin/tidb-gitops.js'), 'argocd', 'generate'], {
      cwd: join(dir, 'clusters'),
      encoding: 'utf8',
      env: { PATH: process.env.PATH, ...env },
    });
    expect(r.stderr).not.toContain('error');
    return summary(r.stdout);
  };

  test("the file wins over Argo CD's destination; a parameter wins over the file", () => {
    expect(generate({ ARGOCD_APP_NAMESPACE: 'destination', KUBE_VERSION: 'v1.31.4' })).toEqual({
      namespaces: ['from-file'],
      image: 'registry.example.com/tidb-gitops:7',
    });
    expect(generate({ ARGOCD_APP_NAMESPACE: 'destination', PARAM_NAMESPACE: 'from-param' }).namespaces).toEqual(['from-param']);
    rmSync(join(dir, 'clusters/tidb-gitops.yaml'));
    expect(generate({ ARGOCD_APP_NAMESPACE: 'destination' }).namespaces).toEqual(['destination']);
  });
});

describe('diff', () => {
  test('each side renders with its own settings: a new controller image in them is part of the change', () => {
    mkdirSync(join(dir, 'new'));
    writeFileSync(join(dir, 'new/basic.yaml'), BASIC);
    writeFileSync(join(dir, 'new/tidb-gitops.yaml'), SETTINGS.replace(':7', ':8'));
    const r = cli(['diff', 'clusters', 'new']);
    expect(r.stderr).toBe('');
    expect(r.stdout).toContain('registry.example.com/tidb-gitops:7');
    expect(r.stdout).toContain('registry.example.com/tidb-gitops:8');
  });
});
