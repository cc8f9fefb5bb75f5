/**
 * A scheduled backup run, end to end below Kubernetes: the rendered CronJob's container is run as a
 * kubelet runs it (its env resolved from the downward API and a Secret, `$(VAR)` expanded in its
 * arguments, its script under `sh`), with the BR simulator as `/br`, against a real S3-protocol server
 * (@20minutes/s3rver) on loopback. What lands in the bucket, what the termination message says, and
 * how a second run into the same folder, a missing bucket, wrong keys and an old TiKV fail.
 */
import { stringify } from 'yaml';
import { loadInputs } from '../../src/backup/companions';
import { linkOperations } from '../../src/backup/link';
import { renderClusters } from '../../src/render/render';
import { cluster, find, type Obj } from '../support/render';
import { oneShotScript, scheduledBackupScript } from '../../src/render/scripts/br';
import { expectShellLintClean } from '../support/sandbox';
import { runBrContainer } from '../support/br-run';
import { startS3Server, type S3Server } from '../support/s3-server';

const SECRETS: Record<string, Record<string, string>> = {
  's3-secret': { access_key: 'S3RVER', secret_key: 'S3RVER' },
  'wrong-keys': { access_key: 'NOBODY', secret_key: 'nothing' },
};

let server: S3Server | undefined;
let endpoint = '';

/**
 * Each BR run is two processes (sh, then node with the simulator) talking to the S3 server, itself a
 * Node.js process: a fifth of a second on an idle machine, up to 7 s on a loaded one, where a test of
 * two or three runs went past Jest's default 5 s (21 s for three). The tests that run BR, and the
 * hooks that start and stop the server, say how long they may take, far above that.
 */
const RUN_TIMEOUT_MS = 120_000;

beforeAll(async () => {
  server = await startS3Server(['backups']);
  endpoint = server.endpoint;
}, RUN_TIMEOUT_MS);

afterAll(() => server?.stop(), RUN_TIMEOUT_MS);

/** The CronJob of schedule `name` backing up to the test's bucket (with these S3 settings), or to `storage`. */
function cronJob(s3: Obj, clusterSpec: Obj = {}, name = 'nightly', storage?: Obj): Obj {
  const docs = [
    cluster(clusterSpec),
    {
      apiVersion: 'pingcap.com/v1alpha1',
      kind: 'BackupSchedule',
      metadata: { name, namespace: 'ns' },
      spec: {
        schedule: '0 2 * * *',
        backupTemplate: {
          br: { cluster: 'demo' },
          ...(storage ?? { s3: { provider: 'ceph', endpoint, bucket: 'backups', prefix: 'demo', ...s3 } }),
        },
      },
    },
  ];
  const loaded = loadInputs(docs.map((d) => stringify(d)).join('---\n'), 'in.yaml');
  const linked = linkOperations(loaded.clusters, loaded.documents);
  expect([...loaded.errors.map((e) => e.message), ...linked.errors]).toEqual([]);
  return find(
    renderClusters(
      loaded.clusters.map((c) => c.resolved),
      linked.operations,
    )[0].objects,
    'CronJob',
    `backup-${name}`,
  );
}

/** The UID the Job controller gave the Job (its Pods carry it in the `batch.kubernetes.io/controller-uid` label). */
const UID = '1a2b3c4d-5e6f-4a1b-8c2d-3e4f5a6b7c8d';

/** Runs the CronJob's container as the kubelet would for the Job `jobName`. */
function run(cj: Obj, jobName: string, tikvVersion = 'v8.5.7', uid: string | null = UID, br?: string) {
  const c = cj.spec.jobTemplate.spec.template.spec.containers[0];
  expect((c.command[2] as string).split('/dev/termination-log').length).toBe(3);
  return runBrContainer(c, {
    namespace: 'ns',
    jobName,
    secrets: SECRETS,
    tikvVersion,
    labels: uid === null ? {} : { 'batch.kubernetes.io/controller-uid': uid },
    ...(br && { br }),
  });
}

async function listKeys(prefix: string): Promise<string[]> {
  const res = await fetch(`${endpoint}/backups?list-type=2&prefix=${encodeURIComponent(prefix)}`);
  const xml = await res.text();
  return [...xml.matchAll(/<Key>([^<]*)<\/Key>/g)].map((m) => m[1]);
}

/** `backupmeta`'s end_version (field 6), read back from the bucket. */
async function metaEndVersion(folder: string): Promise<string> {
  const buf = Buffer.from(await (await fetch(`${endpoint}/backups/${folder}/backupmeta`)).arrayBuffer());
  for (let i = 0; i < buf.length; ) {
    const tag = buf[i++];
    let v = 0n;
    for (let shift = 0n; ; shift += 7n) {
      const b = buf[i++];
      v |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) break;
    }
    if ((tag & 7) === 2) {
      i += Number(v);
      continue;
    }
    if (tag >> 3 === 6) return v.toString();
  }
  throw new Error('no end_version in backupmeta');
}

// A CronJob names each Job `<cronjob>-<scheduled time in minutes since the epoch>`: 2026-11-27T02:00Z.
const MINUTES = Date.UTC(2026, 10, 27, 2, 0) / 60_000;

