/**
 * One-shot Backups and Restores: rendered as a ConfigMap holding the Job (never the Job itself), with
 * the Role and controller settings to run it; and the controller's plan, which starts each at most
 * once, one at a time, only on a ready cluster, and never again after its Job is gone.
 */
import { stringify } from 'yaml';
import { buildModel, compareModels } from '../../../../src/diff';
import { loadManifests } from '../../../../src/diff/load';
import { loadInputs } from '../../../../src/backup/companions';
import { linkOperations } from '../../../../src/backup/link';
import { renderClusters } from '../../../../src/render/render';
import {
  clusterNotReady,
  oneShotDigests as operationDigests,
  planOneShotRuns as planWith,
  type OneShotInput as OperationInput,
  type OneShotRunsInput as OperationsInput,
} from '../../../../src/controller/plan/one-shot-runs';
import { jobToCreate } from '../../../../src/controller/reconcile/one-shot-runs';
import { StatusRecords } from '../../../../src/controller/records/store';
import {
  FORMER_KEPT,
  keptOperations,
  listOperations,
  messageOf,
  operationsOf,
  type OperationRecord,
} from '../../../../src/controller/records/operations';
import { parseClusterInfo } from '../../../../src/controller/model/cluster';
import { assertValidK8sObjects, SCHEMA_MINORS } from '../../../support/k8s-schema';
import { cluster, find, type Obj } from '../../../support/render';

const S3 = { provider: 'ceph', endpoint: 'http://minio:9000', bucket: 'backups', prefix: 'demo/once', secretName: 's3-secret' };

function backup(spec: Obj = {}, name = 'once'): Obj {
  return {
    apiVersion: 'pingcap.com/v1alpha1',
    kind: 'Backup',
    metadata: { name, namespace: 'ns' },
    spec: { br: { cluster: 'demo' }, s3: S3, ...spec },
  };
}

function restore(spec: Obj = {}, name = 'r'): Obj {
  return {
    apiVersion: 'pingcap.com/v1alpha1',
    kind: 'Restore',
    metadata: { name, namespace: 'ns' },
    spec: { br: { cluster: 'demo' }, s3: S3, ...spec },
  };
}

function renderAll(docs: Obj[], kube = '1.31'): Obj[] {
  const loaded = loadInputs(docs.map((d) => stringify(d)).join('---\n'), 'in.yaml');
  const linked = linkOperations(loaded.clusters, loaded.documents);
  const errors = [...loaded.errors.map((e) => e.message), ...linked.errors];
  if (errors.length > 0) throw new Error(errors.join('\n'));
  const objects = renderClusters(
    loaded.clusters.map((c) => c.resolved),
    linked.operations,
  ).flatMap((r) => r.objects);
  assertValidK8sObjects(objects, kube);
  return objects;
}

const jobOf = (objects: Obj[], name: string): Obj => JSON.parse(find(objects, 'ConfigMap', name).data['job.json']);

