/**
 * The Argo CD plugin end to end: argocd/plugin.yaml's commands run the way Argo CD's CMP server runs
 * them (the command line as written, the app's source directory as working directory, a clean
 * environment with Argo CD's variables, no stdin, a read-only copy of the sources), and the install
 * patch applied to a minimal Argo CD install.
 */
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { parse, parseAllDocuments } from 'yaml';
import { version } from '../../../package.json';
import { paramVariable, readSettings, SETTING_NAMES } from '../../../src/cli/argocd';
import { assertValidK8sObjects } from '../../support/k8s-schema';
import { KUBECTL, requires } from '../../support/requires';
import { pluginImageNote } from '../../support/cli-notes';
import { kustomizeBuild } from '../../support/kustomize';
import { argocdInstall } from '../../../scripts/lib/upstream';
import { TEST_DIR } from '../../support/paths';

const root = join(TEST_DIR, '..');
const basic = readFileSync(join(root, 'examples/basic/tidb-cluster.yaml'), 'utf8');
const pluginConfig = parse(readFileSync(join(root, 'argocd/plugin.yaml'), 'utf8'));
const UNRELATED = 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-settings\ndata:\n  kind: TidbCluster\n';

let work: string;
let toolDir: string;
let npmMarker: string;

beforeAll(() => {
  work = mkdtempSync(join(tmpdir(), 'tidb-gitops-argocd-'));
  // What the plugin image puts on PATH: the CLI as `tidb-gitops`, and node for its #! line. npm and npx
  // stubs come first so that any use of them shows.
  toolDir = join(work, 'tools');
  mkdirSync(toolDir);
  symlinkSync(join(root, 'bin/tidb-gitops.js'), join(toolDir, 'tidb-gitops'));
  npmMarker = join(work, 'npm-was-run');
  for (const tool of ['npm', 'npx']) {
    writeFileSync(join(toolDir, tool), `#!/bin/sh\necho "$0 $*" >> '${npmMarker}'\nexit 1\n`, { mode: 0o755 });
  }
});

afterAll(() => {
  makeWritable(work);
  rmSync(work, { recursive: true, force: true });
});

function makeWritable(path: string): void {
  if (!existsSync(path) || lstatSync(path).isSymbolicLink()) return;
  if (lstatSync(path).isDirectory()) {
    chmodSync(path, 0o755);
    for (const e of readdirSync(path)) makeWritable(join(path, e));
  } else {
    chmodSync(path, 0o644);
  }
}

let dirCount = 0;
/** A fresh application source directory holding `files`, made read-only as Argo CD's copy may be. */
function appDir(files: Record<string, string>): string {
  const dir = join(work, `app-${++dirCount}`);
  for (const [name, text] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, name)), { recursive: true });
    writeFileSync(join(dir, name), text);
  }
  mkdirSync(dir, { recursive: true });
  makeReadOnly(dir);
  return dir;
}

function makeReadOnly(path: string): void {
  if (lstatSync(path).isDirectory()) {
    for (const e of readdirSync(path)) makeReadOnly(join(path, e));
    chmodSync(path, 0o555);
  } else {
    chmodSync(path, 0o444);
  }
}

/** Every path with its mode, mtime and content hash: tests may run as root, where read-only modes do not stop writes. */
function snapshot(dir: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (p: string) => {
    const st = lstatSync(p);
    const key = p.slice(dir.length) || '/';
    if (st.isDirectory()) {
      out[key] = `dir ${st.mode.toString(8)} ${st.mtimeMs}`;
      for (const e of readdirSync(p).sort()) walk(join(p, e));
    } else {
      out[key] = `file ${st.mode.toString(8)} ${st.mtimeMs} ${createHash('sha256').update(readFileSync(p)).digest('hex')}`;
    }
  };
  walk(dir);
  return out;
}

interface RunResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

