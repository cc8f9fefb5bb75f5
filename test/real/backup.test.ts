/**
 * Backups on the real API server (v1.32, test/kube/): a BackupSchedule, whose runs the real CronJob
 * controller starts on time, and a one-shot Backup and Restore, whose Jobs the companion controller
 * creates exactly once. The real Job controller follows each Pod, which the tests' kubelet runs on
 * this machine (the rendered script, with the BR simulator as `/br`) against a real S3-protocol server
 * (@20minutes/s3rver) on loopback. The controller, with the rendered Role's token, records each run in
 * `<cluster>-status` and announces it with Events, and reads the log backup task the test puts in
 * the PD simulator's etcd, during which no restore starts. A log backup is kept in the state Git asks
 * for with `br log` Jobs (the BR simulator writing the PD simulator's etcd over gRPC), and a schedule
 * with retention and a log backup ends in a point-in-time restore. The audit log shows the controller
 * was never refused.
 */
import { spawn } from 'node:child_process';
import { realApiSuite } from '../kube/suite';
import { RealWorld } from '../kube/world';
import { simCluster } from '../sim/controller-process';
import { BR_SIM, runBrContainer } from '../support/br-run';
import { startS3Server, type S3Server } from '../support/s3-server';
import { CRONJOB_HEALTH_LUA, runHealth } from '../support/argocd-lua';
import { renderWith } from '../support/companions';

type Obj = Record<string, any>;

const suite = realApiSuite();
const { describeReal } = suite;

jest.setTimeout(240_000);

const SECRETS = { 's3-secret': { access_key: 'S3RVER', secret_key: 'S3RVER' } };
let server: S3Server | undefined;
let endpoint = '';
let world: RealWorld | undefined;

beforeAll(async () => {
  server = await startS3Server(['backups']);
  endpoint = server.endpoint;
});

afterEach(async () => {
  const w = world;
  world = undefined;
  if (!w) return;
  try {
    expect(w.forbidden()).toEqual([]);
  } finally {
    await w.close();
  }
});

afterAll(() => server?.stop());

/** BR run by hand (as the operator's backup-manager ran it), with the bucket's keys. */
function brCommand(args: string[], env: Record<string, string>): Promise<{ status: number | null; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BR_SIM, ...args], {
      env: { PATH: process.env.PATH!, AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER', ...env },
    });
    let output = '';
    child.stdout.on('data', (d) => (output += d));
    child.stderr.on('data', (d) => (output += d));
    child.on('close', (status) => resolve({ status, output }));
  });
}

async function bucketKeys(prefix: string): Promise<string[]> {
  const xml = await (await fetch(`${endpoint}/backups?list-type=2&prefix=${encodeURIComponent(prefix)}`)).text();
  return [...xml.matchAll(/<Key>([^<]*)<\/Key>/g)].map((m) => m[1]);
}