describe('a one-shot Backup or Restore renders as a ConfigMap holding its Job', () => {
  test('no Job is rendered: the ConfigMap carries it, labelled for the controller', () => {
    const objects = renderAll([cluster(), backup(), restore()]);
    expect(objects.filter((o) => o.kind === 'Job' || o.kind === 'CronJob')).toEqual([]);
    const cm = find(objects, 'ConfigMap', 'restore-r');
    expect(cm.metadata).toMatchObject({
      namespace: 'ns',
      labels: {
        'tidb-gitops.io/operation': 'restore-r',
        'app.kubernetes.io/managed-by': 'tidb-gitops',
        'app.kubernetes.io/component': 'restore',
      },
    });
    const job = jobOf(objects, 'restore-r');
    expect(job).toMatchObject({
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'restore-r', labels: { 'tidb-gitops.io/operation': 'restore-r' } },
    });
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
    const objects = renderAll([
      cluster(),
      restore({
        backupType: 'db',
        backoffLimit: 2,
        br: {
          cluster: 'demo',
          db: 'app',
          concurrency: 16,
          checksum: false,
          checkRequirements: false,
          rateLimit: 10,
          onLine: true,
          sendCredToTikv: false,
          options: ['--with-sys-table=false'],
        },
      }),
    ]);
    const job = jobOf(objects, 'restore-r');
    expect(job.spec.backoffLimit).toBe(2);
    const c = job.spec.template.spec.containers[0];
    expect(c.name).toBe('restore');
    expect(c.image).toBe('pingcap/br:v8.5.7');
    expect(c.args).toEqual([
      'restore',
      'db',
      '--pd=demo-pd.$(NAMESPACE):2379',
      '--send-credentials-to-tikv=false',
      '--storage=@STORAGE@',
      '--s3.provider=ceph',
      '--s3.endpoint=http://minio:9000',
      '--db=app',
      '--concurrency=16',
      '--checksum=false',
      '--check-requirements=false',
      '--ratelimit=10',
      '--online=true',
      '--with-sys-table=false',
    ]);
    const env = Object.fromEntries(c.env.map((e: Obj) => [e.name, e.value ?? e.valueFrom]));
    expect(env.BR_STORAGE).toBe('s3://backups/demo/once');
    expect(env.AWS_ACCESS_KEY_ID).toEqual({ secretKeyRef: { name: 's3-secret', key: 'access_key' } });
  });

  test("a point-in-time restore runs br restore point from the log, on the snapshot, to the point, in the operator's order", () => {
    const pitr = {
      restoreMode: 'pitr',
      pitrRestoredTs: '2026-11-27 10:00:00+08:00',
      s3: { ...S3, prefix: 'demo/log/log-2026-11-20t02-00-00' },
      pitrFullBackupStorageProvider: { s3: { ...S3, prefix: 'demo/snap/demo-pd.ns-2379-2026-11-27t02-00-00' } },
    };
    const job = jobOf(renderAll([cluster(), restore(pitr)]), 'restore-r');
    const c = job.spec.template.spec.containers[0];
    expect(c.args).toEqual([
      'restore',
      'point',
      '--pd=demo-pd.$(NAMESPACE):2379',
      '--storage=@STORAGE@',
      '--s3.provider=ceph',
      '--s3.endpoint=http://minio:9000',
      '--restored-ts=2026-11-27 10:00:00+08:00',
      '--full-backup-storage=s3://backups/demo/snap/demo-pd.ns-2379-2026-11-27t02-00-00',
    ]);
    expect(c.env.find((e: Obj) => e.name === 'BR_STORAGE').value).toBe('s3://backups/demo/log/log-2026-11-20t02-00-00');
    // A snapshot on another endpoint, region or provider: each URL names all of them, since BR folds a
    // URL's values into options both storages share and parses the log's URL again after the snapshot's.
    const elsewhere = jobOf(
      renderAll([
        cluster(),
        restore({ ...pitr, pitrFullBackupStorageProvider: { s3: { ...S3, endpoint: 'http://other:9000', region: 'eu-1' } } }),
      ]),
      'restore-r',
    );
    const ec = elsewhere.spec.template.spec.containers[0];
    expect(ec.args).toContain(
      '--full-backup-storage=s3://backups/demo/once?endpoint=http%3A%2F%2Fother%3A9000&region=eu-1&provider=ceph&force-path-style=true',
    );
    expect(ec.env.find((e: Obj) => e.name === 'BR_STORAGE').value).toBe(
      's3://backups/demo/log/log-2026-11-20t02-00-00?endpoint=http%3A%2F%2Fminio%3A9000&region=&provider=ceph&force-path-style=true',
    );
    const aws = jobOf(
      renderAll([
        cluster(),
        restore({
          ...pitr,
          s3: { ...pitr.s3, provider: 'aws', endpoint: undefined, region: 'us-west-2' },
          pitrFullBackupStorageProvider: {
            s3: { ...S3, provider: 'aws', endpoint: undefined, region: 'eu-west-1', forcePathStyle: false },
          },
        }),
      ]),
      'restore-r',
    );
    expect(aws.spec.template.spec.containers[0].args).toContain(
      '--full-backup-storage=s3://backups/demo/once?endpoint=&region=eu-west-1&provider=aws&force-path-style=false',
    );
    expect(aws.spec.template.spec.containers[0].env.find((e: Obj) => e.name === 'BR_STORAGE').value).toBe(
      's3://backups/demo/log/log-2026-11-20t02-00-00?endpoint=&region=us-west-2&provider=aws&force-path-style=true',
    );
    // Azure: another account or SAS token, likewise in both URLs.
    const az = { container: 'logs', prefix: 'demo/log', secretName: 'az', storageAccount: 'one' };
    const azure = jobOf(
      renderAll([
        cluster(),
        restore({
          ...pitr,
          s3: undefined,
          azblob: az,
          pitrFullBackupStorageProvider: { azblob: { ...az, container: 'snaps', storageAccount: 'two', sasToken: 'sv=1&sig=x' } },
        }),
      ]),
      'restore-r',
    );
    expect(azure.spec.template.spec.containers[0].args).toContain(
      '--full-backup-storage=azure://snaps/demo/log/?account-name=two&sas-token=sv%3D1%26sig%3Dx',
    );
    expect(azure.spec.template.spec.containers[0].env.find((e: Obj) => e.name === 'BR_STORAGE').value).toBe(
      'azure://logs/demo/log/?account-name=one&sas-token=',
    );
  });

  test('a point-in-time restore needs its snapshot, on storage BR reads with the same credentials, and a point BR takes', () => {
    const errors = (spec: Obj) => {
      const loaded = loadInputs([cluster(), restore({ restoreMode: 'pitr', ...spec })].map((d) => stringify(d)).join('---\n'), 'in.yaml');
      return [...loaded.errors.map((e) => e.message), ...linkOperations(loaded.clusters, loaded.documents).errors].join('\n');
    };
    expect(errors({})).toMatch(
      /spec\.pitrFullBackupStorageProvider \(line \d+\): required with restoreMode: pitr: the snapshot backup the log is replayed on/,
    );
    expect(errors({ pitrFullBackupStorageProvider: { s3: { ...S3, secretName: 'other' } } })).toMatch(
      /spec\.pitrFullBackupStorageProvider\.s3\.secretName \(line \d+\): expected the log backup's secretName "s3-secret": BR reads both storages with one set of credentials/,
    );
    expect(errors({ pitrFullBackupStorageProvider: { gcs: { bucket: 'g', projectId: 'p' } } })).toMatch(
      /spec\.pitrFullBackupStorageProvider\.gcs \(line \d+\): expected s3 storage like the log backup's: the restore's Job gives BR the log storage's credentials only, which do not reach a snapshot on gcs; copy the snapshot to s3 storage they reach/,
    );
    expect(errors({ pitrFullBackupStorageProvider: { s3: S3 }, pitrRestoredTs: '2026-11-27 10:00:00' })).toMatch(
      /spec\.pitrRestoredTs \(line \d+\): expected a TSO \(digits\) or a time with its zone/,
    );
    expect(errors({ pitrFullBackupStorageProvider: { s3: S3 }, backupType: 'db', br: { cluster: 'demo', db: 'app' } })).toMatch(
      /spec\.backupType \(line \d+\): a point-in-time restore takes tableFilter rules/,
    );
    expect(errors({ pitrFullBackupStorageProvider: { s3: S3 }, pitrRestoredTs: '450000000000000000' })).toBe('');
  });

  test('a backup takes commitTs as --backupts and never retries into its folder', () => {
    const job = jobOf(
      renderAll([cluster(), backup({ commitTs: '400036290571534337', br: { cluster: 'demo', timeAgo: '10m' } })]),
      'backup-once',
    );
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
    expect(rules.filter((r) => r.apiGroups.includes('batch'))).toEqual([
      { apiGroups: ['batch'], resources: ['jobs'], verbs: ['list', 'create'] },
    ]);
    expect(rules.filter((r) => r.resourceNames?.includes('restore-r'))).toEqual([
      { apiGroups: [''], resources: ['configmaps'], resourceNames: ['backup-once', 'restore-r'], verbs: ['get', 'patch'] },
    ]);
    // Without them, no ConfigMap of theirs; Jobs still, for the stop of a log backup whose document left Git.
    const bare = find(renderAll([cluster()]), 'Role', 'demo-discovery').rules as Obj[];
    expect(bare.filter((r) => r.apiGroups.includes('batch'))).toEqual([
      { apiGroups: ['batch'], resources: ['jobs'], verbs: ['list', 'create'] },
    ]);
    expect(bare.filter((r) => r.resourceNames?.some((n: string) => n.startsWith('backup-')))).toEqual([]);
  });

  test('a Backup and a schedule of the same name would share a Job name: refused', () => {
    const schedule = {
      apiVersion: 'pingcap.com/v1alpha1',
      kind: 'BackupSchedule',
      metadata: { name: 'once', namespace: 'ns' },
      spec: { schedule: '0 2 * * *', backupTemplate: { br: { cluster: 'demo' }, s3: S3 } },
    };
    expect(() => renderAll([cluster(), backup(), schedule])).toThrow(
      /document 3: metadata\.name \(line \d+\): BackupSchedule "once" would run as the same Job as the Backup/,
    );
  });
});

