/**
 * Log backups from Git (`backupMode: log`): rendered as a ConfigMap with the task's state and a Job per
 * `br log` command, checked against the Kubernetes schema; refused where `br log start` cannot carry
 * out the document; and the controller's plan, which moves the task one command at a time toward the
 * state the document asks for, takes over a task that is there, waits for BR's one task per cluster,
 * retries late, and stops the task with its kept stop Job once the document leaves Git.
 */
import { stringify } from 'yaml';
import { buildModel, compareModels } from '../../../src/diff';
import { loadManifests } from '../../../src/diff/load';
import { loadInputs } from '../../../src/backup/companions';
import { linkOperations } from '../../../src/backup/link';
import { renderClusters } from '../../../src/render/render';
import { logBackupDocOf, planLogTask, RETRY_MS, type LogTaskInput, type LogTasksContext } from '../../../src/controller/plan/log-tasks';
import type { LogBackupTask } from '../../../src/controller/plan/log-backups';
import { listLogTasks, logTasksOf, type LogTaskRecord } from '../../../src/controller/records/log-tasks';
import { parseClusterInfo } from '../../../src/controller/model/cluster';
import type { Job } from '../../../src/controller/model/objects';
import type { AddressInfo } from 'node:net';
import { assertValidK8sObjects, SCHEMA_MINORS } from '../../support/k8s-schema';
import { runBrContainer } from '../../support/br-run';
import { startS3Server } from '../../support/s3-server';
import { EtcdStore, etcdGrpcServer } from '../../sim/pd-etcd';
import { logBackupTasks } from '../../../src/controller/plan/log-backups';
import { cluster, find, type Obj } from '../../support/render';

const S3 = { provider: 'ceph', endpoint: 'http://minio:9000', bucket: 'backups', prefix: 'demo/log', secretName: 's3-secret' };

function logBackup(spec: Obj = {}, name = 'pitr'): Obj {
  return {
    apiVersion: 'pingcap.com/v1alpha1',
    kind: 'Backup',
    metadata: { name, namespace: 'ns' },
    spec: { backupMode: 'log', br: { cluster: 'demo' }, s3: S3, ...spec },
  };
}

function load(docs: Obj[]) {
  const loaded = loadInputs(docs.map((d) => stringify(d)).join('---\n'), 'in.yaml');
  const linked = linkOperations(loaded.clusters, loaded.documents);
  return { loaded, linked, errors: [...loaded.errors.map((e) => e.message), ...linked.errors].join('\n') };
}

function renderAll(docs: Obj[]): Obj[] {
  const { loaded, linked, errors } = load(docs);
  if (errors) throw new Error(errors);
  return renderClusters(
    loaded.clusters.map((c) => c.resolved),
    linked.operations,
  ).flatMap((r) => r.objects);
}

