/**
 * The Pod fields of the documents beside a cluster (Backup, BackupSchedule, Restore, TidbMonitor,
 * TidbInitializer) reach Pods a controller creates after the apply: a CronJob's Jobs, the Job a
 * Restore's ConfigMap holds, the monitoring Job's Pod. The API server looks at them only then, so a
 * value it refuses would sync green and never run. They are refused where the document is read, with
 * the same rules as a TidbCluster's Pod fields, at their path and line; so are the storage's Secret and
 * volume names, and the labels the Job controller owns on a Job's Pods.
 */
import { stringify } from 'yaml';
import { loadInputs } from '../../../src/backup/companions';
import { linkOperations } from '../../../src/backup/link';
import { renderClusters } from '../../../src/render/render';
import { joinKey } from '../../../src/base/path';
import { assertValidK8sObjects } from '../../support/k8s-schema';
import { cluster, find, type Obj } from '../../support/render';

const S3 = { provider: 'aws', region: 'us-west-2', bucket: 'backups', prefix: 'demo', secretName: 's3-secret' };

const backup = (spec: Obj = {}, metadata: Obj = {}): Obj => ({
  apiVersion: 'pingcap.com/v1alpha1',
  kind: 'Backup',
  metadata: { name: 'once', namespace: 'ns', ...metadata },
  spec: { br: { cluster: 'demo' }, s3: S3, ...spec },
});

const restore = (spec: Obj = {}, metadata: Obj = {}): Obj => ({
  apiVersion: 'pingcap.com/v1alpha1',
  kind: 'Restore',
  metadata: { name: 'back', namespace: 'ns', ...metadata },
  spec: { br: { cluster: 'demo' }, s3: S3, ...spec },
});

const schedule = (template: Obj = {}, spec: Obj = {}, metadata: Obj = {}): Obj => ({
  apiVersion: 'pingcap.com/v1alpha1',
  kind: 'BackupSchedule',
  metadata: { name: 'nightly', namespace: 'ns', ...metadata },
  spec: { schedule: '0 2 * * *', backupTemplate: { br: { cluster: 'demo' }, s3: S3, ...template }, ...spec },
});

const monitor = (spec: Obj = {}, metadata: Obj = {}): Obj => ({
  apiVersion: 'pingcap.com/v1alpha1',
  kind: 'TidbMonitor',
  metadata: { name: 'basic', namespace: 'ns', ...metadata },
  spec: {
    clusters: [{ name: 'demo' }],
    initializer: { baseImage: 'pingcap/tidb-monitor-initializer', version: 'v8.5.7' },
    prometheus: { baseImage: 'prom/prometheus', version: 'v2.27.1' },
    reloader: { baseImage: 'pingcap/tidb-monitor-reloader', version: 'v1.0.1' },
    ...spec,
  },
});

const initializer = (spec: Obj = {}): Obj => ({
  apiVersion: 'pingcap.com/v1alpha1',
  kind: 'TidbInitializer',
  metadata: { name: 'demo-init', namespace: 'ns' },
  spec: { image: 'tnir/mysqlclient', cluster: { name: 'demo' }, passwordSecret: 'tidb-secret', ...spec },
});

const textOf = (docs: Obj[]) => docs.map((d) => stringify(d)).join('---\n');

/** Every error of reading and linking the documents, one per line. */
function errorsOf(docs: Obj[], kubeVersion?: string): string {
  const loaded = loadInputs(textOf(docs), 'in.yaml', kubeVersion ? { kubeVersion } : {});
  const linked = linkOperations(loaded.clusters, loaded.documents);
  return [...loaded.errors.map((e) => e.message), ...linked.errors].join('\n');
}

function renderAll(docs: Obj[], kubeVersion = '1.31'): Obj[] {
  const loaded = loadInputs(textOf(docs), 'in.yaml', { kubeVersion });
  const linked = linkOperations(loaded.clusters, loaded.documents);
  const errors = [...loaded.errors.map((e) => e.message), ...linked.errors].join('\n');
  if (errors) throw new Error(errors);
  const objects = renderClusters(
    loaded.clusters.map((c) => c.resolved),
    linked.operations,
  ).flatMap((r) => r.objects);
  assertValidK8sObjects(objects, kubeVersion);
  return objects;
}

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/**
 * The document (second in the input, after the cluster) is refused at `path`, on the line where the
 * path's last key is written, with words containing `words`.
 */
