/**
 * The BR simulator (test/sim/br.mjs) as a command, `br backup` then `br restore`, against a real
 * S3-protocol server (@20minutes/s3rver) on loopback: a restore of a real backup and its summary
 * line, and the ways BR v8.5 refuses one (no backupmeta, a cluster that is not fresh, a table that
 * exists, an unknown flag, the cluster's version, a db or table not in the backup); and `br log
 * start|pause|resume|stop` against the PD simulator's etcd, whose keys the controller then reads.
 */
import { spawn } from 'node:child_process';
import type { AddressInfo } from 'node:net';
import { logBackupTasks } from '../../../src/controller/plan/log-backups';
import { stringify } from 'yaml';
import { loadInputs } from '../../../src/backup/companions';
import { linkOperations } from '../../../src/backup/link';
import { renderClusters } from '../../../src/render/render';
import { BR_SIM, runBrContainer } from '../../support/br-run';
import { cluster, find } from '../../support/render';
import { EtcdStore, etcdGrpcServer } from '../../sim/pd-etcd';
import { startS3Server, type S3Server } from '../../support/s3-server';

// Each test runs the simulator as several processes one after another: on a loaded machine that
// takes far longer than Jest's 5 s default, which would fail a test that has done nothing wrong.
jest.setTimeout(120_000);

let server: S3Server | undefined;
let endpoint = '';

beforeAll(async () => {
  server = await startS3Server(['bucket']);
  endpoint = server.endpoint;
});

afterAll(() => server?.stop());

interface Run {
  readonly status: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `node test/sim/br.mjs <args>` with the S3 server's keys and the cluster described by `env`. */
function br(args: readonly string[], env: Record<string, string> = {}): Promise<Run> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [BR_SIM, ...args, '--s3.provider=ceph', `--s3.endpoint=${endpoint}`], {
      env: { PATH: process.env.PATH!, AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER', ...env },
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => (stdout += d));
    child.stderr.on('data', (d) => (stderr += d));
    child.on('close', (status) => resolve({ status, stdout, stderr }));
  });
}

/** The `Error: ...` BR ends with, as printed on stderr. */
const error = (r: Run) => r.stderr.replace(/^Error: /, '').replace(/\n$/, '');

/** The fields of a summary line, in order: `[name=value]` after the message. */
function summary(out: string, message: string): [string, string][] | undefined {
  const line = out.split('\n').find((l) => l.includes(`["${message}"]`));
  if (!line) return undefined;
  return [...line.slice(line.indexOf(`["${message}"]`)).matchAll(/ \[([^=\]]+)=([^\]]*)\]/g)].map((m) => [m[1], m[2]]);
}

async function listKeys(prefix: string): Promise<string[]> {
  const xml = await (await fetch(`${endpoint}/bucket?list-type=2&prefix=${encodeURIComponent(prefix)}`)).text();
  return [...xml.matchAll(/<Key>([^<]*)<\/Key>/g)].map((m) => m[1]);
}

const SOURCE = { BR_SIM_USER_TABLES: 'shop.orders,shop.items,archive' };

/** A full backup of a cluster holding shop.orders, shop.items and the empty database archive. */
async function backupFull(folder: string, env: Record<string, string> = {}, extra: string[] = []): Promise<string> {
  const r = await br(['backup', 'full', `--storage=s3://bucket/${folder}`, ...extra], { ...SOURCE, ...env });
  expect(r.stderr).toBe('');
  expect(r.status).toBe(0);
  return Object.fromEntries(summary(r.stdout, 'Full Backup success summary')!).BackupTS;
}