// ---- the controller's plan ----

const NOW = Date.UTC(2026, 10, 27, 12, 0, 0);
const TEMPLATE = { json: '{"kind":"Job"}', digest: 'sha256:aaa', spec: 'sha256:sss' };
/** PD's cluster ID of the cluster in these tests; another instance of it has OTHER. */
const CLUSTER = '7371123456789012345';
const OTHER = '7400000000000000001';

/** The plan for a cluster whose PD says it is CLUSTER, unless the input says otherwise. */
const planOperations = (input: OperationsInput) => planWith({ clusterId: CLUSTER, ...input });

function job(name: string, uid: string, condition?: 'Complete' | 'Failed', clusterId?: string): Obj {
  return {
    metadata: {
      name,
      uid,
      labels: { 'tidb-gitops.io/operation': name },
      ...(clusterId && { annotations: { 'tidb-gitops.io/cluster-id': clusterId } }),
    },
    status: {
      startTime: '2026-11-27T12:00:05Z',
      ...(condition === 'Complete' && { completionTime: '2026-11-27T12:03:00Z' }),
      conditions: condition
        ? [{ type: condition, status: 'True', lastTransitionTime: '2026-11-27T12:03:00Z', message: 'BackoffLimitExceeded' }]
        : [],
    },
  };
}

