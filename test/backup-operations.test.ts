/**
 * One-shot Backups and Restores: rendered as a ConfigMap holding the Job (never the Job itself), with
 * the Role and controller settings to run it; and the controller's plan, which starts each at most
 * once, one at a time, only on a ready cluster, and never again after its Job is gone.
 */
import { stringify } from 'yaml';
import { buildModel, compareModels } from '../src/diff';
import { loadManifests } from '../src/diff/load';
import { loadInputs } from '../src/backup/load';
import { linkOperations } from '../src/backup/link';
import { renderClusters } from '../src/render/render';
import { clusterNotReady, planOperations, type OperationInput } from '../src/controller/plan/operations';
import { keptOperations, listOperations, messageOf, operationsOf, type OperationRecord } from '../src/controller/records/operations';
import { parseClusterInfo } from '../src/controller/model/cluster';
import { assertValidK8sObjects, SCHEMA_MINORS } from './support/k8s-schema';
import { cluster, find, type Obj } from './support/render';

const S3 = { provider: 'ceph', endpoint: 'http://minio:9000', bucket: 'backups', prefix: 'demo/once', secretName: 's3-secret' };

function backup(spec: Obj = {}, name = 'once'): Obj {
  return { apiVersion: 'pingcap.com/v1alpha1', kind: 'Backup', metadata: { name, namespace: 'ns' }, spec: { br: { cluster: 'demo' }, s3: S3, ...spec } };
}

function restore(spec: Obj = {}, name = 'r'): Obj {
  return { apiVersion: 'pingcap.com/v1alpha1', kind: 'Restore', metadata: { name, namespace: 'ns' }, spec: { br: { cluster: 'demo' }, s3: S3, ...spec } };
}

function renderAll(docs: Obj[], kube = '1.31'): Obj[] {
  const loaded = loadInputs(docs.map((d) => stringify(d)).join('---\n'), 'in.yaml');
  const linked = linkOperations(loaded.clusters, loaded.documents);
  const errors = [...loaded.errors.map((e) => e.message), ...linked.errors];
  if (errors.length > 0) throw new Error(errors.join('\n'));
  const objects = renderClusters(loaded.clusters.map((c) => c.resolved), linked.operations).flatMap((r) => r.objects);
  assertValidK8sObjects(objects, kube);
  return objects;
}

const jobOf = (objects: Obj[], name: string): Obj => JSON.parse(find(objects, 'ConfigMap', name).data['job.json']);