/** Argo CD's build environment for an Application `basic` with destination namespace `tidb`. */
function argoEnv(home: string, extra: Record<string, string>): Record<string, string> {
  return {
    PATH: `${toolDir}:${dirname(process.execPath)}`,
    HOME: home,
    ARGOCD_APP_NAME: 'basic',
    ARGOCD_APP_NAMESPACE: 'tidb',
    ARGOCD_APP_REVISION: '0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c',
    ARGOCD_APP_REVISION_SHORT: '0f1e2d3',
    ARGOCD_APP_SOURCE_PATH: 'clusters/basic',
    ARGOCD_APP_SOURCE_REPO_URL: 'https://git.example.com/platform/databases.git',
    ARGOCD_APP_SOURCE_TARGET_REVISION: 'main',
    KUBE_VERSION: '1.33.2',
    KUBE_API_VERSIONS: 'v1,apps/v1,batch/v1,policy/v1,rbac.authorization.k8s.io/v1,storage.k8s.io/v1',
    ...extra,
  };
}

/** Runs one of plugin.yaml's commands exactly as written, in `cwd`, checking it changed nothing. */
function runPluginCommand(command: { command: string[]; args?: string[] }, cwd: string, extraEnv: Record<string, string> = {}): RunResult {
  const home = mkdtempSync(join(work, 'home-'));
  const before = snapshot(cwd);
  const [exe, ...rest] = command.command;
  const r = spawnSync(exe, [...rest, ...(command.args ?? [])], {
    cwd,
    env: argoEnv(home, extraEnv),
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
  });
  if (r.error) throw r.error;
  expect(snapshot(cwd)).toEqual(before);
  expect(readdirSync(home)).toEqual([]);
  expect(existsSync(npmMarker)).toBe(false);
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const generate = (cwd: string, env: Record<string, string> = {}) => runPluginCommand(pluginConfig.spec.generate, cwd, env);
const discover = (cwd: string, env: Record<string, string> = {}) => runPluginCommand(pluginConfig.spec.discover.find, cwd, env);

const cli = (args: string[]) => spawnSync(process.execPath, [join(root, 'bin/tidb-gitops.js'), ...args], { cwd: root, encoding: 'utf8' });

/** Parses a manifest stream strictly: every document a Kubernetes object, nothing else. */
function manifests(stdout: string): any[] {
  const objects = parseAllDocuments(stdout).map((d) => {
    expect(d.errors).toEqual([]);
    return d.toJS();
  });
  for (const o of objects) {
    expect(o).toEqual(
      expect.objectContaining({
        apiVersion: expect.any(String),
        kind: expect.any(String),
        metadata: expect.objectContaining({ name: expect.any(String) }),
      }),
    );
  }
  assertValidK8sObjects(objects);
  return objects;
}

const find = (objects: any[], kind: string, name: string) => objects.find((o) => o.kind === kind && o.metadata.name === name);
const discoveryImage = (objects: any[]) => find(objects, 'Deployment', 'basic-discovery').spec.template.spec.containers[0].image;

describe('plugin.yaml', () => {
  test('is a CMP v2 sidecar configuration named tidb-gitops, without a version', () => {
    expect(pluginConfig.apiVersion).toBe('argoproj.io/v1alpha1');
    expect(pluginConfig.kind).toBe('ConfigManagementPlugin');
    expect(pluginConfig.metadata).toEqual({ name: 'tidb-gitops' });
    // Left out so Applications can name the plugin `tidb-gitops` across upgrades (see the file's comment).
    expect(pluginConfig.spec.version).toBeUndefined();
    expect(Object.keys(pluginConfig.spec).sort()).toEqual(['discover', 'generate', 'parameters', 'preserveFileMode']);
    expect(pluginConfig.spec.preserveFileMode).toBe(false);
  });

  test('runs the precompiled CLI, never npm, npx or a shell', () => {
    expect(pluginConfig.spec.generate).toEqual({ command: ['tidb-gitops', 'argocd', 'generate'] });
    expect(pluginConfig.spec.discover).toEqual({ find: { command: ['tidb-gitops', 'argocd', 'discover'] } });
  });

  test('announces one parameter per setting, with the fields Argo CD knows', () => {
    const params: Record<string, unknown>[] = pluginConfig.spec.parameters.static;
    expect(params.map((p) => paramVariable(String(p.name)))).toEqual(SETTING_NAMES.map((n) => `PARAM_${n}`));
    const known = ['name', 'title', 'tooltip', 'required', 'itemType', 'collectionType', 'string', 'array', 'map'];
    for (const p of params) {
      expect(Object.keys(p).filter((k) => !known.includes(k))).toEqual([]);
      expect(typeof p.title).toBe('string');
    }
    // The announced default is what generate does without the parameter.
    expect(params.find((p) => p.name === 'paths')?.string).toBe('.');
  });

  test('ships in the npm package', () => {
    expect(JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).files).toContain('argocd');
  });
});