function pod(jobName: string, message: string): Obj {
  return {
    metadata: { name: `${jobName}-x`, labels: { 'batch.kubernetes.io/job-name': jobName } },
    status: { containerStatuses: [{ state: { terminated: { exitCode: 0, message, finishedAt: '2026-11-27T12:03:00Z' } } }] },
  };
}

function op(jobName: string, extra: Partial<OperationInput> = {}): OperationInput {
  return { job: jobName, template: TEMPLATE, pods: [], ...extra } as OperationInput;
}

describe('the controller runs each operation once', () => {
  test('starts one on a ready cluster: the record says Running before the Job exists', () => {
    const [step] = planOperations({ operations: [op('restore-r')], now: NOW });
    expect(step).toEqual({
      record: {
        job: 'restore-r',
        phase: 'Running',
        template: 'sha256:aaa',
        spec: 'sha256:sss',
        created: '2026-11-27T12:00:00Z',
        clusterId: CLUSTER,
      },
      create: true,
      news: 'started',
    });
  });

  test('waits, with the reason, while the cluster is not ready, its ConfigMap is missing, or a scheduled backup runs (restore only)', () => {
    const notReady = planOperations({ operations: [op('restore-r')], notReady: '2 of 3 tikv Pods are ready', now: NOW })[0];
    expect(notReady).toEqual({
      record: { job: 'restore-r', phase: 'Waiting', reason: 'the cluster is not ready: 2 of 3 tikv Pods are ready' },
      news: 'waiting',
    });
    // Waiting again, for the same or another reason, is no news: the record and the ConfigMap say why.
    expect(
      planOperations({ operations: [op('restore-r', { record: notReady.record })], notReady: '2 of 3 tikv Pods are ready', now: NOW })[0]
        .news,
    ).toBeUndefined();
    const other = planOperations({
      operations: [op('restore-r', { record: notReady.record })],
      notReady: '3 of 3 tikv Pods are ready',
      now: NOW,
    })[0];
    expect(other).toEqual({
      record: { job: 'restore-r', phase: 'Waiting', reason: 'the cluster is not ready: 3 of 3 tikv Pods are ready' },
    });
    expect(planOperations({ operations: [op('restore-r', { template: undefined })], now: NOW })[0].record.reason).toBe(
      'its ConfigMap restore-r is not there yet',
    );
    expect(planOperations({ operations: [op('restore-r')], scheduledRun: 'backup-nightly-29000000', now: NOW })[0].record.reason).toBe(
      'the scheduled backup backup-nightly-29000000 is running',
    );
    expect(planOperations({ operations: [op('backup-once')], scheduledRun: 'backup-nightly-29000000', now: NOW })[0].create).toBe(true);
  });

  test('one at a time: the second waits for the first', () => {
    const steps = planOperations({ operations: [op('backup-once'), op('restore-r')], now: NOW });
    expect(steps.map((s) => [s.record.phase, s.create ?? false])).toEqual([
      ['Running', true],
      ['Waiting', false],
    ]);
    expect(steps[1].record.reason).toBe('backup-once is running; operations of a cluster run one at a time');
  });

  test('follows its Job to the end, with what BR reported', () => {
    const running: OperationRecord = {
      job: 'backup-once',
      phase: 'Running',
      uid: 'u1',
      template: 'sha256:aaa',
      created: '2026-11-27T12:00:00Z',
    };
    const live = job('backup-once', 'u1', 'Complete');
    const [step] = planOperations({
      operations: [
        op('backup-once', {
          record: running,
          live: live as never,
          pods: [pod('backup-once', '{"storage":"s3://backups/demo/once","backupTS":"4500","size":"1024"}') as never],
        }),
      ],
      now: NOW,
    });
    expect(step).toEqual({
      record: {
        ...running,
        phase: 'Complete',
        started: '2026-11-27T12:00:05Z',
        finished: '2026-11-27T12:03:00Z',
        storage: 's3://backups/demo/once',
        backupTS: '4500',
        size: '1024',
      },
      news: 'finished',
    });
    expect(messageOf(step.record)).toBe(
      'backup written to s3://backups/demo/once, BackupTS 4500, 1024 bytes, finished 2026-11-27T12:03:00Z.',
    );
  });

  test('a Job gone before it finished is Lost, never created again; a finished one stays finished', () => {
    const running: OperationRecord = {
      job: 'restore-r',
      phase: 'Running',
      uid: 'u1',
      template: 'sha256:aaa',
      spec: 'sha256:sss',
      clusterId: CLUSTER,
    };
    const [lost] = planOperations({ operations: [op('restore-r', { record: running })], now: NOW });
    expect(lost).toEqual({
      record: { ...running, phase: 'Lost', error: 'its Job was deleted before it finished; it is not run again' },
      news: 'finished',
    });
    // A Job of that name made again by someone else is not this run.
    expect(
      planOperations({ operations: [op('restore-r', { record: running, live: job('restore-r', 'u2') as never })], now: NOW })[0].record
        .phase,
    ).toBe('Lost');
    const done: OperationRecord = { ...running, phase: 'Complete' };
    for (const input of [
      op('restore-r', { record: done }),
      op('restore-r', { record: lost.record }),
      op('restore-r', { record: { ...done, phase: 'Failed' } }),
    ]) {
      expect(planOperations({ operations: [input], now: NOW })[0]).toEqual({ record: input.record });
    }
    // A changed document says so, once, and still does not run.
    const changed = planOperations({
      operations: [op('restore-r', { record: done, template: { json: '{}', digest: 'sha256:bbb', spec: 'sha256:ttt' } })],
      now: NOW,
    })[0];
    expect(changed).toEqual({ record: { ...done, changed: 'sha256:ttt' }, news: 'changed' });
    expect(
      planOperations({
        operations: [op('restore-r', { record: changed.record, template: { json: '{}', digest: 'sha256:bbb', spec: 'sha256:ttt' } })],
        now: NOW,
      })[0],
    ).toEqual({ record: changed.record });
    expect(messageOf({ ...changed.record, storage: 's3://b/p', backupTS: '1', size: '2', finished: '2026-11-27T12:03:00Z' })).toBe(
      'restored from s3://b/p, BackupTS 1, 2 bytes, finished 2026-11-27T12:03:00Z. Its document changed since; it is not run again: give it a new name to run it again.',
    );
  });

  test('a restart between the record and the Job: the Job is adopted when there, created when not', () => {
    const pending: OperationRecord = { job: 'restore-r', phase: 'Running', template: 'sha256:aaa', created: '2026-11-27T12:00:00Z' };
    expect(planOperations({ operations: [op('restore-r', { record: pending })], now: NOW })[0]).toEqual({ record: pending, create: true });
    const adopted = planOperations({
      operations: [op('restore-r', { record: pending, live: job('restore-r', 'u9') as never })],
      now: NOW,
    })[0];
    expect(adopted.record).toMatchObject({ phase: 'Running', uid: 'u9' });
    expect(adopted.create).toBeUndefined();
  });

  test('records lost with the Job still there: adopted, not run twice; a foreign Job of that name is never adopted', () => {
    const adopted = planOperations({ operations: [op('restore-r', { live: job('restore-r', 'u3', 'Complete') as never })], now: NOW })[0];
    expect(adopted.record).toMatchObject({ phase: 'Complete', uid: 'u3' });
    // Marked with this cluster's ID when the controller created it: adopted too, and bound to it.
    const marked = planOperations({
      operations: [op('restore-r', { live: job('restore-r', 'u4', 'Complete', CLUSTER) as never })],
      now: NOW,
    })[0];
    expect(marked.record).toMatchObject({ phase: 'Complete', uid: 'u4', clusterId: CLUSTER });
    const foreign = { metadata: { name: 'restore-r', uid: 'x', labels: {} } };
    const step = planOperations({ operations: [op('restore-r', { live: foreign as never })], now: NOW })[0];
    expect(step.record).toEqual({
      job: 'restore-r',
      phase: 'Waiting',
      reason: 'a Job named restore-r exists that this operation did not create; delete it or rename the document',
    });
  });

  test('a run whose container cannot start says why, once', () => {
    const running: OperationRecord = { job: 'restore-r', phase: 'Running', uid: 'u1' };
    const waiting = {
      metadata: { name: 'restore-r-x', labels: { 'batch.kubernetes.io/job-name': 'restore-r' } },
      status: {
        containerStatuses: [{ state: { waiting: { reason: 'CreateContainerConfigError', message: 'secret "s3-secret" not found' } } }],
      },
    };
    const first = planOperations({
      operations: [op('restore-r', { record: running, live: job('restore-r', 'u1') as never, pods: [waiting as never] })],
      now: NOW,
    })[0];
    expect(first).toEqual({
      record: { ...running, started: '2026-11-27T12:00:05Z', error: 'CreateContainerConfigError: secret "s3-secret" not found' },
      news: 'stuck',
    });
    expect(
      planOperations({
        operations: [op('restore-r', { record: first.record, live: job('restore-r', 'u1') as never, pods: [waiting as never] })],
        now: NOW,
      })[0].news,
    ).toBeUndefined();
    expect(messageOf(first.record)).toBe('cannot start: CreateContainerConfigError: secret "s3-secret" not found');
  });
});

