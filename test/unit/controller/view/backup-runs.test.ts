/**
 * The controller's records of BackupSchedule runs: what a Job and its Pod say about a run, what the
 * records keep when the Job is gone, how they read back from a status document, and what the
 * renderer tells the controller (the schedules' names) and grants it (listing Jobs, only then).
 */
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { stringify } from 'yaml';
import { buildModel, compareModels } from '../../../../src/diff';
import { loadManifests } from '../../../../src/diff/load';
import { loadInputs } from '../../../../src/backup/companions';
import { linkOperations } from '../../../../src/backup/link';
import { parseClusterInfo } from '../../../../src/controller/model/cluster';
import type { Job, Pod } from '../../../../src/controller/model/objects';
import { observeRuns, terminationOutcome } from '../../../../src/controller/view/backup-runs';
import { expiredRuns, keyPrefixOf, logTruncation, ownFolder, truncationPoint } from '../../../../src/controller/plan/retention';
import { S3Client } from '../../../../src/controller/clients/s3';
import { backupRunsOf, listRuns, RUNS_KEPT, type BackupRun } from '../../../../src/controller/records/backup-runs';
import { renderClusters } from '../../../../src/render/render';
import { cluster, find, type Obj } from '../../../support/render';
import { startS3Server, type S3Server } from '../../../support/s3-server';

const T0 = '2026-11-27T02:00:00Z';

function job(name: string, schedule: string, conditions: Obj[] = [], extra: Obj = {}): Job {
  return {
    metadata: { name, uid: `uid-${name}`, labels: { 'tidb.pingcap.com/backup-schedule': schedule } },
    status: { startTime: new Date(T0), conditions, ...extra },
  } as unknown as Job;
}

function pod(jobName: string, message: string | undefined, finishedAt = T0): Pod {
  return {
    metadata: { name: `${jobName}-x`, labels: { 'batch.kubernetes.io/job-name': jobName } },
    status: {
      containerStatuses: [{ name: 'backup', state: message === undefined ? {} : { terminated: { exitCode: 0, message, finishedAt } } }],
    },
  } as Pod;
}

const complete = [{ type: 'Complete', status: 'True', lastTransitionTime: '2026-11-27T02:03:00Z' }];
const failed = [
  {
    type: 'Failed',
    status: 'True',
    lastTransitionTime: '2026-11-27T02:01:00Z',
    reason: 'BackoffLimitExceeded',
    message: 'Job has reached the specified backoff limit',
  },
];

