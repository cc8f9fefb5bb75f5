/**
 * Every refusal names the input a user must change (file, document, path, line), and what the API
 * server would refuse is refused at render: objects kept beside the clusters (their names, keys,
 * labels, hosts, sizes and Pod templates), settings whose key only differs in case, monitoring labels
 * the renderer sets itself, and the problems that used to point at a rendered object (initial SQL too
 * large, a long name with createPassword, a duplicate cluster).
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { renderCommand } from '../../../src/cli/render';
import { readClusterInputs } from '../../../src/load/clusters';
import { renderClusters, renderProblems } from '../../../src/render/render';
import { cluster, type Obj } from '../../support/render';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tidb-gitops-refusals-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let seq = 0;
/** Runs `render` in this process on files written to a fresh directory; `$D` in stderr is that directory. */
function run(files: Record<string, string>, args: { namespace?: string; kubeVersion?: string } = {}) {
  const d = join(dir, `case-${++seq}`);
  mkdirSync(d);
  for (const [name, text] of Object.entries(files)) writeFileSync(join(d, name), text);
  let stdout = '';
  let stderr = '';
  const status = renderCommand(
    { paths: [d], controllerImage: 'example.com/c:1', ...args },
    { stdout: (s) => (stdout += s), stderr: (s) => (stderr += s), readStdin: () => '' },
  );
  return { status, stdout, stderr: stderr.split(d + '/').join('') };
}

const yaml = (...objects: Obj[]) => objects.map((o) => stringify(o)).join('---\n');
const CLUSTER = yaml(cluster({}, { namespace: undefined }));
const meta = (name: string, more: Obj = {}) => ({ name, ...more });

/** Renders the cluster with `objects` beside it (in more.yaml) and expects a refusal with each fragment. */
function refused(objects: Obj[], ...fragments: string[]) {
  const r = run({ 'tc.yaml': CLUSTER, 'more.yaml': yaml(...objects) });
  for (const f of fragments) expect(r.stderr).toContain(f);
  expect(r.stdout).toBe('');
  expect(r.status).not.toBe(0);
  return r;
}

const POD = (spec: Obj = {}, container: Obj = {}) => ({
  metadata: { labels: { app: 'x' } },
  spec: { containers: [{ name: 'c', image: 'busybox', ...container }], ...spec },
});