describe('tidb-gitops argocd generate, run as the CMP server runs it', () => {
  test('renders every TidbCluster of a read-only source directory to stdout, with the objects beside it, and changes nothing', () => {
    const dir = appDir({ 'tidb-cluster.yaml': basic, 'app-settings.yaml': UNRELATED });
    const r = generate(dir, { ARGOCD_ENV_CONTROLLER_IMAGE: 'registry.example.com/tidb-gitops:0.1.0' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const all = manifests(r.stdout);
    // The ConfigMap kept beside the cluster comes last, in the destination namespace like the rest.
    expect(all[all.length - 1]).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'app-settings', namespace: 'tidb' },
      data: { kind: 'TidbCluster' },
    });
    const objects = all.slice(0, -1);
    expect(objects).toHaveLength(20);
    expect(discoveryImage(objects)).toBe('registry.example.com/tidb-gitops:0.1.0');
    // No NAMESPACE setting: the Application's destination namespace.
    expect(new Set(objects.map((o) => o.metadata.namespace))).toEqual(new Set(['tidb']));
    // The same stream `render` prints for these settings, for the destination's Kubernetes (KUBE_VERSION).
    const render = cli([
      'render',
      dir,
      '-n',
      'tidb',
      '--controller-image',
      'registry.example.com/tidb-gitops:0.1.0',
      '--kube-version',
      '1.33',
    ]);
    expect(r.stdout).toBe(render.stdout);
    assertValidK8sObjects(objects, 33);
  });

  test('renders for the Kubernetes version Argo CD passes, unless the kube-version setting says otherwise', () => {
    const dir = appDir({ 'tidb-cluster.yaml': basic });
    const target = (env: Record<string, string>) =>
      JSON.parse(find(manifests(generate(dir, env).stdout), 'StatefulSet', 'basic-pd').metadata.annotations['tidb-gitops.io/settings'])
        .kubeVersion;
    expect(target({})).toBe('1.33');
    expect(target({ KUBE_VERSION: 'v1.37.2' })).toBe('1.37');
    expect(target({ PARAM_KUBE_VERSION: '1.35' })).toBe('1.35');
    const old = generate(dir, { KUBE_VERSION: '1.30.4' });
    expect(old).toMatchObject({ status: 1, stdout: '' });
    expect(old.stderr).toBe(
      'KUBE_VERSION: Kubernetes 1.30 is not supported: this release renders for Kubernetes 1.31 to 1.37\nnothing was rendered\n',
    );
  });

  test('a NAMESPACE env entry beats the destination namespace; a namespace in the TidbCluster beats both', () => {
    const own = basic.replace('name: basic', 'name: other\n  namespace: own');
    const dir = appDir({ 'a.yaml': basic, 'b.yaml': own });
    const r = generate(dir, { ARGOCD_ENV_NAMESPACE: 'databases' });
    expect(r.status).toBe(0);
    const objects = manifests(r.stdout);
    expect(find(objects, 'StatefulSet', 'basic-pd').metadata.namespace).toBe('databases');
    expect(find(objects, 'StatefulSet', 'other-pd').metadata.namespace).toBe('own');
  });

  test('a parameter beats the env entry of the same setting', () => {
    const dir = appDir({ 'tidb-cluster.yaml': basic });
    const r = generate(dir, {
      ARGOCD_ENV_CONTROLLER_IMAGE: 'from-env/tidb-gitops:1',
      PARAM_CONTROLLER_IMAGE: 'from-param/tidb-gitops:2',
      ARGOCD_ENV_NAMESPACE: 'from-env',
      PARAM_NAMESPACE: 'from-param',
      ARGOCD_APP_PARAMETERS: JSON.stringify([
        { name: 'controller-image', string: 'from-param/tidb-gitops:2' },
        { name: 'namespace', string: 'from-param' },
      ]),
    });
    expect(r.status).toBe(0);
    expect(r.stderr).toBe('');
    const objects = manifests(r.stdout);
    expect(discoveryImage(objects)).toBe('from-param/tidb-gitops:2');
    expect(find(objects, 'Service', 'basic-pd').metadata.namespace).toBe('from-param');
  });

  test('empty values count as unset', () => {
    const dir = appDir({ 'tidb-cluster.yaml': basic });
    const r = generate(dir, { PARAM_NAMESPACE: '', ARGOCD_ENV_CONTROLLER_IMAGE: '', ARGOCD_ENV_PATHS: ' ' });
    expect(r.status).toBe(0);
    const objects = manifests(r.stdout);
    expect(find(objects, 'Service', 'basic-pd').metadata.namespace).toBe('tidb');
    expect(discoveryImage(objects)).toBe(`ghcr.io/tidb-gitops/tidb-gitops:${version}`);
  });

  test('PATHS limits rendering to some subpaths, as a string or an array parameter', () => {
    const dir = appDir({
      'prod/a.yaml': basic.replace('name: basic', 'name: prod-a'),
      'prod/b.yaml': basic.replace('name: basic', 'name: prod-b'),
      'staging/c.yaml': basic.replace('name: basic', 'name: staging-c'),
    });
    const clusters = (r: RunResult) =>
      manifests(r.stdout)
        .filter((o) => o.kind === 'StatefulSet' && o.metadata.name.endsWith('-pd'))
        .map((o) => o.metadata.name);
    expect(clusters(generate(dir))).toEqual(['prod-a-pd', 'prod-b-pd', 'staging-c-pd']);
    expect(clusters(generate(dir, { ARGOCD_ENV_PATHS: 'staging  prod/a.yaml' }))).toEqual(['staging-c-pd', 'prod-a-pd']);
    expect(clusters(generate(dir, { PARAM_PATHS: 'prod/b.yaml', ARGOCD_ENV_PATHS: 'staging' }))).toEqual(['prod-b-pd']);
    expect(clusters(generate(dir, { PARAM_PATHS_0: 'staging', PARAM_PATHS_1: 'prod/b.yaml' }))).toEqual(['staging-c-pd', 'prod-b-pd']);
  });

  test('fails on paths outside the source directory', () => {
    const dir = appDir({ 'tidb-cluster.yaml': basic });
    for (const [paths, problem] of [
      ['../other', '"../other" leaves the source directory'],
      ['/etc', '"/etc" is an absolute path'],
      ['-', '"-" is standard input'],
    ]) {
      const r = generate(dir, { ARGOCD_ENV_PATHS: `. ${paths}` });
      expect(r.status).toBe(1);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain(`ARGOCD_ENV_PATHS: ${problem}`);
    }
  });

  test('notes unknown PARAM_* and ARGOCD_ENV_* names on stderr and still renders', () => {
    const dir = appDir({ 'tidb-cluster.yaml': basic });
    const r = generate(dir, { ARGOCD_ENV_NAMESPCE: 'x', PARAM_CONTROLLER_IMAGES: 'y', ARGOCD_ENV_LOG_LEVEL: 'debug' });
    expect(r.status).toBe(0);
    expect(manifests(r.stdout)).toHaveLength(20);
    expect(r.stderr.split('\n').filter(Boolean)).toEqual([
      'note: ARGOCD_ENV_LOG_LEVEL: plugin env entry "LOG_LEVEL" is not a setting of tidb-gitops and was ignored (settings: CONTROLLER_IMAGE, KUBE_VERSION, NAMESPACE, PATHS)',
      'note: ARGOCD_ENV_NAMESPCE: plugin env entry "NAMESPCE" is not a setting of tidb-gitops and was ignored; did you mean ARGOCD_ENV_NAMESPACE?',
      'note: PARAM_CONTROLLER_IMAGES: plugin parameter "CONTROLLER_IMAGES" is not a setting of tidb-gitops and was ignored; did you mean PARAM_CONTROLLER_IMAGE?',
      pluginImageNote('basic').trimEnd(),
    ]);
  });

  test('fails on a broken TidbCluster with nothing on stdout and the file and field on stderr', () => {
    const broken = basic.replace(/replicas: 1/, 'replicas: three');
    const dir = appDir({ 'clusters/basic.yaml': broken, 'app-settings.yaml': UNRELATED });
    const r = generate(dir);
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('clusters/basic.yaml: document 1: spec.pd.replicas (line 20): expected an integer, got "three"');
    expect(r.stderr).toContain('nothing was rendered');
  });

  test('fails when no TidbCluster is found, rather than print an empty stream Argo CD would prune by', () => {
    const others = generate(appDir({ 'app-settings.yaml': UNRELATED, 'README.md': '# kind: TidbCluster\n' }));
    expect(others.status).toBe(1);
    expect(others.stdout).toBe('');
    expect(others.stderr).toContain('no TidbCluster document found');
    const empty = generate(appDir({}));
    expect(empty.status).toBe(1);
    expect(empty.stdout).toBe('');
    expect(empty.stderr).toContain('no .yaml or .yml file');
  });

  test('takes no arguments', () => {
    const r = cli(['argocd', 'generate', '.']);
    expect(r.status).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('argocd generate takes no arguments');
  });
});