describe('the records', () => {
  test('round-trip through the status document; what ran is never dropped: whole while in Git and for the newest 100 after, short for the others', () => {
    const records: Record<string, OperationRecord> = {
      'restore-r': {
        job: 'restore-r',
        phase: 'Complete',
        uid: 'u',
        template: 'sha256:a',
        spec: 'sha256:s',
        clusterId: CLUSTER,
        created: '2026-11-27T12:00:00Z',
        storage: 's3://b/p',
      },
      'backup-w': { job: 'backup-w', phase: 'Waiting', reason: 'x' },
      'restore-again': { job: 'restore-again', phase: 'Running', clusterId: OTHER, formerCluster: CLUSTER },
    };
    expect(operationsOf(JSON.parse(JSON.stringify({ operations: listOperations(records) })))).toEqual(records);
    expect(operationsOf({ operations: [{ job: 'x', phase: 'Weird' }, { phase: 'Complete' }] })).toEqual({});
    const many: Record<string, OperationRecord> = {};
    for (let i = 0; i < 250; i++)
      many[`restore-b${i}`] = {
        job: `restore-b${i}`,
        phase: 'Complete',
        uid: `u${i}`,
        storage: 's3://b/p',
        clusterId: CLUSTER,
        created: new Date(NOW + i * 1000).toISOString(),
      };
    const kept = keptOperations({ ...many, ...records }, ['restore-r', 'restore-b0']);
    expect(Object.keys(kept)).toHaveLength(252);
    expect(kept['restore-b0']).toEqual(many['restore-b0']);
    expect(kept['restore-b249']).toEqual(many['restore-b249']);
    expect(kept[`restore-b${250 - FORMER_KEPT}`]).toEqual(many[`restore-b${250 - FORMER_KEPT}`]);
    // Older than the newest 100 that left Git: what makes it run once, and to which cluster.
    expect(kept['restore-b10']).toEqual({
      job: 'restore-b10',
      phase: 'Complete',
      clusterId: CLUSTER,
      created: many['restore-b10'].created,
    });
    // A Waiting record of a document that left Git goes: it never ran.
    expect(kept['backup-w']).toBeUndefined();
    // Kept short, the record still stops a document put back in Git after all those others.
    const back = planOperations({ operations: [op('restore-b10', { record: kept['restore-b10'] })], now: NOW })[0];
    expect(back.create).toBeUndefined();
    expect(back.record.phase).toBe('Complete');
  });
});