describe('a scheduled backup run', () => {
  test(
    "backs up into a folder of the schedule's own, named as the operator names it and by the Job's UID, and reports the backup TS and size",
    async () => {
      const cj = cronJob({ secretName: 's3-secret' });
      const r = await run(cj, `backup-nightly-${MINUTES}`);
      expect(r.message.error).toBeUndefined();
      expect(r.output).toContain('Full Backup success summary');
      expect(r.status).toBe(0);
      const folder = 'demo/nightly/demo-pd.ns-2379-2026-11-27t02-00-00-1a2b3c4d';
      expect(r.message.storage).toBe(`s3://backups/${folder}`);
      const keys = await listKeys(`${folder}/`);
      expect(keys).toEqual(expect.arrayContaining([`${folder}/backup.lock`, `${folder}/backupmeta`]));
      expect(keys.some((k) => /\/1\/2_3_[0-9a-f]+_\d+_write\.sst$/.test(k))).toBe(true);
      expect(r.message.backupTS).toBe(await metaEndVersion(folder));
      expect(Number(r.message.size)).toBeGreaterThan(0);

      // The same Job again (a retried Pod): BR refuses the folder, and the message says why.
      const again = await run(cj, `backup-nightly-${MINUTES}`);
      expect(again.status).toBe(1);
      expect(again.message.error).toContain(`backup meta file exists in s3://backups/${folder}/`);
      expect(again.message.error).toContain('[BR:Common:ErrInvalidArgument]');
    },
    RUN_TIMEOUT_MS,
  );

  test(
    'the next run goes to a folder of its own',
    async () => {
      const r = await run(
        cronJob({ secretName: 's3-secret' }),
        `backup-nightly-${MINUTES + 24 * 60}`,
        'v8.5.7',
        'f0e1d2c3-0000-4000-8000-000000000000',
      );
      expect(r.status).toBe(0);
      expect(r.message.storage).toBe('s3://backups/demo/nightly/demo-pd.ns-2379-2026-11-28t02-00-00-f0e1d2c3');
    },
    RUN_TIMEOUT_MS,
  );

  test(
    'two schedules of one minute, and one cluster name in two Kubernetes clusters, write to folders of their own',
    async () => {
      const minute = MINUTES + 2 * 24 * 60;
      const hourly = (
        await run(
          cronJob({ secretName: 's3-secret' }, {}, 'hourly'),
          `backup-hourly-${minute}`,
          'v8.5.7',
          'aaaaaaaa-0000-4000-8000-000000000000',
        )
      ).message;
      const daily = (
        await run(cronJob({ secretName: 's3-secret' }), `backup-nightly-${minute}`, 'v8.5.7', 'bbbbbbbb-0000-4000-8000-000000000000')
      ).message;
      const elsewhere = (
        await run(cronJob({ secretName: 's3-secret' }), `backup-nightly-${minute}`, 'v8.5.7', 'cccccccc-0000-4000-8000-000000000000')
      ).message;
      expect([hourly.error, daily.error, elsewhere.error]).toEqual([undefined, undefined, undefined]);
      expect([hourly.storage, daily.storage, elsewhere.storage]).toEqual([
        's3://backups/demo/hourly/demo-pd.ns-2379-2026-11-29t02-00-00-aaaaaaaa',
        's3://backups/demo/nightly/demo-pd.ns-2379-2026-11-29t02-00-00-bbbbbbbb',
        's3://backups/demo/nightly/demo-pd.ns-2379-2026-11-29t02-00-00-cccccccc',
      ]);
    },
    RUN_TIMEOUT_MS,
  );

  test(
    "a Pod without its Job's UID label does not back up",
    async () => {
      const r = await run(cronJob({ secretName: 's3-secret' }), `backup-nightly-${MINUTES + 3}`, 'v8.5.7', null);
      expect(r.status).toBe(1);
      expect(r.output).toContain('the Pod has no batch.kubernetes.io/controller-uid label of its Job');
    },
    RUN_TIMEOUT_MS,
  );

  test(
    "an Azure SAS token in the storage URL never reaches the termination message or the script's own output",
    async () => {
      const token = 'sv=2024-08-04&ss=b&srt=co&sp=rwdl&se=2027-01-01T00:00:00Z&sig=AbCdEf%2Bsecret%3D';
      const cj = cronJob({}, {}, 'nightly', { azblob: { container: 'backups', prefix: 'demo', storageAccount: 'acct', sasToken: token } });
      // BR's error names the storage as BR was given it.
      const br = `sh -c 'for a do case "$a" in --storage=*) echo "Error: cannot write to \${a#--storage=}: AuthorizationFailure" >&2 ;; esac; done; exit 1' br`;
      const r = await run(cj, `backup-nightly-${MINUTES + 4}`, 'v8.5.7', UID, br);
      expect(r.status).toBe(1);
      expect(r.message.storage).toBe(
        'azure://backups/demo/nightly/demo-pd.ns-2379-2026-11-27t02-04-00-1a2b3c4d/?account-name=acct&sas-token=REDACTED',
      );
      expect(r.message.error).toContain('sas-token=REDACTED: AuthorizationFailure');
      for (const secret of ['AbCdEf', 'sig%3D', encodeURIComponent(token)]) {
        expect(r.text).not.toContain(secret);
        expect(r.output.split('\n').filter((l) => !l.startsWith('Error: '))).not.toContainEqual(expect.stringContaining(secret));
      }
    },
    RUN_TIMEOUT_MS,
  );

  test(
    "a missing bucket, wrong keys and a TiKV BR refuses fail with BR's words",
    async () => {
      const noBucket = await run(cronJob({ bucket: 'nowhere', secretName: 's3-secret' }), `backup-nightly-${MINUTES}`);
      expect(noBucket.status).toBe(1);
      expect(noBucket.message.error).toContain('NoSuchBucket');
      const wrongKeys = await run(cronJob({ secretName: 'wrong-keys' }), `backup-nightly-${MINUTES + 1}`);
      expect(wrongKeys.status).toBe(1);
      expect(wrongKeys.message.error).toMatch(/Forbidden|InvalidAccessKeyId/);
      const old = await run(cronJob({ secretName: 's3-secret' }), `backup-nightly-${MINUTES + 2}`, 'v8.1.2');
      expect(old.status).toBe(1);
      expect(old.message.error).toContain('TiKV node 127.0.0.1:20160 version v8.1.2 and BR v8.5.7 version mismatch');
      expect(await listKeys('demo/nightly/demo-pd.ns-2379-2026-11-27t02-02-00-1a2b3c4d/')).toEqual([]);
    },
    RUN_TIMEOUT_MS,
  );
});