describe('class 5: objects kept beside the clusters meet the API server rules', () => {
  test('fails an object name each kind refuses', () => {
    refused(
      [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: meta('Bad_Name') }],
      'more.yaml: document 1: metadata.name (line 4):',
      'not a valid object name',
    );
    refused(
      [{ apiVersion: 'v1', kind: 'Service', metadata: meta('a.b'), spec: { ports: [{ port: 80 }] } }],
      'more.yaml: document 1: metadata.name',
      'not a valid Service name',
    );
    refused([{ apiVersion: 'v1', kind: 'Service', metadata: meta('1web'), spec: { ports: [{ port: 80 }] } }], 'not a valid Service name');
    // The rule every kind has speaks once, not beside the kind's own.
    const once = refused([{ apiVersion: 'v1', kind: 'ConfigMap', metadata: meta('a/b') }], 'metadata.name');
    expect(once.stderr.match(/metadata\.name/g)).toHaveLength(1);
    refused([{ apiVersion: 'v1', kind: 'Namespace', metadata: meta('a.b') }], 'more.yaml: document 1: metadata.name', 'Namespace');
    refused([{ apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta('UPPER') }], 'metadata.name', 'not a valid object name');
    refused(
      [
        {
          apiVersion: 'batch/v1',
          kind: 'CronJob',
          metadata: meta('c'.repeat(53)),
          spec: { schedule: '* * * * *', jobTemplate: { spec: { template: { ...POD({ restartPolicy: 'Never' }) } } } },
        },
      ],
      'metadata.name',
      '52',
    );
  });

  test('fails labels, annotations and a namespace the API server refuses', () => {
    refused(
      [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: meta('a', { labels: { app: 'a b' } }) }],
      'more.yaml: document 1: metadata.labels.app (line 6):',
      'not a valid label value',
    );
    refused(
      [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: meta('a', { labels: { 'bad key!': 'x' } }) }],
      'metadata.labels["bad key!"]',
      'not a valid key',
    );
    refused(
      [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: meta('a', { annotations: { big: 'x'.repeat(300 * 1024) } }) }],
      'metadata.annotations',
      'at most 256.0 KiB',
    );
    refused([{ apiVersion: 'v1', kind: 'ConfigMap', metadata: meta('a', { namespace: 'Bad' }) }], 'metadata.namespace', 'namespace');
  });

  test('fails ConfigMap and Secret keys with a space', () => {
    refused(
      [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: meta('a'), data: { 'my key': 'x' } }],
      'more.yaml: document 1: data["my key"] (line 6):',
      'not a valid ConfigMap key',
    );
    refused(
      [{ apiVersion: 'v1', kind: 'Secret', metadata: meta('a'), stringData: { 'my key': 'x' } }],
      'stringData["my key"]',
      'not a valid Secret key',
    );
    refused([{ apiVersion: 'v1', kind: 'Secret', metadata: meta('a'), data: { 'a/b': 'eA==' } }], 'data["a/b"]', 'not a valid Secret key');
  });

  test('fails an Ingress host with "_", and takes a wildcard', () => {
    const ingress = (host: string) => ({
      apiVersion: 'networking.k8s.io/v1',
      kind: 'Ingress',
      metadata: meta('i'),
      spec: { rules: [{ host }], tls: [{ hosts: [host] }] },
    });
    refused([ingress('my_host.example.com')], 'spec.rules[0].host', 'not a valid host', 'spec.tls[0].hosts[0]');
    refused([ingress('*.*.example.com')], 'spec.rules[0].host');
    refused([ingress('10.0.0.1')], 'spec.rules[0].host', 'IP address');
    const ok = run({ 'tc.yaml': CLUSTER, 'more.yaml': yaml(ingress('*.example.com')) });
    expect(ok.stderr).toBe('');
    expect(ok.status).toBe(0);
  });

  test('fails a negative claim size and a PriorityClass value above 1,000,000,000', () => {
    refused(
      [
        {
          apiVersion: 'v1',
          kind: 'PersistentVolumeClaim',
          metadata: meta('p'),
          spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '-1Gi' } } },
        },
      ],
      'spec.resources.requests.storage',
      'above zero',
    );
    refused(
      [{ apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: meta('high'), value: 2000000000 }],
      'more.yaml: document 1: value (line 5):',
      '1000000000',
    );
    refused(
      [{ apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: meta('system-mine'), value: 10 }],
      'metadata.name',
      'system-',
    );
  });

  test('fails what the Pod template of a Deployment, Job or CronJob holds that Pods would be refused for', () => {
    const deployment = (template: Obj) => ({
      apiVersion: 'apps/v1',
      kind: 'Deployment',
      metadata: meta('d'),
      spec: { selector: { matchLabels: { app: 'x' } }, template },
    });
    refused(
      [deployment(POD({}, { resources: { requests: { cpu: '-1' } } }))],
      'spec.template.spec.containers[0].resources.requests.cpu',
      'negative',
    );
    refused([deployment(POD({}, { env: [{ name: '1BAD' }] }))], 'spec.template.spec.containers[0].env[0].name', 'environment variable');
    refused([deployment(POD({ tolerations: [{ operator: 'Equal' }] }))], 'spec.template.spec.tolerations[0].operator');
    refused([deployment(POD({}, { name: 'Bad_Name' }))], 'spec.template.spec.containers[0].name', 'container name');
    refused(
      [
        {
          apiVersion: 'batch/v1',
          kind: 'Job',
          metadata: meta('j'),
          spec: { template: POD({ restartPolicy: 'Never' }, { imagePullPolicy: 'Sometimes' }) },
        },
      ],
      'spec.template.spec.containers[0].imagePullPolicy',
    );
    refused(
      [
        {
          apiVersion: 'batch/v1',
          kind: 'CronJob',
          metadata: meta('c'),
          spec: {
            schedule: '* * * * *',
            jobTemplate: { spec: { template: POD({ restartPolicy: 'Never' }, { ports: [{ containerPort: 70000 }] }) } },
          },
        },
      ],
      'spec.jobTemplate.spec.template.spec.containers[0].ports[0].containerPort',
    );
    // A Job's Pods never restart in place, and a Deployment's template must be what its selector takes.
    refused(
      [{ apiVersion: 'batch/v1', kind: 'Job', metadata: meta('j'), spec: { template: POD() } }],
      'spec.template.spec.restartPolicy',
      'OnFailure or Never (it defaults to Always',
    );
    refused(
      [
        {
          apiVersion: 'apps/v1',
          kind: 'Deployment',
          metadata: meta('d'),
          spec: { selector: { matchLabels: { app: 'other' } }, template: POD() },
        },
      ],
      'more.yaml: document 1: spec.template.metadata.labels (line',
      'do not match spec.selector',
    );
    refused(
      [deployment(POD({}, { volumeMounts: [{ name: 'data', mountPath: '/data' }] }))],
      'spec.template.spec.containers[0].volumeMounts[0].name',
      'no volume of the Pod is named data',
    );
    refused(
      [
        {
          apiVersion: 'apps/v1',
          kind: 'StatefulSet',
          metadata: meta('s'),
          spec: {
            serviceName: 's',
            selector: { matchLabels: { app: 'x' } },
            template: POD(),
            volumeClaimTemplates: [
              { metadata: { name: 'd' }, spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '-5Gi' } } } },
            ],
          },
        },
      ],
      'spec.volumeClaimTemplates[0].spec.resources.requests.storage',
      'above zero',
    );
  });

  test('fails a NetworkPolicy selector and a RoleBinding name the API server refuses', () => {
    refused(
      [
        {
          apiVersion: 'networking.k8s.io/v1',
          kind: 'NetworkPolicy',
          metadata: meta('np'),
          spec: { podSelector: { matchLabels: { app: 'a b' } } },
        },
      ],
      'spec.podSelector.matchLabels.app',
      'label value',
    );
    refused(
      [
        {
          apiVersion: 'rbac.authorization.k8s.io/v1',
          kind: 'RoleBinding',
          metadata: meta('a%b'),
          roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: 'r' },
          subjects: [],
        },
      ],
      'metadata.name',
    );
  });

  test('takes common objects the API server takes', () => {
    const objects = [
      {
        apiVersion: 'v1',
        kind: 'ConfigMap',
        metadata: meta('cm', { labels: { 'example.com/team': 'db' } }),
        data: { 'my.cnf': 'x', 'a-b_c': 'z' },
      },
      { apiVersion: 'v1', kind: 'Secret', metadata: meta('s'), stringData: { 'tls.crt': 'x' } },
      { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta('sa') },
      { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: meta('system:r'), rules: [] },
      { apiVersion: 'scheduling.k8s.io/v1', kind: 'PriorityClass', metadata: meta('high'), value: 1000000000 },
      {
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        metadata: meta('p'),
        spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
      },
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: meta('d'),
        spec: {
          selector: { matchLabels: { app: 'x' } },
          template: POD({}, { resources: { requests: { cpu: '100m' }, limits: { cpu: '1' } } }),
        },
      },
    ];
    const r = run({ 'tc.yaml': CLUSTER, 'more.yaml': yaml(...objects) });
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
  });
});