describe("the records outlive what Argo CD's label tracking prunes", () => {
  test('the status ConfigMap does not carry the label by which label tracking claims objects', async () => {
    const applied: { name: string; labels: Record<string, string> }[] = [];
    const kube = {
      getConfigMapData: async () => undefined,
      applyConfigMap: async (name: string, labels: Record<string, string>) => void applied.push({ name, labels }),
    };
    const records = new StatusRecords(kube, 'demo');
    await records.restore();
    await records.setOperations({ 'restore-r': { job: 'restore-r', phase: 'Running', clusterId: CLUSTER } });
    expect(applied).toEqual([
      {
        name: 'demo-status',
        labels: {
          'app.kubernetes.io/name': 'tidb-cluster',
          'app.kubernetes.io/managed-by': 'tidb-operator',
          'app.kubernetes.io/component': 'discovery',
        },
      },
    ]);
  });
});

describe('a restore is bound to the cluster instance it restored', () => {
  const done: OperationRecord = {
    job: 'restore-r',
    phase: 'Complete',
    uid: 'u1',
    template: 'sha256:aaa',
    spec: 'sha256:sss',
    created: '2026-11-27T12:00:00Z',
    clusterId: OTHER,
    storage: 's3://b/p',
  };

  test('in a cluster made anew (another PD cluster ID) it is not Complete: it waits for the Job of the earlier run to go, then runs, once', () => {
    // The earlier run's Job is still there: not adopted, and the way out said, once.
    const leftover = planOperations({
      operations: [op('restore-r', { record: done, live: job('restore-r', 'u1', 'Complete', OTHER) as never })],
      now: NOW,
    })[0];
    expect(leftover).toEqual({
      record: {
        job: 'restore-r',
        phase: 'Waiting',
        formerCluster: OTHER,
        reason: `the Job restore-r of the restore into the cluster as it was before (PD cluster ID ${OTHER}) is still there; delete it (kubectl delete job restore-r) and the restore runs into this cluster`,
      },
      news: 'waiting',
    });
    expect(
      planOperations({
        operations: [op('restore-r', { record: leftover.record, live: job('restore-r', 'u1', 'Complete', OTHER) as never })],
        now: NOW,
      })[0],
    ).toEqual({ record: leftover.record });
    // A Job made before the annotation: the record says it is the earlier run's.
    expect(
      planOperations({ operations: [op('restore-r', { record: done, live: job('restore-r', 'u1', 'Complete') as never })], now: NOW })[0]
        .record.phase,
    ).toBe('Waiting');
    // Deleted: the restore runs into this cluster, and says what it does.
    const again = planOperations({ operations: [op('restore-r', { record: leftover.record })], now: NOW })[0];
    expect(again).toEqual({
      record: {
        job: 'restore-r',
        phase: 'Running',
        template: 'sha256:aaa',
        spec: 'sha256:sss',
        created: '2026-11-27T12:00:00Z',
        clusterId: CLUSTER,
        formerCluster: OTHER,
      },
      create: true,
      news: 'started',
    });
    expect(messageOf({ ...again.record, phase: 'Complete', storage: 's3://b/p', backupTS: '1', size: '2', finished: 'f' })).toBe(
      `restored from s3://b/p, BackupTS 1, 2 bytes, finished f, into the cluster made anew (PD cluster ID ${CLUSTER}; it restored before into cluster ${OTHER}, which is gone).`,
    );
    // Its Job gone with the records lost: the same. Over, it stays over in this cluster.
    expect(planOperations({ operations: [op('restore-r', { record: done })], now: NOW })[0].create).toBe(true);
    expect(
      planOperations({ operations: [op('restore-r', { record: { ...again.record, phase: 'Complete' } })], now: NOW })[0].create,
    ).toBeUndefined();
    // Not while the cluster is not ready, nor while PD does not say which cluster it is.
    expect(planOperations({ operations: [op('restore-r', { record: done })], notReady: 'x', now: NOW })[0].record).toMatchObject({
      phase: 'Waiting',
      formerCluster: OTHER,
    });
    expect(
      planOperations({ operations: [op('restore-r', { record: leftover.record })], clusterId: undefined, now: NOW })[0].record,
    ).toEqual({
      job: 'restore-r',
      phase: 'Waiting',
      formerCluster: OTHER,
      reason: "PD's cluster ID cannot be read, to bind the run to this instance of the cluster",
    });
  });

  test('in the same cluster, or unknown, it stays as it was; a Backup is not bound; a Job of another instance is not adopted', () => {
    expect(planOperations({ operations: [op('restore-r', { record: done })], clusterId: OTHER, now: NOW })[0]).toEqual({ record: done });
    const { clusterId: _c, ...older } = done;
    expect(planOperations({ operations: [op('restore-r', { record: older })], now: NOW })[0]).toEqual({ record: older });
    expect(planOperations({ operations: [op('restore-r', { record: done })], clusterId: undefined, now: NOW })[0]).toEqual({
      record: done,
    });
    const backup: OperationRecord = { ...done, job: 'backup-b' };
    expect(planOperations({ operations: [op('backup-b', { record: backup })], now: NOW })[0]).toEqual({ record: backup });
    // Records lost, and the Job left says it ran against another instance: not Complete here.
    const foreign = planOperations({
      operations: [op('restore-r', { live: job('restore-r', 'u7', 'Complete', OTHER) as never })],
      now: NOW,
    })[0];
    expect(foreign.record).toMatchObject({ phase: 'Waiting', formerCluster: OTHER });
    expect(foreign.create).toBeUndefined();
  });

  test("the controller's Job says which instance it runs against, and is no object of an Argo CD Application's by label", () => {
    const template = {
      apiVersion: 'batch/v1',
      kind: 'Job',
      metadata: { name: 'restore-r', labels: { 'app.kubernetes.io/instance': 'demo', 'tidb-gitops.io/operation': 'restore-r' } },
      spec: { template: { metadata: { labels: { 'app.kubernetes.io/instance': 'demo' } } } },
    };
    expect(jobToCreate(template, CLUSTER)).toEqual({
      ...template,
      metadata: {
        name: 'restore-r',
        labels: { 'tidb-gitops.io/operation': 'restore-r' },
        annotations: { 'tidb-gitops.io/cluster-id': CLUSTER },
      },
    });
  });
});

