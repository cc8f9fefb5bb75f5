/**
 * Kubernetes objects kept beside a cluster pass through `render` unchanged: namespaced like the
 * cluster's own objects, validated strictly for the target version, refused when they take a
 * rendered object's name or one made at run time; `diff` reports them; the compact definitions the CLI ships validate as
 * the full ones do.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments, stringify } from 'yaml';
import { renderCommand } from '../../../src/cli/render';
import { kubeSchema } from '../../../src/base/kube-schemas';
import { buildModel, compareModels, type KubeObject } from '../../../src/diff';
import { cluster, render, type Obj } from '../../support/render';
import { fullSchema, SCHEMA_MINORS } from '../../support/k8s-schema';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tidb-gitops-passthrough-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let seq = 0;
/** Runs `render` in this process on files written to a fresh directory. */
function run(files: Record<string, string>, args: { namespace?: string; kubeVersion?: string; outDir?: string } = {}) {
  const d = join(dir, `case-${++seq}`);
  mkdirSync(d);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(d, name), text);
  let stdout = '';
  let stderr = '';
  const status = renderCommand(
    { paths: [d], controllerImage: 'example.com/c:1', ...args, outDir: args.outDir && join(d, args.outDir) },
    { stdout: (s) => (stdout += s), stderr: (s) => (stderr += s), readStdin: () => '' },
  );
  return { status, stdout, stderr, dir: d, docs: parseAllDocuments(stdout).map((x) => x.toJS() as Obj) };
}

const CLUSTER = stringify(cluster({}, { namespace: undefined }));
const yaml = (...objects: Obj[]) => objects.map((o) => stringify(o)).join('---\n');
const SECRET = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'demo-root' }, type: 'Opaque', stringData: { root: 'secret' } };
const ROLE = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'system:demo-reader' }, rules: [] };
const MONITOR = {
  apiVersion: 'monitoring.coreos.com/v1',
  kind: 'ServiceMonitor',
  metadata: { name: 'demo' },
  spec: { selector: {}, endpoints: [{ port: 'metrics' }] },
};