describe('tidb-gitops argocd discover, run as the CMP server runs it', () => {
  test('prints the first file with a TidbCluster document, also a nested one', () => {
    const top = discover(appDir({ 'b.yaml': basic, 'a.yaml': UNRELATED }));
    expect(top).toEqual({ status: 0, stdout: 'b.yaml\n', stderr: '' });
    const nested = discover(appDir({ 'a.yaml': UNRELATED, 'clusters/prod/main.yml': `${UNRELATED}---\n${basic}` }));
    expect(nested).toEqual({ status: 0, stdout: 'clusters/prod/main.yml\n', stderr: '' });
    const quoted = discover(
      appDir({ 'c.yaml': 'apiVersion: pingcap.com/v1alpha1\nkind: "TidbCluster"  # the cluster\nmetadata: {name: c}\n' }),
    );
    expect(quoted.stdout).toBe('c.yaml\n');
  });

  test('prints nothing, and exits 0, for other YAML, commented-out or nested kinds', () => {
    const cases: Record<string, string>[] = [
      {},
      { 'app-settings.yaml': UNRELATED },
      { 'old.yaml': basic.replace('kind: TidbCluster', '# kind: TidbCluster') },
      { 'list.yaml': 'apiVersion: v1\nkind: List\nitems:\n  - apiVersion: pingcap.com/v1alpha1\n    kind: TidbCluster\n' },
      { 'notes.txt': basic, 'cluster.json': basic },
      { 'other.yaml': basic.replace('kind: TidbCluster', 'kind: TidbClusterAutoScaler') },
    ];
    for (const files of cases) expect(discover(appDir(files))).toEqual({ status: 0, stdout: '', stderr: '' });
  });
});