describe('a finished operation stays quiet through a cluster upgrade', () => {
  const jobJson = (image: string, db = 'app') =>
    JSON.stringify(
      { kind: 'Job', spec: { template: { spec: { containers: [{ name: 'restore', image, args: ['restore', 'db', `--db=${db}`] }] } } } },
      null,
      2,
    );

  test('a new BR image alone changes nothing; a change of what it does is announced, once', () => {
    const before = operationDigests(jobJson('pingcap/br:v8.5.0'));
    const upgraded = operationDigests(jobJson('pingcap/br:v8.5.7'));
    expect(upgraded.digest).not.toBe(before.digest);
    expect(upgraded.spec).toBe(before.spec);
    const done: OperationRecord = { job: 'restore-r', phase: 'Complete', template: before.digest, spec: before.spec, clusterId: CLUSTER };
    expect(
      planOperations({
        operations: [op('restore-r', { record: done, template: { json: jobJson('pingcap/br:v8.5.7'), ...upgraded } })],
        now: NOW,
      })[0],
    ).toEqual({ record: done });
    const other = operationDigests(jobJson('pingcap/br:v8.5.7', 'billing'));
    expect(other.spec).not.toBe(before.spec);
    expect(planOperations({ operations: [op('restore-r', { record: done, template: { json: '', ...other } })], now: NOW })[0]).toEqual({
      record: { ...done, changed: other.spec },
      news: 'changed',
    });
  });

  test('a record kept before the digest of what it does takes it quietly', () => {
    const upgraded = operationDigests(jobJson('pingcap/br:v8.5.7'));
    const older: OperationRecord = { job: 'backup-b', phase: 'Complete', template: 'sha256:old' };
    expect(planOperations({ operations: [op('backup-b', { record: older, template: { json: '', ...upgraded } })], now: NOW })[0]).toEqual({
      record: { ...older, spec: upgraded.spec },
    });
    const announced: OperationRecord = { ...older, changed: 'sha256:old-change' };
    expect(
      planOperations({ operations: [op('backup-b', { record: announced, template: { json: '', ...upgraded } })], now: NOW })[0],
    ).toEqual({ record: { ...announced, spec: upgraded.spec, changed: upgraded.spec } });
  });
});