function expectRefused(doc: Obj, path: string, words: string, kubeVersion?: string): void {
  const docs = [cluster(), doc];
  const errors = errorsOf(docs, kubeVersion);
  const match = new RegExp(`^in\\.yaml: document 2: ${escape(path)} \\(line (\\d+)\\): (.*)$`, 'm').exec(errors);
  if (!match) throw new Error(`expected a refusal at ${path}, got:\n${errors || '(nothing)'}`);
  expect(match[2]).toContain(words);
  // The line is the document's own (counted from the start of the file).
  const lines = textOf(docs).split('\n');
  const key = /(?:\.|^)([A-Za-z0-9_-]+)(?:\[\d+\])*$|\["([^"]+)"\](?:\[\d+\])*$/.exec(path)!;
  const name = key[1] ?? key[2];
  const at = lines[Number(match[1]) - 1];
  expect(at).toMatch(new RegExp(`^[ -]*"?${escape(name)}"?:|^[ -]*- `));
}

describe('fails Pod fields of Backups, schedules and Restores the API server refuses in their Jobs', () => {
  test.each([
    [
      'a toleration without a key that is not Exists',
      { tolerations: [{ operator: 'Equal', value: 'x' }] },
      'spec.tolerations[0].operator',
      'must have operator Exists',
    ],
    [
      'a request above its limit',
      { resources: { requests: { cpu: '2' }, limits: { cpu: '1' } } },
      'spec.resources.requests.cpu',
      'above the limit',
    ],
    [
      'an extended resource without its limit',
      { resources: { requests: { 'example.com/gpu': '1' } } },
      'spec.resources.requests["example.com/gpu"]',
      'needs a limit too',
    ],
    [
      'storage as a container resource',
      { resources: { requests: { storage: '1Gi' } } },
      'spec.resources.requests.storage',
      'not a resource a container can ask for',
    ],
    ['a resource claim the Pod does not have', { resources: { claims: [{ name: 'gpu' }] } }, 'spec.resources.claims', 'no resource claims'],
    ['a negative runAsUser', { podSecurityContext: { runAsUser: -1 } }, 'spec.podSecurityContext.runAsUser', 'not a user or group ID'],
    [
      'a fieldPath no variable can read',
      { env: [{ name: 'A', valueFrom: { fieldRef: { fieldPath: 'spec.bogus' } } }] },
      'spec.env[0].valueFrom.fieldRef.fieldPath',
      'not a field an environment variable can read',
    ],
    [
      'an environment variable name 1.31 refuses',
      { env: [{ name: '1BAD', value: 'x' }] },
      'spec.env[0].name',
      'not a valid environment variable name on Kubernetes 1.31',
    ],
    ['a ServiceAccount name', { serviceAccount: 'Bad_SA' }, 'spec.serviceAccount', 'not a valid ServiceAccount name'],
    ['a PriorityClass name', { priorityClassName: 'Bad_Class' }, 'spec.priorityClassName', 'not a PriorityClass name'],
    [
      'an affinity weight',
      {
        affinity: {
          nodeAffinity: {
            preferredDuringSchedulingIgnoredDuringExecution: [
              { weight: 101, preference: { matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] } },
            ],
          },
        },
      },
      'spec.affinity.nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight',
      'weight is 1 to 100',
    ],
    [
      'a volume name',
      { additionalVolumes: [{ name: 'Bad_Name', emptyDir: {} }] },
      'spec.additionalVolumes[0].name',
      'not a valid volume name',
    ],
    ['a volume without a source', { additionalVolumes: [{ name: 'extra' }] }, 'spec.additionalVolumes[0]', 'exactly one source'],
    [
      'two volumes of one name',
      {
        additionalVolumes: [
          { name: 'extra', emptyDir: {} },
          { name: 'extra', emptyDir: {} },
        ],
      },
      'spec.additionalVolumes[1].name',
      'two volumes are named extra',
    ],
    [
      'a mount of a missing volume',
      { additionalVolumes: [{ name: 'extra', emptyDir: {} }], additionalVolumeMounts: [{ name: 'missing', mountPath: '/extra' }] },
      'spec.additionalVolumeMounts[0].name',
      'no volume of the Pod is named missing',
    ],
    [
      'two mounts at one path',
      {
        additionalVolumes: [
          { name: 'a', emptyDir: {} },
          { name: 'b', emptyDir: {} },
        ],
        additionalVolumeMounts: [
          { name: 'a', mountPath: '/x' },
          { name: 'b', mountPath: '/x' },
        ],
      },
      'spec.additionalVolumeMounts[1].mountPath',
      'two mounts are at /x',
    ],
  ])('%s, in a Backup', (_what, fields, path, words) => {
    expectRefused(backup(fields), path, words);
  });

  test("in a Restore and in a schedule's templates, at their paths", () => {
    expectRefused(restore({ tolerations: [{ key: 'k', operator: 'In' }] }), 'spec.tolerations[0].operator', 'expected Equal or Exists');
    expectRefused(
      schedule({ podSecurityContext: { runAsUser: -1 } }),
      'spec.backupTemplate.podSecurityContext.runAsUser',
      'not a user or group ID',
    );
    const log = { backupMode: 'log', br: { cluster: 'demo' }, s3: S3, serviceAccount: 'Bad_SA' };
    expectRefused(schedule({}, { logBackupTemplate: log }), 'spec.logBackupTemplate.serviceAccount', 'not a valid ServiceAccount name');
  });

  test('environment variable names follow the target: 1.32 takes any printable name', () => {
    const doc = backup({ env: [{ name: '1BAD', value: 'x' }] });
    expect(errorsOf([cluster(), doc], '1.32')).toBe('');
  });

  test("a volume's name is not taken twice with the storage's; a mount may name the storage's volume", () => {
    const local = { volume: { name: 'bk', persistentVolumeClaim: { claimName: 'bk' } }, volumeMount: { name: 'bk', mountPath: '/bk' } };
    expectRefused(
      backup({ s3: undefined, local, additionalVolumes: [{ name: 'bk', emptyDir: {} }] }),
      'spec.additionalVolumes[0].name',
      'two volumes are named bk',
    );
    expectRefused(
      backup({
        s3: undefined,
        local,
        additionalVolumes: [{ name: 'x', emptyDir: {} }],
        additionalVolumeMounts: [{ name: 'x', mountPath: '/bk' }],
      }),
      'spec.additionalVolumeMounts[0].mountPath',
      'two mounts are at /bk',
    );
    const gcs = { projectId: 'p', bucket: 'gcs-backups', secretName: 'gcs-secret' };
    expectRefused(
      backup({ s3: undefined, gcs, additionalVolumes: [{ name: 'gcs-credentials', emptyDir: {} }] }),
      'spec.additionalVolumes[0].name',
      'two volumes are named gcs-credentials',
    );
    const objects = renderAll([
      cluster(),
      restore({ s3: undefined, local, additionalVolumeMounts: [{ name: 'bk', mountPath: '/again', readOnly: true }] }),
    ]);
    const job = JSON.parse(find(objects, 'ConfigMap', 'restore-back').data['job.json']);
    expect(job.spec.template.spec.containers[0].volumeMounts).toEqual([
      { name: 'bk', mountPath: '/bk' },
      { name: 'bk', mountPath: '/again', readOnly: true },
    ]);
  });

  test("a log backup's mount of the storage's volume: its pause and stop Jobs have no such volume", () => {
    const local = { volume: { name: 'bk', persistentVolumeClaim: { claimName: 'bk' } }, volumeMount: { name: 'bk', mountPath: '/bk' } };
    expectRefused(
      backup({ s3: undefined, backupMode: 'log', local, additionalVolumeMounts: [{ name: 'bk', mountPath: '/again' }] }),
      'spec.additionalVolumeMounts[0].name',
      'storage',
    );
  });

  test("the document's labels, which its Job's Pods carry", () => {
    expectRefused(backup({}, { labels: { 'bad key': 'x' } }), 'metadata.labels["bad key"]', 'not a valid key');
    expectRefused(restore({}, { labels: { team: 'bad value!' } }), 'metadata.labels.team', 'not a valid label value');
  });

  test('valid Pod fields render as before', () => {
    const fields = {
      tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'backup', effect: 'NoSchedule' }],
      resources: {
        requests: { cpu: '1', memory: '1Gi', 'example.com/gpu': '1' },
        limits: { cpu: '2', memory: '2Gi', 'example.com/gpu': '1' },
      },
      env: [{ name: 'POD', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
      serviceAccount: 'tidb-backup-manager',
      priorityClassName: 'backup-low',
      podSecurityContext: { runAsUser: 1000, fsGroup: 2000 },
      additionalVolumes: [{ name: 'extra', emptyDir: {} }],
      additionalVolumeMounts: [{ name: 'extra', mountPath: '/extra' }],
    };
    const objects = renderAll([cluster({ tlsCluster: { enabled: true } }), schedule(fields, {}, { labels: { team: 'dba' } })]);
    const pod = find(objects, 'CronJob', 'backup-nightly').spec.jobTemplate.spec.template;
    expect(pod.metadata.labels.team).toBe('dba');
    expect(pod.spec).toMatchObject({
      serviceAccountName: 'tidb-backup-manager',
      priorityClassName: 'backup-low',
      tolerations: fields.tolerations,
    });
    expect(pod.spec.volumes.map((v: Obj) => v.name)).toEqual(['cluster-client-tls', 'extra']);
  });
});