/** The overlay docs/reference.md shows under "With Argo CD", with its remote install.yaml swapped for `resource`. */
function readmeOverlay(resource: string): string {
  const readme = readFileSync(join(root, 'docs/reference.md'), 'utf8');
  const block = /^( *)```yaml\n\1(# kustomization\.yaml of the Argo CD installation\n[\s\S]*?)^\1```/m.exec(readme);
  if (!block) throw new Error('docs/reference.md has no "# kustomization.yaml of the Argo CD installation" block');
  const indent = new RegExp(`^${block[1]}`, 'gm');
  const text = block[2]
    .replace(indent, '')
    .replace(/https:\/\/raw\.githubusercontent\.com\/argoproj\/argo-cd\/[^/]+\/manifests\/install\.yaml/, resource);
  expect(text).toContain(resource);
  return text;
}

/** A kustomization directory holding one Argo CD install.yaml, a patch file and `kustomization`. */
function overlayDir(install: string, kustomization: string, patch?: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'tidb-gitops-argocd-'));
  writeFileSync(join(dir, 'install.yaml'), install);
  if (patch !== undefined) writeFileSync(join(dir, 'tidb-gitops-plugin.yaml'), patch);
  writeFileSync(join(dir, 'kustomization.yaml'), kustomization);
  return dir;
}