/** Renders `files` (a cluster in tc.yaml unless given) and returns stderr, expecting a refusal. */
function refusedFiles(files: Record<string, string>, ...fragments: string[]) {
  const r = run({ 'tc.yaml': CLUSTER, ...files });
  for (const f of fragments) expect(r.stderr).toContain(f);
  expect(r.stderr).not.toContain(': rendered ');
  expect(r.stdout).toBe('');
  expect(r.status).not.toBe(0);
  return r.stderr;
}

describe('class 10: settings that would vanish', () => {
  test('fails a setting or an operator annotation written with capitals, saying which key is read', () => {
    const tc = (annotations: Obj) => yaml(cluster({}, { namespace: undefined, annotations }));
    refusedFiles(
      { 'tc.yaml': tc({ 'TIDB-GITOPS.IO/replace': 'demo-tikv-1' }) },
      'tc.yaml: document 1: metadata.annotations["TIDB-GITOPS.IO/replace"] (line 6): annotation keys are case-sensitive',
      'did you mean "tidb-gitops.io/replace"?',
    );
    refusedFiles({ 'tc.yaml': tc({ 'Tidb-GitOps.io/Drain-Hooks': 'false' }) }, 'did you mean "tidb-gitops.io/drain-hooks"?');
    refusedFiles(
      { 'tc.yaml': tc({ 'tidb.pingcap.com/PD-Min-Ready-Seconds': '30' }) },
      'metadata.annotations["tidb.pingcap.com/PD-Min-Ready-Seconds"]',
      'did you mean "tidb.pingcap.com/pd-min-ready-seconds"?',
    );
    // An unknown key of ours in capitals is an unknown setting, once.
    const once = refusedFiles({ 'tc.yaml': tc({ 'TIDB-GITOPS.IO/nothing': 'x' }) }, 'unknown setting');
    expect(once.match(/TIDB-GITOPS.IO\/nothing/g)).toHaveLength(1);
  });

  test('fails a monitoring label that the renderer sets itself, naming it', () => {
    const tc = (labels: string) =>
      yaml(
        cluster(
          {},
          { namespace: undefined, annotations: { 'tidb-gitops.io/monitoring': 'true', 'tidb-gitops.io/monitoring-labels': labels } },
        ),
      );
    refusedFiles(
      { 'tc.yaml': tc('release=prom, app.kubernetes.io/name=mine') },
      'metadata.annotations["tidb-gitops.io/monitoring-labels"] (line 7): label "app.kubernetes.io/name" is one tidb-gitops sets itself',
    );
    refusedFiles({ 'tc.yaml': tc('app.kubernetes.io/managed-by=me') }, 'label "app.kubernetes.io/managed-by"');
    refusedFiles({ 'tc.yaml': tc('grafana_dashboard=0') }, 'label "grafana_dashboard"');
    const ok = run({ 'tc.yaml': tc('release=prom, team=db') });
    expect(ok.stderr).not.toContain('tidb-gitops sets itself');
  });
});