describe('a run as its Job and Pod tell it', () => {
  test('running, then complete with what the run reported; reported once', () => {
    const running = observeRuns([job('backup-n-1', 'n')], [pod('backup-n-1', undefined)], {});
    // The Job's UID is kept: the run's folder is named with it.
    expect(running.runs['backup-n-1']).toEqual({ schedule: 'n', job: 'backup-n-1', uid: 'uid-backup-n-1', phase: 'Running', started: T0 });
    expect(running.finished).toEqual([]);
    const msg = '{"storage":"s3://b/p/c-pd.ns-2379-2026-11-27t02-00-00","backupTS":"470759906831237120","size":"115"}\n';
    const done = observeRuns(
      [job('backup-n-1', 'n', complete, { completionTime: '2026-11-27T02:03:00Z' })],
      [pod('backup-n-1', msg)],
      running.runs,
    );
    expect(done.runs['backup-n-1']).toEqual({
      schedule: 'n',
      job: 'backup-n-1',
      uid: 'uid-backup-n-1',
      phase: 'Complete',
      started: T0,
      finished: '2026-11-27T02:03:00Z',
      storage: 's3://b/p/c-pd.ns-2379-2026-11-27t02-00-00',
      backupTS: '470759906831237120',
      size: '115',
    });
    expect(done.finished.map((r) => r.job)).toEqual(['backup-n-1']);
    // Seen again: nothing new to announce, nothing changes.
    const again = observeRuns([job('backup-n-1', 'n', complete, { completionTime: '2026-11-27T02:03:00Z' })], [], done.runs);
    expect(again.finished).toEqual([]);
    expect(again.runs).toEqual(done.runs);
  });

  test("a failed run keeps BR's error, or the log's last lines, or the Job's reason", () => {
    const withError = observeRuns(
      [job('backup-n-2', 'n', failed)],
      [pod('backup-n-2', '{"storage":"s3://b/p/x","error":"Error: NoSuchBucket: The specified bucket does not exist"}')],
      {},
    );
    expect(withError.runs['backup-n-2']).toMatchObject({
      phase: 'Failed',
      storage: 's3://b/p/x',
      error: 'Error: NoSuchBucket: The specified bucket does not exist',
      finished: '2026-11-27T02:01:00Z',
    });
    const fromLog = observeRuns([job('backup-n-3', 'n', failed)], [pod('backup-n-3', 'a\nb\nc\nd: panic')], {});
    expect(fromLog.runs['backup-n-3'].error).toBe('b\nc\nd: panic');
    const bare = observeRuns([job('backup-n-4', 'n', failed)], [], {});
    expect(bare.runs['backup-n-4'].error).toBe('Job has reached the specified backoff limit');
  });

  test('an Azure SAS token never reaches the records, from the message or from a log tail the kubelet kept', () => {
    const url = 'azure://c/p/x/?account-name=acct&sas-token=sv%3D2024-08-04%26sig%3DAbCd%252Bsecret';
    const message = observeRuns(
      [job('backup-n-2', 'n', failed)],
      [pod('backup-n-2', JSON.stringify({ storage: url, error: `Error: write to ${url}: 403` }))],
      {},
    );
    const tail = observeRuns(
      [job('backup-n-3', 'n', failed)],
      [pod('backup-n-3', `panic: storage ${url}\nraw sv=2024-08-04&sig=AbCd%2Bsecret&se=x`)],
      {},
    );
    expect(message.runs['backup-n-2']).toMatchObject({
      storage: 'azure://c/p/x/?account-name=acct&sas-token=REDACTED',
      error: 'Error: write to azure://c/p/x/?account-name=acct&sas-token=REDACTED: 403',
    });
    expect(tail.runs['backup-n-3'].error).toBe(
      'panic: storage azure://c/p/x/?account-name=acct&sas-token=REDACTED\nraw sv=2024-08-04&sig=REDACTED&se=x',
    );
    expect(JSON.stringify([message.runs, tail.runs])).not.toMatch(/AbCd/);
  });

  test('a running run whose Job is gone is lost; a finished one stays as it was', () => {
    const known: Record<string, BackupRun> = {
      'backup-n-5': { schedule: 'n', job: 'backup-n-5', phase: 'Running', started: T0 },
      'backup-n-6': { schedule: 'n', job: 'backup-n-6', phase: 'Complete', started: T0, storage: 's3://b/p/y' },
    };
    const { runs, finished } = observeRuns([], [], known);
    expect(runs['backup-n-5']).toMatchObject({ phase: 'Lost', error: 'its Job was deleted before it finished' });
    expect(runs['backup-n-6']).toEqual(known['backup-n-6']);
    expect(finished.map((r) => r.job)).toEqual(['backup-n-5']);
  });

  test('a run whose container cannot start (a missing Secret) says why, once, and stays Running', () => {
    const waiting = (reason: string, message: string) =>
      ({
        metadata: { name: 'backup-n-7-x', labels: { 'batch.kubernetes.io/job-name': 'backup-n-7' } },
        status: { containerStatuses: [{ name: 'backup', state: { waiting: { reason, message } } }] },
      }) as unknown as Pod;
    const first = observeRuns([job('backup-n-7', 'n')], [waiting('CreateContainerConfigError', 'secret "s3-secret" not found')], {});
    expect(first.runs['backup-n-7']).toEqual({
      schedule: 'n',
      job: 'backup-n-7',
      uid: 'uid-backup-n-7',
      phase: 'Running',
      started: T0,
      error: 'CreateContainerConfigError: secret "s3-secret" not found',
    });
    expect(first.stuck.map((r) => r.job)).toEqual(['backup-n-7']);
    expect(first.finished).toEqual([]);
    // The same reason next pass is no news; a new one is.
    expect(
      observeRuns([job('backup-n-7', 'n')], [waiting('CreateContainerConfigError', 'secret "s3-secret" not found')], first.runs).stuck,
    ).toEqual([]);
    expect(
      observeRuns([job('backup-n-7', 'n')], [waiting('ImagePullBackOff', 'Back-off pulling image "pingcap/br:v8.5.7"')], first.runs).stuck,
    ).toHaveLength(1);
    // Once it starts, the reason goes; an ordinary wait (ContainerCreating) is none.
    expect(observeRuns([job('backup-n-7', 'n')], [waiting('ContainerCreating', '')], first.runs).runs['backup-n-7'].error).toBeUndefined();
  });

  test("a Job without the schedule label is not a schedule's run", () => {
    const other = { metadata: { name: 'restore-x', labels: {} }, status: { conditions: complete } } as unknown as Job;
    expect(observeRuns([other], [], {}).runs).toEqual({});
  });

  test("the newest finished Pod's message counts", () => {
    expect(
      terminationOutcome([pod('j', '{"error":"first"}', '2026-11-27T02:01:00Z'), pod('j', '{"error":"second"}', '2026-11-27T02:02:00Z')]),
    ).toEqual({ error: 'second' });
  });
});