const ref = (o: any) => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;

describe('tidb-gitops argocd install-patch', () => {
  // Real Kustomize, as kubectl builds it in.
  if (!requires(KUBECTL).ok) return;
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
  const build = (install: string, kustomization: string, patch?: string) => {
    const dir = overlayDir(install, kustomization, patch);
    dirs.push(dir);
    return kustomizeBuild(dir);
  };

  const { tag, file } = argocdInstall();
  const install = readFileSync(file, 'utf8');

  describe(`over Argo CD ${tag}'s install.yaml`, () => {
    test.each([
      ["the reference's overlay (namespace: argocd)", (k: string) => k, 'argocd'],
      ['the same overlay without a namespace: line', (k: string) => k.replace(/^namespace: .*\n/m, ''), undefined],
    ])('the default patch applies with %s, changing only the sidecar and four argocd-cm keys', (_name, edit, namespace) => {
      const kustomization = edit(readmeOverlay('install.yaml'));
      const r = cli(['argocd', 'install-patch']);
      expect(r.status).toBe(0);
      expect(r.stderr).toBe('');
      expect(r.stdout).toMatch(/^# Installs the tidb-gitops config-management plugin/);
      const patched = build(install, kustomization, r.stdout);
      expect(patched.stderr).toBe('');
      expect(patched.status).toBe(0);
      const plain = build(install, kustomization.replace(/^patches:\n(  - .*\n)+/m, ''));
      expect(plain.status).toBe(0);
      expect(patched.objects.map(ref)).toEqual(plain.objects.map(ref));
      for (const o of patched.objects)
        expect(o.metadata.namespace).toBe(o.kind === 'CustomResourceDefinition' || o.kind.startsWith('Cluster') ? undefined : namespace);

      // Nothing but argocd-repo-server and argocd-cm changes.
      const changed = patched.objects.filter((o, i) => JSON.stringify(o) !== JSON.stringify(plain.objects[i]));
      expect(changed.map((o) => `${o.kind}/${o.metadata.name}`)).toEqual(['ConfigMap/argocd-cm', 'Deployment/argocd-repo-server']);
      assertValidK8sObjects(changed);
      const before = (kind: string, name: string) => plain.objects.find((o) => o.kind === kind && o.metadata.name === name)!;
      const [cm, deployment] = changed;

      const pod = deployment.spec.template.spec;
      const basePod = before('Deployment', 'argocd-repo-server').spec.template.spec;
      // Kustomize puts the new container first; the annotation keeps `kubectl logs` and `exec` on the repo-server.
      const sidecar = pod.containers.find((c: any) => c.name === 'tidb-gitops');
      expect(pod.containers.filter((c: any) => c !== sidecar)).toEqual(basePod.containers);
      expect(deployment.spec.template.metadata.annotations['kubectl.kubernetes.io/default-container']).toBe('argocd-repo-server');
      expect(pod.initContainers).toEqual(basePod.initContainers);
      // Argo CD's copyutil puts its binary where the sidecar's command looks for the CMP server.
      expect(JSON.stringify(basePod.initContainers)).toContain('/var/run/argocd/argocd-cmp-server');
      expect(basePod.containers[0].image).toBe(`quay.io/argoproj/argocd:${tag}`);
      expect(sidecar.image).toBe(`ghcr.io/tidb-gitops/tidb-gitops:${version}-argocd-cmp`);
      expect(sidecar.command).toEqual(['/var/run/argocd/argocd-cmp-server']);
      expect(sidecar.args).toBeUndefined();
      expect(sidecar.securityContext).toEqual({
        runAsNonRoot: true,
        runAsUser: 999,
        allowPrivilegeEscalation: false,
        readOnlyRootFilesystem: true,
        capabilities: { drop: ['ALL'] },
        seccompProfile: { type: 'RuntimeDefault' },
      });
      expect(sidecar.env).toEqual([{ name: 'HOME', value: '/tmp' }]);
      expect(sidecar.volumeMounts).toEqual([
        { name: 'var-files', mountPath: '/var/run/argocd' },
        { name: 'plugins', mountPath: '/home/argocd/cmp-server/plugins' },
        { name: 'tidb-gitops-tmp', mountPath: '/tmp' },
      ]);
      expect(sidecar.resources.requests).toBeDefined();
      expect(sidecar.resources.limits.memory).toBeDefined();
      expect(pod.volumes).toEqual(expect.arrayContaining([...basePod.volumes, { name: 'tidb-gitops-tmp', emptyDir: {} }]));
      expect(pod.volumes).toHaveLength(basePod.volumes.length + 1);
      // Every mount has its volume, and the sidecar's /tmp is not the repo-server's.
      for (const m of sidecar.volumeMounts) expect(pod.volumes.map((v: any) => v.name)).toContain(m.name);
      expect(basePod.volumes.map((v: any) => v.name)).toEqual(expect.arrayContaining(['var-files', 'plugins', 'tmp']));
      expect(JSON.stringify(sidecar)).not.toMatch(/\bnp[mx]\b/);

      // argocd-cm keeps what it had and gains the four keys.
      expect(cm.data).toEqual({
        ...(before('ConfigMap', 'argocd-cm').data ?? {}),
        'application.resourceTrackingMethod': 'annotation',
        'resource.customizations.health.apps_StatefulSet': readFileSync(join(root, 'argocd/health/statefulset.lua'), 'utf8'),
        'resource.customizations.health.ConfigMap': readFileSync(join(root, 'argocd/health/configmap.lua'), 'utf8'),
        'resource.customizations.health.batch_CronJob': readFileSync(join(root, 'argocd/health/cronjob.lua'), 'utf8'),
      });
    });

    test('--namespace names the namespace, for a base that already sets it; the default fits it too', () => {
      const base = `namespace: argocd\nresources:\n  - install.yaml\n`;
      for (const args of [[], ['--namespace', 'argocd']]) {
        const dir = mkdtempSync(join(tmpdir(), 'tidb-gitops-argocd-'));
        dirs.push(dir);
        mkdirSync(join(dir, 'base'));
        mkdirSync(join(dir, 'overlay'));
        writeFileSync(join(dir, 'base/install.yaml'), install);
        writeFileSync(join(dir, 'base/kustomization.yaml'), base);
        const r = cli(['argocd', 'install-patch', ...args]);
        expect(r.status).toBe(0);
        writeFileSync(join(dir, 'overlay/tidb-gitops-plugin.yaml'), r.stdout);
        writeFileSync(join(dir, 'overlay/kustomization.yaml'), 'resources:\n  - ../base\npatches:\n  - path: tidb-gitops-plugin.yaml\n');
        const out = kustomizeBuild(join(dir, 'overlay'));
        expect(out.stderr).toBe('');
        const deployment = out.objects.find((o) => o.kind === 'Deployment' && o.metadata.name === 'argocd-repo-server')!;
        expect(deployment.metadata.namespace).toBe('argocd');
        expect(deployment.spec.template.spec.containers.map((c: any) => c.name)).toContain('tidb-gitops');
      }
    });
  });

  test('a patch naming another namespace matches nothing, and Kustomize says so', () => {
    const r = cli(['argocd', 'install-patch', '--namespace', 'gitops']);
    expect(parseAllDocuments(r.stdout).map((d) => d.toJS().metadata)).toEqual([
      { name: 'argocd-repo-server', namespace: 'gitops' },
      { name: 'argocd-cm', namespace: 'gitops' },
    ]);
    const out = build(install, readmeOverlay('install.yaml'), r.stdout);
    expect(out.status).not.toBe(0);
    expect(out.stderr).toContain('no resource matches strategic merge patch');
  });

  test('--only prints one patch; --image changes the image', () => {
    const repo = cli(['argocd', 'install-patch', '--only', 'repo-server', '--image=registry.example.com/tidb-gitops:dev-argocd-cmp']);
    expect(repo.status).toBe(0);
    const docs = parseAllDocuments(repo.stdout).map((d) => d.toJS());
    expect(docs.map((d) => `${d.kind}/${d.metadata.name}`)).toEqual(['Deployment/argocd-repo-server']);
    expect(docs[0].spec.template.spec.containers[0].image).toBe('registry.example.com/tidb-gitops:dev-argocd-cmp');
    expect(repo.stdout).not.toContain('resourceTrackingMethod');

    const cm = cli(['argocd', 'install-patch', '--only=argocd-cm']);
    expect(cm.status).toBe(0);
    expect(
      parseAllDocuments(cm.stdout)
        .map((d) => d.toJS())
        .map((d) => `${d.kind}/${d.metadata.name}`),
    ).toEqual(['ConfigMap/argocd-cm']);
  });

  test('fails with exit 2 on bad flags', () => {
    for (const [args, message] of [
      [['--only', 'server'], '--only needs repo-server or argocd-cm, got "server"'],
      [['--only'], '--only needs repo-server or argocd-cm'],
      [['--image'], '--image needs an image'],
      [['--namespace'], "--namespace needs a namespace (or '' for none)"],
      [['--force'], 'unknown option "--force" for argocd install-patch'],
      [['argocd-cm'], 'argocd install-patch takes no arguments (got "argocd-cm")'],
    ] as const) {
      const r = cli(['argocd', 'install-patch', ...args]);
      expect(r.status).toBe(2);
      expect(r.stdout).toBe('');
      expect(r.stderr).toContain(`tidb-gitops: ${message}\n`);
    }
  });
});

describe('tidb-gitops argocd', () => {
  test('--help prints the usage; a missing or unknown command is a usage error', () => {
    const help = cli(['argocd', '--help']);
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('install-patch');
    expect(help.stdout).toContain('A parameter wins over an env entry');
    expect(cli(['argocd', 'install-patch', '--help']).stdout).toBe(help.stdout);
    const none = cli(['argocd']);
    expect(none.status).toBe(2);
    expect(none.stderr).toContain('argocd needs a command');
    for (const name of ['sync', 'constructor']) {
      const unknown = cli(['argocd', name]);
      expect(unknown.status).toBe(2);
      expect(unknown.stderr).toContain(`unknown argocd command "${name}"`);
    }
  });

  test('readSettings: parameter over env entry over the destination namespace', () => {
    const { settings, notes, errors } = readSettings({
      ARGOCD_APP_NAMESPACE: 'dest',
      ARGOCD_ENV_NAMESPACE: 'env',
      PARAM_NAMESPACE: 'param',
    });
    expect(settings).toEqual({
      controllerImage: undefined,
      namespace: 'param',
      kubeVersion: undefined,
      paths: ['.'],
      fallback: { namespace: 'dest', kubeVersion: undefined },
    });
    expect([notes, errors]).toEqual([[], []]);
    expect(readSettings({ ARGOCD_APP_NAMESPACE: 'dest', ARGOCD_ENV_NAMESPACE: 'env' }).settings.namespace).toBe('env');
    // Argo CD's own destination comes last, after the environment and the inputs' RenderSettings.
    expect(readSettings({ ARGOCD_APP_NAMESPACE: 'dest', KUBE_VERSION: 'v1.33.1' }).settings).toEqual({
      controllerImage: undefined,
      namespace: undefined,
      kubeVersion: undefined,
      paths: ['.'],
      fallback: { namespace: 'dest', kubeVersion: 'v1.33.1' },
    });
    expect(readSettings({}).settings.namespace).toBeUndefined();
  });

  test('readSettings: a namespace that is no DNS label is an error naming where it came from', () => {
    expect(readSettings({ ARGOCD_APP_NAMESPACE: 'Bad_NS' }).errors).toEqual([
      `ARGOCD_APP_NAMESPACE: "Bad_NS" is not a namespace (a DNS label: lowercase letters, digits and '-', at most 63)`,
    ]);
    expect(readSettings({ ARGOCD_APP_NAMESPACE: 'tidb', PARAM_NAMESPACE: 'x y' }).errors).toEqual([
      `PARAM_NAMESPACE: "x y" is not a namespace (a DNS label: lowercase letters, digits and '-', at most 63)`,
    ]);
  });
});