describe('br restore of a real backup', () => {
  test("restores what the backup holds and says so in BR's summary line; writes nothing to the storage", async () => {
    const backupTS = await backupFull('full');
    const keys = await listKeys('full/');
    // One SST per table (mysql.user, every cluster's, then the user tables), the MetaV2 metafiles.
    expect(keys.filter((k) => k.endsWith('.sst'))).toHaveLength(3);
    expect(keys).toEqual(
      expect.arrayContaining([
        'full/backup.lock',
        'full/backupmeta',
        'full/backupmeta.datafile.000000001',
        'full/backupmeta.schema.000000002',
      ]),
    );

    const r = await br(['restore', 'full', '--storage=s3://bucket/full']);
    expect(r.stderr).toBe('');
    expect(r.status).toBe(0);
    const fields = summary(r.stdout, 'Full Restore success summary')!;
    expect(fields.map(([k]) => k)).toEqual([
      'total-ranges',
      'ranges-succeed',
      'ranges-failed',
      'restore-ranges',
      'total-take',
      'restore-data-size(after-compressed)',
      'Size',
      'BackupTS',
      'RestoreTS',
      'total-kv',
      'total-kv-size',
      'average-speed',
    ]);
    const f = Object.fromEntries(fields);
    expect(f).toMatchObject({
      'total-ranges': '3',
      'ranges-succeed': '3',
      'ranges-failed': '0',
      'restore-ranges': '3',
      'total-kv': '3',
      BackupTS: backupTS,
    });
    expect(f['total-take']).toMatch(/^\d+(\.\d+)?(ms|s)$/);
    expect(f['restore-data-size(after-compressed)']).toBe(`${f.Size}B`);
    expect(f['average-speed']).toMatch(/^[\d.]+k?B\/s$/);
    expect(BigInt(f.RestoreTS)).toBeGreaterThan(BigInt(backupTS));
    expect(r.stdout).toMatch(
      /^\[\d{4}\/\d\d\/\d\d \d\d:\d\d:\d\d\.\d{3} \+00:00\] \[INFO\] \[collector\.go:77\] \["Full Restore success summary"\] \[total-ranges=3\]/m,
    );
    expect(r.stdout).toContain('["found items to restore after filtering"] [tables=3] [db=3]');
    expect(await listKeys('full/')).toEqual(keys);

    // db and table restores take their part only; without --with-sys-table no system table.
    const [db, table, noSys] = await Promise.all([
      br(['restore', 'db', '--db', 'SHOP', '--storage=s3://bucket/full']),
      br(['restore', 'table', '--db=shop', '-t', 'items', '--storage=s3://bucket/full']),
      br(['restore', 'full', '--with-sys-table=false', '--storage=s3://bucket/full']),
    ]);
    expect(Object.fromEntries(summary(db.stdout, 'DataBase Restore success summary')!)['total-ranges']).toBe('2');
    expect(Object.fromEntries(summary(table.stdout, 'Table Restore success summary')!)['total-ranges']).toBe('1');
    expect(noSys.stdout).toContain('[tables=2] [db=2]');
  });

  test('a folder without backupmeta fails as BR reads it: load backupmeta failed, S3 NoSuchKey', async () => {
    const r = await br(['restore', 'full', '--storage=s3://bucket/empty']);
    expect(r.status).toBe(1);
    expect(error(r)).toMatch(
      /^load backupmeta failed: failed to read s3 file, file info: input\.bucket='bucket', input\.key='empty\/backupmeta': NoSuchKey: The specified key does not exist\.\n\tstatus code: 404, request id: [^,]*, host id: .*$/,
    );
    // runSnapshotRestore's deferred summary.Summary prints the failed summary.
    expect(summary(r.stdout, 'Full Restore failed summary')).toEqual([
      ['total-ranges', '0'],
      ['ranges-succeed', '0'],
      ['ranges-failed', '0'],
    ]);
  });

  test("a full restore into a cluster that is not fresh fails, with BR's banner; a table that exists stops the others", async () => {
    await backupFull('fresh');
    const target = { BR_SIM_USER_TABLES: 'shop.orders,test,crm' };
    const [full, filtered, db, dbUnchecked] = await Promise.all([
      br(['restore', 'full', '--storage=s3://bucket/fresh'], target),
      br(['restore', 'full', '--filter=shop.*', '--storage=s3://bucket/fresh'], target),
      br(['restore', 'db', '--db=shop', '--storage=s3://bucket/fresh'], target),
      br(['restore', 'db', '--db=shop', '--check-requirements=false', '--storage=s3://bucket/fresh'], target),
    ]);
    // The empty `test` database of a fresh TiDB does not count; an empty `crm` does.
    expect(full.status).toBe(1);
    expect(error(full)).toBe('user db/tables: shop.orders, crm.: [BR:Restore:ErrRestoreNotFreshCluster]cluster is not fresh');
    expect(full.stdout).toContain(
      '# the target cluster is not fresh, cannot restore.\n# you can drop existing databases and tables and start restore again\n',
    );
    // With --filter there is no fresh-cluster check, but the tables restored must not exist.
    expect(error(filtered)).toBe(
      'table already exists: shop.orders : [BR:Restore:ErrTablesAlreadyExisted]tables already existed in restored cluster',
    );
    expect(filtered.stdout).not.toContain('not fresh');
    expect(error(db)).toBe(
      'table already exists: shop.orders : [BR:Restore:ErrTablesAlreadyExisted]tables already existed in restored cluster',
    );
    // That check is one of --check-requirements'.
    expect(dbUnchecked.status).toBe(0);
    expect(summary(dbUnchecked.stdout, 'DataBase Restore success summary')).toBeDefined();
  });

  test("flags: BR's restore flag set, cobra's words for the rest", async () => {
    const [unknown, pointOnly, shorthand, required, badBool] = await Promise.all([
      br(['restore', 'full', '--pitrrestoredts=1', '--storage=s3://bucket/full']),
      br(['restore', 'full', '--restored-ts=2024-01-01 00:00:00', '--storage=s3://bucket/full']),
      br(['restore', 'db', '-x', '--storage=s3://bucket/full']),
      br(['restore', 'table', '--storage=s3://bucket/full']),
      br(['restore', 'full', '--online=maybe', '--storage=s3://bucket/full']),
    ]);
    expect([unknown.status, error(unknown)]).toEqual([1, 'unknown flag: --pitrrestoredts']);
    // --restored-ts is `restore point`'s (DefineStreamRestoreFlags).
    expect(error(pointOnly)).toBe('unknown flag: --restored-ts');
    expect(error(shorthand)).toBe("unknown shorthand flag: 'x' in -x");
    expect(error(required)).toBe('required flag(s) "db", "table" not set');
    expect(error(badBool)).toBe('invalid argument "maybe" for "--online" flag: strconv.ParseBool: parsing "maybe": invalid syntax');
    for (const r of [unknown, pointOnly, shorthand, required, badBool]) expect(r.stdout).not.toContain('summary');
  });

  test("the cluster's version: TiKV older than BR allows, a backup two major versions newer, both skipped by --check-requirements=false", async () => {
    await backupFull('newer', { BR_SIM_TIKV_VERSION: 'v10.1.0' }, ['--check-requirements=false']);
    const [oldTiKV, newer, unchecked] = await Promise.all([
      br(['restore', 'full', '--storage=s3://bucket/full'], { BR_SIM_TIKV_VERSION: 'v8.1.2' }),
      br(['restore', 'full', '--storage=s3://bucket/newer']),
      br(['restore', 'full', '--check-requirements=false', '--storage=s3://bucket/newer']),
    ]);
    expect(oldTiKV.status).toBe(1);
    expect(error(oldTiKV)).toBe(
      "running BR in incompatible version of cluster, if you believe it's OK, use --check-requirements=false to skip.: TiKV node 127.0.0.1:20160 version v8.1.2 and BR v8.5.7 version mismatch, please use the same version of BR: [BR:Common:ErrVersionMismatch]version mismatch",
    );
    // NewMgr fails before runSnapshotRestore: no summary.
    expect(oldTiKV.stdout).not.toContain('summary');
    expect(error(newer)).toBe(
      'backup with cluster version 10.1.0 cannot be restored at cluster of version 8.5.7: major version mismatches: [BR:Common:ErrVersionMismatch]version mismatch',
    );
    expect(summary(newer.stdout, 'Full Restore failed summary')).toBeDefined();
    expect(unchecked.status).toBe(0);
  });

  test('a database or table the backup does not hold, and a new-collation mismatch', async () => {
    const [noDB, noTable, collation] = await Promise.all([
      br(['restore', 'db', '--db=nowhere', '--storage=s3://bucket/full']),
      br(['restore', 'table', '--db=shop', '--table=nothing', '--storage=s3://bucket/full']),
      br(['restore', 'full', '--storage=s3://bucket/full'], { BR_SIM_NEW_COLLATIONS_ENABLED: 'False' }),
    ]);
    expect(error(noDB)).toBe(
      '[database: `nowhere`] has not been backup, please ensure you has input a correct database name: [BR:Common:ErrUndefinedDbOrTable]undefined restore databases or tables',
    );
    expect(error(noTable)).toBe(
      '[table: `shop`.`nothing`] has not been backup, please ensure you has input a correct table name: [BR:Common:ErrUndefinedDbOrTable]undefined restore databases or tables',
    );
    expect(error(collation)).toBe(
      "the config 'new_collation_enabled' not match, upstream:True, downstream: False: [BR:Common:ErrUnknown]internal error",
    );
  });
});