describeReal('a BackupSchedule on the real API server', () => {
  test('runs on time, never two at once; the controller records the run across a restart, announces it, and removes what maxBackups no longer keeps', async () => {
    const namespace = 'backup-1';
    const schedule = {
      apiVersion: 'pingcap.com/v1alpha1',
      kind: 'BackupSchedule',
      metadata: { name: 'often', namespace },
      spec: {
        schedule: '* * * * *',
        maxBackups: 1,
        backupTemplate: {
          br: { cluster: 'c' },
          cleanPolicy: 'Delete',
          s3: { provider: 'ceph', endpoint, bucket: 'backups', prefix: 'c', secretName: 's3-secret' },
        },
      },
    };
    // What the bucket holds from before: three runs of this schedule the records know (a good one in
    // the layout shared with other schedules, a failed one in its own folder, a failed one in the
    // shared layout), a backup made by hand under the same prefix, and a folder whose name only starts
    // like the first run's. Retention may remove the first two only: the third run's folder may be
    // another run's backup.
    const legacyAt = (ts: string) => `c/c-pd.${namespace}-2379-${ts}`;
    const ownAt = (ts: string, uid: string) => `c/often/c-pd.${namespace}-2379-${ts}-${uid}`;
    const put = (key: string) => fetch(`${endpoint}/backups/${key}`, { method: 'PUT', body: 'x' });
    const seededKeys = [
      `${legacyAt('2026-01-01t00-00-00')}/backupmeta`,
      `${legacyAt('2026-01-01t00-00-00')}/1/a_write.sst`,
      `${ownAt('2026-01-02t00-00-00', '0000abcd')}/backup.lock`,
      `${legacyAt('2026-01-03t00-00-00')}/backupmeta`,
      'c/by-hand/backupmeta',
      `${legacyAt('2026-01-01t00-00-00')}0/backupmeta`,
    ];
    for (const key of seededKeys) await put(key);
    const seeded = [
      {
        schedule: 'often',
        job: 'backup-often-29453760',
        phase: 'Complete',
        started: '2026-01-01T00:00:00Z',
        storage: `s3://backups/${legacyAt('2026-01-01t00-00-00')}`,
      },
      {
        schedule: 'often',
        job: 'backup-often-29455200',
        uid: '0000abcd-0000-4000-8000-000000000000',
        phase: 'Failed',
        started: '2026-01-02T00:00:00Z',
        storage: `s3://backups/${ownAt('2026-01-02t00-00-00', '0000abcd')}`,
        error: 'Error: x',
      },
      {
        schedule: 'often',
        job: 'backup-often-29456640',
        phase: 'Failed',
        started: '2026-01-03T00:00:00Z',
        storage: `s3://backups/${legacyAt('2026-01-03t00-00-00')}`,
        error: 'Error: backup meta file exists',
      },
    ];
    // A second schedule whose Secret does not exist: its runs never start.
    const stuck = {
      ...schedule,
      metadata: { name: 'stuck', namespace },
      spec: {
        schedule: '* * * * *',
        backupTemplate: {
          br: { cluster: 'c' },
          s3: { provider: 'ceph', endpoint, bucket: 'backups', prefix: 'other', secretName: 'missing' },
        },
      },
    };
    const w = await RealWorld.start({ cp: suite.cp(), cluster: simCluster({}, { namespace }), render: renderWith(schedule, stuck) });
    world = w;
    await w.kube.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c-status', namespace },
      data: { 'status.json': JSON.stringify({ backupRuns: seeded }) },
    });
    await w.kube.create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's3-secret', namespace }, stringData: SECRETS['s3-secret'] });
    // The schedule's run holds until released, past the next scheduled minute.
    let release = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const held: string[] = [];
    w.kubelet.runJob = async (pod) => {
      const jobName: string = pod.metadata.labels['batch.kubernetes.io/job-name'];
      if (jobName.startsWith('backup-often-')) {
        held.push(jobName);
        await gate;
      }
      const r = await runBrContainer(pod.spec.containers[0], {
        namespace,
        jobName,
        labels: pod.metadata.labels,
        secrets: SECRETS,
        tikvVersion: 'v8.5.0',
      });
      return { exitCode: r.status ?? 1, message: r.text };
    };
    const first = await w.startController(['--resync', '2s']);
    const jobs = () => w.kube.list(`/apis/batch/v1/namespaces/${namespace}/jobs`);
    const runs = async (): Promise<Obj[]> => {
      const cm = await w.kube.get(`/api/v1/namespaces/${namespace}/configmaps/c-status`);
      return JSON.parse(cm?.data?.['status.json'] ?? '{}').backupRuns ?? [];
    };

    // The CronJob controller starts the run at the next minute. While it runs, the controller is
    // killed and started again, and the next minute comes: the record stays, and no second run starts
    // (concurrencyPolicy: Forbid, which the CronJob controller holds from the API's state).
    await w.waitFor(() => held.length === 1, 100_000, 'a run of the schedule to start');
    await w.waitFor(
      async () => (await runs()).some((r) => r.job === held[0] && r.phase === 'Running'),
      30_000,
      'the controller to record the running run',
    );
    // The stuck schedule's run started in the same minute: its Event is sent after its record, so the
    // kill waits for it (an Event is best effort; a controller killed between the two would not resend it).
    await w.waitFor(async () => (await w.events('BackupStuck')).length > 0, 30_000, "the stuck run's Event");
    first.kill('SIGKILL');
    await first.exited;
    await w.startController(['--resync', '2s']);
    await w.waitFor(
      async () => (await w.events('JobAlreadyActive')).some((e) => e.involvedObject.name === 'backup-often'),
      80_000,
      'the CronJob controller to skip a run while one is active',
    );
    expect(
      (await jobs()).filter((j) => j.metadata.labels['tidb.pingcap.com/backup-schedule'] === 'often').map((j) => j.metadata.name),
    ).toEqual([held[0]]);
    expect((await runs()).find((r) => r.job === held[0])).toMatchObject({ phase: 'Running', schedule: 'often' });
    // No run after this one: what follows checks what it did.
    await w.kube.patch(`/apis/batch/v1/namespaces/${namespace}/cronjobs/backup-often`, 'merge', { spec: { suspend: true } });
    release();

    // The Job controller sees the run through.
    await w.waitFor(
      async () => (await jobs()).some((j) => j.status?.conditions?.some((c: Obj) => c.type === 'Complete' && c.status === 'True')),
      100_000,
      'a run of the schedule to complete',
    );
    const job = (await jobs()).find((j) => j.metadata.labels['tidb.pingcap.com/backup-schedule'] === 'often')!;
    expect(job.metadata.name).toBe(held[0]);
    const minutes = Number(/(\d+)$/.exec(job.metadata.name)![1]);
    // The run's folder is the schedule's own, named with the Job's UID.
    const folder = `c/often/c-pd.${namespace}-2379-${new Date(minutes * 60_000).toISOString().slice(0, 19).replace('T', 't').replace(/:/g, '-')}-${job.metadata.uid.slice(0, 8)}`;
    expect(await bucketKeys(`${folder}/`)).toEqual(expect.arrayContaining([`${folder}/backupmeta`, `${folder}/backup.lock`]));

    // The controller keeps the run in the status ConfigMap, with what the run reported.
    // The stuck schedule's run: kept Running with the kubelet's reason, announced once.
    await w.waitFor(
      async () =>
        (await runs()).some(
          (r) => r.schedule === 'stuck' && r.phase === 'Running' && r.error === 'CreateContainerConfigError: secret "missing" not found',
        ),
      30_000,
      "the controller to record why the stuck schedule's run cannot start",
    );
    // Its CronJob says so to the health checks: Argo CD's own check would call it healthy.
    await w.waitFor(
      async () =>
        (await w.kube.get(`/apis/batch/v1/namespaces/${namespace}/cronjobs/backup-stuck`))?.metadata.annotations?.[
          'tidb-gitops.io/backup-health'
        ] === 'Degraded',
      30_000,
      "the stuck schedule's CronJob to be noted Degraded",
    );
    const stuckCronJob = (await w.kube.get(`/apis/batch/v1/namespaces/${namespace}/cronjobs/backup-stuck`))!;
    expect(stuckCronJob.metadata.annotations['tidb-gitops.io/message']).toMatch(
      /^the run backup-stuck-\d+ cannot start: CreateContainerConfigError: secret "missing" not found$/,
    );
    expect(runHealth(stuckCronJob, 'float', CRONJOB_HEALTH_LUA).status).toBe('Degraded');
    const stuckEvents = (await w.kube.list(`/api/v1/namespaces/${namespace}/events`)).filter((e) => e.reason === 'BackupStuck');
    expect(stuckEvents.length).toBeGreaterThanOrEqual(1);
    expect(stuckEvents[0].message).toBe('the run of schedule stuck cannot start: CreateContainerConfigError: secret "missing" not found');
    await w.waitFor(
      async () => (await runs()).some((r) => r.job === job.metadata.name && r.phase === 'Complete'),
      30_000,
      'the controller to record the run',
    );
    const run = (await runs()).find((r) => r.job === job.metadata.name)!;
    expect(run).toMatchObject({ schedule: 'often', phase: 'Complete', storage: `s3://backups/${folder}` });
    expect(run.backupTS).toMatch(/^\d+$/);
    expect(run.started).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);

    // What Argo CD's own CronJob check and the example's Flux expressions read: the CronJob controller
    // notes the run's success once it sees the Job complete.
    const cronJob = () => w.kube.get(`/apis/batch/v1/namespaces/${namespace}/cronjobs/backup-often`);
    await w.waitFor(
      async () => (await cronJob())?.status?.lastSuccessfulTime !== undefined,
      30_000,
      'the CronJob controller to note the success',
    );
    const cs = (await cronJob())!.status;
    // The failed run seeded before it is no longer the last: the controller notes the schedule well.
    await w.waitFor(
      async () => (await cronJob())?.metadata.annotations?.['tidb-gitops.io/backup-health'] === undefined,
      30_000,
      'the schedule to be noted well',
    );
    expect((await cronJob())!.metadata.annotations?.['tidb-gitops.io/message']).toBeUndefined();
    expect(Date.parse(cs.lastSuccessfulTime)).toBeGreaterThanOrEqual(minutes * 60_000);

    const events = await w.kube.list(`/api/v1/namespaces/${namespace}/events`);
    const announced = events.filter((e) => e.reason === 'BackupComplete' && e.involvedObject.name === job.metadata.name);
    expect(announced).toHaveLength(1);
    expect(announced[0].involvedObject).toMatchObject({ kind: 'Job', apiVersion: 'batch/v1', uid: job.metadata.uid });
    expect(announced[0].message).toContain(`written to s3://backups/${folder}`);

    // maxBackups: 1 keeps the new run; the old good run and the failed one in its own folder go; the
    // failed run in the shared layout is let go with its folder kept; nothing else goes.
    await w.waitFor(
      async () => (await runs()).filter((r) => r.phase === 'Deleted' || r.phase === 'Released').length === 3,
      30_000,
      'retention to let the three old runs go',
    );
    expect(
      (await runs())
        .filter((r) => r.phase === 'Deleted' || r.phase === 'Released')
        .map((r) => `${r.job} ${r.phase}`)
        .sort(),
    ).toEqual(['backup-often-29453760 Deleted', 'backup-often-29455200 Deleted', 'backup-often-29456640 Released']);
    expect(await bucketKeys(`${legacyAt('2026-01-01t00-00-00')}/`)).toEqual([]);
    expect(await bucketKeys(`${ownAt('2026-01-02t00-00-00', '0000abcd')}/`)).toEqual([]);
    expect(await bucketKeys(`${legacyAt('2026-01-03t00-00-00')}/`)).toEqual([`${legacyAt('2026-01-03t00-00-00')}/backupmeta`]);
    expect(await bucketKeys('c/by-hand/')).toEqual(['c/by-hand/backupmeta']);
    expect(await bucketKeys(`${legacyAt('2026-01-01t00-00-00')}0/`)).toEqual([`${legacyAt('2026-01-01t00-00-00')}0/backupmeta`]);
    expect(await bucketKeys(`${folder}/`)).toEqual(expect.arrayContaining([`${folder}/backupmeta`]));
    const retentionEvents = (await w.kube.list(`/api/v1/namespaces/${namespace}/events`)).filter(
      (e) => e.reason === 'BackupDeleted' || e.reason === 'BackupReleased',
    );
    expect(retentionEvents.map((e) => `${e.reason} ${e.involvedObject.name}`).sort()).toEqual([
      'BackupDeleted backup-often',
      'BackupDeleted backup-often',
      'BackupReleased backup-often',
    ]);
    expect(retentionEvents.find((e) => e.reason === 'BackupReleased')!.message).toContain(
      "though cleanPolicy Delete removes data: a failed run's folder in the layout shared with other schedules may hold another run's backup",
    );
    // One Event per stuck run, however many passes saw it.
    const stuckJobs = (await w.kube.list(`/api/v1/namespaces/${namespace}/events`))
      .filter((e) => e.reason === 'BackupStuck')
      .map((e) => e.involvedObject.name);
    expect(new Set(stuckJobs).size).toBe(stuckJobs.length);
  });
  test('a Backup and a Restore run exactly once: across a controller killed mid-run, a log backup task that holds the restore back, a Job deleted as a TTL would, and a re-applied ConfigMap', async () => {
    const namespace = 'backup-2';
    const s3 = { provider: 'ceph', endpoint, bucket: 'backups', prefix: 'once', secretName: 's3-secret' };
    const backupDoc = {
      apiVersion: 'pingcap.com/v1alpha1',
      kind: 'Backup',
      metadata: { name: 'once', namespace },
      spec: { br: { cluster: 'c' }, s3 },
    };
    const restoreDoc = {
      apiVersion: 'pingcap.com/v1alpha1',
      kind: 'Restore',
      metadata: { name: 'back', namespace },
      spec: { br: { cluster: 'c' }, s3 },
    };
    const w = await RealWorld.start({ cp: suite.cp(), cluster: simCluster({}, { namespace }), render: renderWith(backupDoc, restoreDoc) });
    world = w;
    await w.kube.create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's3-secret', namespace }, stringData: SECRETS['s3-secret'] });
    // The backup's Pod holds until released, so that the controller can be killed while it runs.
    let release = () => {};
    const gate = new Promise<void>((resolve) => (release = resolve));
    const runs: string[] = [];
    w.kubelet.runJob = async (pod) => {
      const jobName = pod.metadata.labels['batch.kubernetes.io/job-name'];
      runs.push(jobName);
      if (jobName === 'backup-once') await gate;
      const r = await runBrContainer(pod.spec.containers[0], {
        namespace,
        jobName,
        labels: pod.metadata.labels,
        secrets: SECRETS,
        tikvVersion: 'v8.5.0',
      });
      return { exitCode: r.status ?? 1, message: r.text };
    };
    const operations = async (): Promise<Record<string, Obj>> =>
      Object.fromEntries(((await w.status())?.operations ?? []).map((o: Obj) => [o.job, o]));
    const configMap = (name: string) => w.kube.get(`/api/v1/namespaces/${namespace}/configmaps/${name}`);
    // A log backup task runs into the cluster, as the operator or BR by hand left it (PD's etcd: the
    // task's info, and the TiDB advancer's global checkpoint a minute ago).
    const info = Buffer.from(
      '0a0f120d0a0b2f6261636b75702f6c6f67108080b4a7da93ae9f0618ffff8fbbbad6adf00d2204706974722a032a2e2a30033a00',
      'hex',
    );
    const checkpoint = Buffer.alloc(8);
    checkpoint.writeBigUInt64BE(BigInt(Date.now() - 60_000) << 18n);
    w.pd.etcd.put('/tidb/br-stream/info/pitr', info);
    w.pd.etcd.put('/tidb/br-stream/checkpoint/pitr/central_global', checkpoint);
    const first = await w.startController(['--resync', '2s']);

    // Once the cluster is ready the backup starts; the restore waits for it, saying why.
    await w.waitFor(() => runs.includes('backup-once'), 90_000, 'the backup to start');
    await w.waitFor(
      async () => (await operations())['restore-back']?.reason === 'backup-once is running; operations of a cluster run one at a time',
      30_000,
      'the restore to wait for the backup',
    );
    const started = (await operations())['backup-once'];
    expect(started).toMatchObject({ phase: 'Running', template: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) });
    await w.waitFor(
      async () => (await configMap('backup-once'))?.metadata.annotations?.['tidb-gitops.io/phase'] === 'Running',
      30_000,
      'the phase on the ConfigMap',
    );
    await w.waitFor(async () => (await operations())['backup-once']?.uid !== undefined, 30_000, 'the Job UID in the record');
    // The record and the Job say which instance of the cluster the run is against (PD's cluster ID);
    // neither the Job nor the records carry the label by which Argo CD's label tracking would prune
    // them (the Pods keep it).
    expect((await operations())['backup-once'].clusterId).toBe(w.pd.clusterId());
    const created = await w.kube.get(`/apis/batch/v1/namespaces/${namespace}/jobs/backup-once`);
    expect(created!.metadata.annotations['tidb-gitops.io/cluster-id']).toBe(w.pd.clusterId());
    expect(created!.metadata.labels['app.kubernetes.io/instance']).toBeUndefined();
    expect(created!.spec.template.metadata.labels['app.kubernetes.io/instance']).toBe('c');
    expect((await configMap('c-status'))!.metadata.labels['app.kubernetes.io/instance']).toBeUndefined();

    // The controller reads the task from PD's etcd and says where it stands.
    await w.waitFor(async () => (await w.status())?.logBackups?.[0]?.name === 'pitr', 30_000, 'the log backup task in the status');
    const [task] = (await w.status())!.logBackups;
    expect(task).toMatchObject({
      name: 'pitr',
      state: 'Running',
      storage: 'local:///backup/log',
      startTS: '450000000000000000',
      checkpointTS: checkpoint.readBigUInt64BE(0).toString(),
    });
    expect(task.lagSeconds).toBeGreaterThanOrEqual(60);

    // Killed mid-run and started again: it neither loses the run nor starts a second one.
    first.kill('SIGKILL');
    await first.exited;
    await w.startController(['--resync', '2s']);
    release();
    // The backup completes; the restore waits while the log backup task runs into the cluster, and
    // starts once the task is stopped (`br log stop` removes its keys).
    await w.waitFor(
      async () =>
        (await operations())['restore-back']?.reason ===
        'the log backup task pitr runs in this cluster (Running); stop it before restoring into the cluster',
      60_000,
      'the restore to wait for the log backup task',
    );
    expect((await operations())['backup-once'].phase).toBe('Complete');
    expect(runs).toEqual(['backup-once']);
    w.pd.etcd.deletePrefix('/tidb/br-stream/');
    await w.waitFor(
      async () => (await operations())['restore-back']?.phase === 'Complete',
      90_000,
      'the backup, then the restore, to complete',
    );
    const done = await operations();
    expect(done['backup-once']).toMatchObject({
      phase: 'Complete',
      uid: (await operations())['backup-once'].uid,
      storage: 's3://backups/once',
      backupTS: expect.stringMatching(/^\d+$/),
    });
    expect(done['restore-back']).toMatchObject({ phase: 'Complete', storage: 's3://backups/once' });
    expect(await bucketKeys('once/')).toEqual(expect.arrayContaining(['once/backupmeta', 'once/backup.lock']));
    expect(runs).toEqual(['backup-once', 'restore-back']);
    await w.waitFor(
      async () => (await configMap('restore-back'))?.metadata.annotations?.['tidb-gitops.io/phase'] === 'Complete',
      30_000,
      "the restore's phase on its ConfigMap",
    );
    const reasons = (await w.events())
      .filter((e) => e.involvedObject.kind === 'ConfigMap')
      .map((e) => e.reason)
      .sort();
    // Each said once (waiting only when it starts to: the record and the ConfigMap say what for).
    expect(reasons.filter((r) => !r.endsWith('Waiting'))).toEqual(['BackupComplete', 'BackupStarted', 'RestoreComplete', 'RestoreStarted']);
    expect(reasons.filter((r) => r === 'RestoreWaiting')).toHaveLength(1);
    expect(reasons.filter((r) => r === 'BackupWaiting').length).toBeLessThanOrEqual(1);

    // The finished Job goes, as a TTL would take it, and a re-sync applies the ConfigMap afresh (as a
    // deleted and re-created Argo CD Application does): the controller notes the outcome on the new
    // ConfigMap and creates no Job.
    const before = (await configMap('restore-back'))!.metadata.uid;
    await w.kube.delete(`/apis/batch/v1/namespaces/${namespace}/jobs/restore-back`, { propagationPolicy: 'Background' });
    await w.kube.delete(`/api/v1/namespaces/${namespace}/configmaps/restore-back`);
    await w.waitFor(async () => (await configMap('restore-back')) === undefined, 10_000, 'the ConfigMap to go');
    await w.apply(w.objects);
    await w.waitFor(
      async () => {
        const cm = await configMap('restore-back');
        return cm !== undefined && cm.metadata.uid !== before && cm.metadata.annotations?.['tidb-gitops.io/phase'] === 'Complete';
      },
      30_000,
      'the outcome on the re-created ConfigMap',
    );
    const jobs = await w.kube.list(`/apis/batch/v1/namespaces/${namespace}/jobs`);
    expect(jobs.map((j) => j.metadata.name)).toEqual(['backup-once']);
    expect(runs).toEqual(['backup-once', 'restore-back']);
    expect((await operations())['restore-back']).toEqual(done['restore-back']);
  });

  test("a log backup kept in the state Git asks for: the operator's task adopted, paused, resumed across a controller killed mid-command, reported when an error pauses it, stopped when its document leaves Git", async () => {
    const namespace = 'backup-3';
    const s3 = { provider: 'ceph', endpoint, bucket: 'backups', prefix: 'pitr-log', secretName: 's3-secret' };
    const doc = (spec: Obj = {}) => ({
      apiVersion: 'pingcap.com/v1alpha1',
      kind: 'Backup',
      metadata: { name: 'pitr', namespace },
      spec: { backupMode: 'log', br: { cluster: 'c' }, s3, ...spec },
    });
    const cluster = simCluster({}, { namespace });
    // The cluster runs first without the document, as it does under the operator before the move.
    const w = await RealWorld.start({ cp: suite.cp(), cluster, render: renderWith() });
    world = w;
    await w.kube.create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's3-secret', namespace }, stringData: SECRETS['s3-secret'] });
    const pd = new URL(w.pd.url).host;
    let gate: Promise<void> | undefined;
    const runs: string[] = [];
    w.kubelet.runJob = async (pod) => {
      const jobName: string = pod.metadata.labels['batch.kubernetes.io/job-name'];
      runs.push(jobName);
      if (gate && jobName.includes('-log-resume-')) await gate;
      const r = await runBrContainer(pod.spec.containers[0], {
        namespace,
        jobName,
        labels: pod.metadata.labels,
        secrets: SECRETS,
        tikvVersion: 'v8.5.0',
        pd,
      });
      return { exitCode: r.status ?? 1, message: r.text };
    };
    const task = async (): Promise<Obj | undefined> => (await w.status())?.logBackups?.find((t: Obj) => t.name === 'pitr');
    const record = async (): Promise<Obj | undefined> =>
      (await w.status())?.logBackupTasks?.find((t: Obj) => t.configMap === 'backup-pitr');
    const annotations = async (): Promise<Obj> =>
      (await w.kube.get(`/api/v1/namespaces/${namespace}/configmaps/backup-pitr`))?.metadata.annotations ?? {};
    const inGit = async (spec: Obj) => {
      w.objects = renderWith(doc(spec))(cluster);
      await w.apply(w.objects);
    };
    // The task runs already, as the operator's log backup Job started it before the move: BR named
    // after the Backup (`br log start --task-name=pitr`), into its storage. (PD answers once its Pods
    // run, which needs the controller's discovery: until then BR is refused, and run again.)
    let controller = await w.startController(['--resync', '2s']);
    let operatorStart = { status: null as number | null, output: '' };
    await w.waitFor(
      async () => {
        operatorStart = await brCommand(
          [
            'log',
            'start',
            '--task-name=pitr',
            '--pd=c-pd.backup-3:2379',
            '--storage=s3://backups/pitr-log',
            '--s3.provider=ceph',
            `--s3.endpoint=${endpoint}`,
          ],
          { BR_SIM_PD: pd },
        );
        return !operatorStart.output.includes('code = UNAVAILABLE');
      },
      60_000,
      'PD to answer BR',
    );
    expect(operatorStart.output).not.toContain('Error:');
    expect(operatorStart.status).toBe(0);
    // The document is committed: the controller's settings change, and its Pod is replaced.
    controller.kill('SIGKILL');
    await controller.exited;
    await inGit({});
    controller = await w.startController(['--resync', '2s']);

    // Adopted as it is, not started again.
    await w.waitFor(
      async () => (await record())?.adopted !== undefined && (await annotations())['tidb-gitops.io/phase'] === 'Complete',
      120_000,
      'the log backup task to be adopted',
    );
    expect(runs).toEqual([]);
    expect(await task()).toMatchObject({ state: 'Running', storage: 's3://backups/pitr-log' });
    expect((await annotations())['tidb-gitops.io/message']).toMatch(
      /^the log backup task pitr is running, checkpoint TS \d+ \(.*\), into s3:\/\/backups\/pitr-log$/,
    );

    // Paused from Git.
    await inGit({ logSubcommand: 'log-pause' });
    await w.waitFor(async () => (await task())?.state === 'Paused' && (await record())?.want === 'paused', 60_000, 'the task to pause');
    expect(runs).toEqual(['backup-pitr-log-pause-1']);

    // Running again: the resume is held while the controller is killed and started again; it is
    // followed to its end, not run twice.
    let release = () => {};
    gate = new Promise<void>((resolve) => (release = resolve));
    await inGit({ logSubcommand: 'log-start' });
    await w.waitFor(
      async () => (await record())?.last?.uid !== undefined && (await record())?.last?.command === 'resume',
      60_000,
      'the resume Job in the record',
    );
    await w.waitFor(() => runs.includes('backup-pitr-log-resume-2'), 30_000, 'the resume to run');
    controller.kill('SIGKILL');
    await controller.exited;
    controller = await w.startController(['--resync', '2s']);
    release();
    await w.waitFor(
      async () => (await task())?.state === 'Running' && (await record())?.last?.phase === 'Complete',
      60_000,
      'the task to run again',
    );
    expect(runs).toEqual(['backup-pitr-log-pause-1', 'backup-pitr-log-resume-2']);

    // TiKV pauses the task on an error: Degraded, with TiKV's error, and no resume straight after one.
    // brpb.StreamBackupError { happen_at, error_code, error_message, store_id } as TiKV writes it.
    const error = Buffer.from(
      '08c0c09ff1fa3112144b563a4c6f674261636b75703a526166745265711a1774686520726567696f6e206973206e6f7420666f756e642004',
      'hex',
    );
    w.pd.etcd.put('/tidb/br-stream/last-error/pitr/4', error);
    w.pd.etcd.put(
      '/tidb/br-stream/pause/pitr',
      JSON.stringify({
        severity: 'ERROR',
        operation_hostname: 'tikv-4',
        operation_pid: 1,
        operation_time: new Date().toISOString(),
        payload_type: 'application/x-protobuf;messageType=brpb.StreamBackupError',
        payload: error.toString('base64'),
      }),
    );
    await w.waitFor(async () => (await annotations())['tidb-gitops.io/phase'] === 'Failed', 60_000, 'the error pause on the ConfigMap');
    expect((await annotations())['tidb-gitops.io/message']).toContain('KV:LogBackup:RaftReq: the region is not found (store 4)');
    expect(runs).toHaveLength(2);
    // Resumed by hand (BR's resume removes both keys): healthy again.
    w.pd.etcd.deletePrefix('/tidb/br-stream/pause/');
    w.pd.etcd.deletePrefix('/tidb/br-stream/last-error/');
    await w.waitFor(async () => (await annotations())['tidb-gitops.io/phase'] === 'Complete', 60_000, 'the task healthy again');

    // The document leaves Git: the controller's Pod is replaced (its settings changed), its ConfigMap is
    // pruned; the new controller stops the task with the stop Job it kept, then forgets it.
    controller.kill('SIGKILL');
    await controller.exited;
    w.objects = renderWith()(cluster);
    await w.apply(w.objects);
    await w.kube.delete(`/api/v1/namespaces/${namespace}/configmaps/backup-pitr`);
    controller = await w.startController(['--resync', '2s']);
    await w.waitFor(
      async () => (await task()) === undefined && (await record()) === undefined,
      60_000,
      'the task to stop and its record to go',
    );
    expect(runs).toEqual(['backup-pitr-log-pause-1', 'backup-pitr-log-resume-2', 'backup-pitr-log-stop-3']);
    expect(w.pd.etcd.range(Buffer.from('/tidb/br-stream/'), Buffer.from('/tidb/br-stream0')).kvs).toEqual([]);
    expect(await bucketKeys('pitr-log/')).toEqual(['pitr-log/backup.lock', 'pitr-log/backupmeta']);
    const reasons = (await w.events()).filter((e) => e.reason.startsWith('LogBackup')).map((e) => e.reason);
    // Each command announced when it starts and when it ends, once.
    expect(reasons.filter((r) => r !== 'LogBackupWaiting').sort()).toEqual([
      'LogBackupAdopted',
      'LogBackupCommand',
      'LogBackupCommand',
      'LogBackupCommand',
      'LogBackupPaused',
      'LogBackupResumed',
      'LogBackupStopped',
    ]);
  });

  test('a BackupSchedule with maxBackups: 3 and its log backup, then a restore to a point in time: the log truncated to the snapshot kept, the restore waiting while the task runs into the cluster and running once it is stopped from Git', async () => {
    const namespace = 'backup-4';
    const snap = { provider: 'ceph', endpoint, bucket: 'backups', prefix: 'p4/snap', secretName: 's3-secret' };
    const logStorage = { ...snap, prefix: 'p4/log' };
    const schedule = (spec: Obj = {}, log: Obj = {}) => ({
      apiVersion: 'pingcap.com/v1alpha1',
      kind: 'BackupSchedule',
      metadata: { name: 'nightly', namespace },
      spec: {
        schedule: '* * * * *',
        maxBackups: 3,
        backupTemplate: { br: { cluster: 'c' }, cleanPolicy: 'Delete', s3: snap },
        logBackupTemplate: { backupMode: 'log', br: { cluster: 'c' }, s3: logStorage, ...log },
        ...spec,
      },
    });
    // Three good runs from before, in the run records and the bucket: maxBackups: 3 keeps two of them once a new one succeeds.
    const folderAt = (ts: string) => `p4/snap/c-pd.${namespace}-2379-${ts}`;
    const seeded = ['2026-01-01t00-00-00', '2026-01-02t00-00-00', '2026-01-03t00-00-00'].map((ts, i) => ({
      schedule: 'nightly',
      job: `backup-nightly-${29453760 + i * 1440}`,
      phase: 'Complete',
      started: `2026-01-0${i + 1}T00:00:00Z`,
      storage: `s3://backups/${folderAt(ts)}`,
    }));
    for (const r of seeded)
      await fetch(`${endpoint}/backups/${r.storage.slice('s3://backups/'.length)}/backupmeta`, { method: 'PUT', body: 'x' });
    const cluster = simCluster({}, { namespace });
    const w = await RealWorld.start({ cp: suite.cp(), cluster, render: renderWith(schedule()) });
    world = w;
    await w.kube.create({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c-status', namespace },
      data: { 'status.json': JSON.stringify({ backupRuns: seeded }) },
    });
    await w.kube.create({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 's3-secret', namespace }, stringData: SECRETS['s3-secret'] });
    const pd = new URL(w.pd.url).host;
    const runs: string[] = [];
    w.kubelet.runJob = async (pod) => {
      const jobName: string = pod.metadata.labels['batch.kubernetes.io/job-name'];
      runs.push(jobName);
      const r = await runBrContainer(pod.spec.containers[0], {
        namespace,
        jobName,
        labels: pod.metadata.labels,
        secrets: SECRETS,
        tikvVersion: 'v8.5.0',
        pd,
      });
      return { exitCode: r.status ?? 1, message: r.text };
    };
    const inGit = async (...docs: Obj[]) => {
      w.objects = renderWith(...docs)(cluster);
      await w.apply(w.objects);
    };
    const status = async (): Promise<Obj> => (await w.status()) ?? {};
    let controller = await w.startController(['--resync', '2s']);

    // The log backup starts into its own folder; the schedule's first run completes, and no more are scheduled.
    await w.waitFor(async () => (await status()).logBackups?.[0]?.state === 'Running', 120_000, 'the log backup task to run');
    const task = (await status()).logBackups[0];
    expect(task.name).toBe('log-nightly');
    const logFolder = /^s3:\/\/backups\/(p4\/log\/log-\d{4}-\d\d-\d\dt\d\d-\d\d-\d\d)$/.exec(task.storage)![1];
    // A snapshot a restore can replay the log on is one taken after the log started (BR refuses a gap
    // between them): a run of the minute after it.
    const after = (r: Obj) => r.phase === 'Complete' && !seeded.some((s) => s.job === r.job) && BigInt(r.backupTS) > BigInt(task.startTS);
    await w.waitFor(
      async () => ((await status()).backupRuns ?? []).some(after),
      130_000,
      'a scheduled run after the log started to complete',
    );
    await inGit(schedule({ pause: true }));
    const run = (await status()).backupRuns.find(after);
    const snapshotTs = BigInt(run.backupTS);
    // maxBackups: 3: the oldest seeded backup goes; the newest seeded one stays beside the new runs (one or two).
    await w.waitFor(
      async () => ((await status()).backupRuns ?? []).some((r: Obj) => r.job === seeded[0].job && r.phase === 'Deleted'),
      30_000,
      'retention to remove the oldest backup',
    );
    expect(await bucketKeys(`${folderAt('2026-01-01t00-00-00')}/`)).toEqual([]);
    expect(await bucketKeys(`${folderAt('2026-01-03t00-00-00')}/`)).toEqual([`${folderAt('2026-01-03t00-00-00')}/backupmeta`]);

    // TiKV flushes the log a minute past the snapshot, and the advancer notes the global checkpoint.
    const logEnd = snapshotTs + (60_000n << 18n);
    const le = Buffer.alloc(8);
    le.writeBigUInt64LE(logEnd);
    await fetch(`${endpoint}/backups/${logFolder}/v1/global_checkpoint/1.ts`, { method: 'PUT', body: le });
    const be = Buffer.alloc(8);
    be.writeBigUInt64BE(logEnd);
    w.pd.etcd.put('/tidb/br-stream/checkpoint/log-nightly/central_global', be);

    // A restore to 30 s after the snapshot, committed beside the schedule (the controller's settings
    // change: its Pod is replaced). It waits while the log backup task runs into the cluster.
    const point = snapshotTs + (30_000n << 18n);
    const restore = {
      apiVersion: 'pingcap.com/v1alpha1',
      kind: 'Restore',
      metadata: { name: 'undo', namespace },
      spec: {
        restoreMode: 'pitr',
        pitrRestoredTs: point.toString(),
        br: { cluster: 'c' },
        s3: { ...logStorage, prefix: logFolder },
        pitrFullBackupStorageProvider: { s3: { ...snap, prefix: run.storage.slice('s3://backups/'.length) } },
      },
    };
    // In the same change retention tightens to maxBackups: 1: the older snapshots go, and the log
    // before the one kept, which nothing can be replayed on any more, is truncated.
    controller.kill('SIGKILL');
    await controller.exited;
    await inGit(schedule({ pause: true, maxBackups: 1 }), restore);
    controller = await w.startController(['--resync', '2s']);
    const operation = async (): Promise<Obj | undefined> => ((await status()).operations ?? []).find((o: Obj) => o.job === 'restore-undo');
    await w.waitFor(
      async () =>
        (await operation())?.reason ===
        'the log backup task log-nightly runs in this cluster (Running); stop it before restoring into the cluster',
      60_000,
      'the restore to wait for the log backup task',
    );
    const logRecord = async (): Promise<Obj | undefined> =>
      ((await status()).logBackupTasks ?? []).find((t: Obj) => t.configMap === 'backup-log-nightly');
    await w.waitFor(
      async () => (await logRecord())?.truncatedUntil === snapshotTs.toString(),
      60_000,
      'the log to be truncated to the snapshot kept',
    );
    expect(await (await fetch(`${endpoint}/backups/${logFolder}/v1_stream_trancate_safepoint.txt`)).text()).toBe(snapshotTs.toString());
    expect((await w.events('LogBackupTruncated')).map((e) => e.message)).toEqual([
      expect.stringMatching(new RegExp(`^br log truncate --until=${snapshotTs} on s3://backups/${logFolder} succeeded`)),
    ]);

    // The log backup is stopped from Git: the controller stops the task, then runs the restore, once.
    await inGit(schedule({ pause: true, maxBackups: 1 }, { logSubcommand: 'log-stop' }), restore);
    await w.waitFor(
      async () => ['Complete', 'Failed', 'Lost'].includes((await operation())?.phase),
      90_000,
      'the task to stop and the restore to end',
    );
    expect(await operation()).toEqual(
      expect.objectContaining({ phase: 'Complete', storage: `s3://backups/${logFolder}`, backupTS: snapshotTs.toString() }),
    );
    expect((await status()).logBackups).toEqual([]);
    expect(runs.filter((r) => r === 'restore-undo')).toHaveLength(1);
    expect(runs.filter((r) => r.startsWith('backup-log-nightly-log-'))).toEqual([
      'backup-log-nightly-log-start-1',
      'backup-log-nightly-log-truncate-2',
      'backup-log-nightly-log-stop-3',
    ]);
    // The log backup's ConfigMap says it is where Git wants it: stopped (once the controller has seen
    // the stop Job end and read the tasks again, which may come after the restore has started).
    const cm = async () => (await w.kube.get(`/api/v1/namespaces/${namespace}/configmaps/backup-log-nightly`))?.metadata.annotations ?? {};
    await w.waitFor(
      async () => (await cm())['tidb-gitops.io/message'] === 'the log backup task log-nightly is stopped',
      30_000,
      'the log backup stopped on its ConfigMap',
    );
    expect((await cm())['tidb-gitops.io/phase']).toBe('Complete');
  });
});