describe('class 12: refusals point at the input, not a rendered object', () => {
  const tcWith = (over: Obj = {}, metadata: Obj = {}) => yaml(cluster(over, { namespace: undefined, ...metadata }));
  const initializer = (spec: Obj) =>
    yaml({
      apiVersion: 'pingcap.com/v1alpha1',
      kind: 'TidbInitializer',
      metadata: { name: 'init' },
      spec: { image: 'tnir/mysqlclient', cluster: { name: 'demo' }, ...spec },
    });

  test('fails an initSql too large for its ConfigMap at spec.initSql', () => {
    const sql = `${'INSERT INTO t VALUES (1);\n'.repeat(18000)}`;
    refusedFiles({ 'init.yaml': initializer({ initSql: sql }) }, 'init.yaml: document 1: spec.initSql (line');
  });

  test('fails a label prefix over 253 characters on the cluster at its label', () => {
    const key = `${'a'.repeat(250)}.example.com/team`;
    refusedFiles(
      { 'tc.yaml': tcWith({}, { labels: { [key]: 'db' } }) },
      'tc.yaml: document 1: metadata.labels[',
      '(line 6)',
      'its prefix must be a DNS subdomain',
    );
    const monitoring = { 'tidb-gitops.io/monitoring': 'true', 'tidb-gitops.io/monitoring-labels': `${key}=db` };
    refusedFiles(
      { 'tc.yaml': tcWith({}, { annotations: monitoring }) },
      'tc.yaml: document 1: metadata.annotations["tidb-gitops.io/monitoring-labels"] (line 7)',
      'its prefix must be a DNS subdomain',
    );
  });

  test('fails a cluster name too long for createPassword at metadata.name', () => {
    const name = 'c'.repeat(47);
    refusedFiles(
      { 'tc.yaml': tcWith({ tidb: { replicas: 1, initializer: { createPassword: true } } }, { name }) },
      'tc.yaml: document 1: metadata.name (line 4)',
      'at most 46',
      'createPassword',
    );
    // A TidbInitializer renders the same ConfigMap: refused at the cluster it names.
    const init = yaml({
      apiVersion: 'pingcap.com/v1alpha1',
      kind: 'TidbInitializer',
      metadata: { name: 'init' },
      spec: { image: 'tnir/mysqlclient', cluster: { name }, initSql: 'SELECT 1;' },
    });
    refusedFiles(
      { 'tc.yaml': tcWith({}, { name }), 'init.yaml': init },
      'init.yaml: document 1: spec.cluster.name (line 8): a cluster with an initializer has a name of at most 46',
    );
  });

  test('fails a duplicate cluster, and one named with and without a namespace, with lines', () => {
    refusedFiles(
      { 'a.yaml': CLUSTER },
      'tc.yaml: document 1: metadata.name (line 4): duplicate cluster "demo", also defined at a.yaml: document 1',
    );
    const namespaced = yaml(cluster({}, { namespace: 'db' }));
    refusedFiles({ 'a.yaml': namespaced }, 'tc.yaml: document 1: metadata.namespace (line 4): cluster "demo" has no namespace');
    refusedFiles({ 'tc.yaml': `${CLUSTER}---\n${CLUSTER}` }, 'tc.yaml: document 2: metadata.name (line');
  });

  test('maps what only the rendered objects show back to the cluster field it comes from', () => {
    const demoWith = (spec: string, tidb = '') =>
      `apiVersion: pingcap.com/v1alpha1\nkind: TidbCluster\nmetadata:\n  name: demo\nspec:\n${spec}  pd:\n    replicas: 1\n  tikv:\n    replicas: 3\n  tidb:\n    replicas: 1\n${tidb}`;
    refusedFiles(
      { 'tc.yaml': demoWith(`  annotations:\n    a: ${'x'.repeat(150_000)}\n`, `    annotations:\n      b: ${'y'.repeat(150_000)}\n`) },
      'tc.yaml: document 1: spec.tidb.annotations (line 15): the API server would refuse the StatefulSet demo-tidb rendered from it: spec.template.metadata.annotations: annotations take 293.0 KiB together',
    );
    refusedFiles(
      { 'tc.yaml': demoWith('', `    config: |\n      [labels]\n      note = "${'z'.repeat(1_100_000)}"\n`) },
      'tc.yaml: document 1: spec.tidb.config (line 12): the API server would refuse the ConfigMap demo-tidb rendered from it: data: its data takes 1.05 MiB',
    );
  });

  test('maps what only a rendered object shows to the document beside the cluster it comes from', () => {
    const schedule = [
      'apiVersion: pingcap.com/v1alpha1',
      'kind: BackupSchedule',
      'metadata:',
      '  name: nightly',
      'spec:',
      '  schedule: "0 2 * * *"',
      '  maxBackups: 3',
      '  backupTemplate:',
      '    br:',
      '      cluster: demo',
      '    s3:',
      '      provider: ceph',
      '      bucket: b',
      '',
    ].join('\n');
    const read = readClusterInputs(
      {
        inputs: [
          { file: 'tc.yaml', text: CLUSTER, explicit: true },
          { file: 'sched.yaml', text: schedule, explicit: true },
        ],
      },
      { controllerImage: 'example.com/c:1' },
    );
    expect(read.errors).toEqual([]);
    // What no input check lets through today, put on the schedule after it was read.
    const [c] = read.clusters;
    const ops = { ...c.operations, schedules: c.operations.schedules.map((x) => ({ ...x, labels: { ...x.labels, 'bad key!': 'x' } })) };
    const rendered = renderClusters([c.resolved], [ops]);
    expect(renderProblems(rendered, read.clusters, read.documents)).toEqual([
      expect.stringMatching(
        /^sched\.yaml: document 1: metadata\.name \(line 4\): the API server would refuse the CronJob backup-nightly rendered from it: metadata\.labels\["bad key!"\]: "bad key!" is not a valid key/,
      ),
      expect.stringMatching(
        /^sched\.yaml: document 1: metadata\.name \(line 4\): the API server would refuse the CronJob backup-nightly rendered from it: spec\.jobTemplate\.spec\.template\.metadata\.labels\["bad key!"\]/,
      ),
    ]);
  });
});