describe('a one-shot Backup or Restore renders as a ConfigMap holding its Job', () => {
  test('no Job is rendered: the ConfigMap carries it, labelled for the controller', () => {
    const objects = renderAll([cluster(), backup(), restore()]);
    expect(objects.filter((o) => o.kind === 'Job' || o.kind === 'CronJob')).toEqual([]);
    const cm = find(objects, 'ConfigMap', 'restore-r');
    expect(cm.metadata).toMatchObject({ namespace: 'ns', labels: { 'tidb-gitops.io/operation': 'restore-r', 'app.kubernetes.io/managed-by': 'tidb-gitops', 'app.kubernetes.io/component': 'restore' } });
    const job = jobOf(objects, 'restore-r');
    expect(job).toMatchObject({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: 'restore-r', labels: { 'tidb-gitops.io/operation': 'restore-r' } } });
    // No TTL: the finished Job stays for `kubectl logs`; the controller never makes another.
    expect(job.spec.ttlSecondsAfterFinished).toBeUndefined();
    expect(job.spec.backoffLimit).toBe(0);
    expect(job.spec.template.metadata.labels['tidb-gitops.io/operation']).toBe('restore-r');
  });

  test('the Job is valid for every supported Kubernetes version', () => {
    for (const minor of SCHEMA_MINORS) {
      const objects = renderAll([cluster(), backup(), restore({ backoffLimit: 2 })], `1.${minor}`);
      assertValidK8sObjects([jobOf(objects, 'backup-once'), jobOf(objects, 'restore-r')], `1.${minor}`);
    }
  });

  test("a restore runs BR's restore with the operator's arguments, from the storage's folder itself", () => {
    const objects = renderAll([cluster(), restore({ backupType: 'db', backoffLimit: 2, br: { cluster: 'demo', db: 'app', concurrency: 16, checksum: false, checkRequirements: false, rateLimit: 10, onLine: true, sendCredToTikv: false, options: ['--with-sys-table=false'] } })]);
    const job = jobOf(objects, 'restore-r');
    expect(job.spec.backoffLimit).toBe(2);
    const c = job.spec.template.spec.containers[0];
    expect(c.name).toBe('restore');
    expect(c.image).toBe('pingcap/br:v8.5.7');
    expect(c.args).toEqual([
      'restore', 'db', '--pd=demo-pd.$(NAMESPACE):2379', '--send-credentials-to-tikv=false', '--storage=@STORAGE@',
      '--s3.provider=ceph', '--s3.endpoint=http://minio:9000', '--db=app', '--concurrency=16', '--checksum=false',
      '--check-requirements=false', '--ratelimit=10', '--online=true', '--with-sys-table=false',
    ]);
    const env = Object.fromEntries(c.env.map((e: Obj) => [e.name, e.value ?? e.valueFrom]));
    expect(env.BR_STORAGE).toBe('s3://backups/demo/once');
    expect(env.AWS_ACCESS_KEY_ID).toEqual({ secretKeyRef: { name: 's3-secret', key: 'access_key' } });
  });

  test("a point-in-time restore runs br restore point from the log, on the snapshot, to the point, in the operator's order", () => {
    const pitr = { restoreMode: 'pitr', pitrRestoredTs: '2026-11-27 10:00:00+08:00', s3: { ...S3, prefix: 'demo/log/log-2026-11-20t02-00-00' }, pitrFullBackupStorageProvider: { s3: { ...S3, prefix: 'demo/snap/demo-pd.ns-2379-2026-11-27t02-00-00' } } };
    const job = jobOf(renderAll([cluster(), restore(pitr)]), 'restore-r');
    const c = job.spec.template.spec.containers[0];
    expect(c.args).toEqual([
      'restore', 'point', '--pd=demo-pd.$(NAMESPACE):2379', '--storage=@STORAGE@', '--s3.provider=ceph', '--s3.endpoint=http://minio:9000',
      '--restored-ts=2026-11-27 10:00:00+08:00', '--full-backup-storage=s3://backups/demo/snap/demo-pd.ns-2379-2026-11-27t02-00-00',
    ]);
    expect(c.env.find((e: Obj) => e.name === 'BR_STORAGE').value).toBe('s3://backups/demo/log/log-2026-11-20t02-00-00');
    // A snapshot on another endpoint of the same kind: in the URL, which BR reads over the flags.
    const elsewhere = jobOf(renderAll([cluster(), restore({ ...pitr, pitrFullBackupStorageProvider: { s3: { ...S3, endpoint: 'http://other:9000', region: 'eu-1' } } })]), 'restore-r');
    expect(elsewhere.spec.template.spec.containers[0].args).toContain('--full-backup-storage=s3://backups/demo/once?endpoint=http%3A%2F%2Fother%3A9000&region=eu-1');
  });

  test('a point-in-time restore needs its snapshot, on storage BR reads with the same credentials, and a point BR takes', () => {
    const errors = (spec: Obj) => {
      const loaded = loadInputs([cluster(), restore({ restoreMode: 'pitr', ...spec })].map((d) => stringify(d)).join('---\n'), 'in.yaml');
      return [...loaded.errors.map((e) => e.message), ...linkOperations(loaded.clusters, loaded.documents).errors].join('\n');
    };
    expect(errors({})).toMatch(/spec\.pitrFullBackupStorageProvider \(line \d+\): required with restoreMode: pitr: the snapshot backup the log is replayed on/);
    expect(errors({ pitrFullBackupStorageProvider: { s3: { ...S3, secretName: 'other' } } })).toMatch(/spec\.pitrFullBackupStorageProvider\.s3\.secretName \(line \d+\): expected the log backup's secretName "s3-secret": BR reads both storages with one set of credentials/);
    expect(errors({ pitrFullBackupStorageProvider: { gcs: { bucket: 'g', projectId: 'p' } } })).toMatch(/spec\.pitrFullBackupStorageProvider\.gcs \(line \d+\): expected s3 storage like the log backup's/);
    expect(errors({ pitrFullBackupStorageProvider: { s3: S3 }, pitrRestoredTs: '2026-11-27 10:00:00' })).toMatch(/spec\.pitrRestoredTs \(line \d+\): expected a TSO \(digits\) or a time with its zone/);
    expect(errors({ pitrFullBackupStorageProvider: { s3: S3 }, backupType: 'db', br: { cluster: 'demo', db: 'app' } })).toMatch(/spec\.backupType \(line \d+\): a point-in-time restore takes tableFilter rules/);
    expect(errors({ pitrFullBackupStorageProvider: { s3: S3 }, pitrRestoredTs: '450000000000000000' })).toBe('');
  });

  test('a backup takes commitTs as --backupts and never retries into its folder', () => {
    const job = jobOf(renderAll([cluster(), backup({ commitTs: '400036290571534337', br: { cluster: 'demo', timeAgo: '10m' } })]), 'backup-once');
    expect(job.spec.backoffLimit).toBe(0);
    expect(job.spec.template.spec.containers[0].args.slice(0, 3)).toEqual(['backup', 'full', '--backupts=400036290571534337']);
    expect(job.spec.template.spec.containers[0].args).toContain('--timeago=10m');
  });

  test('the controller learns the Job names and may create those Jobs and note their state on those ConfigMaps', () => {
    const objects = renderAll([cluster(), backup(), restore()]);
    const env = find(objects, 'Deployment', 'demo-discovery').spec.template.spec.containers[0].env as Obj[];
    const info = JSON.parse(env.find((e) => e.name === 'TIDB_GITOPS_CLUSTER')!.value);
    expect(info.operations).toEqual(['backup-once', 'restore-r']);
    expect(parseClusterInfo(JSON.stringify(info), 'ns').operations).toEqual(['backup-once', 'restore-r']);
    const rules = find(objects, 'Role', 'demo-discovery').rules as Obj[];
    expect(rules.filter((r) => r.apiGroups.includes('batch'))).toEqual([{ apiGroups: ['batch'], resources: ['jobs'], verbs: ['list', 'create'] }]);
    expect(rules.filter((r) => r.resourceNames?.includes('restore-r'))).toEqual([{ apiGroups: [''], resources: ['configmaps'], resourceNames: ['backup-once', 'restore-r'], verbs: ['get', 'patch'] }]);
    // Without them, no ConfigMap of theirs; Jobs still, for the stop of a log backup whose document left Git.
    const bare = find(renderAll([cluster()]), 'Role', 'demo-discovery').rules as Obj[];
    expect(bare.filter((r) => r.apiGroups.includes('batch'))).toEqual([{ apiGroups: ['batch'], resources: ['jobs'], verbs: ['list', 'create'] }]);
    expect(bare.filter((r) => r.resourceNames?.some((n: string) => n.startsWith('backup-')))).toEqual([]);
  });

  test('a Backup and a schedule of the same name would share a Job name: refused', () => {
    const schedule = { apiVersion: 'pingcap.com/v1alpha1', kind: 'BackupSchedule', metadata: { name: 'once', namespace: 'ns' }, spec: { schedule: '0 2 * * *', backupTemplate: { br: { cluster: 'demo' }, s3: S3 } } };
    expect(() => renderAll([cluster(), backup(), schedule])).toThrow(/document 3: metadata\.name \(line \d+\): BackupSchedule "once" would run as the same Job as the Backup/);
  });
});

// ---- the controller's plan ----

const NOW = Date.UTC(2026, 10, 27, 12, 0, 0);
const TEMPLATE = { json: '{"kind":"Job"}', digest: 'sha256:aaa' };

function job(name: string, uid: string, condition?: 'Complete' | 'Failed'): Obj {
  return {
    metadata: { name, uid, labels: { 'tidb-gitops.io/operation': name } },
    status: {
      startTime: '2026-11-27T12:00:05Z',
      ...(condition === 'Complete' && { completionTime: '2026-11-27T12:03:00Z' }),
      conditions: condition ? [{ type: condition, status: 'True', lastTransitionTime: '2026-11-27T12:03:00Z', message: 'BackoffLimitExceeded' }] : [],
    },
  };
}

function pod(jobName: string, message: string): Obj {
  return { metadata: { name: `${jobName}-x`, labels: { 'batch.kubernetes.io/job-name': jobName } }, status: { containerStatuses: [{ state: { terminated: { exitCode: 0, message, finishedAt: '2026-11-27T12:03:00Z' } } }] } };
}

function op(jobName: string, extra: Partial<OperationInput> = {}): OperationInput {
  return { job: jobName, template: TEMPLATE, pods: [], ...extra } as OperationInput;
}

describe('the controller runs each operation once', () => {
  test('starts one on a ready cluster: the record says Running before the Job exists', () => {
    const [step] = planOperations({ operations: [op('restore-r')], now: NOW });
    expect(step).toEqual({ record: { job: 'restore-r', phase: 'Running', template: 'sha256:aaa', created: '2026-11-27T12:00:00Z' }, create: true, news: 'started' });
  });

  test('waits, with the reason, while the cluster is not ready, its ConfigMap is missing, or a scheduled backup runs (restore only)', () => {
    const notReady = planOperations({ operations: [op('restore-r')], notReady: '2 of 3 tikv Pods are ready', now: NOW })[0];
    expect(notReady).toEqual({ record: { job: 'restore-r', phase: 'Waiting', reason: 'the cluster is not ready: 2 of 3 tikv Pods are ready' }, news: 'waiting' });
    // Waiting again, for the same or another reason, is no news: the record and the ConfigMap say why.
    expect(planOperations({ operations: [op('restore-r', { record: notReady.record })], notReady: '2 of 3 tikv Pods are ready', now: NOW })[0].news).toBeUndefined();
    const other = planOperations({ operations: [op('restore-r', { record: notReady.record })], notReady: '3 of 3 tikv Pods are ready', now: NOW })[0];
    expect(other).toEqual({ record: { job: 'restore-r', phase: 'Waiting', reason: 'the cluster is not ready: 3 of 3 tikv Pods are ready' } });
    expect(planOperations({ operations: [op('restore-r', { template: undefined })], now: NOW })[0].record.reason).toBe('its ConfigMap restore-r is not there yet');
    expect(planOperations({ operations: [op('restore-r')], scheduledRun: 'backup-nightly-29000000', now: NOW })[0].record.reason).toBe('the scheduled backup backup-nightly-29000000 is running');
    expect(planOperations({ operations: [op('backup-once')], scheduledRun: 'backup-nightly-29000000', now: NOW })[0].create).toBe(true);
  });

  test('one at a time: the second waits for the first', () => {
    const steps = planOperations({ operations: [op('backup-once'), op('restore-r')], now: NOW });
    expect(steps.map((s) => [s.record.phase, s.create ?? false])).toEqual([['Running', true], ['Waiting', false]]);
    expect(steps[1].record.reason).toBe('backup-once is running; operations of a cluster run one at a time');
  });

  test('follows its Job to the end, with what BR reported', () => {
    const running: OperationRecord = { job: 'backup-once', phase: 'Running', uid: 'u1', template: 'sha256:aaa', created: '2026-11-27T12:00:00Z' };
    const live = job('backup-once', 'u1', 'Complete');
    const [step] = planOperations({ operations: [op('backup-once', { record: running, live: live as never, pods: [pod('backup-once', '{"storage":"s3://backups/demo/once","backupTS":"4500","size":"1024"}') as never] })], now: NOW });
    expect(step).toEqual({
      record: { ...running, phase: 'Complete', started: '2026-11-27T12:00:05Z', finished: '2026-11-27T12:03:00Z', storage: 's3://backups/demo/once', backupTS: '4500', size: '1024' },
      news: 'finished',
    });
    expect(messageOf(step.record)).toBe('backup written to s3://backups/demo/once, BackupTS 4500, 1024 bytes, finished 2026-11-27T12:03:00Z.');
  });

  test('a Job gone before it finished is Lost, never created again; a finished one stays finished', () => {
    const running: OperationRecord = { job: 'restore-r', phase: 'Running', uid: 'u1', template: 'sha256:aaa' };
    const [lost] = planOperations({ operations: [op('restore-r', { record: running })], now: NOW });
    expect(lost).toEqual({ record: { ...running, phase: 'Lost', error: 'its Job was deleted before it finished; it is not run again' }, news: 'finished' });
    // A Job of that name made again by someone else is not this run.
    expect(planOperations({ operations: [op('restore-r', { record: running, live: job('restore-r', 'u2') as never })], now: NOW })[0].record.phase).toBe('Lost');
    const done: OperationRecord = { ...running, phase: 'Complete' };
    for (const input of [op('restore-r', { record: done }), op('restore-r', { record: lost.record }), op('restore-r', { record: { ...done, phase: 'Failed' } })]) {
      expect(planOperations({ operations: [input], now: NOW })[0]).toEqual({ record: input.record });
    }
    // A changed document says so, once, and still does not run.
    const changed = planOperations({ operations: [op('restore-r', { record: done, template: { json: '{}', digest: 'sha256:bbb' } })], now: NOW })[0];
    expect(changed).toEqual({ record: { ...done, changed: 'sha256:bbb' }, news: 'changed' });
    expect(planOperations({ operations: [op('restore-r', { record: changed.record, template: { json: '{}', digest: 'sha256:bbb' } })], now: NOW })[0]).toEqual({ record: changed.record });
    expect(messageOf({ ...changed.record, storage: 's3://b/p', backupTS: '1', size: '2', finished: '2026-11-27T12:03:00Z' })).toBe('restored from s3://b/p, BackupTS 1, 2 bytes, finished 2026-11-27T12:03:00Z. Its document changed since; it is not run again: give it a new name to run it again.');
  });

  test('a restart between the record and the Job: the Job is adopted when there, created when not', () => {
    const pending: OperationRecord = { job: 'restore-r', phase: 'Running', template: 'sha256:aaa', created: '2026-11-27T12:00:00Z' };
    expect(planOperations({ operations: [op('restore-r', { record: pending })], now: NOW })[0]).toEqual({ record: pending, create: true });
    const adopted = planOperations({ operations: [op('restore-r', { record: pending, live: job('restore-r', 'u9') as never })], now: NOW })[0];
    expect(adopted.record).toMatchObject({ phase: 'Running', uid: 'u9' });
    expect(adopted.create).toBeUndefined();
  });

  test('records lost with the Job still there: adopted, not run twice; a foreign Job of that name is never adopted', () => {
    const adopted = planOperations({ operations: [op('restore-r', { live: job('restore-r', 'u3', 'Complete') as never })], now: NOW })[0];
    expect(adopted.record).toMatchObject({ phase: 'Complete', uid: 'u3' });
    const foreign = { metadata: { name: 'restore-r', uid: 'x', labels: {} } };
    const step = planOperations({ operations: [op('restore-r', { live: foreign as never })], now: NOW })[0];
    expect(step.record).toEqual({ job: 'restore-r', phase: 'Waiting', reason: 'a Job named restore-r exists that this operation did not create; delete it or rename the document' });
  });

  test('a run whose container cannot start says why, once', () => {
    const running: OperationRecord = { job: 'restore-r', phase: 'Running', uid: 'u1' };
    const waiting = { metadata: { name: 'restore-r-x', labels: { 'batch.kubernetes.io/job-name': 'restore-r' } }, status: { containerStatuses: [{ state: { waiting: { reason: 'CreateContainerConfigError', message: 'secret "s3-secret" not found' } } }] } };
    const first = planOperations({ operations: [op('restore-r', { record: running, live: job('restore-r', 'u1') as never, pods: [waiting as never] })], now: NOW })[0];
    expect(first).toEqual({ record: { ...running, started: '2026-11-27T12:00:05Z', error: 'CreateContainerConfigError: secret "s3-secret" not found' }, news: 'stuck' });
    expect(planOperations({ operations: [op('restore-r', { record: first.record, live: job('restore-r', 'u1') as never, pods: [waiting as never] })], now: NOW })[0].news).toBeUndefined();
    expect(messageOf(first.record)).toBe('cannot start: CreateContainerConfigError: secret "s3-secret" not found');
  });
});

describe('the records', () => {
  test('round-trip through the status document; what ran is kept while in Git, and the newest 100 after', () => {
    const records: Record<string, OperationRecord> = {
      'restore-r': { job: 'restore-r', phase: 'Complete', uid: 'u', template: 'sha256:a', created: '2026-11-27T12:00:00Z', storage: 's3://b/p' },
      'backup-w': { job: 'backup-w', phase: 'Waiting', reason: 'x' },
    };
    expect(operationsOf(JSON.parse(JSON.stringify({ operations: listOperations(records) })))).toEqual(records);
    expect(operationsOf({ operations: [{ job: 'x', phase: 'Weird' }, { phase: 'Complete' }] })).toEqual({});
    const many: Record<string, OperationRecord> = {};
    for (let i = 0; i < 150; i++) many[`backup-b${i}`] = { job: `backup-b${i}`, phase: 'Complete', created: new Date(NOW + i * 1000).toISOString() };
    const kept = keptOperations({ ...many, ...records }, ['restore-r', 'backup-b0']);
    expect(Object.keys(kept)).toHaveLength(102);
    expect(kept['backup-b0']).toBeDefined();
    expect(kept['backup-b149']).toBeDefined();
    expect(kept['backup-b10']).toBeUndefined();
    // A Waiting record of a document that left Git goes.
    expect(kept['backup-w']).toBeUndefined();
  });
});

describe('the cluster is ready for a backup or restore', () => {
  const sts = (replicas: number, ready: number) => ({ metadata: { name: 'x' }, spec: { replicas }, status: { readyReplicas: ready } });
  const plan = (kind: string, phase = 'Normal', desired = 3) => ({ kind, phase, desired, reason: 'rolling out', busy: false });
  test('when every component is rolled out and ready, and every store is Up', () => {
    const components = [{ kind: 'pd', sts: sts(3, 3), pods: [] }, { kind: 'tikv', sts: sts(3, 3), pods: [] }];
    const pd = { members: [], leader: 'a', stores: [{ id: 1, address: 'a:20160', state: 'Up', leaderCount: 0, regionCount: 0, labels: {} }], evicting: new Set<number>() };
    expect(clusterNotReady(components as never, [plan('pd'), plan('tikv')] as never, pd as never)).toBeUndefined();
    expect(clusterNotReady(components as never, [plan('pd'), plan('tikv', 'Upgrading')] as never, pd as never)).toBe('tikv is in Upgrading (rolling out)');
    expect(clusterNotReady([components[0], { kind: 'tikv', sts: sts(3, 2), pods: [] }] as never, [plan('pd'), plan('tikv')] as never, pd as never)).toBe('2 of 3 tikv Pods are ready');
    expect(clusterNotReady(components as never, [plan('pd'), plan('tikv')] as never, { ...pd, stores: [{ ...pd.stores[0], state: 'Down' }] } as never)).toBe('store 1 (a:20160) is Down');
    expect(clusterNotReady(components as never, [plan('pd'), plan('tikv')] as never, { error: 'connection refused' })).toBe('PD cannot be read: connection refused');
    expect(clusterNotReady([], [], undefined)).toBe('no component is running yet');
  });
});

describe('diff: a Restore is always a risk', () => {
  function risks(before: Obj[], after: Obj[]): { id: string; message: string }[] {
    const objects = (docs: Obj[]) => {
      const loaded = loadManifests([{ file: 'in.yaml', text: docs.map((d) => stringify(d)).join('---\n'), explicit: true }]);
      expect(loaded.errors).toEqual([]);
      return loaded.objects;
    };
    return compareModels(buildModel(objects(before)), buildModel(objects(after))).clusters.flatMap((c) => c.risks).filter((r) => r.id === 'restore');
  }

  test('added, it says what is restored from where; changed, that it does not run again once it ran; a Backup is no risk', () => {
    const added = risks([cluster()], [cluster(), restore(), backup()]);
    expect(added).toEqual([{ id: 'restore', component: 'restore', message: 'Restore r is added: once this lands, the controller restores s3://backups/demo/once into the cluster (BR restore full), once, when the cluster is ready and no other backup or restore runs.' }]);
    const changed = risks([cluster(), restore()], [cluster(), restore({ backupType: 'db', br: { cluster: 'demo', db: 'app' } })]);
    expect(changed.map((r) => r.message)).toEqual(['Restore r changed: a Restore runs once, so if it already ran this change does nothing (give it a new name to restore again); if it has not, it runs as changed: restores s3://backups/demo/once into the cluster (BR restore db).']);
    expect(risks([cluster(), restore()], [cluster(), restore()])).toEqual([]);
    // The ConfigMap holds a Job, not a component's config: it is an object added, nothing restarts for it.
    const loaded = (docs: Obj[]) => loadManifests([{ file: 'in.yaml', text: docs.map((d) => stringify(d)).join('---\n'), explicit: true }]).objects;
    const report = compareModels(buildModel(loaded([cluster()])), buildModel(loaded([cluster(), restore()]))).clusters[0];
    expect(report.components.map((c) => c.component)).toEqual(['discovery']);
    expect(report.objects).toEqual(expect.arrayContaining([expect.objectContaining({ kind: 'ConfigMap', name: 'restore-r', change: 'added' })]));
    expect(risks([cluster(), restore()], [cluster()])).toEqual([]);
  });
});