test('every problem of a document at once: its labels, its storage and its Pod fields', () => {
  const doc = schedule(
    { s3: { ...S3, secretName: 'S3_Secret' }, env: [{ name: '1BAD', value: 'x' }] },
    {},
    { labels: { 'job-name': 'x' } },
  );
  const errors = errorsOf([cluster(), doc]);
  expect(errors).toMatch(/document 2: spec\.backupTemplate\.s3\.secretName \(line \d+\)/);
  expect(errors).toMatch(/document 2: spec\.backupTemplate\.env\[0\]\.name \(line \d+\)/);
  expect(errors).toMatch(/document 2: metadata\.labels\.job-name \(line \d+\)/);
});

describe('fails Secret and volume names in storage', () => {
  test.each([
    ['S3_Secret', 'an upper-case letter and "_"'],
    ['has space', 'a space'],
    ['a'.repeat(254), '254 characters'],
  ])('an S3 secretName %s (%s)', (secretName) => {
    expectRefused(backup({ s3: { ...S3, secretName } }), 'spec.s3.secretName', 'not a valid Secret name');
  });

  test('GCS and Azure Blob Secrets, a local volume, and the full backup of a point-in-time restore', () => {
    expectRefused(
      schedule({ s3: undefined, gcs: { projectId: 'p', bucket: 'gcs-backups', secretName: 'Gcs_Key' } }),
      'spec.backupTemplate.gcs.secretName',
      'not a valid Secret name',
    );
    expectRefused(
      backup({ s3: undefined, azblob: { container: 'backups', secretName: 'Az Secret' } }),
      'spec.azblob.secretName',
      'not a valid Secret name',
    );
    const local = {
      volume: { name: 'Bad_Vol', persistentVolumeClaim: { claimName: 'bk' } },
      volumeMount: { name: 'Bad_Vol', mountPath: '/bk' },
    };
    expectRefused(backup({ s3: undefined, local }), 'spec.local.volume.name', 'not a valid volume name');
    const full = { s3: { ...S3, secretName: 'S3_Secret' } };
    expectRefused(
      restore({ s3: { ...S3, secretName: 'S3_Secret' }, restoreMode: 'pitr', pitrFullBackupStorageProvider: full }),
      'spec.pitrFullBackupStorageProvider.s3.secretName',
      'not a valid Secret name',
    );
  });
});