describe('objects kept beside the cluster', () => {
  test('pass through after the cluster, unchanged but for the namespace of a namespaced kind', () => {
    const r = run({ 'tc.yaml': CLUSTER, 'more.yaml': yaml(SECRET, ROLE, MONITOR) }, { namespace: 'db' });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    // A ServiceMonitor is namespaced: it gets the namespace as a built-in kind does.
    expect(r.docs.slice(-3)).toEqual([
      { ...SECRET, metadata: { name: 'demo-root', namespace: 'db' } },
      ROLE,
      { ...MONITOR, metadata: { name: 'demo', namespace: 'db' } },
    ]);
    // The cluster's objects come first, as render prints them alone.
    expect(r.docs.slice(0, -3)).toEqual(
      render(cluster({}, { namespace: undefined }), { namespace: 'db', controllerImage: 'example.com/c:1' }),
    );
    // A namespace written on the object stays.
    const own = run(
      { 'tc.yaml': CLUSTER, 'more.yaml': yaml({ ...SECRET, metadata: { name: 's', namespace: 'other' } }) },
      { namespace: 'db' },
    );
    expect(own.docs[own.docs.length - 1].metadata).toEqual({ name: 's', namespace: 'other' });
  });

  test('-o writes them to _passthrough.k8s.yaml, and --prune takes that file away once there are none', () => {
    const r = run({ 'tc.yaml': CLUSTER, 'more.yaml': yaml(SECRET) }, { namespace: 'db', outDir: 'out' });
    expect(r.status).toBe(0);
    expect(readdirSync(join(r.dir, 'out'))).toEqual(['_passthrough.k8s.yaml', 'db.demo.k8s.yaml']);
    expect(r.stderr).toContain(`wrote ${join(r.dir, 'out')}/_passthrough.k8s.yaml (1 objects)`);
    expect(parseAllDocuments(readFileSync(join(r.dir, 'out', '_passthrough.k8s.yaml'), 'utf8')).map((d) => d.toJS())).toEqual([
      { ...SECRET, metadata: { name: 'demo-root', namespace: 'db' } },
    ]);
    rmSync(join(r.dir, 'more.yaml'));
    let err = '';
    const status = renderCommand(
      { paths: [join(r.dir, 'tc.yaml')], outDir: join(r.dir, 'out'), namespace: 'db', prune: true, controllerImage: 'example.com/c:1' },
      { stdout: () => {}, stderr: (s) => (err += s), readStdin: () => '' },
    );
    expect(status).toBe(0);
    expect(err).toContain('_passthrough.k8s.yaml (no input renders it any more)');
    expect(readdirSync(join(r.dir, 'out'))).toEqual(['db.demo.k8s.yaml']);
  });

  test("another project's kind of a name tidb-gitops reads (Velero's Backup, an SqlUser of another group) passes through", () => {
    const velero = {
      apiVersion: 'velero.io/v1',
      kind: 'Backup',
      metadata: { name: 'nightly', namespace: 'velero' },
      spec: { includedNamespaces: ['*'] },
    };
    const other = { apiVersion: 'example.com/v1', kind: 'SqlUser', metadata: { name: 'app', namespace: 'apps' }, spec: { anything: true } };
    const crd = {
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'sqlusers.example.com' },
      spec: {
        group: 'example.com',
        names: { kind: 'SqlUser', plural: 'sqlusers', singular: 'sqluser', listKind: 'SqlUserList' },
        scope: 'Namespaced',
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
          },
        ],
      },
    };
    const r = run({ 'tc.yaml': CLUSTER, 'others.yaml': yaml(velero, other, crd) });
    expect(r.stderr).not.toMatch(/problem/);
    expect(r.status).toBe(0);
    expect(r.docs.find((d) => d.kind === 'Backup')).toEqual(velero);
    expect(r.docs.find((d) => d.kind === 'SqlUser')).toEqual(other);
    // The operator's own group is still read, and refused where it is wrong.
    const wrong = run({ 'tc.yaml': CLUSTER, 'b.yaml': yaml({ ...velero, apiVersion: 'pingcap.com/v1' }) });
    expect(wrong.status).toBe(1);
    expect(wrong.stderr).toMatch(/b\.yaml: document 1: apiVersion \(line 1\): expected pingcap\.com\/v1alpha1, got "pingcap\.com\/v1"/);
  });

  test('a Kustomization beside the manifests is read by kustomize, not applied: it is skipped', () => {
    const r = run({
      'tc.yaml': CLUSTER,
      'kustomization.yaml': 'apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources: [tc.yaml]\n',
    });
    expect(r.status).toBe(0);
    expect(r.stderr).toMatch(/kustomization\.yaml: document 1: skipped Kustomization: not a TidbCluster/);
    expect(r.docs.some((d) => d.kind === 'Kustomization')).toBe(false);
  });

  test.each([
    [
      'a field the kind does not have',
      { ...SECRET, strinData: {} },
      'document 1: strinData (line 8): unknown field "strinData" (did you mean "stringData"?)',
    ],
    ['a wrong type', { ...SECRET, type: 3 }, 'document 1: type (line 5): expected string, got number 3'],
    [
      'no name',
      { apiVersion: 'v1', kind: 'ConfigMap', metadata: { generateName: 'x-' } },
      'document 1: metadata.name (line 4): required: generateName makes a new object at every apply',
    ],
    [
      'a version Kubernetes no longer serves',
      { apiVersion: 'policy/v1beta1', kind: 'PodDisruptionBudget', metadata: { name: 'p' } },
      'document 1: apiVersion (line 1): Kubernetes 1.31 does not serve policy/v1beta1 PodDisruptionBudget',
    ],
    [
      'a CompactBackup',
      { apiVersion: 'pingcap.com/v1alpha1', kind: 'CompactBackup', metadata: { name: 'm' } },
      'document 1: kind (line 2): CompactBackup (compacting the log backup) is not carried out',
    ],
    [
      'another operator kind',
      { apiVersion: 'pingcap.com/v1alpha1', kind: 'DMCluster', metadata: { name: 'dm' } },
      "document 1: kind (line 2): a DMCluster needs tidb-operator's CRD and controller",
    ],
  ])('%s is refused with its path and line, and nothing is rendered', (_name, object, message) => {
    const r = run({ 'tc.yaml': CLUSTER, 'more.yaml': yaml(object) });
    expect(r.status).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`more.yaml: ${message}`);
  });

  test('a kind the target version lacks names the first version that serves it', () => {
    // resource.k8s.io/v1 (dynamic resource allocation) is served from 1.34 on.
    const deviceClass = { apiVersion: 'resource.k8s.io/v1', kind: 'DeviceClass', metadata: { name: 'gpu' }, spec: {} };
    const old = run({ 'tc.yaml': CLUSTER, 'more.yaml': yaml(deviceClass) });
    const first = SCHEMA_MINORS.find((m) => fullSchema(m).knows('resource.k8s.io/v1', 'DeviceClass'));
    expect(old.stderr).toContain(
      `Kubernetes 1.31 does not serve resource.k8s.io/v1 DeviceClass (1.${first} and later do: render for it with --kube-version)`,
    );
    const now = run({ 'tc.yaml': CLUSTER, 'more.yaml': yaml(deviceClass) }, { kubeVersion: `1.${first}` });
    expect(now.status).toBe(0);
    // Cluster-scoped: no namespace is added.
    expect(now.docs[now.docs.length - 1]).toEqual(deviceClass);
  });

  test("one that takes a rendered object's name, or another kept object's, is refused naming both", () => {
    const pdb = { apiVersion: 'policy/v1', kind: 'PodDisruptionBudget', metadata: { name: 'demo-tikv' }, spec: { maxUnavailable: 2 } };
    const r = run({ 'tc.yaml': CLUSTER, 'more.yaml': yaml(pdb, SECRET, SECRET) }, { namespace: 'db' });
    expect(r.status).toBe(1);
    const lines = r.stderr.trim().split('\n');
    expect(lines).toEqual([
      `${r.dir}/more.yaml: document 1: metadata.name (line 4): PodDisruptionBudget demo-tikv in namespace db takes the place of PodDisruptionBudget demo-tikv in namespace db, rendered from ${r.dir}/tc.yaml: document 1; rename it`,
      `${r.dir}/more.yaml: document 3: metadata.name (line 19): Secret demo-root in namespace db takes the place of Secret demo-root in namespace db in ${r.dir}/more.yaml: document 2; rename one of them`,
      '2 problems found; nothing was rendered',
    ]);
  });

  test("one that names no namespace lands on the rendered object of its name in the cluster's namespace, and is refused", () => {
    // Argo CD's destination or Flux's targetNamespace puts it in "tidb", over the PD Service.
    const service = { apiVersion: 'v1', kind: 'Service', metadata: { name: 'demo-pd' }, spec: { ports: [{ port: 80 }] } };
    const r = run({ 'tc.yaml': stringify(cluster({}, { namespace: 'tidb' })), 'more.yaml': yaml(service) });
    expect(r.status).toBe(1);
    expect(r.stderr.trim().split('\n')).toEqual([
      `${r.dir}/more.yaml: document 1: metadata.name (line 4): Service demo-pd (no namespace: it lands in the one it is applied to) takes the place of Service demo-pd in namespace tidb, rendered from ${r.dir}/tc.yaml: document 1; rename it`,
      '1 problem found; nothing was rendered',
    ]);
    // Another kind of the same name (a Knative Service) is not the same object.
    const knative = { apiVersion: 'serving.knative.dev/v1', kind: 'Service', metadata: { name: 'demo-pd', namespace: 'tidb' } };
    expect(run({ 'tc.yaml': stringify(cluster({}, { namespace: 'tidb' })), 'more.yaml': yaml(knative) }).status).toBe(0);
    // Nor is one in another namespace.
    expect(
      run({
        'tc.yaml': stringify(cluster({}, { namespace: 'tidb' })),
        'more.yaml': yaml({ ...service, metadata: { name: 'demo-pd', namespace: 'other' } }),
      }).status,
    ).toBe(0);
  });

  test('one on the name of an object made at run time is refused, naming who makes it', () => {
    const tc = stringify(cluster({}, { annotations: { 'tidb-gitops.io/monitoring': 'true' } }));
    const backup = stringify({
      apiVersion: 'pingcap.com/v1alpha1',
      kind: 'Backup',
      metadata: { name: 'once', namespace: 'ns' },
      spec: {
        br: { cluster: 'demo' },
        s3: { provider: 'ceph', endpoint: 'http://minio:9000', bucket: 'b', prefix: 'p', secretName: 's3' },
      },
    });
    const logBackup = stringify({
      apiVersion: 'pingcap.com/v1alpha1',
      kind: 'Backup',
      metadata: { name: 'log', namespace: 'ns' },
      spec: {
        backupMode: 'log',
        br: { cluster: 'demo' },
        s3: { provider: 'ceph', endpoint: 'http://minio:9000', bucket: 'b', prefix: 'l', secretName: 's3' },
      },
    });
    const configMap = (name: string) => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name }, data: {} });
    const job = (name: string) => ({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name },
      spec: { template: { spec: { restartPolicy: 'Never', containers: [{ name: 'c', image: 'busybox' }] } } },
    });
    const objects = [
      configMap('demo-status'),
      { apiVersion: 'coordination.k8s.io/v1', kind: 'Lease', metadata: { name: 'demo-discovery' }, spec: {} },
      { apiVersion: 'monitoring.coreos.com/v1', kind: 'PrometheusRule', metadata: { name: 'demo-alert-rules' }, spec: { groups: [] } },
      configMap('demo-dashboard-tikv-summary'),
      job('backup-once'),
      job('backup-log-log-start-2'),
      { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'demo-tikv-3' }, spec: { containers: [{ name: 'c', image: 'busybox' }] } },
    ];
    const r = run({ 'tc.yaml': tc, 'backup.yaml': `${backup}---\n${logBackup}`, 'more.yaml': yaml(...objects) }, { namespace: 'ns' });
    expect(r.status).toBe(1);
    const lines = r.stderr.trim().split('\n');
    const from = `rendered from ${r.dir}/tc.yaml: document 1`;
    const controller = `the controller of cluster demo (Deployment demo-discovery, ${from})`;
    expect(lines[0]).toBe(
      `${r.dir}/more.yaml: document 1: metadata.name (line 4): ConfigMap demo-status in namespace ns takes the place of ConfigMap demo-status in namespace ns, where ${controller} keeps its state at run time; rename it`,
    );
    expect(lines[1]).toBe(
      `${r.dir}/more.yaml: document 2: metadata.name (line 10): Lease demo-discovery in namespace ns takes the place of Lease demo-discovery in namespace ns, which ${controller} holds at run time; rename it`,
    );
    expect(lines[2]).toMatch(
      /document 3: metadata.name \(line \d+\): PrometheusRule demo-alert-rules in namespace ns takes the place of PrometheusRule demo-alert-rules in namespace ns, which the monitoring Job demo-monitoring-[0-9a-f]+ \(rendered from .*tc.yaml: document 1\) publishes at run time; rename it$/,
    );
    expect(lines[3]).toMatch(
      /document 4: metadata.name \(line \d+\): ConfigMap demo-dashboard-tikv-summary in namespace ns takes the place of ConfigMap demo-dashboard-<name> in namespace ns, a dashboard which the monitoring Job demo-monitoring-/,
    );
    expect(lines[4]).toMatch(
      /document 5: metadata.name \(line \d+\): Job backup-once in namespace ns takes the place of Job backup-once in namespace ns, which the controller of cluster demo .* creates at run time from ConfigMap backup-once; rename it$/,
    );
    expect(lines[5]).toMatch(
      /document 6: metadata.name \(line \d+\): Job backup-log-log-start-2 in namespace ns takes the place of Job backup-log-log-start-<n> in namespace ns, which the controller of cluster demo .* creates at run time from ConfigMap backup-log; rename it$/,
    );
    expect(lines[6]).toMatch(
      /document 7: metadata.name \(line \d+\): Pod demo-tikv-3 in namespace ns takes the place of Pod demo-tikv-<ordinal> in namespace ns, which Kubernetes creates at run time for StatefulSet demo-tikv \(rendered from .*tc.yaml: document 1\); rename it$/,
    );
    expect(lines.slice(7)).toEqual(['7 problems found; nothing was rendered']);
    // Without monitoring nothing is published: a PrometheusRule of that name is the user's.
    expect(run({ 'tc.yaml': CLUSTER, 'more.yaml': yaml(objects[2]) }, { namespace: 'ns' }).status).toBe(0);
  });

  test('a custom resource without a namespace gets it when its scope is known, and is refused when not', () => {
    const widget = { apiVersion: 'example.com/v1', kind: 'Widget', metadata: { name: 'w' }, spec: {} };
    const crd = (scope: string) => ({
      apiVersion: 'apiextensions.k8s.io/v1',
      kind: 'CustomResourceDefinition',
      metadata: { name: 'widgets.example.com' },
      spec: {
        group: 'example.com',
        scope,
        names: { kind: 'Widget', plural: 'widgets' },
        versions: [
          {
            name: 'v1',
            served: true,
            storage: true,
            schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
          },
        ],
      },
    });
    const unknown = run({ 'tc.yaml': CLUSTER, 'more.yaml': yaml(widget) }, { namespace: 'db' });
    expect(unknown.status).toBe(1);
    expect(unknown.stderr).toContain(
      `${unknown.dir}/more.yaml: document 1: metadata (line 4): namespace required: whether example.com/v1 Widget is namespaced is its CustomResourceDefinition's, which is not among the inputs; give metadata.namespace, or put the CustomResourceDefinition beside it`,
    );
    expect(
      run({ 'tc.yaml': CLUSTER, 'more.yaml': yaml({ ...widget, metadata: { name: 'w', namespace: 'x' } }) }, { namespace: 'db' }).status,
    ).toBe(0);
    const namespaced = run({ 'tc.yaml': CLUSTER, 'more.yaml': yaml(crd('Namespaced'), widget) }, { namespace: 'db' });
    expect(namespaced.stderr).toBe('');
    expect(namespaced.docs[namespaced.docs.length - 1]).toEqual({ ...widget, metadata: { name: 'w', namespace: 'db' } });
    const clusterScoped = run({ 'tc.yaml': CLUSTER, 'more.yaml': yaml(crd('Cluster'), widget) }, { namespace: 'db' });
    expect(clusterScoped.status).toBe(0);
    expect(clusterScoped.docs[clusterScoped.docs.length - 1]).toEqual(widget);
  });

  test('diff reports them as objects outside any cluster', () => {
    const before = [...render(cluster()), SECRET] as KubeObject[];
    const after = [...render(cluster()), { ...SECRET, stringData: { root: 'other' } }] as KubeObject[];
    const report = compareModels(buildModel(before), buildModel(after));
    expect(report.clusters.map((c) => c.objects.map((o) => `${o.change} ${o.kind} ${o.name}`))).toEqual([['changed Secret demo-root']]);
  });
});

describe('the Kubernetes definitions the CLI ships (current: test/unit/support/k8s-schema.test.ts)', () => {
  test.each(SCHEMA_MINORS)('validate as the full definitions of 1.%s do', (minor) => {
    const objects = [...render(cluster({ ticdc: { replicas: 1 } }), { kubeVersion: `1.${minor}` }), SECRET, ROLE];
    const broken = [
      { ...SECRET, data: { root: 'not base64!' } },
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'd' },
        spec: { replicas: '2', template: { spec: { containers: [{ name: 'c', imagePullPolicy: 1 }] } } },
      },
    ];
    for (const o of [...objects, ...broken]) expect(kubeSchema(minor).validate(o)).toEqual(fullSchema(minor).validate(o));
    expect(broken.every((o) => kubeSchema(minor).validate(o).length > 0)).toBe(true);
  });
});