describe('the records in the status document', () => {
  test('read back what was written, by schedule, newest first, at most RUNS_KEPT each', () => {
    const runs: Record<string, BackupRun> = {};
    for (let i = 0; i < RUNS_KEPT + 5; i++) {
      const started = new Date(Date.UTC(2026, 0, 1) + i * 86_400_000).toISOString().replace(/\.\d{3}Z$/, 'Z');
      runs[`backup-a-${i}`] = { schedule: 'a', job: `backup-a-${i}`, phase: 'Complete', started };
    }
    runs['backup-b-1'] = { schedule: 'b', job: 'backup-b-1', phase: 'Failed', error: 'x' };
    const listed = listRuns(runs);
    expect(listed.filter((r) => r.schedule === 'a')).toHaveLength(RUNS_KEPT);
    expect(listed[0].job).toBe(`backup-a-${RUNS_KEPT + 4}`);
    const back = backupRunsOf(JSON.parse(JSON.stringify({ backupRuns: listed })));
    expect(Object.keys(back)).toHaveLength(RUNS_KEPT + 1);
    expect(back['backup-b-1']).toEqual(runs['backup-b-1']);
    expect(backupRunsOf({ backupRuns: [{ job: 'x', schedule: 'a', phase: 'Exploded' }, 'junk'] })).toEqual({});
  });
});

describe('what the renderer gives the controller', () => {
  function render(withSchedule: boolean): Obj[] {
    const docs: Obj[] = [cluster()];
    if (withSchedule)
      docs.push({
        apiVersion: 'pingcap.com/v1alpha1',
        kind: 'BackupSchedule',
        metadata: { name: 'nightly', namespace: 'ns' },
        spec: { schedule: '@daily', backupTemplate: { br: { cluster: 'demo' }, s3: { provider: 'aws', bucket: 'b' } } },
      });
    const loaded = loadInputs(docs.map((d) => stringify(d)).join('---\n'), 'in.yaml');
    const linked = linkOperations(loaded.clusters, loaded.documents);
    return renderClusters(
      loaded.clusters.map((c) => c.resolved),
      linked.operations,
    )[0].objects;
  }
  const info = (objects: Obj[]) => {
    const env = find(objects, 'Deployment', 'demo-discovery').spec.template.spec.containers[0].env as Obj[];
    return parseClusterInfo(env.find((e) => e.name === 'TIDB_GITOPS_CLUSTER')!.value, 'ns');
  };
  const jobRules = (objects: Obj[]) =>
    (find(objects, 'Role', 'demo-discovery').rules as Obj[]).filter((r) => r.apiGroups.includes('batch'));

  // Jobs are listed and created with or without documents: a log backup whose document left Git is
  // stopped by a Job the Role rendered without it must allow.
  test("with a schedule: its name, Jobs, and noting the schedule's health on its CronJob", () => {
    const objects = render(true);
    expect(info(objects).backupSchedules).toEqual(['nightly']);
    expect(jobRules(objects)).toEqual([
      { apiGroups: ['batch'], resources: ['jobs'], verbs: ['list', 'create'] },
      { apiGroups: ['batch'], resources: ['cronjobs'], resourceNames: ['backup-nightly'], verbs: ['patch'] },
    ]);
  });

  test('without one: no schedule, the same Jobs rule', () => {
    const objects = render(false);
    expect(info(objects).backupSchedules).toBeUndefined();
    expect(jobRules(objects)).toEqual([{ apiGroups: ['batch'], resources: ['jobs'], verbs: ['list', 'create'] }]);
  });

  test('a bad list is refused where the controller reads it', () => {
    expect(() => parseClusterInfo('{"name":"c","backupSchedules":["Bad Name"]}', 'ns')).toThrow(
      'TIDB_GITOPS_CLUSTER.backupSchedules: expected a list of BackupSchedule names',
    );
  });
});