describe('a log backup renders as a ConfigMap with its state and a Job per br log command', () => {
  test('the commands as the operator runs them; only start reaches the storage; every Job valid on every supported Kubernetes', () => {
    const objects = renderAll([
      cluster(),
      logBackup({
        commitTs: '450000000000000000',
        tableFilter: ['shop.*'],
        br: { cluster: 'demo', sendCredToTikv: false, options: ['--gc-ttl=3600'] },
      }),
    ]);
    const cm = find(objects, 'ConfigMap', 'backup-pitr');
    expect(cm.metadata.labels['tidb-gitops.io/operation']).toBe('backup-pitr');
    expect(JSON.parse(cm.data['log-backup.json'])).toEqual({ task: 'pitr', state: 'running' });
    expect(Object.keys(cm.data).sort()).toEqual([
      'log-backup.json',
      'log-pause.json',
      'log-resume.json',
      'log-start.json',
      'log-stop.json',
      'log-truncate.json',
    ]);
    const jobs = ['start', 'pause', 'resume', 'stop', 'truncate'].map((c) => JSON.parse(cm.data[`log-${c}.json`]));
    for (const minor of SCHEMA_MINORS) assertValidK8sObjects([cm, ...jobs], minor);
    const [start, pause, , stop, truncate] = jobs;
    // Truncate: the storage, no task, the point left for the controller.
    expect(truncate.spec.template.spec.containers[0].args).toEqual([
      'log',
      'truncate',
      '--until=@UNTIL@',
      '--pd=demo-pd.$(NAMESPACE):2379',
      '--send-credentials-to-tikv=false',
      '--storage=@STORAGE@',
      '--s3.provider=ceph',
      '--s3.endpoint=http://minio:9000',
    ]);
    expect(start.metadata.name).toBe('backup-pitr-log-start');
    expect(start.spec.backoffLimit).toBe(0);
    const c = start.spec.template.spec.containers[0];
    expect(c.args).toEqual([
      'log',
      'start',
      '--task-name=pitr',
      '--start-ts=450000000000000000',
      '--pd=demo-pd.$(NAMESPACE):2379',
      '--send-credentials-to-tikv=false',
      '--storage=@STORAGE@',
      '--s3.provider=ceph',
      '--s3.endpoint=http://minio:9000',
      '--filter',
      'shop.*',
      '--gc-ttl=3600',
    ]);
    const env = Object.fromEntries(c.env.map((e: Obj) => [e.name, e.value ?? e.valueFrom]));
    expect(env.BR_STORAGE).toBe('s3://backups/demo/log');
    expect(env.AWS_ACCESS_KEY_ID).toEqual({ secretKeyRef: { name: 's3-secret', key: 'access_key' } });
    // Pause and stop act on PD alone: no storage, no Secret, no BR options.
    expect(pause.spec.template.spec.containers[0].args).toEqual([
      'log',
      'pause',
      '--task-name=pitr',
      '--pd=demo-pd.$(NAMESPACE):2379',
      '--send-credentials-to-tikv=false',
    ]);
    expect(JSON.stringify(stop)).not.toContain('s3-secret');
    expect(stop.metadata.labels['tidb-gitops.io/operation']).toBe('backup-pitr');
  });

  test('logSubcommand and logStop give the state; the controller learns the log backups and may run their Jobs', () => {
    const state = (spec: Obj) =>
      JSON.parse(find(renderAll([cluster(), logBackup(spec)]), 'ConfigMap', 'backup-pitr').data['log-backup.json']).state;
    expect(state({})).toBe('running');
    expect(state({ logSubcommand: 'log-start' })).toBe('running');
    expect(state({ logSubcommand: 'log-pause' })).toBe('paused');
    expect(state({ logSubcommand: 'log-stop' })).toBe('stopped');
    expect(state({ logStop: true })).toBe('stopped');
    // logTruncateUntil, as the TSO BR reads: a TSO as it is, a time with its zone converted.
    const spec = (until: string) =>
      JSON.parse(find(renderAll([cluster(), logBackup({ logTruncateUntil: until })]), 'ConfigMap', 'backup-pitr').data['log-backup.json']);
    expect(spec('450000000000000000')).toEqual({ task: 'pitr', state: 'running', truncateUntil: '450000000000000000' });
    const tso = (BigInt(Date.UTC(2024, 4, 25, 5, 9, 29, 531)) << 18n).toString();
    expect(spec('2024-05-25 13:09:29.531+08:00').truncateUntil).toBe(tso);
    expect(spec('2024-05-25T05:09:29.531Z').truncateUntil).toBe(tso);
    expect(spec('2024-05-25 07:09:29.531+0200').truncateUntil).toBe(tso);
    expect(load([cluster(), logBackup({ logTruncateUntil: '2024-05-25 05:09:29' })]).errors).toMatch(
      /spec\.logTruncateUntil \(line \d+\): expected a TSO \(digits\) or a time with its zone/,
    );
    const objects = renderAll([cluster(), logBackup()]);
    const env = find(objects, 'Deployment', 'demo-discovery').spec.template.spec.containers[0].env as Obj[];
    const info = JSON.parse(env.find((e) => e.name === 'TIDB_GITOPS_CLUSTER')!.value);
    expect(info.logBackups).toEqual(['backup-pitr']);
    expect(info.operations).toBeUndefined();
    expect(parseClusterInfo(JSON.stringify(info), 'ns').logBackups).toEqual(['backup-pitr']);
    const rules = find(objects, 'Role', 'demo-discovery').rules as Obj[];
    expect(rules.filter((r) => r.resourceNames?.includes('backup-pitr'))).toEqual([
      { apiGroups: [''], resources: ['configmaps'], resourceNames: ['backup-pitr'], verbs: ['get', 'patch'] },
    ]);
    // The storage's Secret is the Pod's to read, not the controller's.
    expect(rules.filter((r) => r.resources.includes('secrets'))).toEqual([]);
  });

  test('what br log start cannot carry out is refused with its path', () => {
    const errors = load([
      cluster(),
      logBackup({ backupType: 'db', logTruncateUntil: '450000000000000000', br: { cluster: 'demo', db: 'shop', timeAgo: '1h' } }, 'a'),
      logBackup({ commitTs: '2026-11-27 00:00:00' }, 'b'),
      logBackup({ logStop: true, logSubcommand: 'log-pause' }, 'c'),
    ]).errors;
    expect(errors).toMatch(/document 2: spec\.backupType \(line \d+\): a log backup takes tableFilter rules, not backupType db or table/);
    expect(errors).not.toContain('logTruncateUntil');
    expect(errors).toMatch(/document 2: spec\.br\.timeAgo \(line \d+\): is a snapshot backup setting; br log start has no such flag/);
    // The CRD's own rule refuses both ways at once.
    expect(errors).toMatch(
      /document 4: spec\.logStop \(line \d+\): Field `logStop` is the old version field, please use `logSubcommand` instead/,
    );
    expect(errors).toMatch(/document 3: spec\.commitTs \(line \d+\): expected a TSO \(digits\) or a time with its zone/);
    expect(load([cluster(), logBackup({ commitTs: '2026-11-27 00:00:00+08:00' })]).errors).toBe('');
  });

  test('br.concurrency goes to br log start as the operator passes it, before --ratelimit', () => {
    const cm = find(
      renderAll([cluster(), logBackup({ br: { cluster: 'demo', concurrency: 4, rateLimit: 8 } })]),
      'ConfigMap',
      'backup-pitr',
    );
    const args = (command: string) => JSON.parse(cm.data[`log-${command}.json`]).spec.template.spec.containers[0].args as string[];
    expect(args('start').slice(-2)).toEqual(['--concurrency=4', '--ratelimit=8']);
    expect(args('pause').join(' ')).not.toContain('--concurrency');
  });
});