describe("fails the labels the Job controller owns on a Job's Pods", () => {
  test.each(['batch.kubernetes.io/controller-uid', 'batch.kubernetes.io/job-name', 'job-name', 'controller-uid'])('%s', (key) => {
    const path = joinKey('metadata.labels', key);
    expectRefused(schedule({}, {}, { labels: { [key]: 'x' } }), path, 'the Job controller sets it');
    expectRefused(backup({}, { labels: { [key]: 'x' } }), path, 'the Job controller sets it');
    expectRefused(restore({}, { labels: { [key]: 'x' } }), path, 'the Job controller sets it');
    expectRefused(monitor({ labels: { [key]: 'x' } }), path.replace('metadata', 'spec'), 'the Job controller sets it');
  });
});

test("fails them in a cluster's monitoring labels, which the monitoring Job's Pods carry", () => {
  const errors = errorsOf([
    cluster({}, { annotations: { 'tidb-gitops.io/monitoring': 'true', 'tidb-gitops.io/monitoring-labels': 'release=prom, job-name=x' } }),
  ]);
  expect(errors).toMatch(
    /^in\.yaml: document 1: metadata\.annotations\["tidb-gitops\.io\/monitoring-labels"\] \(line \d+\): "job-name" is a label the Job controller sets itself/m,
  );
});