describe("how far a schedule's log backup is truncated", () => {
  const runs = (list: Partial<BackupRun>[]): Record<string, BackupRun> =>
    Object.fromEntries(list.map((r, i) => [`j${i}`, { schedule: 'nightly', job: `j${i}`, phase: 'Complete', ...r } as BackupRun]));

  test('to the oldest snapshot still kept; never on a guess', () => {
    expect(
      truncationPoint(
        'nightly',
        runs([
          { backupTS: '300' },
          { backupTS: '200' },
          { phase: 'Deleted', backupTS: '100' },
          { phase: 'Failed' },
          { schedule: 'other', backupTS: '50' },
        ]),
      ),
    ).toBe('200');
    expect(truncationPoint('nightly', runs([{ backupTS: '300' }, {}]))).toBeUndefined();
    expect(truncationPoint('nightly', runs([{ phase: 'Running' }]))).toBeUndefined();
  });

  test('only for a schedule with retention whose log backup is in Git', () => {
    const info = {
      name: 'c',
      backupRetention: { nightly: { maxBackups: 3, bucket: 'b', prefix: 'p', secretName: 's' } },
      logBackups: ['backup-log-nightly'],
    } as never;
    expect(logTruncation(info, runs([{ backupTS: '300' }]))).toEqual({ 'backup-log-nightly': '300' });
    expect(logTruncation({ ...(info as object), logBackups: [] } as never, runs([{ backupTS: '300' }]))).toEqual({});
    expect(logTruncation({ ...(info as object), backupRetention: {} } as never, runs([{ backupTS: '300' }]))).toEqual({});
  });
});