/** The Job in a one-shot operation's ConfigMap. */
function oneShotJob(doc: Obj): Obj {
  const docs = [cluster(), doc];
  const loaded = loadInputs(docs.map((d) => stringify(d)).join('---\n'), 'in.yaml');
  const linked = linkOperations(loaded.clusters, loaded.documents);
  expect([...loaded.errors.map((e) => e.message), ...linked.errors]).toEqual([]);
  const objects = renderClusters(
    loaded.clusters.map((c) => c.resolved),
    linked.operations,
  )[0].objects;
  const name = `${doc.kind === 'Backup' ? 'backup' : 'restore'}-${doc.metadata.name}`;
  return JSON.parse(find(objects, 'ConfigMap', name).data['job.json']);
}

describe('a one-shot backup, then a restore of it', () => {
  const s3 = (prefix: string) => ({ provider: 'ceph', endpoint, bucket: 'backups', prefix, secretName: 's3-secret' });
  const runJob = (job: Obj, tikvVersion = 'v8.5.7') =>
    runBrContainer(job.spec.template.spec.containers[0], { namespace: 'ns', jobName: job.metadata.name, secrets: SECRETS, tikvVersion });

  test(
    'the backup writes into the prefix itself; the restore reads it back and reports the same BackupTS',
    async () => {
      const b = await runJob(
        oneShotJob({
          apiVersion: 'pingcap.com/v1alpha1',
          kind: 'Backup',
          metadata: { name: 'once', namespace: 'ns' },
          spec: { br: { cluster: 'demo' }, s3: s3('one/shot') },
        }),
      );
      expect(b.status).toBe(0);
      expect(b.message.storage).toBe('s3://backups/one/shot');
      expect(await listKeys('one/shot/')).toEqual(expect.arrayContaining(['one/shot/backupmeta']));
      expect(b.message.backupTS).toBe(await metaEndVersion('one/shot'));
      const r = await runJob(
        oneShotJob({
          apiVersion: 'pingcap.com/v1alpha1',
          kind: 'Restore',
          metadata: { name: 'back', namespace: 'ns' },
          spec: { br: { cluster: 'demo' }, s3: s3('one/shot') },
        }),
      );
      expect(r.output).toContain('restoring from s3://backups/one/shot');
      expect(r.output).toContain('Full Restore success summary');
      expect(r.status).toBe(0);
      expect(r.message).toEqual({ storage: 's3://backups/one/shot', backupTS: b.message.backupTS, size: expect.stringMatching(/^\d+$/) });
    },
    RUN_TIMEOUT_MS,
  );

  test(
    "a restore from a folder that holds no backup fails with BR's words",
    async () => {
      const r = await runJob(
        oneShotJob({
          apiVersion: 'pingcap.com/v1alpha1',
          kind: 'Restore',
          metadata: { name: 'none', namespace: 'ns' },
          spec: { br: { cluster: 'demo' }, s3: s3('nothing/here') },
        }),
      );
      expect(r.status).toBe(1);
      expect(r.message.storage).toBe('s3://backups/nothing/here');
      expect(r.message.error).toMatch(/^Error: /);
      expect(r.message.error).toMatch(/backupmeta|NoSuchKey/);
    },
    RUN_TIMEOUT_MS,
  );
});

describe('the run scripts', () => {
  test('pass dash -n (and shellcheck -s sh when installed)', () => {
    expectShellLintClean(scheduledBackupScript());
    expectShellLintClean(oneShotScript('backup'));
    expectShellLintClean(oneShotScript('restore'));
  });
});