describe("br log against PD's etcd and the S3 server", () => {
  const { store, pd } = pdEtcd();
  const log = (args: string[]) => br(['log', ...args, `--pd=${pd()}`]);
  const keys = () => store.range(Buffer.from('/tidb/br-stream/'), Buffer.from('/tidb/br-stream0')).kvs.map((kv) => kv.key.toString());
  const tasks = () =>
    logBackupTasks(
      store
        .range(Buffer.from('/tidb/br-stream/'), Buffer.from('/tidb/br-stream0'))
        .kvs.map((kv) => ({ key: kv.key.toString(), value: kv.entry.value })),
      Date.now(),
    );

  test("start writes the task and the storage's lock and backupmeta; pause, resume and stop follow; one task per cluster", async () => {
    const started = await log(['start', '--task-name=pitr', '--storage=s3://bucket/log-a']);
    expect(started.status).toBe(0);
    expect(summary(started.stdout, 'log start success summary')?.map(([k]) => k)).toEqual(['total-take']);
    const info = /\[streamTaskInfo="\{taskName=pitr, startTs=(\d+), endTS=999999999999999999, tableFilter=\*\.\*\}"\]/.exec(started.stdout);
    expect(info).not.toBeNull();
    expect(keys()).toEqual(['/tidb/br-stream/info/pitr', '/tidb/br-stream/ranges/pitr/m', '/tidb/br-stream/ranges/pitr/t']);
    expect(await listKeys('log-a/')).toEqual(['log-a/backup.lock', 'log-a/backupmeta']);
    const [task] = tasks();
    expect(task).toMatchObject({ name: 'pitr', state: 'Running', storage: 's3://bucket/log-a' });
    const startTs = info![1];
    expect(task.startTS).toBe(startTs);
    // backupmeta: the start TS as start_version (5), no end_version (6).
    const meta = Buffer.from(await (await fetch(`${endpoint}/bucket/log-a/backupmeta`)).arrayBuffer());
    expect(meta.toString('hex')).toContain(`28${varintHex(BigInt(startTs))}`);

    const other = await log(['start', '--task-name=other', '--storage=s3://bucket/log-b']);
    expect(other.status).toBe(1);
    expect(error(other)).toBe(
      'failed to start the log backup, allow only one running task: [BR:Stream:ErrStreamLogTaskExist]stream task already exists',
    );

    expect((await log(['pause', '--task-name=pitr'])).status).toBe(0);
    expect(tasks()[0].state).toBe('Paused');
    expect(error(await log(['pause', '--task-name=pitr']))).toBe(
      'The task pitr is paused already.: [BR:KV:ErrKVUnknown]unknown error occur on tikv',
    );
    expect((await log(['resume', '--task-name=pitr'])).status).toBe(0);
    expect(tasks()[0].state).toBe('Running');
    expect(error(await log(['resume', '--task-name=pitr']))).toBe(
      'The task pitr is active already.: [BR:KV:ErrKVUnknown]unknown error occur on tikv',
    );
    expect(error(await log(['stop', '--task-name=nothing']))).toBe('no such task nothing: [BR:PiTR:ErrTaskNotFound]task not found');
    const stopped = await log(['stop', '--task-name=pitr']);
    expect(stopped.status).toBe(0);
    expect(stopped.stdout).toContain('["log stop success summary"]');
    expect(keys()).toEqual([]);
    expect(await listKeys('log-a/')).toEqual(['log-a/backup.lock', 'log-a/backupmeta']);
  });

  test("a start on a storage a task used starts from where its log ends; a snapshot backup's folder is refused", async () => {
    await log(['start', '--task-name=again', '--storage=s3://bucket/log-c']);
    const end = BigInt(tasks()[0].startTS) + 5000n;
    await log(['stop', '--task-name=again']);
    const le = Buffer.alloc(8);
    le.writeBigUInt64LE(end);
    await fetch(`${endpoint}/bucket/log-c/v1/global_checkpoint/1.ts`, { method: 'PUT', body: le });
    const restarted = await log(['start', '--task-name=again', '--storage=s3://bucket/log-c', '--start-ts=1']);
    expect(restarted.status).toBe(0);
    expect(tasks()[0].startTS).toBe(end.toString());
    await log(['stop', '--task-name=again']);

    await backupFull('snap-for-log');
    expect(error(await log(['start', '--task-name=x', '--storage=s3://bucket/snap-for-log']))).toBe(
      'the storage has been used for full backup: [BR:ExternalStorage:ErrStorageUnknown]unknown external storage error',
    );
    expect(error(await log(['start', '--storage=s3://bucket/y']))).toBe(
      'Miss parameters task-name: [BR:Common:ErrInvalidArgument]invalid argument',
    );
    expect(error(await log(['start', '--task-name=x', '--storage=s3://bucket/y', '--start-ts=2026-01-01 00:00:00']))).toBe(
      "must set timezone when using datetime format ts, e.g. '2018-05-11 01:42:23+0800': [BR:Common:ErrInvalidArgument]invalid argument",
    );
    // --timeago is br backup's own flag; --concurrency is common to every command (a task that is not there says so).
    expect(error(await log(['stop', '--task-name=x', '--timeago=1h']))).toBe('unknown flag: --timeago');
    expect(error(await log(['stop', '--task-name=x', '--concurrency=4']))).not.toContain('unknown flag');
    expect(keys()).toEqual([]);
  });
});