const NOW = Date.UTC(2026, 10, 28, 12, 0, 0);
const iso = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const job = (name: string, uid: string, condition?: 'Complete' | 'Failed'): Job =>
  ({
    metadata: { name, uid, labels: { 'tidb-gitops.io/operation': 'backup-pitr' } },
    status: condition ? { conditions: [{ type: condition, status: 'True' }] } : {},
  }) as Job;
const template = (command: string) =>
  JSON.stringify({
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: `backup-pitr-log-${command}`, labels: { 'tidb-gitops.io/operation': 'backup-pitr' } },
    spec: {},
  });
const DOC = (state: 'running' | 'paused' | 'stopped') => ({
  task: 'pitr',
  state,
  jobs: { start: template('start'), pause: template('pause'), resume: template('resume'), stop: template('stop') },
});
const task = (name: string, state: LogBackupTask['state'] = 'Running'): LogBackupTask => ({
  name,
  state,
  startTS: '1',
  checkpointTS: '2',
  checkpointTime: '2026-11-28T11:59:50Z',
  lagSeconds: 10,
  storage: 's3://backups/demo/log',
});
const ctx = (tasks: LogBackupTask[], extra: Partial<LogTasksContext> = {}): LogTasksContext => ({
  view: { tasks, at: NOW - 1000 },
  now: NOW,
  ...extra,
});
const input = (extra: Partial<LogTaskInput> = {}): LogTaskInput => ({
  configMap: 'backup-pitr',
  inGit: true,
  doc: DOC('running'),
  jobs: [],
  pods: [],
  ...extra,
});