describe("fails the TidbMonitor's Pod fields the API server refuses in its Job", () => {
  test.each([
    ['a toleration', { tolerations: [{ key: 'k', operator: 'Exists', value: 'v' }] }, 'spec.tolerations[0].value', 'has no value'],
    ['a node selector key', { nodeSelector: { 'bad key': 'x' } }, 'spec.nodeSelector["bad key"]', 'not a valid key'],
    ['a node selector value', { nodeSelector: { pool: 'bad value!' } }, 'spec.nodeSelector.pool', 'not a valid label value'],
    ['a negative runAsUser', { podSecurityContext: { runAsUser: -1 } }, 'spec.podSecurityContext.runAsUser', 'not a user or group ID'],
    ['a label', { labels: { team: 'bad value!' } }, 'spec.labels.team', 'not a valid label value'],
    ['an annotation key', { annotations: { 'bad key': 'x' } }, 'spec.annotations["bad key"]', 'not a valid key'],
    [
      'a privileged container that cannot escalate',
      { initializer: { version: 'v8.5.7', securityContext: { privileged: true, allowPrivilegeEscalation: false } } },
      'spec.initializer.securityContext.allowPrivilegeEscalation',
      'privileged',
    ],
    [
      'a request above its limit',
      { initializer: { version: 'v8.5.7', requests: { memory: '2Gi' }, limits: { memory: '1Gi' } } },
      'spec.initializer.requests.memory',
      'above the limit',
    ],
  ])('%s', (_what, fields, path, words) => {
    expectRefused(monitor(fields), path, words);
  });

  test('valid ones render onto the Job', () => {
    const objects = renderAll([
      cluster(),
      monitor({
        enableAlertRules: true,
        tolerations: [{ key: 'ops', operator: 'Exists' }],
        nodeSelector: { pool: 'ops' },
        labels: { team: 'dba' },
      }),
    ]);
    const pod = objects.find((o) => o.kind === 'Job')!.spec.template;
    expect(pod.metadata.labels.team).toBe('dba');
    expect(pod.spec).toMatchObject({ nodeSelector: { pool: 'ops' }, tolerations: [{ key: 'ops', operator: 'Exists' }] });
  });
});

describe("fails the TidbInitializer's Pod fields the API server refuses", () => {
  test.each([
    ['a toleration', { tolerations: [{ key: 'k', operator: 'Bogus' }] }, 'spec.tolerations[0].operator', 'expected Equal or Exists'],
    [
      'a request above its limit',
      { resources: { requests: { cpu: '2' }, limits: { cpu: '1' } } },
      'spec.resources.requests.cpu',
      'above the limit',
    ],
    ['a ServiceAccount name', { serviceAccountName: 'Bad_SA' }, 'spec.serviceAccountName', 'not a valid ServiceAccount name'],
    ['a node selector', { nodeSelector: { 'bad key': 'x' } }, 'spec.nodeSelector["bad key"]', 'not a valid key'],
    ['a negative fsGroup', { podSecurityContext: { fsGroup: -1 } }, 'spec.podSecurityContext.fsGroup', 'not a user or group ID'],
  ])('%s', (_what, fields, path, words) => {
    expectRefused(initializer(fields), path, words);
  });
});