describe('retention: which runs go', () => {
  const policy = { bucket: 'b', prefix: 'p', secretName: 's', cleanPolicy: 'Delete' as const };
  const uid = (day: number) => `0000${String(day).padStart(4, '0')}-1111-4222-8333-444444444444`;
  /** Run `day` of schedule n, in its own folder: under the schedule's, named with its Job UID. */
  /** The CronJob's Job of the run scheduled at midnight of 2026-01-`day` (its name carries the minute). */
  const jobOf = (day: number) => `backup-n-${29453760 + (day - 1) * 1440}`;
  /** `backup-n-<day>`, for the Job of that day's run. */
  const label = (job: string) => job.replace(/^backup-n-(\d+)$/, (_, m: string) => `backup-n-${(Number(m) - 29453760) / 1440 + 1}`);
  /** Run `day` of schedule n, in its own folder: under the schedule's, named with its Job UID. */
  const run = (
    day: number,
    phase: BackupRun['phase'],
    folder = `n/c-pd.ns-2379-2026-01-${String(day).padStart(2, '0')}t00-00-00-0000${String(day).padStart(4, '0')}`,
  ): BackupRun => ({
    schedule: 'n',
    job: jobOf(day),
    uid: uid(day),
    phase,
    started: `2026-01-${String(day).padStart(2, '0')}T00:00:00Z`,
    storage: `s3://b/p/${folder}`,
  });
  const byJob = (...runs: BackupRun[]) => Object.fromEntries(runs.map((r) => [r.job, r]));
  /** The runs whose data retention removes. */
  const gone = (runs: Record<string, BackupRun>, p: Obj, now = Date.UTC(2026, 0, 10)) =>
    expiredRuns('n', runs, { ...policy, ...p } as never, now)
      .filter((e) => e.action === 'delete')
      .map((e) => label(e.run.job));
  /** Each expired run and what retention does with it. */
  const plan = (runs: Record<string, BackupRun>, p: Obj, now = Date.UTC(2026, 0, 10)) =>
    expiredRuns('n', runs, { ...policy, ...p } as never, now).map((e) => `${label(e.run.job)} ${e.action}`);

  test('maxBackups keeps the newest good backups; failed runs never count and go once a newer one is good', () => {
    const runs = byJob(run(1, 'Complete'), run(2, 'Complete'), run(3, 'Failed'), run(4, 'Complete'), run(5, 'Running'), run(6, 'Failed'));
    expect(gone(runs, { maxBackups: 2 })).toEqual(['backup-n-3', 'backup-n-1']);
    expect(expiredRuns('n', runs, { ...policy, maxBackups: 2 }, 0).map((e) => e.action === 'delete' && e.folder)).toEqual([
      'p/n/c-pd.ns-2379-2026-01-03t00-00-00-00000003/',
      'p/n/c-pd.ns-2379-2026-01-01t00-00-00-00000001/',
    ]);
  });

  test('the newest good backup stays whatever the limits say; with none, nothing goes', () => {
    expect(gone(byJob(run(1, 'Complete'), run(2, 'Complete')), { maxReservedSeconds: 60 })).toEqual(['backup-n-1']);
    expect(gone(byJob(run(1, 'Failed'), run(2, 'Failed')), { maxBackups: 1 })).toEqual([]);
  });

  test('maxReservedTime keeps what started within it', () => {
    const runs = byJob(run(1, 'Complete'), run(5, 'Complete'), run(8, 'Complete'), run(9, 'Complete'));
    expect(gone(runs, { maxReservedSeconds: 3 * 86_400 })).toEqual(['backup-n-5', 'backup-n-1']);
  });

  test("another schedule's runs, another cluster's folders, and folders outside the prefix or above it, are never touched", () => {
    const other = { ...run(1, 'Complete', 'other/c-pd.ns-2379-2026-01-01t00-00-00-00000001'), schedule: 'other', job: 'backup-other-1' };
    const outside = { ...run(2, 'Complete'), storage: 's3://b/elsewhere/c-pd.ns-2379-x' };
    const above = { ...run(3, 'Complete'), storage: 's3://b/p' };
    const schedule = { ...run(4, 'Complete'), storage: 's3://b/p/n' };
    const otherBucket = { ...run(5, 'Complete'), storage: 's3://c/p/x' };
    // A folder of the same name and minute another cluster's run wrote: its UID is not this run's.
    const elsewhere = run(6, 'Complete', 'n/c-pd.ns-2379-2026-01-06t00-00-00-99999999');
    const underOther = run(7, 'Complete', 'other/c-pd.ns-2379-2026-01-07t00-00-00-00000007');
    expect(gone(byJob(other, outside, above, schedule, otherBucket, elsewhere, underOther, run(9, 'Complete')), { maxBackups: 1 })).toEqual(
      [],
    );
  });

  test("in the layout schedules shared (tidb-operator's, and this one's before), a complete run's folder goes; a failed run's stays: it may be another run's backup", () => {
    const legacy = (day: number, phase: BackupRun['phase']) => ({
      ...run(day, phase, `c-pd.ns-2379-2026-01-0${day}t00-00-00`),
      uid: undefined,
    });
    const runs = byJob(legacy(1, 'Complete'), legacy(2, 'Failed'), legacy(3, 'Lost'), run(9, 'Complete'));
    expect(plan(runs, { maxBackups: 1 })).toEqual(['backup-n-3 release', 'backup-n-2 release', 'backup-n-1 delete']);
    const kept = expiredRuns('n', runs, { ...policy, maxBackups: 1 }, 0).find((e) => e.run.job === jobOf(2));
    expect(kept).toMatchObject({
      action: 'release',
      kept: "a failed run's folder in the layout shared with other schedules may hold another run's backup",
    });
    // A run recorded before its UID was: its folder under the schedule's is not known to be its own.
    expect(plan(byJob({ ...run(1, 'Complete'), uid: undefined }, run(9, 'Complete')), { maxBackups: 1 })).toEqual(['backup-n-1 release']);
  });

  test('a folder inside or around one another run names is kept, the run released', () => {
    const around = { ...run(5, 'Complete'), schedule: 'other', job: 'backup-other-5', storage: 's3://b/p/n' };
    expect(plan(byJob(run(1, 'Complete'), around, run(9, 'Complete')), { maxBackups: 1 })).toEqual(['backup-n-1 release']);
    expect(expiredRuns('n', byJob(run(1, 'Complete'), around, run(9, 'Complete')), { ...policy, maxBackups: 1 }, 0)[0]).toMatchObject({
      kept: 'its folder holds, or is held in, the folder of backup-other-5 (complete)',
    });
  });

  test("cleanPolicy decides what an expired run loses: Retain (the default) nothing, OnFailure a failed or lost run's partial backup, Delete all", () => {
    const runs = byJob(run(1, 'Complete'), run(2, 'Failed'), run(3, 'Lost'), run(4, 'Complete'), run(5, 'Complete'));
    expect(plan(runs, { maxBackups: 2, cleanPolicy: undefined, bucket: undefined, prefix: undefined, secretName: undefined })).toEqual([
      'backup-n-3 release',
      'backup-n-2 release',
      'backup-n-1 release',
    ]);
    expect(plan(runs, { maxBackups: 2, cleanPolicy: 'Retain' })).toEqual([
      'backup-n-3 release',
      'backup-n-2 release',
      'backup-n-1 release',
    ]);
    expect(plan(runs, { maxBackups: 2, cleanPolicy: 'OnFailure' })).toEqual([
      'backup-n-3 delete',
      'backup-n-2 delete',
      'backup-n-1 release',
    ]);
    expect(plan(runs, { maxBackups: 2, cleanPolicy: 'Delete' })).toEqual(['backup-n-3 delete', 'backup-n-2 delete', 'backup-n-1 delete']);
    // A released run is no longer one retention acts on, nor one the log is kept for.
    const released = { ...runs, [jobOf(1)]: { ...runs[jobOf(1)], phase: 'Released' as const } };
    expect(plan(released, { maxBackups: 2, cleanPolicy: 'Retain' })).toEqual(['backup-n-3 release', 'backup-n-2 release']);
  });

  test("an expired run whose folder is not the schedule's to remove is released, its data left where it is", () => {
    const outside = { ...run(2, 'Complete'), storage: 's3://b/elsewhere/c-pd.ns-2379-x' };
    expect(plan(byJob(outside, run(9, 'Complete')), { maxBackups: 1 })).toEqual(['backup-n-2 release']);
  });

  test('a folder a kept backup names is kept, whichever other run names it', () => {
    const runs = byJob(run(2, 'Complete', 'same'), { ...run(3, 'Failed', 'same') }, run(1, 'Complete'));
    expect(gone(runs, { maxBackups: 1 }, Date.UTC(2026, 0, 10))).toEqual(['backup-n-1']);
  });

  test("keyPrefixOf: a folder under the prefix of the policy's bucket and provider, with the query of the URL ignored", () => {
    expect(keyPrefixOf('s3://b/p/x?force-path-style=false', policy)).toBe('p/x/');
    expect(keyPrefixOf('s3://b/p/n/x', policy)).toBe('p/n/x/');
    expect(keyPrefixOf('s3://b/x', { bucket: 'b', prefix: '' })).toBe('x/');
    expect(keyPrefixOf('s3://b/p/..', policy)).toBeUndefined();
    expect(keyPrefixOf('s3://b/p//x', policy)).toBeUndefined();
    expect(keyPrefixOf('gcs://b/p/x/', policy)).toBeUndefined();
    expect(keyPrefixOf('gcs://b/p/x/', { ...policy, storageKind: 'gcs' as const })).toBe('p/x/');
    expect(keyPrefixOf('azure://b/p/x/?account-name=a&sas-token=REDACTED', { ...policy, storageKind: 'azblob' as const })).toBe('p/x/');
    expect(keyPrefixOf(undefined, policy)).toBeUndefined();
  });

  test("ownFolder: the run's folder under its schedule's, with its Job UID", () => {
    expect(ownFolder(run(1, 'Failed'), policy)).toBe('p/n/c-pd.ns-2379-2026-01-01t00-00-00-00000001/');
    expect(ownFolder({ ...run(1, 'Failed'), job: jobOf(2) }, policy)).toEqual({
      why: "s3://b/p/n/c-pd.ns-2379-2026-01-01t00-00-00-00000001 is not the folder this run's Job writes",
    });
    expect(ownFolder({ ...run(1, 'Failed'), schedule: 'm' }, policy)).toEqual({
      why: "s3://b/p/n/c-pd.ns-2379-2026-01-01t00-00-00-00000001 is not the folder this run's Job writes",
    });
    expect(ownFolder({ ...run(1, 'Failed'), storage: undefined }, policy)).toEqual({ why: 'the run reported no storage path' });
  });
});