describe('br restore point: a snapshot and the log after it', () => {
  const { store, pd } = pdEtcd();
  const le = (ts: bigint) => {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(ts);
    return b;
  };

  test("restores the snapshot, then the log up to the point; the range checks in BR's words", async () => {
    // The log starts, then the snapshot is taken, then the stores flush the log past it.
    expect((await br(['log', 'start', '--task-name=pitr', '--storage=s3://bucket/pitr-log', `--pd=${pd()}`])).status).toBe(0);
    const logStart = BigInt(
      logBackupTasks(
        store
          .range(Buffer.from('/tidb/br-stream/'), Buffer.from('/tidb/br-stream0'))
          .kvs.map((kv) => ({ key: kv.key.toString(), value: kv.entry.value })),
        Date.now(),
      )[0].startTS,
    );
    const snapshotTs = await backupFull('pitr-snap');
    const logEnd = BigInt(snapshotTs) + (60_000n << 18n);
    await fetch(`${endpoint}/bucket/pitr-log/v1/global_checkpoint/1.ts`, { method: 'PUT', body: le(logEnd) });
    const point = (extra: string[]) =>
      br(['restore', 'point', '--storage=s3://bucket/pitr-log', '--full-backup-storage=s3://bucket/pitr-snap', ...extra]);

    const target = BigInt(snapshotTs) + (30_000n << 18n);
    const ok = await point([`--restored-ts=${target}`]);
    expect(ok.stderr).toBe('');
    expect(ok.status).toBe(0);
    expect(summary(ok.stdout, 'Full Restore success summary')?.find(([k]) => k === 'BackupTS')?.[1]).toBe(snapshotTs);
    const logged = Object.fromEntries(summary(ok.stdout, 'restore log success summary')!);
    expect(logged['source-start-point']).toBe(snapshotTs);
    expect(logged['source-end-point']).toBe(target.toString());
    // Without --restored-ts: to the end of the log.
    expect(Object.fromEntries(summary((await point([])).stdout, 'restore log success summary')!)['source-end-point']).toBe(
      logEnd.toString(),
    );

    const time = (ts: bigint) => {
      const d = new Date(Number(ts >> 18n));
      return `${d.toISOString().slice(0, 19).replace('T', ' ')}${d.getUTCMilliseconds() ? `.${String(d.getUTCMilliseconds()).padStart(3, '0').replace(/0+$/, '')}` : ''} +0000 UTC`;
    };
    const beyond = logEnd + 1n;
    expect(error(await point([`--restored-ts=${beyond}`]))).toBe(
      `restore log from ${snapshotTs}(${time(BigInt(snapshotTs))}) to ${beyond}(${time(beyond)}),  but the current existed log from ${logStart}(${time(logStart)}) to ${logEnd}(${time(logEnd)}): [BR:Common:ErrInvalidArgument]invalid argument`,
    );
    // Truncated to the snapshot: the metadata files wholly before it go, the log now starts there, and
    // a restore still reaches any point after the snapshot.
    const hex = (n: bigint) => n.toString(16).toUpperCase().padStart(16, '0');
    const before = `pitr-log/v1/backupmeta/${hex(logStart + 5n)}${hex(1n)}-d${hex(logStart)}l${hex(logStart)}u${hex(logStart + 4n)}.meta`;
    const across = `pitr-log/v1/backupmeta/${hex(logEnd)}-${hex(logStart)}-${hex(logStart)}-${hex(logEnd)}.meta`;
    for (const key of [before, across]) await fetch(`${endpoint}/bucket/${key}`, { method: 'PUT', body: 'm' });
    const truncated = await br(['log', 'truncate', `--until=${snapshotTs}`, '--storage=s3://bucket/pitr-log']);
    expect(truncated.stderr).toBe('');
    expect(await listKeys('pitr-log/v1/backupmeta/')).toEqual([across]);
    expect(await (await fetch(`${endpoint}/bucket/pitr-log/v1_stream_trancate_safepoint.txt`)).text()).toBe(snapshotTs);
    expect(await listKeys('pitr-log/truncating.lock')).toEqual([]);
    expect((await point([`--restored-ts=${target}`])).status).toBe(0);
    expect(error(await br(['log', 'truncate', '--storage=s3://bucket/pitr-log']))).toBe(
      'please provide the `--until` ts: [BR:Common:ErrInvalidArgument]invalid argument',
    );
    // A snapshot of another cluster.
    await backupFull('other-cluster-snap', { BR_SIM_CLUSTER_ID: '42' });
    const other = await br(['restore', 'point', '--storage=s3://bucket/pitr-log', '--full-backup-storage=s3://bucket/other-cluster-snap']);
    expect(error(other)).toMatch(
      /^the full snapshot\(from cluster ID:42\) and log\(from cluster ID:7371123456789012345\) come from different cluster\.: \[BR:Common:ErrInvalidArgument\]invalid argument$/,
    );
    expect(error(await point(['--start-ts=1']))).toBe(
      'start-ts and full-backup-storage are mutually exclusive: [BR:Common:ErrInvalidArgument]invalid argument',
    );
    // A target cluster that is not fresh: the snapshot phase refuses it.
    expect(
      error(
        await br(['restore', 'point', '--storage=s3://bucket/pitr-log', '--full-backup-storage=s3://bucket/pitr-snap'], {
          BR_SIM_USER_TABLES: 'shop.orders',
        }),
      ),
    ).toMatch(/cluster is not fresh$/);
    // A log truncated past the snapshot leaves a gap.
    await fetch(`${endpoint}/bucket/pitr-log/v1_stream_trancate_safepoint.txt`, { method: 'PUT', body: String(BigInt(snapshotTs) + 1n) });
    expect(error(await point([]))).toBe(
      `it has gap between full backup ts:${snapshotTs}(${time(BigInt(snapshotTs))}) and log backup ts:${BigInt(snapshotTs) + 1n}(${time(BigInt(snapshotTs) + 1n)}). : [BR:Common:ErrInvalidArgument]invalid argument`,
    );
  });
});