describe('the cluster is ready for a backup or restore', () => {
  const sts = (replicas: number, ready: number) => ({ metadata: { name: 'x' }, spec: { replicas }, status: { readyReplicas: ready } });
  const plan = (kind: string, phase = 'Normal', desired = 3) => ({ kind, phase, desired, reason: 'rolling out', busy: false });
  test('when every component is rolled out and ready, and every store is Up', () => {
    const components = [
      { kind: 'pd', sts: sts(3, 3), pods: [] },
      { kind: 'tikv', sts: sts(3, 3), pods: [] },
    ];
    const pd = {
      members: [],
      leader: 'a',
      stores: [{ id: 1, address: 'a:20160', state: 'Up', leaderCount: 0, regionCount: 0, labels: {} }],
      evicting: new Set<number>(),
    };
    expect(clusterNotReady(components as never, [plan('pd'), plan('tikv')] as never, pd as never)).toBeUndefined();
    expect(clusterNotReady(components as never, [plan('pd'), plan('tikv', 'Upgrading')] as never, pd as never)).toBe(
      'tikv is in Upgrading (rolling out)',
    );
    expect(
      clusterNotReady(
        [components[0], { kind: 'tikv', sts: sts(3, 2), pods: [] }] as never,
        [plan('pd'), plan('tikv')] as never,
        pd as never,
      ),
    ).toBe('2 of 3 tikv Pods are ready');
    expect(
      clusterNotReady(
        components as never,
        [plan('pd'), plan('tikv')] as never,
        { ...pd, stores: [{ ...pd.stores[0], state: 'Down' }] } as never,
      ),
    ).toBe('store 1 (a:20160) is Down');
    expect(clusterNotReady(components as never, [plan('pd'), plan('tikv')] as never, { error: 'connection refused' })).toBe(
      'PD cannot be read: connection refused',
    );
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
    return compareModels(buildModel(objects(before)), buildModel(objects(after)))
      .clusters.flatMap((c) => c.risks)
      .filter((r) => r.id === 'restore');
  }

  test('added, it says what is restored from where; changed, that it does not run again once it ran; a Backup is no risk', () => {
    const added = risks([cluster()], [cluster(), restore(), backup()]);
    expect(added).toEqual([
      {
        id: 'restore',
        component: 'restore',
        message:
          'Restore r is added: once this lands, the controller restores s3://backups/demo/once into the cluster (BR restore full), once, when the cluster is ready and no other backup or restore runs.',
      },
    ]);
    const changed = risks([cluster(), restore()], [cluster(), restore({ backupType: 'db', br: { cluster: 'demo', db: 'app' } })]);
    expect(changed.map((r) => r.message)).toEqual([
      'Restore r changed: a Restore runs once, so if it already ran this change does nothing (give it a new name to restore again); if it has not, it runs as changed: restores s3://backups/demo/once into the cluster (BR restore db).',
    ]);
    expect(risks([cluster(), restore()], [cluster(), restore()])).toEqual([]);
    // The ConfigMap holds a Job, not a component's config: it is an object added, nothing restarts for it.
    const loaded = (docs: Obj[]) =>
      loadManifests([{ file: 'in.yaml', text: docs.map((d) => stringify(d)).join('---\n'), explicit: true }]).objects;
    const report = compareModels(buildModel(loaded([cluster()])), buildModel(loaded([cluster(), restore()]))).clusters[0];
    expect(report.components.map((c) => c.component)).toEqual(['discovery']);
    expect(report.objects).toEqual(
      expect.arrayContaining([expect.objectContaining({ kind: 'ConfigMap', name: 'restore-r', change: 'added' })]),
    );
    expect(risks([cluster(), restore()], [cluster()])).toEqual([]);
  });
});