describe('the S3 client retention uses, against a real S3-protocol server', () => {
  let server: S3Server;
  let endpoint = '';
  // A Node.js process of its own: up to 4 s to start on a loaded machine.
  beforeAll(async () => {
    server = await startS3Server(['bk']);
    endpoint = server.endpoint;
  }, 60_000);
  afterAll(() => server?.stop(), 60_000);

  test('lists every key under a folder, page by page, and deletes them in batches; signatures are checked', async () => {
    const s3 = new S3Client({ bucket: 'bk', endpoint }, { accessKey: 'S3RVER', secretKey: 'S3RVER' });
    const keys = Array.from({ length: 1205 }, (_, i) => `p/f/${i % 3}/k ${i}+ä.sst`);
    const all = [...keys, 'p/f0/keep', 'p/g/keep'];
    for (let i = 0; i < all.length; i += 50) {
      await Promise.all(
        all
          .slice(i, i + 50)
          .map((k) => fetch(`${endpoint}/bk/${k.split('/').map(encodeURIComponent).join('/')}`, { method: 'PUT', body: 'x' })),
      );
    }
    const listed = await s3.list('p/f/');
    expect(listed.sort()).toEqual([...keys].sort());
    await s3.delete(listed);
    expect(await s3.list('p/f/')).toEqual([]);
    expect((await s3.list('p/')).sort()).toEqual(['p/f0/keep', 'p/g/keep']);
    const wrong = new S3Client({ bucket: 'bk', endpoint }, { accessKey: 'S3RVER', secretKey: 'wrong' });
    await expect(wrong.list('p/')).rejects.toThrow(/SignatureDoesNotMatch/);
    const missing = new S3Client({ bucket: 'nowhere', endpoint, region: 'us-east-1' }, { accessKey: 'S3RVER', secretKey: 'S3RVER' });
    await expect(missing.list('p/')).rejects.toThrow(/NoSuchBucket/);
  }, 60_000);
});