describe('the controller keeps the task in its state, one br log command at a time', () => {
  test('a missing task is started: recorded before its Job, named after how many ran; the task is read again before the next', () => {
    const first = planLogTask(input(), ctx([]))!;
    expect(first.create?.command).toBe('start');
    expect((first.create!.body.metadata as Obj).name).toBe('backup-pitr-log-start-1');
    expect(first.record).toMatchObject({
      task: 'pitr',
      want: 'running',
      runs: 1,
      last: { command: 'start', job: 'backup-pitr-log-start-1', phase: 'Running', created: iso(NOW) },
      stopJob: template('stop'),
    });
    expect(first.news?.reason).toBe('LogBackupCommand');
    // Created: followed until it ends.
    const created = { ...first.record!, last: { ...first.record!.last!, uid: 'u1' } };
    const running = planLogTask(input({ record: created, jobs: [job('backup-pitr-log-start-1', 'u1')] }), ctx([]))!;
    expect(running.create).toBeUndefined();
    expect(running.phase).toBe('Running');
    const done = planLogTask(input({ record: created, jobs: [job('backup-pitr-log-start-1', 'u1', 'Complete')] }), ctx([]))!;
    expect(done.record?.last).toMatchObject({ phase: 'Complete', seen: iso(NOW) });
    expect(done.news).toMatchObject({ type: 'Normal', reason: 'LogBackupStarted' });
    // The tasks as read before the Job ended still miss it: no second start until they are read again.
    const stale = planLogTask(input({ record: done.record }), { view: { tasks: [], at: NOW - 5000 }, now: NOW + 1000 })!;
    expect(stale.create).toBeUndefined();
    // Nor one of the second it was seen ending in: the record keeps whole seconds.
    expect(planLogTask(input({ record: done.record }), { view: { tasks: [], at: NOW + 500 }, now: NOW + 1000 })?.create).toBeUndefined();
    const fresh = planLogTask(input({ record: done.record }), { view: { tasks: [task('pitr')], at: NOW + 2000 }, now: NOW + 2000 })!;
    expect(fresh.phase).toBe('Complete');
    expect(fresh.create).toBeUndefined();
    expect(fresh.message).toMatch(
      /^the log backup task pitr is running, checkpoint TS 2 \(2026-11-28T11:59:50Z, 10 s behind\), into s3:\/\/backups\/demo\/log$/,
    );
  });

  test('each state from each state: pause, resume, stop, start-then-pause; an error pause resumed at most once per retry period', () => {
    const cmd = (state: 'running' | 'paused' | 'stopped', tasks: LogBackupTask[], record?: LogTaskRecord) =>
      planLogTask(input({ doc: DOC(state), ...(record && { record }) }), ctx(tasks))?.create?.command;
    expect(cmd('paused', [task('pitr')])).toBe('pause');
    expect(cmd('paused', [])).toBe('start');
    expect(cmd('paused', [task('pitr', 'Paused')])).toBeUndefined();
    expect(cmd('running', [task('pitr', 'Paused')])).toBe('resume');
    expect(cmd('stopped', [task('pitr', 'Paused')])).toBe('stop');
    expect(cmd('stopped', [])).toBeUndefined();
    const resumed: LogTaskRecord = {
      configMap: 'backup-pitr',
      task: 'pitr',
      want: 'running',
      inGit: true,
      runs: 3,
      last: { command: 'resume', job: 'backup-pitr-log-resume-3', phase: 'Complete', created: iso(NOW - 60_000), seen: iso(NOW - 50_000) },
    };
    const again = planLogTask(
      input({ record: resumed }),
      ctx([{ ...task('pitr', 'Error'), error: 'KV:LogBackup:RaftReq: the region is not found (store 4)' }]),
    )!;
    expect(again.create).toBeUndefined();
    expect(again.phase).toBe('Failed');
    expect(again.record?.reason).toMatch(
      /^the task was paused by an error again after br log resume: KV:LogBackup:RaftReq.*; tried again after 2026-11-28T12:04:10Z$/,
    );
    expect(
      planLogTask(input({ record: resumed }), { ...ctx([task('pitr', 'Error')]), now: NOW - 50_000 + RETRY_MS })?.create?.command,
    ).toBe('resume');
  });

  test("a pause TiDB's advancer made for checkpoint lag: resumed once with a Warning, then held and reported, never resumed in a loop", () => {
    // What advancer.go `importantTick` leaves after `isCheckpointLagged`: a MANUAL pause from a TiDB Pod, no payload.
    const lagged: LogBackupTask = {
      ...task('pitr', 'Paused'),
      checkpointTS: '7',
      lagSeconds: 200_000,
      pause: { severity: 'MANUAL', host: 'demo-tidb-0', time: '2026-11-28T11:00:00Z', lag: true },
    };
    const started: LogTaskRecord = {
      configMap: 'backup-pitr',
      task: 'pitr',
      want: 'running',
      inGit: true,
      runs: 1,
      last: { command: 'start', job: 'backup-pitr-log-start-1', phase: 'Complete', created: iso(NOW - 600_000), seen: iso(NOW - 590_000) },
    };
    const first = planLogTask(input({ record: started }), ctx([lagged]))!;
    expect(first.create?.command).toBe('resume');
    expect(first.record?.resumedFrom).toBe('7');
    expect(first.news).toMatchObject({ type: 'Warning', reason: 'LogBackupLagPaused' });
    expect(first.news!.message).toMatch(
      /^TiDB's log backup advancer paused the task pitr from demo-tidb-0 at 2026-11-28T11:00:00Z: its checkpoint TS 7 .* lags 200000 s behind, past the advancer's limit .*; running br log resume once \(backup-pitr-log-resume-2\)/,
    );
    // The resume succeeded; the advancer paused it again at its next tick, the checkpoint where it was.
    const resumed: LogTaskRecord = { ...first.record!, last: { ...first.record!.last!, uid: 'u2', phase: 'Complete', seen: iso(NOW) } };
    const later = (ms: number, tasks: LogBackupTask[], record: LogTaskRecord, doc = DOC('running')) =>
      planLogTask(input({ record, doc }), { view: { tasks, at: NOW + ms }, now: NOW + ms })!;
    const held = later(30_000, [lagged], resumed);
    expect(held.create).toBeUndefined();
    expect(held.phase).toBe('Failed');
    expect(held.news).toMatchObject({ type: 'Warning', reason: 'LogBackupLagPaused' });
    expect(held.message).toMatch(
      /; it was paused again after br log resume \(backup-pitr-log-resume-2\) before its checkpoint moved past TS 7, so it is not resumed again: /,
    );
    expect(held.record).toMatchObject({ heldSince: iso(NOW + 30_000), resumedFrom: '7', reason: held.message });
    // Every pass after: still held, announced once, no Job.
    for (const ms of [60_000, RETRY_MS * 3, 86_400_000]) {
      const again = later(ms, [lagged], held.record!);
      expect([again.create, again.news, again.phase]).toEqual([undefined, undefined, 'Failed']);
    }
    // The document asks for paused: the hold ends; back at running, one more resume.
    const paused = later(120_000, [lagged], held.record!, DOC('paused'));
    expect([paused.create, paused.phase, paused.record?.heldSince, paused.record?.resumedFrom]).toEqual([
      undefined,
      'Complete',
      undefined,
      undefined,
    ]);
    expect(paused.message).toMatch(/^TiDB's log backup advancer paused the task pitr .*; the document asks for it paused/);
    expect(later(180_000, [lagged], paused.record!)?.create?.command).toBe('resume');
  });

  test('a pause without an error the document did not ask for: resumed; paused again before its checkpoint moved, held; after it moved, resumed again', () => {
    const byHand: LogBackupTask = {
      ...task('pitr', 'Paused'),
      checkpointTS: '7',
      pause: { severity: 'MANUAL', host: 'laptop', time: '2026-11-28T11:59:00Z' },
    };
    const first = planLogTask(input(), ctx([byHand]))!;
    expect(first.create?.command).toBe('resume');
    expect(first.news).toMatchObject({ type: 'Normal', reason: 'LogBackupCommand' });
    const resumed: LogTaskRecord = { ...first.record!, last: { ...first.record!.last!, uid: 'u1', phase: 'Complete', seen: iso(NOW) } };
    const at = (tasks: LogBackupTask[]) =>
      planLogTask(input({ record: resumed }), { view: { tasks, at: NOW + 30_000 }, now: NOW + 30_000 })!;
    const held = at([byHand]);
    expect(held.news).toMatchObject({ type: 'Warning', reason: 'LogBackupPausedAgain' });
    expect(held.message).toMatch(
      /^the log backup task pitr is paused \(MANUAL by laptop at 2026-11-28T11:59:00Z\), checkpoint TS 7 .*not resumed again/,
    );
    expect(at([{ ...byHand, checkpointTS: '8' }]).create?.command).toBe('resume');
  });

  test('a failed command runs again only after the retry period, under the next name', () => {
    const failed: LogTaskRecord = {
      configMap: 'backup-pitr',
      task: 'pitr',
      want: 'running',
      inGit: true,
      runs: 1,
      last: {
        command: 'start',
        job: 'backup-pitr-log-start-1',
        phase: 'Failed',
        created: iso(NOW - 20_000),
        seen: iso(NOW - 10_000),
        error: 'Error: failed to check gc safePoint',
      },
    };
    const soon = planLogTask(input({ record: failed }), ctx([]))!;
    expect(soon.create).toBeUndefined();
    expect(soon.record?.reason).toBe('br log start failed: Error: failed to check gc safePoint; tried again after 2026-11-28T12:04:50Z');
    const later = planLogTask(input({ record: failed }), { ...ctx([]), now: NOW + RETRY_MS })!;
    expect((later.create!.body.metadata as Obj).name).toBe('backup-pitr-log-start-2');
  });

  test('a task already there is taken over, not started; another task makes a start wait; an unready cluster holds start and resume, not pause or stop', () => {
    const adopted = planLogTask(input(), ctx([task('pitr')]))!;
    expect(adopted.create).toBeUndefined();
    expect(adopted.news).toMatchObject({ reason: 'LogBackupAdopted' });
    expect(adopted.record?.adopted).toBe(iso(NOW));
    // Also after waiting for the cluster, before any command ran; not a task this controller started.
    const waited: LogTaskRecord = {
      configMap: 'backup-pitr',
      task: 'pitr',
      want: 'running',
      inGit: true,
      runs: 0,
      reason: 'the cluster is not ready: x',
    };
    expect(planLogTask(input({ record: waited }), ctx([task('pitr')]))?.news?.reason).toBe('LogBackupAdopted');
    expect(planLogTask(input({ record: { ...waited, runs: 1 } }), ctx([task('pitr')]))?.news).toBeUndefined();
    const blocked = planLogTask(input(), ctx([task('operator-task')]))!;
    expect(blocked.create).toBeUndefined();
    expect(blocked.record?.reason).toBe(
      'the log backup task operator-task exists in this cluster; BR keeps one task per cluster: stop it, or name this document operator-task to take it over',
    );
    expect(planLogTask(input(), ctx([], { notReady: '1 of 3 TiKV Pods are ready' }))?.record?.reason).toBe(
      'the cluster is not ready: 1 of 3 TiKV Pods are ready',
    );
    expect(planLogTask(input({ doc: DOC('paused') }), ctx([task('pitr')], { notReady: 'x' }))?.create?.command).toBe('pause');
    expect(planLogTask(input(), { now: NOW, view: { error: 'etcd Range: connection refused', at: NOW } })?.record?.reason).toBe(
      'the log backup tasks cannot be read from PD: etcd Range: connection refused',
    );
  });

  test('a document that left Git stops its task with the kept stop Job, then is forgotten; a Job deleted mid-command is Lost', () => {
    const kept: LogTaskRecord = {
      configMap: 'backup-pitr',
      task: 'pitr',
      want: 'running',
      inGit: true,
      runs: 1,
      stopJob: template('stop'),
      last: {
        command: 'start',
        job: 'backup-pitr-log-start-1',
        uid: 'u1',
        phase: 'Complete',
        created: iso(NOW - 600_000),
        seen: iso(NOW - 590_000),
      },
    };
    const gone = planLogTask({ configMap: 'backup-pitr', inGit: false, record: kept, jobs: [], pods: [] }, ctx([task('pitr')]))!;
    expect(gone.create?.command).toBe('stop');
    expect((gone.create!.body.metadata as Obj).name).toBe('backup-pitr-log-stop-2');
    expect(gone.record).toMatchObject({ want: 'stopped', inGit: false });
    expect(
      planLogTask(
        {
          configMap: 'backup-pitr',
          inGit: false,
          record: { ...gone.record!, last: { ...gone.record!.last!, phase: 'Complete', seen: iso(NOW - 1) } },
          jobs: [],
          pods: [],
        },
        { view: { tasks: [], at: NOW + 1 }, now: NOW + 1 },
      )?.record,
    ).toBeUndefined();
    const lost = planLogTask(
      input({
        record: { ...kept, last: { command: 'pause', job: 'backup-pitr-log-pause-2', uid: 'u2', phase: 'Running', created: iso(NOW) } },
      }),
      ctx([task('pitr')]),
    )!;
    expect(lost.record?.last).toMatchObject({ phase: 'Lost', error: 'its Job was deleted before it finished' });
    expect(lost.news?.reason).toBe('LogBackupCommandLost');
  });

  test("truncates the log to the oldest snapshot its schedule keeps: on the task's own folder, only forward, never past the checkpoint", () => {
    const doc = {
      ...DOC('running'),
      jobs: {
        ...DOC('running').jobs,
        truncate: JSON.stringify({
          apiVersion: 'batch/v1',
          kind: 'Job',
          metadata: { name: 'backup-pitr-log-truncate' },
          spec: {
            template: {
              spec: {
                containers: [
                  {
                    name: 'log-backup',
                    args: ['log', 'truncate', '--until=@UNTIL@', '--storage=@STORAGE@'],
                    env: [{ name: 'BR_STORAGE', value: 's3://backups/demo/log/{run}' }],
                  },
                ],
              },
            },
          },
        }),
      },
    };
    const synced: LogTaskRecord = {
      configMap: 'backup-pitr',
      task: 'pitr',
      want: 'running',
      inGit: true,
      runs: 1,
      storage: 's3://backups/demo/log/log-2026-11-20t02-00-00',
      last: { command: 'start', job: 'backup-pitr-log-start-1', phase: 'Complete', created: iso(NOW - 600_000), seen: iso(NOW - 590_000) },
    };
    const running = { ...task('pitr'), startTS: '100', checkpointTS: '900' };
    const plan = (until: string, record = synced, t = running) =>
      planLogTask(input({ doc, record }), { ...ctx([t]), truncateUntil: { 'backup-pitr': until } });
    const step = plan('500')!;
    expect(step.create?.command).toBe('truncate');
    const c = (step.create!.body as Obj).spec.template.spec.containers[0];
    expect(c.args).toEqual(['log', 'truncate', '--until=500', '--storage=@STORAGE@']);
    expect(c.env).toEqual([{ name: 'BR_STORAGE', value: 's3://backups/demo/log/log-2026-11-20t02-00-00' }]);
    expect(step.record?.last).toMatchObject({ command: 'truncate', until: '500', job: 'backup-pitr-log-truncate-2' });
    // Seen through: the record keeps how far.
    const done = planLogTask(
      input({
        doc,
        record: { ...step.record!, last: { ...step.record!.last!, uid: 'u', phase: 'Running' } },
        jobs: [job('backup-pitr-log-truncate-2', 'u', 'Complete')],
      }),
      ctx([running]),
    )!;
    expect(done.record?.truncatedUntil).toBe('500');
    expect(done.news?.reason).toBe('LogBackupTruncated');
    // Seen running first (a slow Job, a loaded node): the point is kept through that pass, so the
    // truncate counts once it succeeds and is not run again.
    const created = { ...step.record!, last: { ...step.record!.last!, uid: 'u', phase: 'Running' as const } };
    const seenRunning = planLogTask(input({ doc, record: created, jobs: [job('backup-pitr-log-truncate-2', 'u')] }), ctx([running]))!;
    expect(seenRunning.create).toBeUndefined();
    expect(seenRunning.record?.last).toMatchObject({ command: 'truncate', until: '500', phase: 'Running' });
    const after = planLogTask(
      input({ doc, record: seenRunning.record!, jobs: [job('backup-pitr-log-truncate-2', 'u', 'Complete')] }),
      ctx([running]),
    )!;
    expect(after.record?.truncatedUntil).toBe('500');
    expect(after.news?.message).toMatch(/^br log truncate --until=500 on s3:\/\/backups\/demo\/log\/log-2026-11-20t02-00-00 succeeded/);
    // Not again to the same point or behind it, not past the checkpoint or before the task's start, not on a stopped task.
    const truncated = { ...synced, truncatedUntil: '500' };
    expect(plan('500', truncated)?.create).toBeUndefined();
    expect(plan('400', truncated)?.create).toBeUndefined();
    expect(plan('901')?.create).toBeUndefined();
    expect(plan('100')?.create).toBeUndefined();
    expect(plan('500', { ...synced, storage: undefined }, { ...running, storage: undefined })?.create).toBeUndefined();
    expect(
      planLogTask(input({ doc: { ...doc, state: 'stopped' }, record: { ...synced, want: 'stopped' } }), {
        ...ctx([]),
        truncateUntil: { 'backup-pitr': '500' },
      })?.create,
    ).toBeUndefined();
    // By hand (logTruncateUntil), the later of it and the schedule's point.
    const byHand = (until: string, fromSchedule?: string) =>
      planLogTask(input({ doc: { ...doc, truncateUntil: until }, record: synced }), {
        ...ctx([running]),
        ...(fromSchedule && { truncateUntil: { 'backup-pitr': fromSchedule } }),
      });
    expect(((byHand('600')!.create!.body as Obj).spec.template.spec.containers[0].args as string[])[2]).toBe('--until=600');
    expect(((byHand('600', '700')!.create!.body as Obj).spec.template.spec.containers[0].args as string[])[2]).toBe('--until=700');
    expect(byHand('950')?.create).toBeUndefined();
    // The state comes first: a paused document is paused before anything is truncated.
    expect(
      planLogTask(input({ doc: { ...doc, state: 'paused' }, record: synced }), {
        ...ctx([running]),
        truncateUntil: { 'backup-pitr': '500' },
      })?.create?.command,
    ).toBe('pause');
  });

  test('the records read back from the status document as written', () => {
    const record: LogTaskRecord = {
      configMap: 'backup-pitr',
      task: 'pitr',
      want: 'paused',
      inGit: true,
      runs: 2,
      stopJob: template('stop'),
      adopted: iso(NOW),
      last: {
        command: 'pause',
        job: 'backup-pitr-log-pause-2',
        uid: 'u',
        phase: 'Complete',
        created: iso(NOW),
        seen: iso(NOW),
        finished: iso(NOW),
      },
      resumedFrom: '7',
      heldSince: iso(NOW),
    };
    const doc = JSON.parse(JSON.stringify({ logBackupTasks: listLogTasks({ 'backup-pitr': record }) }));
    expect(logTasksOf(doc)).toEqual({ 'backup-pitr': record });
    expect(logTasksOf({ logBackupTasks: [{ configMap: 'x', task: 'x', want: 'sideways' }] })).toEqual({});
    expect(logBackupDocOf({ 'log-backup.json': '{"task":"pitr"}' })).toEqual({
      problem: 'its log-backup.json is not a task and a state: no task or state',
    });
  });
});

describe("a schedule's logBackupTemplate is the log backup log-<schedule>", () => {
  const schedule = (spec: Obj = {}): Obj => ({
    apiVersion: 'pingcap.com/v1alpha1',
    kind: 'BackupSchedule',
    metadata: { name: 'nightly', namespace: 'ns' },
    spec: {
      schedule: '0 2 * * *',
      maxBackups: 3,
      backupTemplate: { br: { cluster: 'demo' }, s3: { ...S3, prefix: 'demo/snap' } },
      logBackupTemplate: { backupMode: 'log', br: { cluster: 'demo' }, s3: S3 },
      ...spec,
    },
  });

  // Starts the S3 server (a Node.js process) and runs BR (sh, then node with the simulator and gRPC):
  // half a second on an idle machine, past Jest's default 5 s on a loaded one.
  test('each start into its own log-<time> folder, as the operator names it; the script makes it when BR starts', async () => {
    // br.concurrency rides along to show that BR's log start takes it.
    const objects = renderAll([
      cluster(),
      schedule({ logBackupTemplate: { backupMode: 'log', br: { cluster: 'demo', concurrency: 4 }, s3: S3 } }),
    ]);
    const cm = find(objects, 'ConfigMap', 'backup-log-nightly');
    expect(JSON.parse(cm.data['log-backup.json'])).toEqual({ task: 'log-nightly', state: 'running' });
    const start = JSON.parse(cm.data['log-start.json']);
    const env = Object.fromEntries(start.spec.template.spec.containers[0].env.map((e: Obj) => [e.name, e.value ?? e.valueFrom]));
    expect(env.BR_STORAGE).toBe('s3://backups/demo/log/{run}');
    expect(start.spec.template.spec.containers[0].args.slice(0, 3)).toEqual(['log', 'start', '--task-name=log-nightly']);
    expect(start.spec.template.spec.containers[0].args).toContain('--concurrency=4');
    expect(find(objects, 'CronJob', 'backup-nightly')).toBeDefined();

    // The start Job's container, run as a kubelet would, with the BR simulator against S3 and PD's etcd.
    const s3 = await startS3Server(['backups']);
    const store = new EtcdStore();
    const grpc = etcdGrpcServer(store);
    await new Promise<void>((resolve) => grpc.listen(0, '127.0.0.1', resolve));
    try {
      const container = JSON.parse(JSON.stringify(start.spec.template.spec.containers[0]).replaceAll('http://minio:9000', s3.endpoint));
      const before = new Date().toISOString().slice(0, 19);
      const r = await runBrContainer(container, {
        namespace: 'ns',
        jobName: 'backup-log-nightly-log-start-1',
        secrets: { 's3-secret': { access_key: 'S3RVER', secret_key: 'S3RVER' } },
        pd: `127.0.0.1:${(grpc.address() as AddressInfo).port}`,
      });
      expect(r.status).toBe(0);
      const folder = /^s3:\/\/backups\/demo\/log\/log-(\d{4}-\d\d-\d\dt\d\d-\d\d-\d\d)$/.exec(r.message.storage)!;
      expect(folder).not.toBeNull();
      expect(folder[1].replace('t', 'T').replace(/-(\d\d)-(\d\d)$/, ':$1:$2') >= before).toBe(true);
      const [task] = logBackupTasks(
        store
          .range(Buffer.from('/tidb/br-stream/'), Buffer.from('/tidb/br-stream0'))
          .kvs.map((kv) => ({ key: kv.key.toString(), value: kv.entry.value })),
        Date.now(),
      );
      expect(task).toMatchObject({ name: 'log-nightly', state: 'Running', storage: r.message.storage });
    } finally {
      await new Promise<void>((resolve) => grpc.close(() => resolve()));
      await s3.stop();
    }
  }, 60_000);

  test("the template must be a log backup; its name is taken like a Backup's", () => {
    expect(load([cluster(), schedule({ logBackupTemplate: { br: { cluster: 'demo' }, s3: S3 } })]).errors).toMatch(
      /spec\.logBackupTemplate\.backupMode \(line \d+\): expected log: the template of the schedule's log backup, got "snapshot"/,
    );
    expect(load([cluster(), schedule(), logBackup({}, 'log-nightly')]).errors).toMatch(
      /Backup "log-nightly" would run as the same Job as the BackupSchedule/,
    );
  });
});

describe('diff: a log backup that stops covering new writes is a risk', () => {
  function risks(before: Obj[], after: Obj[]): string[] {
    const objects = (docs: Obj[]) =>
      loadManifests([{ file: 'in.yaml', text: docs.map((d) => stringify(d)).join('---\n'), explicit: true }]).objects;
    return compareModels(buildModel(objects(before)), buildModel(objects(after)))
      .clusters.flatMap((c) => c.risks)
      .filter((r) => r.id === 'log-backup')
      .map((r) => r.message);
  }

  test('paused, stopped or removed, said with where its log stays; started or resumed, none', () => {
    expect(risks([cluster(), logBackup()], [cluster()])).toEqual([
      'Log backup pitr is removed: the controller stops its task (br log stop): what it wrote stays in s3://backups/demo/log, but no point in time after this can be restored to.',
    ]);
    expect(risks([cluster(), logBackup()], [cluster(), logBackup({ logSubcommand: 'log-pause' })])).toEqual([
      'Log backup pitr is paused (br log pause): what it wrote stays in s3://backups/demo/log, but no point in time after this can be restored to until it is resumed.',
    ]);
    expect(risks([cluster(), logBackup({ logSubcommand: 'log-pause' })], [cluster(), logBackup({ logStop: true })])).toEqual([
      'Log backup pitr is stopped (br log stop): what it wrote stays in s3://backups/demo/log, but no point in time after this can be restored to.',
    ]);
    expect(risks([cluster()], [cluster(), logBackup()])).toEqual([]);
    expect(risks([cluster(), logBackup({ logSubcommand: 'log-pause' })], [cluster(), logBackup()])).toEqual([]);
    expect(risks([cluster(), logBackup({ logSubcommand: 'log-stop' })], [cluster()])).toEqual([]);
  });
});