describe('br restore point with the snapshot on another S3 server than the log', () => {
  const { pd } = pdEtcd();
  let other: S3Server | undefined;
  beforeAll(async () => {
    other = await startS3Server(['snaps']);
  });
  afterAll(() => other?.stop());

  test("BR folds the snapshot URL's endpoint into the log's; the rendered Job names each storage's in its URL and restores", async () => {
    expect((await br(['log', 'start', '--task-name=far', '--storage=s3://bucket/far-log', `--pd=${pd()}`])).status).toBe(0);
    const snap = await br(['backup', 'full', `--storage=s3://snaps/far-snap?endpoint=${encodeURIComponent(other!.endpoint)}`], SOURCE);
    expect(snap.stderr).toBe('');
    const snapshotTs = BigInt(Object.fromEntries(summary(snap.stdout, 'Full Backup success summary')!).BackupTS);
    const end = Buffer.alloc(8);
    end.writeBigUInt64LE(snapshotTs + (60_000n << 18n));
    await fetch(`${endpoint}/bucket/far-log/v1/global_checkpoint/1.ts`, { method: 'PUT', body: end });
    // The endpoint in the snapshot's URL alone: BR reads the log's metadata from the snapshot's server.
    const folded = await br([
      'restore',
      'point',
      '--storage=s3://bucket/far-log',
      `--full-backup-storage=s3://snaps/far-snap?endpoint=${encodeURIComponent(other!.endpoint)}`,
    ]);
    expect(error(folded)).toMatch(/^NoSuchBucket: The specified bucket does not exist/);

    const docs = [
      cluster(),
      {
        apiVersion: 'pingcap.com/v1alpha1',
        kind: 'Restore',
        metadata: { name: 'far', namespace: 'ns' },
        spec: {
          br: { cluster: 'demo' },
          restoreMode: 'pitr',
          s3: { provider: 'ceph', endpoint, bucket: 'bucket', prefix: 'far-log', secretName: 's3' },
          pitrFullBackupStorageProvider: {
            s3: { provider: 'ceph', endpoint: other!.endpoint, region: 'eu-1', bucket: 'snaps', prefix: 'far-snap', secretName: 's3' },
          },
        },
      },
    ];
    const loaded = loadInputs(docs.map((d) => stringify(d)).join('---\n'), 'in.yaml');
    const linked = linkOperations(loaded.clusters, loaded.documents);
    expect([...loaded.errors.map((e) => e.message), ...linked.errors]).toEqual([]);
    const objects = renderClusters(
      loaded.clusters.map((c) => c.resolved),
      linked.operations,
    ).flatMap((r) => r.objects);
    const job = JSON.parse(find(objects, 'ConfigMap', 'restore-far').data['job.json']);
    const run = await runBrContainer(job.spec.template.spec.containers[0], {
      namespace: 'ns',
      jobName: 'restore-far',
      secrets: { s3: { access_key: 'S3RVER', secret_key: 'S3RVER' } },
    });
    expect(run.output).toContain('restore log success summary');
    expect(run.status).toBe(0);
  });
});

/** The PD simulator's etcd on loopback for one describe block: its store, and its `host:port` once listening. */
function pdEtcd(): { store: EtcdStore; pd: () => string } {
  const store = new EtcdStore();
  const grpc = etcdGrpcServer(store);
  let address = '';
  beforeAll(async () => {
    await new Promise<void>((resolve) => grpc.listen(0, '127.0.0.1', resolve));
    address = `127.0.0.1:${(grpc.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => grpc.close(() => resolve())));
  return { store, pd: () => address };
}

function varintHex(n: bigint): string {
  const out: number[] = [];
  do {
    let b = Number(n & 0x7fn);
    n >>= 7n;
    if (n > 0n) b |= 0x80;
    out.push(b);
  } while (n > 0n);
  return Buffer.from(out).toString('hex');
}