describe('the S3 client under the errors S3 asks to be retried', () => {
  // S3's error responses (AWS S3 API reference, "Error responses"): 500 InternalError and 503 SlowDown
  // say "Please try again" / "Please reduce your request rate"; the SDKs retry them.
  const error = (code: string, message: string) =>
    `<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message><RequestId>1</RequestId></Error>`;
  async function serve(answers: [number, string][]): Promise<{ endpoint: string; seen: string[]; close: () => void }> {
    const seen: string[] = [];
    const server = createServer((req, res) => {
      seen.push(`${req.method} ${req.url} ${req.headers.authorization?.includes('Signature=') ? 'signed' : 'unsigned'}`);
      const [status, body] = answers[Math.min(seen.length - 1, answers.length - 1)];
      res.writeHead(status, { 'content-type': 'application/xml' }).end(body);
    });
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    return { endpoint: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen, close: () => server.close() };
  }
  const listing =
    '<?xml version="1.0" encoding="UTF-8"?>\n<ListBucketResult><Name>bk</Name><KeyCount>1</KeyCount><IsTruncated>false</IsTruncated><Contents><Key>p/a</Key></Contents></ListBucketResult>';

  test('a 500 InternalError and a 503 SlowDown are sent again, signed anew; the answer after them counts', async () => {
    const s = await serve([
      [500, error('InternalError', 'We encountered an internal error. Please try again.')],
      [503, error('SlowDown', 'Please reduce your request rate.')],
      [200, listing],
    ]);
    try {
      const s3 = new S3Client({ bucket: 'bk', endpoint: s.endpoint, region: 'us-east-1' }, { accessKey: 'a', secretKey: 'b' }, 5_000, 1);
      expect(await s3.list('p/')).toEqual(['p/a']);
      expect(s.seen).toEqual(Array(3).fill('GET /bk?list-type=2&prefix=p%2F signed'));
    } finally {
      s.close();
    }
  });

  test('four attempts in all; an error S3 does not ask to retry is not retried', async () => {
    const failing = await serve([[500, error('InternalError', 'We encountered an internal error. Please try again.')]]);
    const denied = await serve([[403, error('AccessDenied', 'Access Denied')]]);
    try {
      await expect(
        new S3Client(
          { bucket: 'bk', endpoint: failing.endpoint, region: 'us-east-1' },
          { accessKey: 'a', secretKey: 'b' },
          5_000,
          1,
        ).delete(['p/a']),
      ).rejects.toThrow('POST s3://bk: InternalError');
      expect(failing.seen).toHaveLength(4);
      await expect(
        new S3Client({ bucket: 'bk', endpoint: denied.endpoint, region: 'us-east-1' }, { accessKey: 'a', secretKey: 'b' }, 5_000, 1).list(
          'p/',
        ),
      ).rejects.toThrow('GET s3://bk: AccessDenied: Access Denied');
      expect(denied.seen).toHaveLength(1);
    } finally {
      failing.close();
      denied.close();
    }
  });
});

describe('diff: what a change to the schedules does to the backups', () => {
  /** A schedule; its backupTemplate's cleanPolicy is `Delete` unless given (`null`: none, the operator's default). */
  const sched = (spec: Obj, cleanPolicy: string | null = 'Delete') => ({
    apiVersion: 'pingcap.com/v1alpha1',
    kind: 'BackupSchedule',
    metadata: { name: 'nightly', namespace: 'ns' },
    spec: {
      schedule: '@daily',
      backupTemplate: {
        br: { cluster: 'demo' },
        s3: { provider: 'aws', bucket: 'b', prefix: 'p', secretName: 's3-secret' },
        ...(cleanPolicy && { cleanPolicy }),
      },
      ...spec,
    },
  });
  /** The backup risks of the change from `before` to `after`, as `tidb-gitops diff` finds them. */
  function risks(before: Obj[], after: Obj[]): { id: string; message: string }[] {
    const objects = (docs: Obj[]) => {
      const loaded = loadManifests([{ file: 'in.yaml', text: docs.map((d) => stringify(d)).join('---\n'), explicit: true }]);
      expect(loaded.errors).toEqual([]);
      return loaded.objects;
    };
    return compareModels(buildModel(objects(before)), buildModel(objects(after)))
      .clusters.flatMap((c) => c.risks)
      .filter((r) => r.id.startsWith('backup'));
  }

  test('retention added to a schedule, or tightened, is a risk naming the bucket; a new schedule with retention, or a looser one, is not', () => {
    const added = risks([cluster(), sched({})], [cluster(), sched({ maxBackups: 3 })]);
    expect(added.map((r) => r.id)).toEqual(['backup-retention']);
    expect(added[0].message).toContain('BackupSchedule nightly now keeps the 3 newest backups (it kept every backup)');
    expect(added[0].message).toContain('s3://b/p/');
    expect(risks([cluster(), sched({ maxBackups: 3 })], [cluster(), sched({ maxBackups: 2 })])[0].message).toContain(
      '(was the 3 newest backups)',
    );
    expect(risks([cluster(), sched({ maxReservedTime: '168h' })], [cluster(), sched({ maxReservedTime: '48h' })])[0].message).toContain(
      'now keeps the backups of the last 2 days (was the backups of the last 7 days)',
    );
    expect(risks([cluster()], [cluster(), sched({ maxBackups: 3 })])).toEqual([]);
    expect(risks([cluster(), sched({ maxBackups: 2 })], [cluster(), sched({ maxBackups: 5 })])).toEqual([]);
  });

  test('retention that keeps the data (cleanPolicy Retain, the default) is no risk; a policy that starts removing data is', () => {
    expect(risks([cluster(), sched({}, null)], [cluster(), sched({ maxBackups: 1 }, null)])).toEqual([]);
    expect(risks([cluster(), sched({ maxBackups: 3 }, 'Retain')], [cluster(), sched({ maxBackups: 1 }, 'Retain')])).toEqual([]);
    const deleting = risks([cluster(), sched({ maxBackups: 3 }, null)], [cluster(), sched({ maxBackups: 3 }, 'Delete')]);
    expect(deleting.map((r) => r.id)).toEqual(['backup-retention']);
    expect(deleting[0].message).toContain('now keeps the 3 newest backups (was the 3 newest backups, cleanPolicy Retain)');
    expect(deleting[0].message).toContain(
      "removes this schedule's older good backups, and failed runs' partial ones, from s3://b/p/ for good (cleanPolicy Delete",
    );
    const onFailure = risks([cluster(), sched({ maxBackups: 3 }, null)], [cluster(), sched({ maxBackups: 3 }, 'OnFailure')]);
    expect(onFailure[0].message).toContain("removes the partial backups of this schedule's failed runs from s3://b/p/ for good");
    expect(
      risks([cluster(), sched({ maxBackups: 3 }, 'OnFailure')], [cluster(), sched({ maxBackups: 3 }, 'Delete')]).map((r) => r.id),
    ).toEqual(['backup-retention']);
    expect(risks([cluster(), sched({ maxBackups: 3 }, 'Delete')], [cluster(), sched({ maxBackups: 3 }, 'OnFailure')])).toEqual([]);
  });

  test('a schedule removed is a risk: no new backups', () => {
    const removed = risks([cluster(), sched({ maxBackups: 3 })], [cluster()]);
    expect(removed.map((r) => r.id)).toEqual(['backup-schedule-removed']);
    expect(removed[0].message).toContain('no new backups are taken');
  });
});
