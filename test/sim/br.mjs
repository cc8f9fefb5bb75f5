#!/usr/bin/env node
/**
 * A BR (TiDB Backup & Restore) for tests: `br backup full|db|table` and `br restore full|db|table`
 * with BR's flag sets, against an S3-protocol server. Backup writes what BR writes (backup.lock, one
 * SST per table, the MetaV2 metafiles, then backupmeta last), prints BR's summary line and fails as
 * BR fails; restore reads it back, runs the checks BR runs where no cluster is needed to run them,
 * prints BR's restore summary line and writes nothing anywhere.
 *
 * Behaviour follows BR v8.5 (pingcap/tidb release-8.5). The sources were read in pingcap/tidb as
 * stored for the tools of this project: no commit of release-8.5 itself could be pinned there, so
 * each behaviour names the stored version it was read in, and where versions differ says which one
 * is followed: "8.2-era" (br/pkg/task/restore.go with `runRestore` and checkpoints in the backup
 * storage, pkg/parser/model), "8.4/8.5-era" (pmodel + pkg/meta/model, br/pkg/restore/misc.go
 * `AssertUserDBsEmpty`, snap_client `EnsureNoUserTables`), "newest" (the newest stored
 * br/pkg/task/restore.go, master after v8.5.0, with `RunRestore` + `runSnapshotRestore(...
 * *SnapshotRestoreConfig)`; release-8.5 received much of that code in the December 2025 picks,
 * pingcap/tidb#64803, #64909, #64954, #64979, though which parts exactly could not be read here).
 *
 * Both commands:
 * - flags: br/cmd/br/cmd.go `DefineCommonFlags` (8.4/8.5-era), br/pkg/task/common.go
 *   `DefineCommonFlags` (with log.crypter.*, master-key*, metadata-download-batch-size); cobra refuses
 *   an unknown flag (`unknown flag: --x`, spf13/pflag flag.go), a bool flag takes its value only as
 *   `--flag=value`, a required flag left out is `required flag(s) "db" not set` (cobra
 *   `ValidateRequiredFlags`, for the `--db`/`--table` of `db`/`table`, common.go `DefineDatabaseFlags`
 *   and `DefineTableFlags` mark them required);
 * - storage URL: br/pkg/storage/parse.go `ParseBackend` (bucket = host, prefix = path without
 *   slashes, query keys lower-cased with `_` read as `-`, overriding the `--s3.*` flags); S3 path
 *   style (BR forces it, br/pkg/storage/s3.go `NewS3Storage`); credentials from the AWS SDK's chain
 *   (`AWS_ACCESS_KEY_ID`, `AWS_SECRET_ACCESS_KEY`), or anonymous without them; S3 errors in
 *   aws-sdk-go v1's words: `<Code>: <Message>\n\tstatus code: <n>, request id: <x-amz-request-id>,
 *   host id: <x-amz-id-2>` (service/s3/s3err `RequestFailure.Error`, every S3 call);
 * - version check: br/pkg/version/version.go `CheckVersionForBR` through br/pkg/conn `NewMgr`
 *   (`running BR in incompatible version of cluster, if you believe it's OK, use
 *   --check-requirements=false to skip.: ...`; BR >= 8.2 refuses TiKV < 8.2; a major version apart is
 *   refused), skipped with `--check-requirements=false`;
 * - output: BR_LOG_TO_TERM without a log file, pingcap/log writes to stdout (log.go `InitLogger`);
 *   on failure `Error: <message>` on stderr and exit 1 (br/cmd/br/main.go).
 *
 * Backup (br/pkg/task/backup.go `RunBackup`, br/pkg/backup):
 * - flags: br/pkg/task/backup.go `DefineBackupFlags`;
 * - not in use: br/pkg/backup/client.go `SetStorageAndCheckNotInUse` (an existing backupmeta is
 *   refused with BR's words), `SetLockFile` (backup.lock's exact text);
 * - what is backed up: the tables of the cluster BR talks to that the command selects (full:
 *   `--filter`, default `*.*`; db: `--db`; table: `--db`.`--table`), the cluster's user tables
 *   being `BR_SIM_USER_TABLES` and its one system table `mysql.user`, which every cluster has;
 *   a system table's database is recorded as `__TiDB_BR_Temporary_mysql` (br/pkg/backup/schema.go
 *   `BackupSchemas`, `utils.TemporaryDBName`);
 * - layout: br/pkg/metautil/metafile.go: one SST per table at
 *   `<storeID>/<region>_<epoch>_<hash>_<ts>_write.sst` (its File with the table's record key range),
 *   with MetaV2 (`--use-backupmeta-v2`, default) the data files in `backupmeta.datafile.000000001`
 *   and the schemas in `backupmeta.schema.000000002` (`flushMetasV2`: one sequence for every kind,
 *   files first, nothing written for an empty kind), indexed from backupmeta by name, sha256 and size;
 *   with MetaV1 both inline in backupmeta; backupmeta last, a plain protobuf `backuppb.BackupMeta`
 *   (pingcap/kvproto brpb.proto: cluster_id 1, cluster_version 2, files 4, start_version 5,
 *   end_version 6, schemas 7, ddls 10 = `[]`, br_version 11, version 12, file_index 13,
 *   schema_index 14, new_collations_enabled 20, the value the cluster has in mysql.tidb,
 *   `BR_SIM_NEW_COLLATIONS_ENABLED`, default `True`, backup.go `m.NewCollationsEnabled`);
 * - output: br/pkg/summary/collector.go (`"Full Backup success summary"` with `[Size=]` and
 *   `[BackupTS=]`), one range and one kv a table.
 *
 * Restore (br/cmd/br/restore.go, br/pkg/task/restore.go `RunRestore`/`runSnapshotRestore`):
 * - flags: restore.go `DefineRestoreFlags` + `DefineRestoreCommonFlags` (every restore command),
 *   `full` adds common.go `DefineFilterFlags` (default filter br/cmd/br/cmd.go
 *   `filterOutSysAndMemKeepAuthAndBind`) and restore_ebs_meta.go `DefineRestoreSnapshotFlags`, `db`
 *   `--db`, `table` `--db` and `--table`/`-t`. Taken from the newest stored restore.go, so flags that
 *   came after v8.5.0 are accepted too (`--checkpoint-storage`, which the docs give to v9.0.0, is
 *   refused below as not simulated). `--start-ts`, `--restored-ts`, `--full-backup-storage` and the
 *   `--pitr-*` flags are `restore point`'s only (`DefineStreamRestoreFlags`): elsewhere unknown;
 * - order of the checks (newest `RunRestore`/`runSnapshotRestore`; the 8.2-era `runRestore` has the
 *   same order up to the fresh-cluster check): the version check of `NewMgr`; `ReadBackupMeta`
 *   (common.go: a read error is `load backupmeta failed: <error>`, and br/pkg/storage/s3.go
 *   `ReadFile` says `failed to read s3 file, file info: input.bucket='<b>', input.key='<prefix>/backupmeta':
 *   <aws error>`); raw/txn kv backups refused (`ErrRestoreModeMismatch`); with
 *   `--check-requirements`, `CheckVersionForBackup` (version.go: a backup of a cluster two major
 *   versions newer than the target's TiKV is refused); `CheckNewCollationEnable` (missing in
 *   backupmeta: refused unless `--check-requirements=false`; different from the target's: always
 *   refused); the backup's schemas (metautil `MetaReader`, the metafiles' sha256 checked as
 *   `WalkLeafMetaFile` does); `checkMandatoryClusterRequirements`: `VerifyDBAndTableInBackup` for
 *   `db`/`table` (`[database: \`d\`] has not been backup, ...`), and for `full` without an explicit
 *   `--filter` on a full (not incremental) backup the fresh-cluster check
 *   (br/pkg/restore/misc.go `AssertUserDBsEmpty`, 8.4/8.5-era; it cannot be turned off) followed, as
 *   br/cmd/br/restore.go `printWorkaroundOnFullRestoreError` does, by BR's banner on stdout; the
 *   tables chosen (`filterRestoreFiles`, utils `MatchTable`: system tables only with
 *   `--with-sys-table`, default true); `checkOptionalClusterRequirements` (newest; with
 *   `--check-requirements` on a full backup: `checkTableExistence`, `table already exists: d.t :
 *   [BR:Restore:ErrTablesAlreadyExisted]tables already existed in restored cluster`, for every kind
 *   of restore, a full one too when `--filter` is given; the disk-space check needs PD and is left
 *   out);
 * - output: `defer summary.Summary(cmdName)` in `runSnapshotRestore`, so once past `NewMgr` a
 *   failure prints `"<cmd> failed summary"` too; names: `Full Restore`, `DataBase Restore`,
 *   `Table Restore` (restore.go consts). The success line is summary/collector.go `Summary`:
 *   total-ranges, ranges-succeed, ranges-failed (the files restored, `CollectSuccessUnit("files",
 *   n, elapsed)` in snap_client), the collected ints (restore-ranges), total-take, then the collected
 *   data: restore-data-size(after-compressed) and Size (`g.Record(summary.RestoreDataSize,
 *   archiveSize)`, `g.Record("Size", archiveSize)`), BackupTS and RestoreTS (`g.Record("BackupTS",
 *   backupMeta.EndVersion)`, `g.Record("RestoreTS", restoreTS)`), total-kv, total-kv-size and
 *   average-speed (per file `summary.CollectSuccessUnit(summary.TotalKV/TotalBytes, 1, ...)`).
 *   Go ranges over maps there, so BR's own order of the data fields varies; the order printed here
 *   is the one of a bug report's log of a master build of January 2025 (BR built from
 *   pingcap/tidb#57716, a change picked to release-8.5 in #58981):
 *   `[total-ranges] [ranges-succeed] [ranges-failed] [restore-ranges] [total-take]
 *   [restore-data-size(after-compressed)] [Size] [BackupTS] [RestoreTS] [total-kv] [total-kv-size]
 *   [average-speed]`. Sizes are docker/go-units `HumanSize` (decimal, 4 significant digits),
 *   durations Go's `Duration.String`;
 * - checkpoints: where a snapshot restore keeps them depends on the version: the 8.2-era restore.go
 *   writes them under the backup storage (`checkpoint.ExistsRestoreCheckpoint(ctx, s, ...)`,
 *   `client.InitCheckpoint(ctx, s, ...)`), the newest in the target cluster's database
 *   `__TiDB_BR_Temporary_Snapshot_Restore_Checkpoint` (br/pkg/checkpoint) unless
 *   `--checkpoint-storage` names a storage; which of the two v8.5 does could not be read here.
 *   Either way they are written only after every check simulated here has passed, and removed when
 *   the restore succeeds (`cleanUpCheckpoints`, `removeCheckpointDataForSnapshotRestore`), so a
 *   storage after a simulated restore, failed or not, is the one BR would leave: the simulator
 *   writes nothing, to the storage or anywhere;
 * - not followed: the newest `RunRestore` checks `CheckVersionForBR` a second time after `NewMgr`,
 *   even with `--check-requirements=false`; the 8.2-era `runRestore` does not, nor does this.
 *
 * Log backup (br/cmd/br/stream.go, br/pkg/task/stream.go, br/pkg/streamhelper), BR v8.5 as stored:
 * - `start` refuses while any task exists (one per cluster), writes `backup.lock` and a `backupmeta`
 *   with the start TS into a fresh storage, restarts from the log's end on a storage a task used
 *   (the highest `v1/global_checkpoint/<store>.ts`), refuses a snapshot backup's folder, then puts the
 *   task's info (`StreamBackupTaskInfo`) and ranges into PD (`--pd`, reached at `BR_SIM_PD` when set);
 *   `pause` puts a PauseV2 `MANUAL` pause, `resume` removes it and the stores' last errors, `stop`
 *   removes every key of the task; each refuses a task that is not there, or is already paused or
 *   running, in BR's words; TiKV's own writes (checkpoints, errors, the log files) are the tests';
 * - `truncate` (no PD) moves `v1_stream_trancate_safepoint.txt` up to `--until` under
 *   `truncating.lock` and removes the metadata files wholly before it, not the data files they index;
 * - `restore point` reads the log's range from its storage and the snapshot's BackupTS from its
 *   backupmeta, refuses two clusters, a gap or a point outside the log (`checkLogRange`'s words, with
 *   Go's time format in UTC), lists the log's metadata from its storage parsed again (the storage
 *   URLs' query values fold into the command's one set of S3 options, as BR's do), then restores the
 *   snapshot as `restore full` does and prints `restore log success summary`; no log is replayed
 *   (its counts say 0);
 * - BR wraps a task's keys in one etcd Txn; here they are Puts and DeleteRanges, which leave the same keys.
 *
 * Not simulated, and refused rather than pretended: the bucket region lookup BR makes for provider
 * "" or aws (the tests' server is not AWS), storage other than S3, encrypted backups
 * (`--crypter.method` other than plaintext), `restore raw|txn`, `restore point` without a snapshot
 * (`--start-ts`), `log status|metadata`, EBS restore (`--type=aws-ebs`),
 * `--checkpoint-storage` and filter files (`--filter @file`). Not checked: TiCDC changefeeds, a
 * running log backup, the target's disk space, the SSTs themselves (TiKV reads them, not BR).
 *
 * What BR learns from the cluster it is told in the environment instead, for the cluster BR talks
 * to (the backed-up one for backup, the target for restore): `BR_SIM_TIKV_VERSION` (the stores'
 * version, default the simulator's own `BR_SIM_VERSION`, default v8.5.7), `BR_SIM_USER_TABLES`
 * (its user tables, `db.table` comma-separated, a bare `db` for an empty database; default none),
 * `BR_SIM_NEW_COLLATIONS_ENABLED` (mysql.tidb's new_collation_enabled, default `True`), `BR_SIM_CLUSTER_ID`
 * (PD's cluster ID, written into each backupmeta, default 7371123456789012345).
 */
import { createHash, createHmac, randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import http from 'node:http';
import https from 'node:https';

const START = process.hrtime.bigint();
const BR_VERSION = process.env.BR_SIM_VERSION ?? 'v8.5.7';
const LOCK_TEXT = "DO NOT DELETE\nThis file exists to remind other backup jobs won't use this path";
const TEMP_DB_PREFIX = '__TiDB_BR_Temporary_';
/** The cluster ID PD gives the cluster BR talks to (`BR_SIM_CLUSTER_ID`), written into each backupmeta. */
const CLUSTER_ID = BigInt(process.env.BR_SIM_CLUSTER_ID ?? '7371123456789012345');

class BrError extends Error {}
/** pingcap/errors `Annotate(base, what)`: `<what>: [<code>]<base message>`. */
const annotate = (what, code, message) => new BrError(`${what}: [${code}]${message}`);
const invalid = (what) => annotate(what, 'BR:Common:ErrInvalidArgument', 'invalid argument');
/** Marks the errors br/cmd/br/restore.go `printWorkaroundOnFullRestoreError` answers with a banner. */
class NotFreshError extends BrError {}

/** [type, default]; bool flags take `--x=v` only, others `--x=v` or `--x v` (cobra, pflag). */
const COMMON = {
  // br/cmd/br/cmd.go DefineCommonFlags (persistent on the root command).
  'log-level': ['string', 'info'],
  'log-file': ['string', ''],
  'log-format': ['string', 'text'],
  'redact-log': ['bool', false],
  'redact-info-log': ['bool', false],
  'status-addr': ['string', ''],
  'slow-log-file': ['string', ''],
  // br/pkg/task/common.go DefineCommonFlags.
  'send-credentials-to-tikv': ['bool', true],
  storage: ['string', ''],
  pd: ['strings', ['127.0.0.1:2379']],
  ca: ['string', ''],
  cert: ['string', ''],
  key: ['string', ''],
  'checksum-concurrency': ['uint', 4],
  ratelimit: ['uint', 0],
  checksum: ['bool', true],
  // Hidden, default 0 there; `backup` and `restore` define their own (4, 128), which shadow it.
  concurrency: ['uint', 0],
  'remove-tiflash': ['bool', true],
  'ratelimit-unit': ['uint', 1048576],
  'check-requirements': ['bool', true],
  'switch-mode-interval': ['duration', '5m0s'],
  'grpc-keepalive-time': ['duration', '10s'],
  'grpc-keepalive-timeout': ['duration', '3s'],
  'enable-opentracing': ['bool', false],
  'no-credentials': ['bool', false],
  'skip-check-path': ['bool', false],
  'crypter.method': ['string', 'plaintext'],
  'crypter.key': ['string', ''],
  'crypter.key-file': ['string', ''],
  'metadata-download-batch-size': ['uint', 128],
  'log.crypter.method': ['string', 'plaintext'],
  'log.crypter.key': ['string', ''],
  'log.crypter.key-file': ['string', ''],
  'master-key-crypter-method': ['string', 'plaintext'],
  'master-key': ['string', ''],
  // br/pkg/storage DefineFlags (s3.go, gcs.go, azblob.go).
  's3.endpoint': ['string', ''],
  's3.region': ['string', ''],
  's3.storage-class': ['string', ''],
  's3.sse': ['string', ''],
  's3.sse-kms-key-id': ['string', ''],
  's3.acl': ['string', ''],
  's3.provider': ['string', ''],
  's3.role-arn': ['string', ''],
  's3.external-id': ['string', ''],
  'gcs.endpoint': ['string', ''],
  'gcs.storage-class': ['string', ''],
  'gcs.predefined-acl': ['string', ''],
  'gcs.credentials-file': ['string', ''],
  'azblob.endpoint': ['string', ''],
  'azblob.account-name': ['string', ''],
  'azblob.account-key': ['string', ''],
  'azblob.access-tier': ['string', ''],
  'azblob.sas-token': ['string', ''],
  'azblob.encryption-scope': ['string', ''],
  'azblob.encryption-key': ['string', ''],
};
const BACKUP = {
  timeago: ['string', ''],
  backupts: ['string', ''],
  lastbackupts: ['uint', 0],
  gcttl: ['int', 300],
  compression: ['string', 'zstd'],
  'compression-level': ['int', 0],
  concurrency: ['uint', 4],
  'ignore-stats': ['bool', true],
  'use-backupmeta-v2': ['bool', true],
  'keyspace-name': ['string', ''],
  'replica-read-label': ['string', ''],
};
const BACKUP_KINDS = {
  full: { name: 'Full Backup', flags: { filter: ['stringArray', ['*.*']], 'case-sensitive': ['bool', false], type: ['string', 'kv'] } },
  db: { name: 'Database Backup', flags: { db: ['string', ''] } },
  table: { name: 'Table Backup', flags: { db: ['string', ''], table: ['string', ''] } },
};
/** br/pkg/task/restore.go DefineRestoreFlags and DefineRestoreCommonFlags (persistent on `restore`). */
const RESTORE = {
  'no-schema': ['bool', false],
  'load-stats': ['bool', true],
  'fast-load-sys-tables': ['bool', true],
  'with-tidb-placement-mode': ['string', 'STRICT'],
  'keyspace-name': ['string', ''],
  'use-checkpoint': ['bool', true],
  'checkpoint-storage': ['string', ''],
  'wait-tiflash-ready': ['bool', false],
  'allow-pitr-from-incremental': ['bool', true],
  'sys-check-collation': ['bool', false],
  online: ['bool', false],
  granularity: ['string', 'coarse-grained'],
  'tikv-max-restore-concurrency': ['uint', 128],
  concurrency: ['uint', 128],
  'merge-region-size-bytes': ['uint', 100663296],
  'merge-region-key-count': ['uint', 960000],
  'pd-concurrency': ['uint', 1],
  'stats-concurrency': ['uint', 12],
  'batch-flush-interval': ['duration', '16s'],
  'ddl-batch-size': ['uint', 128],
  'with-sys-table': ['bool', true],
  'reset-sys-users': ['stringArray', ['cloud_admin', 'root']],
  'use-fsr': ['bool', false],
};
/** br/cmd/br/cmd.go filterOutSysAndMemKeepAuthAndBind, `restore full`'s default `--filter`. */
const FULL_RESTORE_FILTER = [
  '*.*',
  `!${TEMP_DB_PREFIX}*.*`,
  '!mysql.*',
  'mysql.bind_info',
  'mysql.user',
  'mysql.db',
  'mysql.tables_priv',
  'mysql.columns_priv',
  'mysql.global_priv',
  'mysql.global_grants',
  'mysql.default_roles',
  'mysql.role_edges',
  '!sys.*',
  '!INFORMATION_SCHEMA.*',
  '!PERFORMANCE_SCHEMA.*',
  '!METRICS_SCHEMA.*',
  '!INSPECTION_SCHEMA.*',
];
/** The command names of br/pkg/task/restore.go (`FullRestoreCmd`, `DBRestoreCmd`, `TableRestoreCmd`). */
const RESTORE_KINDS = {
  full: {
    name: 'Full Restore',
    flags: {
      filter: ['stringArray', FULL_RESTORE_FILTER],
      'case-sensitive': ['bool', false],
      // br/pkg/task/restore_ebs_meta.go DefineRestoreSnapshotFlags.
      type: ['string', 'kv'],
      prepare: ['bool', false],
      'output-file': ['string', 'output.json'],
      'skip-aws': ['bool', false],
      'cloud-api-concurrency': ['uint', 8],
      'volume-type': ['string', 'gp3'],
      'volume-iops': ['int', 0],
      'volume-throughput': ['int', 0],
      'volume-encrypted': ['bool', false],
      'progress-file': ['string', 'progress.txt'],
      'target-az': ['string', ''],
    },
  },
  db: { name: 'DataBase Restore', flags: { db: ['string', ''] }, required: ['db'] },
  table: { name: 'Table Restore', flags: { db: ['string', ''], table: ['string', ''] }, required: ['db', 'table'] },
};
const SHORT = { u: 'pd', s: 'storage', L: 'log-level', c: 'send-credentials-to-tikv', f: 'filter', t: 'table', y: 'yes' };
/**
 * `br log` subcommands' own flags (br/pkg/task/stream.go `DefineStreamStartFlags`, `DefineStreamCommonFlags`,
 * `DefineStreamPauseFlags`, `DefineStreamStatusCommonFlags`, `DefineStreamTruncateLogFlags`; the filter of
 * `start` from common.go `DefineFilterFlags` with every table accepted).
 */
const LOG_KINDS = {
  start: {
    'task-name': ['string', ''],
    'start-ts': ['string', ''],
    'end-ts': ['string', '999999999999999999'],
    'gc-ttl': ['int', 1800],
    filter: ['stringArray', ['*.*']],
    'case-sensitive': ['bool', false],
  },
  stop: { 'task-name': ['string', ''] },
  pause: { 'task-name': ['string', ''], 'gc-ttl': ['int', 86400], message: ['string', ''] },
  resume: { 'task-name': ['string', ''] },
  status: { 'task-name': ['string', '*'], json: ['bool', false] },
  truncate: { until: ['string', ''], 'dry-run': ['bool', false], yes: ['bool', false], 'clean-up-compactions': ['bool', false] },
  metadata: {},
};
/** br/cmd/br/stream.go: the summary names (`"log start"`...). */
const STREAM_PREFIX = '/tidb/br-stream';

/** Go's time.ParseDuration, enough to accept what it accepts. */
const GO_DURATION = /^[-+]?((\d+(\.\d*)?|\.\d+)(ns|us|µs|μs|ms|s|m|h))+$|^[-+]?0$/;

function parseFlags(argv, spec) {
  const values = Object.fromEntries(Object.entries(spec).map(([k, [, d]]) => [k, d]));
  const changed = new Set();
  const rest = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (!a.startsWith('-')) {
      rest.push(a);
      continue;
    }
    const m = /^--?([^=]+)(?:=(.*))?$/s.exec(a);
    let name = m[1];
    if (!a.startsWith('--')) name = SHORT[name] ?? name;
    const def = spec[name];
    // cobra's words (spf13/pflag flag.go, parseLongArg and parseSingleShortArg).
    if (!def) throw new BrError(a.startsWith('--') ? `unknown flag: --${name}` : `unknown shorthand flag: '${m[1][0]}' in ${a}`);
    const [type] = def;
    let value = m[2];
    if (value === undefined) {
      if (type === 'bool') value = 'true';
      else if (i + 1 < argv.length) value = argv[++i];
      else throw new BrError(`flag needs an argument: --${name}`);
    }
    changed.add(name);
    if (type === 'bool') {
      // strconv.ParseBool's spellings (pflag's boolValue.Set).
      if (!['1', 't', 'T', 'TRUE', 'true', 'True', '0', 'f', 'F', 'FALSE', 'false', 'False'].includes(value))
        throw new BrError(`invalid argument "${value}" for "--${name}" flag: strconv.ParseBool: parsing "${value}": invalid syntax`);
      values[name] = ['1', 't', 'T', 'TRUE', 'true', 'True'].includes(value);
    } else if (type === 'uint' || type === 'int') {
      const parser = type === 'uint' ? 'strconv.ParseUint' : 'strconv.ParseInt';
      if (!/^-?\d+$/.test(value) || (type === 'uint' && value.startsWith('-')))
        throw new BrError(`invalid argument "${value}" for "--${name}" flag: ${parser}: parsing ${JSON.stringify(value)}: invalid syntax`);
      values[name] = Number(value);
    } else if (type === 'duration') {
      if (!GO_DURATION.test(value))
        throw new BrError(`invalid argument "${value}" for "--${name}" flag: time: invalid duration ${JSON.stringify(value)}`);
      values[name] = value;
    } else if (type === 'strings') {
      values[name] = value.split(',');
    } else if (type === 'stringArray') {
      values[name] = values[name] === def[1] ? [value] : [...values[name], value];
    } else {
      values[name] = value;
    }
  }
  return { values, rest, changed };
}

/** Where a command keeps its `BackendOptions.S3`, which every storage URL it parses writes into. */
const S3_OPTIONS = Symbol('s3 options');

/**
 * br/pkg/storage/parse.go `ParseBackend`, for S3 (the only provider the tests' server speaks). As in
 * BR, the query's values go into the command's one `BackendOptions.S3` (`ExtractQueryParameters(u,
 * &options.S3)`, options being `&cfg.BackendOptions`, first filled from the `--s3.*` flags by s3.go
 * `parseFromFlags`): a URL parsed after another keeps the other's query values where its own query
 * names none (task/stream.go `RunStreamRestore` parses the log's `--storage`, then
 * `--full-backup-storage` in `getFullBackupTS`, then the log's again in `createLogClient`).
 */
function parseStorage(raw, flags) {
  if (!raw) throw new BrError('empty store is not allowed: [BR:ExternalStorage:ErrStorageInvalidConfig]invalid external storage config');
  const u = new URL(raw.replace(/\+/g, '%2B'));
  const scheme = u.protocol.replace(/:$/, '');
  if (scheme !== 's3') throw new BrError(`storage ${scheme} is not served by the test BR (S3 only)`);
  if (!u.host)
    throw new BrError(
      `please specify the bucket for s3 in ${raw}: [BR:ExternalStorage:ErrStorageInvalidConfig]invalid external storage config`,
    );
  flags[S3_OPTIONS] ??= { endpoint: flags['s3.endpoint'], region: flags['s3.region'], provider: flags['s3.provider'] };
  const shared = flags[S3_OPTIONS];
  // url.Values: the first value of each key.
  for (const k of new Set(u.searchParams.keys())) {
    const key = k.toLowerCase().replace(/_/g, '-');
    if (key in shared || ['access-key', 'secret-access-key', 'force-path-style'].includes(key)) shared[key] = u.searchParams.get(k);
  }
  // No region: BR's default (s3.go `defaultRegion`).
  const options = { ...shared, region: shared.region || 'us-east-1' };
  if (options.endpoint && !/^[a-z]+:\/\//.test(options.endpoint))
    throw new BrError(`scheme not found in endpoint: [BR:ExternalStorage:ErrStorageInvalidConfig]invalid external storage config`);
  if (!options.endpoint) throw new BrError('the test BR needs --s3.endpoint (it reaches no AWS region)');
  // With provider "" or aws, BR first asks AWS for the bucket's region (br/pkg/storage/s3.go,
  // NewS3Storage, s3manager.GetBucketRegionWithClient), which the S3 server of the tests does not
  // answer as AWS does: refuse rather than pretend.
  if (!options.provider || options.provider === 'aws')
    throw new BrError(
      'the test BR does not simulate the bucket region lookup BR makes for provider aws; give --s3.provider (ceph, minio...)',
    );
  return { bucket: u.host, prefix: decodeURIComponent(u.pathname).replace(/^\/+|\/+$/g, ''), ...options };
}

/** An S3 client signing with AWS Signature Version 4, path-style, as aws-sdk-go v1 does for BR. */
function s3Client(store) {
  const accessKey = store['access-key'] ?? process.env.AWS_ACCESS_KEY_ID;
  const secretKey = store['secret-access-key'] ?? process.env.AWS_SECRET_ACCESS_KEY;
  const base = store.endpoint.replace(/\/+$/, '');
  const key = (name) => [store.prefix, name].filter((p) => p !== '').join('/');
  async function request(method, name, body, query = '') {
    const path = `/${store.bucket}${name === undefined ? '' : `/${key(name).split('/').map(encodeURIComponent).join('/')}`}`;
    const url = new URL(base + path + (query ? `?${query}` : ''));
    const payload = body ?? Buffer.alloc(0);
    const hash = createHash('sha256').update(payload).digest('hex');
    const now = new Date().toISOString().replace(/[-:]|\.\d{3}/g, '');
    const headers = { host: url.host, 'x-amz-content-sha256': hash, 'x-amz-date': now };
    if (accessKey && secretKey) {
      const day = now.slice(0, 8);
      const scope = `${day}/${store.region}/s3/aws4_request`;
      const names = Object.keys(headers).sort();
      const canonical = [method, url.pathname, query, ...names.map((h) => `${h}:${headers[h]}`), '', names.join(';'), hash].join('\n');
      const toSign = ['AWS4-HMAC-SHA256', now, scope, createHash('sha256').update(canonical).digest('hex')].join('\n');
      let k = createHmac('sha256', `AWS4${secretKey}`).update(day).digest();
      for (const part of [store.region, 's3', 'aws4_request']) k = createHmac('sha256', k).update(part).digest();
      headers.authorization = `AWS4-HMAC-SHA256 Credential=${accessKey}/${scope}, SignedHeaders=${names.join(';')}, Signature=${createHmac('sha256', k).update(toSign).digest('hex')}`;
    }
    return new Promise((resolve, reject) => {
      const req = (url.protocol === 'https:' ? https : http).request(url, { method, headers }, (res) => {
        const chunks = [];
        res.on('data', (c) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode,
            body: Buffer.concat(chunks),
            requestId: res.headers['x-amz-request-id'] ?? '',
            hostId: res.headers['x-amz-id-2'] ?? '',
          }),
        );
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(body);
    });
  }
  /**
   * aws-sdk-go v1's S3 error text (service/s3/s3err RequestFailure.Error, awserr.SprintError):
   * `<Code>: <Message>\n\tstatus code: <n>, request id: <id>, host id: <x-amz-id-2>`.
   */
  const awsError = (r) => {
    const xml = r.body.toString();
    const code = /<Code>([^<]*)<\/Code>/.exec(xml)?.[1] ?? (r.status === 403 ? 'Forbidden' : r.status === 404 ? 'NotFound' : 'Unknown');
    const message = /<Message>([^<]*)<\/Message>/.exec(xml)?.[1] ?? code.replace(/([a-z])([A-Z])/g, '$1 $2');
    return `${code}: ${message}\n\tstatus code: ${r.status}, request id: ${r.requestId}, host id: ${r.hostId}`;
  };
  return {
    uri: `s3://${store.bucket}/${store.prefix}/`,
    async exists(name) {
      const r = await request('HEAD', name);
      if (r.status === 200) return true;
      if (r.status === 404) return false;
      throw new BrError(`error occurred when checking ${name} file: ${awsError(r)}`);
    },
    async put(name, body) {
      const r = await request('PUT', name, body);
      if (r.status !== 200) throw new BrError(awsError(r));
    },
    async remove(name) {
      const r = await request('DELETE', name);
      if (r.status !== 204 && r.status !== 200) throw new BrError(awsError(r));
    },
    /** The names under `sub` (relative to the storage's prefix), ListObjectsV2 page by page. */
    async list(sub) {
      const out = [];
      let token;
      do {
        const params = [['list-type', '2'], ['prefix', key(sub)], ...(token ? [['continuation-token', token]] : [])].sort(([a], [b]) =>
          a < b ? -1 : 1,
        );
        const query = params.map(([k, v]) => `${encodeURIComponent(k)}=${encodeURIComponent(v)}`).join('&');
        const r = await request('GET', undefined, undefined, query);
        if (r.status !== 200) throw new BrError(awsError(r));
        const xml = r.body.toString();
        for (const m of xml.matchAll(/<Key>([^<]*)<\/Key>/g))
          out.push(m[1].replace(/&amp;/g, '&').slice(store.prefix ? store.prefix.length + 1 : 0));
        token = /<IsTruncated>true<\/IsTruncated>/.test(xml) ? /<NextContinuationToken>([^<]*)</.exec(xml)?.[1] : undefined;
      } while (token);
      return out;
    },
    /** br/pkg/storage/s3.go `ReadFile`: a failed GetObject is annotated with the bucket and key. */
    async get(name) {
      const r = await request('GET', name);
      if (r.status !== 200)
        throw new BrError(`failed to read s3 file, file info: input.bucket='${store.bucket}', input.key='${key(name)}': ${awsError(r)}`);
      return r.body;
    },
  };
}

/** Protobuf wire format: what `backuppb.BackupMeta` needs (varints and length-delimited fields). */
function varint(n) {
  const out = [];
  let v = BigInt(n);
  do {
    let b = Number(v & 0x7fn);
    v >>= 7n;
    if (v > 0n) b |= 0x80;
    out.push(b);
  } while (v > 0n);
  return Buffer.from(out);
}
const field = (no, type) => varint((no << 3) | type);
const uintField = (no, n) => Buffer.concat([field(no, 0), varint(n)]);
const bytesField = (no, s) => {
  const b = Buffer.from(s);
  return Buffer.concat([field(no, 2), varint(b.length), b]);
};

/** Reads a protobuf message into field number -> values (BigInt for varints, Buffer otherwise). */
function decode(buf) {
  const fields = new Map();
  const truncated = () => new BrError('unexpected EOF');
  const readVarint = (at) => {
    let v = 0n;
    for (let shift = 0n; ; shift += 7n) {
      if (at.i >= buf.length || shift > 63n) throw truncated();
      const b = buf[at.i++];
      v |= BigInt(b & 0x7f) << shift;
      if (b < 0x80) return v;
    }
  };
  const at = { i: 0 };
  while (at.i < buf.length) {
    const tag = readVarint(at);
    const no = Number(tag >> 3n);
    const wire = Number(tag & 7n);
    let value;
    if (wire === 0) value = readVarint(at);
    else if (wire === 2) {
      const len = Number(readVarint(at));
      if (at.i + len > buf.length) throw truncated();
      value = buf.subarray(at.i, at.i + len);
      at.i += len;
    } else if (wire === 1 || wire === 5) {
      const len = wire === 1 ? 8 : 4;
      if (at.i + len > buf.length) throw truncated();
      value = buf.subarray(at.i, at.i + len);
      at.i += len;
    } else throw new BrError(`proto: illegal wireType ${wire}`);
    if (no === 0) throw new BrError('proto: illegal tag 0 (wire type 0)');
    if (!fields.has(no)) fields.set(no, []);
    fields.get(no).push(value);
  }
  return {
    uint: (no) => fields.get(no)?.at(-1) ?? 0n,
    string: (no) => fields.get(no)?.at(-1)?.toString() ?? '',
    bytes: (no) => fields.get(no)?.at(-1),
    all: (no) => fields.get(no) ?? [],
  };
}

/** br/pkg/version/version.go `CheckVersionForBR` through br/pkg/conn `NewMgr` (NormalVersionChecker). */
function versionCheck(tikv) {
  const parse = (v) => /^v?(\d+)\.(\d+)\.(\d+)/.exec(v)?.slice(1).map(Number);
  const br = parse(BR_VERSION);
  const kv = parse(tikv);
  if (!kv) throw new BrError(`strconv.ParseInt: TiKV node 127.0.0.1:20160 version ${tikv} is invalid`);
  const wrap = (m) =>
    new BrError(
      `running BR in incompatible version of cluster, if you believe it's OK, use --check-requirements=false to skip.: ${m}: [BR:Common:ErrVersionMismatch]version mismatch`,
    );
  if (br[0] < kv[0] || br[0] - kv[0] > 1)
    throw wrap(`TiKV node 127.0.0.1:20160 version ${tikv} and BR ${BR_VERSION} major version mismatch, please use the same version of BR`);
  const atLeast82 = (v) => v[0] > 8 || (v[0] === 8 && v[1] >= 2);
  if (atLeast82(br) && !atLeast82(kv))
    throw wrap(`TiKV node 127.0.0.1:20160 version ${tikv} and BR ${BR_VERSION} version mismatch, please use the same version of BR`);
}

const stamp = () => {
  const d = new Date();
  const p = (n, w = 2) => String(n).padStart(w, '0');
  return `[${d.getUTCFullYear()}/${p(d.getUTCMonth() + 1)}/${p(d.getUTCDate())} ${p(d.getUTCHours())}:${p(d.getUTCMinutes())}:${p(d.getUTCSeconds())}.${p(d.getUTCMilliseconds(), 3)} +00:00]`;
};
// With BR_LOG_TO_TERM and no log file, pingcap/log writes to stdout (log.go, InitLogger).
const log = (level, msg, fields = {}) =>
  process.stdout.write(
    `${stamp()} [${level}] [collector.go:77] [${JSON.stringify(msg)}]${Object.entries(fields)
      .map(([k, v]) => ` [${k}=${v}]`)
      .join('')}\n`,
  );

/** Go's time.Duration.String, from nanoseconds. */
function goDuration(ns) {
  const n = BigInt(ns);
  if (n === 0n) return '0s';
  const frac = (v, unit, digits) => {
    const whole = v / unit;
    const rest = (v % unit).toString().padStart(digits, '0').replace(/0+$/, '');
    return rest ? `${whole}.${rest}` : `${whole}`;
  };
  if (n < 1000n) return `${n}ns`;
  if (n < 1000000n) return `${frac(n, 1000n, 3)}µs`;
  if (n < 1000000000n) return `${frac(n, 1000000n, 6)}ms`;
  const h = n / 3600000000000n;
  const m = (n % 3600000000000n) / 60000000000n;
  const s = frac(n % 60000000000n, 1000000000n, 9);
  return `${h > 0n ? `${h}h` : ''}${h > 0n || m > 0n ? `${m}m` : ''}${s}s`;
}

/** docker/go-units `HumanSize`: decimal units, `%.4g`. */
function humanSize(size) {
  const units = ['B', 'kB', 'MB', 'GB', 'TB', 'PB', 'EB', 'ZB', 'YB'];
  let i = 0;
  while (size >= 1000 && i < units.length - 1) {
    size /= 1000;
    i++;
  }
  // Go's %g: %e when the exponent is below -4 or at least the precision, trailing zeros cut.
  const [mantissa, exp] = size
    .toExponential(3)
    .split('e')
    .map((x, j) => (j === 0 ? x : Number(x)));
  const trim = (x) => (x.includes('.') ? x.replace(/\.?0+$/, '') : x);
  const s =
    exp < -4 || exp >= 4
      ? `${trim(mantissa)}e${exp < 0 ? '-' : '+'}${String(Math.abs(exp)).padStart(2, '0')}`
      : trim(size.toFixed(3 - exp));
  return `${s}${units[i]}`;
}

/** A TSO: physical milliseconds shifted by 18 bits (tikv/client-go oracle.ComposeTS). */
const tso = () => BigInt(Date.now()) << 18n;

/**
 * The tables of pingcap/tidb pkg/util/table-filter, as far as BR's flags use them: `db.table` rules
 * with `*`, `?` and `[...]` wildcards, backquoted names, `!` to exclude; the last rule a table matches
 * decides; case-insensitive unless `--case-sensitive` (`filter.CaseInsensitive`).
 */
function tableFilter(rules, caseSensitive) {
  const parsed = [];
  for (const raw of rules) {
    let rule = raw.trim();
    if (rule === '' || rule.startsWith('#')) continue;
    if (rule.startsWith('@')) throw new BrError(`the test BR does not read filter files (${rule})`);
    const positive = !rule.startsWith('!');
    if (!positive) rule = rule.slice(1);
    const parts = [];
    let cur = '';
    let quoted = false;
    for (let i = 0; i < rule.length; i++) {
      const c = rule[i];
      if (c === '`') {
        if (quoted && rule[i + 1] === '`') {
          cur += '\\`';
          i++;
          continue;
        }
        quoted = !quoted;
      } else if (c === '\\' && i + 1 < rule.length) {
        cur += `\\${rule[++i]}`;
      } else if (c === '.' && !quoted && parts.length === 0) {
        parts.push(cur);
        cur = '';
      } else cur += quoted && /[*?[\]]/.test(c) ? `\\${c}` : c;
    }
    parts.push(cur);
    if (parts.length !== 2) throw invalid(`wrong table pattern '${raw}'`);
    const toRegExp = (glob) => {
      let re = '';
      for (let i = 0; i < glob.length; i++) {
        const c = glob[i];
        if (c === '\\') re += glob[++i].replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
        else if (c === '*') re += '.*';
        else if (c === '?') re += '.';
        else if (c === '[') {
          const end = glob.indexOf(']', i + 1);
          re += `[${glob.slice(i + 1, end).replace(/^!/, '^')}]`;
          i = end;
        } else re += c.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      }
      return new RegExp(`^${re}$`, caseSensitive ? 's' : 'si');
    };
    parsed.push({ positive, db: toRegExp(parts[0]), table: toRegExp(parts[1]) });
  }
  return {
    matchTable(db, table) {
      for (let i = parsed.length - 1; i >= 0; i--) if (parsed[i].db.test(db) && parsed[i].table.test(table)) return parsed[i].positive;
      return false;
    },
    // A schema matches when a rule could take one of its tables: the last rule naming it that is
    // positive, or negative for all its tables (table-filter filter.go MatchSchema).
    matchSchema(db) {
      for (let i = parsed.length - 1; i >= 0; i--)
        if (parsed[i].db.test(db) && (parsed[i].positive || parsed[i].table.source === '^.*$')) return parsed[i].positive;
      return false;
    },
  };
}
const schemaFilter = (db) => ({
  matchTable: (d) => d.toLowerCase() === db.toLowerCase(),
  matchSchema: (d) => d.toLowerCase() === db.toLowerCase(),
});
const tablesFilter = (db, table) => ({
  matchTable: (d, t) => d.toLowerCase() === db.toLowerCase() && t.toLowerCase() === table.toLowerCase(),
  matchSchema: (d) => d.toLowerCase() === db.toLowerCase(),
});

/** pkg/util `IsMemOrSysDB`, br/pkg/utils `IsSysDB`. */
const MEM_OR_SYS_DBS = ['mysql', 'sys', 'information_schema', 'performance_schema', 'metrics_schema'];
const isSysDB = (db) => ['mysql', 'sys'].includes(db.toLowerCase());
/** br/pkg/utils `StripTempDBPrefixIfNeeded`. */
const stripTempDB = (db) => (db.startsWith(TEMP_DB_PREFIX) ? { name: db.slice(TEMP_DB_PREFIX.length), ok: true } : { name: db, ok: false });
/** br/pkg/utils `MatchTable`: a system table only with `--with-sys-table`. */
function matchTable(filter, db, table, withSys) {
  const { name, ok } = stripTempDB(db);
  if (ok && isSysDB(name)) {
    if (!withSys) return false;
    db = name;
  }
  return filter.matchTable(db, table);
}
/** br/pkg/utils `EncloseName`, `EncloseDBAndTable`. */
const enclose = (name) => `\`${name.replaceAll('`', '``')}\``;

/**
 * The user tables of the cluster BR talks to, `BR_SIM_USER_TABLES` (`db.table`, or `db` for an empty
 * database), in the order given.
 */
function clusterTables() {
  const dbs = new Map();
  for (const entry of (process.env.BR_SIM_USER_TABLES ?? '')
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const dot = entry.indexOf('.');
    const db = dot < 0 ? entry : entry.slice(0, dot);
    const table = dot < 0 ? '' : entry.slice(dot + 1);
    if (!dbs.has(db)) dbs.set(db, []);
    if (table && !dbs.get(db).includes(table)) dbs.get(db).push(table);
  }
  return dbs;
}
const newCollationsEnabled = () => process.env.BR_SIM_NEW_COLLATIONS_ENABLED ?? 'True';

/** The record key prefix of a table, `t` + its ID (pkg/tablecodec `EncodeTablePrefix`). */
function tablePrefix(id) {
  const b = Buffer.alloc(9);
  b.write('t');
  b.writeBigUInt64BE(BigInt(id) ^ (1n << 63n), 1);
  return b;
}
/** pkg/tablecodec `DecodeTableID`. */
const decodeTableID = (key) => (key && key.length >= 9 && key[0] === 0x74 ? Number(key.readBigUInt64BE(1) ^ (1n << 63n)) : 0);

/** A message as proto3 writes it: fields at their zero value left out. */
const message = (parts) =>
  Buffer.concat(
    parts
      .filter(([, v]) => v !== undefined && v !== '' && v !== 0 && v !== 0n && v.length !== 0)
      .map(([no, v]) => (typeof v === 'number' || typeof v === 'bigint' ? uintField(no, v) : bytesField(no, v))),
  );
const fileMessage = (f) =>
  message([
    [1, f.name],
    [2, f.sha256],
    [3, f.startKey],
    [4, f.endKey],
    [5, f.startVersion],
    [6, f.endVersion],
    [7, f.crc64xor],
    [8, f.totalKvs],
    [9, f.totalBytes],
    [10, f.cf],
    [11, f.size],
  ]);
const schemaMessage = (s) =>
  message([
    [1, s.db],
    [2, s.table],
    [3, s.crc64xor],
    [4, s.totalKvs],
    [5, s.totalBytes],
  ]);

async function backup(kind, argv) {
  const spec = BACKUP_KINDS[kind];
  if (!spec) throw new BrError(`unknown command "${kind}" for "br backup"`);
  const { values, rest } = parseFlags(argv, { ...COMMON, ...BACKUP, ...spec.flags });
  if (rest.length > 0) throw new BrError(`unknown command "${rest[0]}" for "br backup ${kind}"`);
  if (kind !== 'full' && !values.db) throw invalid('empty database name is not allowed');
  if (kind === 'table' && !values.table) throw invalid('empty table name is not allowed');
  if (values['check-requirements']) versionCheck(process.env.BR_SIM_TIKV_VERSION ?? BR_VERSION);
  const s3 = s3Client(parseStorage(values.storage, values));
  if (await s3.exists('backupmeta')) {
    throw invalid(
      `backup meta file exists in ${s3.uri}/backupmeta, there may be some backup files in the path already, please specify a correct backup directory!`,
    );
  }
  await s3.put('backup.lock', Buffer.from(LOCK_TEXT));
  const backupTs = values.backupts && /^\d+$/.test(values.backupts) ? BigInt(values.backupts) : tso();

  // The cluster's tables the command selects: its user tables and mysql.user, the system table
  // every cluster has (br/pkg/backup BuildBackupRangeAndInitSchema with the command's filter).
  const filter =
    kind === 'full'
      ? tableFilter(values.filter, values['case-sensitive'])
      : kind === 'db'
        ? schemaFilter(values.db)
        : tablesFilter(values.db, values.table);
  const tables = [];
  let nextID = 100;
  for (const [db, names] of [['mysql', ['user']], ...clusterTables()]) {
    const dbID = db === 'mysql' ? 1 : nextID++;
    // An empty database is backed up as a schema without a table.
    if (names.length === 0 && kind !== 'table' && filter.matchSchema(db)) tables.push({ db, dbID });
    for (const table of names) if (filter.matchTable(db, table)) tables.push({ db, dbID, table, id: db === 'mysql' ? 5 : nextID++ });
  }
  const files = [];
  const schemas = [];
  for (const t of tables) {
    const dbName = isSysDB(t.db) ? `${TEMP_DB_PREFIX}${t.db}` : t.db;
    const dbJSON = JSON.stringify({
      id: t.dbID,
      db_name: { O: dbName, L: dbName.toLowerCase() },
      charset: 'utf8mb4',
      collate: 'utf8mb4_bin',
      state: 5,
    });
    if (t.table === undefined) {
      schemas.push({ db: dbJSON });
      continue;
    }
    const sst = Buffer.from(`simulated SST of ${t.db}.${t.table} (table ${t.id}) of ${values.pd.join(',')} at ${backupTs}`);
    const sha = createHash('sha256').update(sst).digest();
    const name = `1/${2 + files.length}_3_${sha.toString('hex').slice(0, 16)}_${Date.now()}_write.sst`;
    await s3.put(name, sst);
    files.push({
      name,
      sha256: sha,
      startKey: Buffer.concat([tablePrefix(t.id), Buffer.from('_r')]),
      endKey: tablePrefix(t.id + 1),
      startVersion: values.lastbackupts,
      endVersion: backupTs,
      crc64xor: sha.readBigUInt64BE(0),
      totalKvs: 1,
      totalBytes: sst.length,
      cf: 'write',
      size: sst.length,
    });
    // br/pkg/backup/schema.go BackupSchemas: a system database is recorded under its temporary name.
    schemas.push({
      db: dbJSON,
      table: JSON.stringify({
        id: t.id,
        name: { O: t.table, L: t.table.toLowerCase() },
        charset: 'utf8mb4',
        collate: 'utf8mb4_bin',
        cols: [],
        index_info: [],
        state: 5,
      }),
      crc64xor: sha.readBigUInt64BE(0),
      totalKvs: 1,
      totalBytes: sst.length,
    });
  }
  const v2 = values['use-backupmeta-v2'];
  // br/pkg/metautil/metafile.go flushMetasV2: `backupmeta.<kind>.<seq>`, one sequence, files first.
  let seq = 0;
  const index = async (kindName, items, no) => {
    if (items.length === 0) return Buffer.alloc(0);
    const content = Buffer.concat(items.map((m) => bytesField(no, m)));
    const fname = `backupmeta.${kindName}.${String(++seq).padStart(9, '0')}`;
    await s3.put(fname, content);
    return bytesField(1, fileMessage({ name: fname, sha256: createHash('sha256').update(content).digest(), size: content.length }));
  };
  const fileParts = v2
    ? [bytesField(13, await index('datafile', files.map(fileMessage), 2))]
    : files.map((f) => bytesField(4, fileMessage(f)));
  const schemaParts = v2
    ? [bytesField(14, await index('schema', schemas.map(schemaMessage), 3))]
    : schemas.map((s) => bytesField(7, schemaMessage(s)));
  const meta = Buffer.concat([
    // PD's cluster version as its HTTP API gives it, quoted (task/backup.go, RunBackup).
    uintField(1, CLUSTER_ID),
    bytesField(2, JSON.stringify((process.env.BR_SIM_TIKV_VERSION ?? BR_VERSION).replace(/^v/, ''))),
    ...fileParts,
    uintField(5, values.lastbackupts),
    uintField(6, backupTs),
    ...schemaParts,
    bytesField(10, '[]'),
    bytesField(11, `BR\nRelease Version: ${BR_VERSION}`),
    uintField(12, v2 ? 1 : 0),
    bytesField(20, newCollationsEnabled()),
  ]);
  await s3.put('backupmeta', meta);
  const dataSize = files.reduce((n, f) => n + f.size, 0);
  const size = dataSize + meta.length;
  log('INFO', `${spec.name} success summary`, {
    'total-ranges': files.length,
    'ranges-succeed': files.length,
    'ranges-failed': 0,
    'total-take': goDuration(process.hrtime.bigint() - START),
    'total-kv': files.length,
    'backup-data-size(after-compressed)': humanSize(size),
    Size: size,
    BackupTS: backupTs,
  });
}

/** br/pkg/task/common.go `ReadBackupMeta` and the metautil `MetaReader` of the schemas and files. */
async function readBackup(s3, crypter) {
  let raw;
  try {
    raw = await s3.get('backupmeta');
  } catch (e) {
    throw new BrError(`load backupmeta failed: ${e.message}`);
  }
  if (crypter !== 'plaintext') throw new BrError('the test BR does not simulate encrypted backups (--crypter.method)');
  let meta;
  try {
    meta = decode(raw);
  } catch (e) {
    throw new BrError(`parse backupmeta failed because of wrong aes cipher: ${e.message}`);
  }
  // metautil WalkLeafMetaFile: each metafile read by name and checked against its sha256.
  const leaves = async (index) => {
    if (!index) return [];
    const node = decode(index);
    if (node.all(1).length === 0) return [node];
    const out = [];
    for (const ref of node.all(1).map(decode)) {
      const content = await s3.get(ref.string(1));
      const sum = createHash('sha256').update(content).digest();
      if (!sum.equals(ref.bytes(2) ?? Buffer.alloc(0))) {
        throw annotate(
          `checksum mismatch expect ${(ref.bytes(2) ?? Buffer.alloc(0)).toString('hex')}, got ${sum.toString('hex')}`,
          'BR:Common:ErrInvalidMetaFile',
          'invalid metafile',
        );
      }
      out.push(...(await leaves(content)));
    }
    return out;
  };
  const v2 = meta.uint(12) === 1n;
  const fileMsgs = v2 ? (await leaves(meta.bytes(13))).flatMap((leaf) => leaf.all(2)) : meta.all(4);
  const schemaMsgs = v2 ? (await leaves(meta.bytes(14))).flatMap((leaf) => leaf.all(3)) : meta.all(7);
  const files = fileMsgs
    .map(decode)
    .map((f) => ({ name: f.string(1), tableID: decodeTableID(f.bytes(3)), totalKvs: f.uint(8), totalBytes: f.uint(9), size: f.uint(11) }));
  const databases = new Map();
  for (const s of schemaMsgs.map(decode)) {
    const dbInfo = JSON.parse(s.string(1));
    const db = databases.get(dbInfo.id) ?? { name: dbInfo.db_name.O, tables: [] };
    databases.set(dbInfo.id, db);
    if (s.bytes(2)?.length) {
      const info = JSON.parse(s.string(2));
      db.tables.push({ db: db.name, name: info.name.O, id: info.id, files: files.filter((f) => f.tableID === info.id) });
    }
  }
  return {
    clusterVersion: meta.string(2),
    startVersion: meta.uint(5),
    endVersion: meta.uint(6),
    isRawKv: meta.uint(8) !== 0n,
    clusterId: meta.uint(1),
    isTxnKv: meta.uint(21) !== 0n,
    newCollationsEnabled: meta.string(20),
    databases: [...databases.values()],
  };
}

/** br/pkg/version/version.go `NormalizeBackupVersion` (strconv.Unquote, then semver). */
function normalizeVersion(v) {
  let s = v.trim();
  try {
    if (/^".*"$/s.test(s)) s = JSON.parse(s);
  } catch {
    // not a quoted string: kept as it is
  }
  const m = /^(\d+)\.(\d+)\.(\d+)(-[0-9A-Za-z.-]+)?(\+[0-9A-Za-z.-]+)?$/.exec(s.trim());
  return m ? { major: Number(m[1]), text: s.trim() } : undefined;
}

/** br/pkg/restore/misc.go `AssertUserDBsEmpty` (8.4/8.5-era). */
function assertUserDBsEmpty() {
  const userTables = [];
  const append = (db, table) => {
    if (userTables.length >= 10) {
      userTables.push('...');
      return true;
    }
    userTables.push(`${db}.${table}`);
    return false;
  };
  outer: for (const [db, tables] of clusterTables()) {
    if (MEM_OR_SYS_DBS.includes(db.toLowerCase())) continue;
    if (tables.length === 0) {
      // "tidb create test db on fresh cluster, if it's empty we don't take it as user db"
      if (db.toLowerCase() !== 'test' && append(db, '')) break;
      continue;
    }
    for (const table of tables) if (append(db, table)) break outer;
  }
  if (userTables.length > 0)
    throw new NotFreshError(`user db/tables: ${userTables.join(', ')}: [BR:Restore:ErrRestoreNotFreshCluster]cluster is not fresh`);
}

async function restore(kind, argv) {
  const spec = RESTORE_KINDS[kind];
  // cobra: `br restore` alone is not runnable and prints its help.
  if (kind === undefined || kind.startsWith('-')) throw new BrError('the test BR does not print the help of br restore');
  if (kind === 'point') return pointRestore(argv);
  if (['raw', 'txn'].includes(kind)) throw new BrError(`the test BR does not simulate br restore ${kind}`);
  if (!spec) throw new BrError(`unknown command "${kind}" for "br restore"`);
  const { values, rest, changed } = parseFlags(argv, { ...COMMON, ...RESTORE, ...spec.flags });
  if (rest.length > 0) throw new BrError(`unknown command "${rest[0]}" for "br restore ${kind}"`);
  const missing = (spec.required ?? []).filter((f) => !changed.has(f));
  if (missing.length > 0) throw new BrError(`required flag(s) "${missing.join('", "')}" not set`);

  // task.RestoreConfig.ParseFromFlags (restore.go) and Config.ParseFromFlags (common.go).
  if (kind !== 'full' && !values.db) throw invalid('empty database name is not allowed');
  if (kind === 'table' && !values.table) throw invalid('empty table name is not allowed');
  if (values.pd.length === 0 || (values.pd.length === 1 && values.pd[0] === ''))
    throw invalid('must provide at least one PD server address');
  const crypter = values['crypter.method'];
  if (!['plaintext', 'PLAINTEXT', 'aes128-ctr', 'AES128-CTR', 'aes192-ctr', 'AES192-CTR', 'aes256-ctr', 'AES256-CTR'].includes(crypter))
    throw invalid(`invalid crypter method '${crypter}'`);
  const cmdName = spec.name;
  let filter;
  if (kind === 'full') {
    if (!['kv', 'aws-ebs'].includes(values.type)) throw new BrError('invalid full backup type');
    if (!['gp3', 'io1', 'io2'].includes(values['volume-type'])) throw new BrError(`invalid volume type: ${values['volume-type']}`);
    if (values.type === 'aws-ebs') throw new BrError('the test BR does not simulate EBS restore (--type=aws-ebs)');
    filter = tableFilter(values.filter, values['case-sensitive']);
  } else filter = kind === 'db' ? schemaFilter(values.db) : tablesFilter(values.db, values.table);
  const explicitFilter = kind === 'full' && changed.has('filter');
  if (values['checkpoint-storage']) throw new BrError('the test BR does not simulate --checkpoint-storage');

  // RunRestore: NewMgr with the NormalVersionChecker.
  if (values['check-requirements']) versionCheck(process.env.BR_SIM_TIKV_VERSION ?? BR_VERSION);
  try {
    await snapshotRestore(kind, cmdName, values, filter, explicitFilter);
  } catch (e) {
    if (e instanceof NotFreshError) {
      // br/cmd/br/restore.go printWorkaroundOnFullRestoreError, fmt.Println to stdout.
      process.stdout.write(
        [
          '#######################################################################',
          '# the target cluster is not fresh, cannot restore.',
          '# you can drop existing databases and tables and start restore again',
          '#######################################################################',
          '',
        ].join('\n'),
      );
    }
    throw e;
  }
}

/** br/pkg/task/restore.go `runSnapshotRestore`; its `defer summary.Summary(cmdName)` prints either way. */
async function snapshotRestore(kind, cmdName, values, filter, explicitFilter) {
  const summary = { files: 0, ints: {}, data: [] };
  let success = false;
  try {
    const s3 = s3Client(parseStorage(values.storage, values));
    const meta = await readBackup(s3, values['crypter.method']);
    if (meta.isRawKv || meta.isTxnKv)
      throw annotate('cannot do transactional restore from raw/txn kv data', 'BR:Restore:ErrRestoreModeMismatch', 'restore mode mismatch');
    const tikv = process.env.BR_SIM_TIKV_VERSION ?? BR_VERSION;
    if (values['check-requirements']) {
      // version.CheckClusterVersion(ctx, pd, version.CheckVersionForBackup(backupVersion)).
      const backupVersion = normalizeVersion(meta.clusterVersion);
      const target = normalizeVersion(
        tikv
          .replace(/^v/, '')
          .replace(/-[0-9]+-g[0-9a-f]{7,}/, '')
          .replace(/-dirty$/, ''),
      );
      if (backupVersion && target && backupVersion.major > target.major && backupVersion.major - target.major > 1) {
        throw annotate(
          `backup with cluster version ${backupVersion.text} cannot be restored at cluster of version ${target.text}: major version mismatches`,
          'BR:Common:ErrVersionMismatch',
          'version mismatch',
        );
      }
    }
    // CheckNewCollationEnable.
    const target = newCollationsEnabled();
    if (meta.newCollationsEnabled === '') {
      if (values['check-requirements']) {
        throw annotate(
          "the value 'new_collation_enabled' not found in backupmeta. you can use \"SELECT VARIABLE_VALUE FROM mysql.tidb WHERE VARIABLE_NAME='new_collation_enabled';\" to manually check the config. if you ensure the value 'new_collation_enabled' in backup cluster is as same as restore cluster, use --check-requirements=false to skip this check",
          'BR:Common:ErrUnknown',
          'internal error',
        );
      }
    } else if (meta.newCollationsEnabled.toLowerCase() !== target.toLowerCase()) {
      throw annotate(
        `the config 'new_collation_enabled' not match, upstream:${meta.newCollationsEnabled}, downstream: ${target}`,
        'BR:Common:ErrUnknown',
        'internal error',
      );
    }
    // snap_client IsIncremental: StartVersion != EndVersion and StartVersion != 0.
    const incremental = !(meta.startVersion === meta.endVersion || meta.startVersion === 0n);

    // checkMandatoryClusterRequirements: VerifyDBAndTableInBackup, then the fresh cluster.
    if (kind !== 'full') {
      const schemas = new Set();
      const tablesIn = new Set();
      for (const db of meta.databases) {
        const { name, ok } = stripTempDB(db.name);
        const dbName = (ok && isSysDB(name) ? name : db.name).toLowerCase();
        schemas.add(enclose(dbName));
        for (const t of db.tables) tablesIn.add(`${enclose(dbName)}.${enclose(t.name.toLowerCase())}`);
      }
      const schema = enclose(values.db);
      if (!schemas.has(schema.toLowerCase()))
        throw annotate(
          `[database: ${schema}] has not been backup, please ensure you has input a correct database name`,
          'BR:Common:ErrUndefinedDbOrTable',
          'undefined restore databases or tables',
        );
      if (kind === 'table') {
        const table = `${enclose(values.db)}.${enclose(values.table)}`;
        if (!tablesIn.has(table.toLowerCase()))
          throw annotate(
            `[table: ${table}] has not been backup, please ensure you has input a correct table name`,
            'BR:Common:ErrUndefinedDbOrTable',
            'undefined restore databases or tables',
          );
      }
    } else if (!incremental && !explicitFilter) {
      // NeedCheckFreshCluster(ExplicitFilter, firstRun): IsFull() && !ExplicitFilter && firstRun.
      assertUserDBsEmpty();
    }

    // filterRestoreFiles.
    const withSys = values['with-sys-table'];
    const tables = [];
    const dbs = new Set();
    for (const db of meta.databases) {
      const { name, ok } = stripTempDB(db.name);
      if (ok && isSysDB(name) ? !withSys || !filter.matchSchema(name) : !filter.matchSchema(db.name)) continue;
      dbs.add(db.name);
      for (const t of db.tables) if (matchTable(filter, db.name, t.name, withSys)) tables.push(t);
    }
    log('INFO', 'found items to restore after filtering', { tables: tables.length, db: dbs.size });

    // checkOptionalClusterRequirements: checkTableExistence (the disk space check needs PD).
    if (values['check-requirements'] && !incremental) {
      const existing = clusterTables();
      const found = tables.filter((t) => (existing.get(t.db) ?? []).includes(t.name));
      if (found.length > 0)
        throw annotate(
          `table already exists: ${found.map((t) => `${t.db}.${t.name} `).join('')}`,
          'BR:Restore:ErrTablesAlreadyExisted',
          'tables already existed in restored cluster',
        );
    }

    const restored = tables.flatMap((t) => t.files);
    const archiveSize = restored.reduce((n, f) => n + f.size, 0n);
    const restoreTS = tso();
    summary.files = restored.length;
    if (restored.length > 0) summary.ints['restore-ranges'] = restored.length;
    summary.data.push(
      ['restore-data-size(after-compressed)', humanSize(Number(archiveSize))],
      ['Size', archiveSize],
      ['BackupTS', meta.endVersion],
      ['RestoreTS', restoreTS],
    );
    if (restored.length > 0) {
      const kvs = restored.reduce((n, f) => n + f.totalKvs, 0n);
      const bytes = restored.reduce((n, f) => n + f.totalBytes, 0n);
      summary.data.push(['total-kv', kvs], ['total-kv-size', Number(bytes)]);
    }
    success = true;
  } finally {
    // summary/collector.go Summary.
    const head = { 'total-ranges': summary.files, 'ranges-succeed': summary.files, 'ranges-failed': 0, ...summary.ints };
    if (!success) {
      log('INFO', 'units canceled', { 'cancel-unit': 0 });
      log('INFO', `${cmdName} failed summary`, head);
    } else {
      const took = process.hrtime.bigint() - START;
      const fields = { ...head, 'total-take': goDuration(took) };
      for (const [k, v] of summary.data) {
        if (k === 'total-kv-size') {
          fields[k] = humanSize(v);
          fields['average-speed'] = `${humanSize(v / (Number(took) / 1e9))}/s`;
        } else fields[k] = v;
      }
      log('INFO', `${cmdName} success summary`, fields);
    }
  }
}

/**
 * PD's etcd, as BR reaches it (br/pkg/streamhelper/client.go over clientv3): KV Range, Put and
 * DeleteRange on the `--pd` address. The tests resolve the address's host themselves: `BR_SIM_PD`,
 * when set, is the `host:port` reached instead. BR wraps a task's keys in one Txn (`PutTask`,
 * `DeleteTask`); here they are separate Puts and DeleteRanges, which leave the same keys.
 *
 * gRPC is loaded here rather than at the top: only the log commands reach PD, and loading it was a
 * quarter of the CPU time every other command took to run (each run is a process of its own).
 */
async function etcd(pd) {
  const { default: grpc } = await import('@grpc/grpc-js');
  const target = process.env.BR_SIM_PD || pd.replace(/^https?:\/\//, '');
  const client = new grpc.Client(target, grpc.credentials.createInsecure());
  const call = (method, body) =>
    new Promise((resolve, reject) => {
      client.makeUnaryRequest(
        `/etcdserverpb.KV/${method}`,
        (b) => b,
        (b) => b,
        body,
        new grpc.Metadata(),
        { deadline: Date.now() + 10_000 },
        (err, res) => {
          if (err) reject(new BrError(`rpc error: code = ${grpc.status[err.code] ?? err.code} desc = ${err.details}`));
          else resolve(res);
        },
      );
    });
  const prefixEnd = (key) => {
    const end = Buffer.from(key);
    for (let i = end.length - 1; i >= 0; i--)
      if (end[i] < 0xff) {
        end[i]++;
        return end.subarray(0, i + 1);
      }
    return Buffer.from([0]);
  };
  return {
    async prefix(key) {
      const res = decode(await call('Range', Buffer.concat([bytesField(1, key), bytesField(2, prefixEnd(Buffer.from(key)))])));
      return res
        .all(2)
        .map(decode)
        .map((kv) => ({ key: kv.bytes(1)?.toString('latin1') ?? '', value: kv.bytes(5) ?? Buffer.alloc(0) }));
    },
    async get(key) {
      return (await this.prefix(key)).find((kv) => kv.key === key);
    },
    put: (key, value) => call('Put', Buffer.concat([bytesField(1, Buffer.from(key, 'latin1')), bytesField(2, value)])),
    deleteKey: (key) => call('DeleteRange', bytesField(1, key)),
    deletePrefix: (key) => call('DeleteRange', Buffer.concat([bytesField(1, key), bytesField(2, prefixEnd(Buffer.from(key)))])),
    close: () => client.close(),
  };
}

/** br/pkg/task/common.go `ParseTSString` with the zone check: a TSO, or a time with its zone. */
function parseTS(text) {
  if (text === '') return 0n;
  if (/^\d+$/.test(text)) return BigInt(text);
  const m = /^(\d{4})-(\d{1,2})-(\d{1,2})[ T](\d{1,2}):(\d{2}):(\d{2})(\.\d+)?\s*(Z|[+-]\d{2}:?\d{2})?$/.exec(text);
  if (!m) throw new BrError(`parsing time "${text}" as "2006-01-02 15:04:05.999999999 -0700 MST": cannot parse "${text}" as "2006"`);
  if (!m[8]) throw invalid(`must set timezone when using datetime format ts, e.g. '2018-05-11 01:42:23+0800'`);
  const iso = `${m[1]}-${m[2].padStart(2, '0')}-${m[3].padStart(2, '0')}T${m[4].padStart(2, '0')}:${m[5]}:${m[6]}${m[7] ?? ''}${m[8] === 'Z' ? 'Z' : m[8].length === 5 ? `${m[8].slice(0, 3)}:${m[8].slice(3)}` : m[8]}`;
  return BigInt(Date.parse(iso)) << 18n;
}

/** A storage checkpoint (`v1/global_checkpoint/<store>.ts`): a little-endian u64, as TiKV writes it. */
const readU64le = (b) => (b.length === 8 ? b.readBigUInt64LE(0) : 0n);

/**
 * `StorageBackend` of the task info (kvproto brpb.proto: s3 = 3 { endpoint 1, region 2, bucket 3,
 * prefix 4, access_key 8, secret_access_key 9, force_path_style 10, provider 16 }), the keys included
 * as BR does with `--send-credentials-to-tikv` (the default).
 */
function storageBackend(store, sendCreds) {
  const s3 = Buffer.concat([
    bytesField(1, store.endpoint ?? ''),
    bytesField(2, store.region ?? ''),
    bytesField(3, store.bucket),
    bytesField(4, store.prefix),
    ...(sendCreds && (store['access-key'] ?? process.env.AWS_ACCESS_KEY_ID)
      ? [
          bytesField(8, store['access-key'] ?? process.env.AWS_ACCESS_KEY_ID),
          bytesField(9, store['secret-access-key'] ?? process.env.AWS_SECRET_ACCESS_KEY ?? ''),
        ]
      : []),
    uintField(10, 1),
    ...(store.provider ? [bytesField(16, store.provider)] : []),
  ]);
  return bytesField(3, s3);
}

/**
 * What `br log start|stop|pause|resume` print on success (br/pkg/task/stream.go: `summary.Log(cmdName,
 * logutil.StreamBackupTaskInfo(&ti.Info))`, then the deferred `summary.Summary(cmdName)`): the task
 * as br/pkg/logutil `zapStreamBackupTaskInfo` encodes it (taskName, startTs, endTS, tableFilter) under
 * `streamTaskInfo`, then `<cmd> success summary` with total-take.
 */
function taskSummary(cmdName, infoValue) {
  const info = decode(infoValue);
  const object = `{taskName=${info.string(4)}, startTs=${info.uint(2)}, endTS=${info.uint(3)}, tableFilter=${info
    .all(5)
    .map((f) => f.toString())
    .join(',')}}`;
  log('INFO', cmdName, { streamTaskInfo: JSON.stringify(object) });
  log('INFO', `${cmdName} success summary`, { 'total-take': goDuration(process.hrtime.bigint() - START) });
}

/** A `br log` subcommand (br/cmd/br/stream.go `NewStreamCommand`; br/pkg/task/stream.go `RunStreamCommand`). */
async function logCommand(kind, argv) {
  if (kind === undefined || kind.startsWith('-')) throw new BrError('the test BR does not print the help of br log');
  const spec = LOG_KINDS[kind];
  if (!spec) throw new BrError(`unknown command "${kind}" for "br log"`);
  if (['status', 'metadata'].includes(kind)) throw new BrError(`the test BR does not simulate br log ${kind}`);
  const { values, rest } = parseFlags(argv, { ...COMMON, ...spec });
  if (rest.length > 0) throw new BrError(`unknown command "${rest[0]}" for "br log ${kind}"`);
  if (kind === 'truncate') return logTruncate(values);
  // ParseStreamCommonFromFlags.
  const task = values['task-name'];
  if (!task) throw invalid('Miss parameters task-name');
  let startTs = 0n;
  if (kind === 'start') {
    startTs = parseTS(values['start-ts']);
    parseTS(values['end-ts']);
  }
  // NewStreamMgr: NewMgr with the StreamVersionChecker, then (start only) the storage.
  if (values['check-requirements']) versionCheck(process.env.BR_SIM_TIKV_VERSION ?? BR_VERSION);
  const kv = await etcd(values.pd[0]);
  const info = `${STREAM_PREFIX}/info/${task}`;
  try {
    if (kind === 'start') return await logStart(kv, task, values, startTs);
    // streamhelper GetTask: `no such task`.
    const found = await kv.get(info);
    if (!found) throw annotate(`no such task ${task}`, 'BR:PiTR:ErrTaskNotFound', 'task not found');
    const paused = (await kv.get(`${STREAM_PREFIX}/pause/${task}`)) !== undefined;
    if (kind === 'stop') {
      // DeleteTask: the info, ranges, checkpoints, pause, last errors and storage checkpoints.
      await kv.deleteKey(info);
      for (const p of [`ranges/${task}/`, `checkpoint/${task}/`, `last-error/${task}/`, `storage-checkpoint/${task}`])
        await kv.deletePrefix(`${STREAM_PREFIX}/${p}`);
      await kv.deleteKey(`${STREAM_PREFIX}/pause/${task}`);
    } else if (kind === 'pause') {
      if (paused) throw annotate(`The task ${task} is paused already.`, 'BR:KV:ErrKVUnknown', 'unknown error occur on tikv');
      // PauseV2 (streamhelper/client.go), severity MANUAL; its time an `RFC3339Time`, Go's time.RFC3339 (whole seconds).
      const pause = {
        severity: 'MANUAL',
        operation_hostname: hostname(),
        operation_pid: process.pid,
        operation_time: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z'),
        payload_type: values.message ? 'text/plain;charset=UTF-8' : '',
        payload: values.message ? Buffer.from(values.message).toString('base64') : null,
      };
      await kv.put(`${STREAM_PREFIX}/pause/${task}`, Buffer.from(JSON.stringify(pause)));
    } else if (kind === 'resume') {
      if (!paused) throw annotate(`The task ${task} is active already.`, 'BR:KV:ErrKVUnknown', 'unknown error occur on tikv');
      await kv.deleteKey(`${STREAM_PREFIX}/pause/${task}`);
      await kv.deletePrefix(`${STREAM_PREFIX}/last-error/${task}/`);
    }
    taskSummary(`log ${kind}`, found.value);
  } finally {
    kv.close();
  }
}

/**
 * The metadata files of a log backup's storage (`v1/backupmeta/<name>.meta`) with the highest TS of
 * what each indexes, from its name (TiKV's router.rs `path_to_meta`, BR's backupmetas/parser.go
 * `ParseName`): legacy `<flush>-<minDefault>-<min>-<max>.meta`, tagged `<flush><store>-d<..>l<min>u<max>.meta`.
 */
function metaMaxTs(name) {
  const base = name.replace(/^.*\//, '').replace(/\.meta$/i, '');
  const tagged = /u([0-9a-f]{16})/i.exec(base);
  if (tagged) return BigInt(`0x${tagged[1]}`);
  const legacy = /^([0-9a-f]{16})-([0-9a-f]{16})-([0-9a-f]{16})-([0-9a-f]{16})$/i.exec(base);
  return legacy ? BigInt(`0x${legacy[4]}`) : undefined;
}

/**
 * `br log truncate --until` (task/stream.go `RunStreamTruncate`): no task and no PD, the storage only.
 * Under `truncating.lock`, the truncate safepoint (`v1_stream_trancate_safepoint.txt`) moves up to
 * `--until` (never down), and the metadata files wholly before it go. The data files they index are
 * not simulated, nor removed. BR asks before it deletes, and answers itself yes without a terminal
 * (glue `PromptBool`); `--dry-run` changes nothing. Prints no summary (`skipSummaryCommandList`).
 */
async function logTruncate(values) {
  if (!values.until) throw invalid('please provide the `--until` ts');
  const until = parseTS(values.until);
  if (values['check-requirements']) versionCheck(process.env.BR_SIM_TIKV_VERSION ?? BR_VERSION);
  const s3 = s3Client(parseStorage(values.storage, values));
  if (await s3.exists('truncating.lock'))
    throw new BrError("failed to acquire lock on 'truncating.lock': the lock is held by another truncate");
  await s3.put(
    'truncating.lock',
    Buffer.from(
      JSON.stringify({ locked_at: new Date().toISOString(), locker_host: hostname(), locker_pid: process.pid, hint: 'truncating' }),
    ),
  );
  try {
    let safepoint = 0n;
    if (await s3.exists('v1_stream_trancate_safepoint.txt')) {
      const text = (await s3.get('v1_stream_trancate_safepoint.txt')).toString().trim();
      if (!/^\d+$/.test(text)) throw annotate('failed to parse the truncate safepoint', 'BR:Common:ErrInvalidMetaFile', 'invalid metafile');
      safepoint = BigInt(text);
    }
    if (values['dry-run']) return;
    if (until > safepoint) await s3.put('v1_stream_trancate_safepoint.txt', Buffer.from(String(until)));
    for (const key of await s3.list('v1/backupmeta/')) {
      const max = metaMaxTs(key);
      if (max !== undefined && max < until) await s3.remove(key);
    }
  } finally {
    await s3.remove('truncating.lock');
  }
}

/**
 * `br log start` (task/stream.go `RunStreamStart`): one task per cluster; a storage that holds
 * `backup.lock` from an earlier task is a restart from where its log ends, one that holds a snapshot
 * backup is refused; a fresh one gets `backup.lock` and a `backupmeta` with the start TS. Then the
 * task's info and ranges go into PD.
 */
async function logStart(kv, task, values, startTs) {
  const count = (await kv.prefix(`${STREAM_PREFIX}/info/`)).length;
  if (count > 0)
    throw annotate(
      'failed to start the log backup, allow only one running task',
      'BR:Stream:ErrStreamLogTaskExist',
      'stream task already exists',
    );
  const store = parseStorage(values.storage, values);
  const s3 = s3Client(store);
  const now = tso();
  let start = startTs === 0n ? now : startTs;
  if (start > now) throw invalid(`invalid timestamps, startTS ${start} should be smaller than currentTS ${now}`);
  if (await s3.exists('backup.lock')) {
    const meta = decode(await s3.get('backupmeta'));
    if (meta.uint(6) > 0n)
      throw annotate('the storage has been used for full backup', 'BR:ExternalStorage:ErrStorageUnknown', 'unknown external storage error');
    // The log's end: the highest global checkpoint in the storage, else its start.
    let max = meta.uint(5);
    for (const key of await s3.list('v1/global_checkpoint/'))
      if (key.endsWith('.ts')) {
        const ts = readU64le(await s3.get(key));
        if (ts > max) max = ts;
      }
    start = max;
  } else {
    await s3.put('backup.lock', Buffer.from(LOCK_TEXT));
    await s3.put(
      'backupmeta',
      Buffer.concat([
        uintField(1, CLUSTER_ID),
        bytesField(2, JSON.stringify((process.env.BR_SIM_TIKV_VERSION ?? BR_VERSION).replace(/^v/, ''))),
        uintField(5, start),
      ]),
    );
  }
  // StreamBackupTaskInfo: storage 1, start_ts 2, end_ts 3, name 4, table_filter 5, compression ZSTD 6, security_config 7 (empty).
  const filters = values.filter;
  const infoValue = Buffer.concat([
    bytesField(1, storageBackend(store, values['send-credentials-to-tikv'])),
    uintField(2, start),
    uintField(3, BigInt(values['end-ts'])),
    bytesField(4, task),
    ...filters.map((f) => bytesField(5, f)),
    uintField(6, 3),
    Buffer.from([0x3a, 0x00]),
  ]);
  await kv.put(`${STREAM_PREFIX}/info/${task}`, infoValue);
  // Every table (`*.*`): the meta keys m..n and the table keys t..u (stream_mgr.go buildObserverAllRange).
  await kv.put(`${STREAM_PREFIX}/ranges/${task}/m`, Buffer.from('n'));
  await kv.put(`${STREAM_PREFIX}/ranges/${task}/t`, Buffer.from('u'));
  taskSummary('log start', infoValue);
}

/** br/pkg/task/stream.go `DefineStreamRestoreFlags`, with the restore flags and `restore full`'s filter (br/cmd/br/restore.go `newStreamRestoreCommand`). */
const POINT_FLAGS = {
  'start-ts': ['string', ''],
  'restored-ts': ['string', ''],
  'full-backup-storage': ['string', ''],
  'pitr-batch-count': ['uint', 8],
  'pitr-batch-size': ['uint', 16777216],
  'pitr-concurrency': ['uint', 16],
  filter: ['stringArray', FULL_RESTORE_FILTER],
  'case-sensitive': ['bool', false],
};

/** Go's `time.Time.String()` of a TSO's physical time, in UTC (oracle.GetTimeFromTS). */
function tsTime(ts) {
  const d = new Date(Number(BigInt(ts) >> 18n));
  const ms = d.getUTCMilliseconds();
  return `${d.toISOString().slice(0, 19).replace('T', ' ')}${ms ? `.${String(ms).padStart(3, '0').replace(/0+$/, '')}` : ''} +0000 UTC`;
}

/**
 * The log's range in its storage (task/stream.go `getLogInfoFromStorage`): from the task's start
 * (backupmeta's start_version), or the truncate safepoint when higher (`v1_stream_trancate_safepoint.txt`,
 * stream_metas.go), to the highest global checkpoint the stores flushed (`v1/global_checkpoint/<store>.ts`).
 */
async function logRange(s3) {
  let raw;
  try {
    raw = await s3.get('backupmeta');
  } catch (e) {
    throw new BrError(`failed to get backup meta from storage: ${e.message}`);
  }
  const meta = decode(raw);
  if (meta.uint(6) > 0n)
    throw annotate('the storage has been used for full backup', 'BR:ExternalStorage:ErrStorageUnknown', 'unknown external storage error');
  let min = meta.uint(5);
  if (await s3.exists('v1_stream_trancate_safepoint.txt')) {
    const text = (await s3.get('v1_stream_trancate_safepoint.txt')).toString().trim();
    if (!/^\d+$/.test(text)) throw annotate('failed to parse the truncate safepoint', 'BR:Common:ErrInvalidMetaFile', 'invalid metafile');
    if (BigInt(text) > min) min = BigInt(text);
  }
  let max = min;
  for (const key of await s3.list('v1/global_checkpoint/')) {
    if (!key.endsWith('.ts')) continue;
    const ts = readU64le(await s3.get(key));
    if (ts > max) max = ts;
  }
  return { clusterId: meta.uint(1), min, max };
}

/**
 * `br restore point` (task/stream.go `RunStreamRestore`, `checkLogRange`): the log's range read from
 * its storage, the snapshot's BackupTS from its backupmeta, both from the same cluster, the snapshot
 * inside the log and the target inside the log after the snapshot; then the snapshot restore (as
 * `restore full`, with its checks and summary) and the log's summary. Log data files are not
 * simulated: the log phase replays nothing and says so in its counts.
 */
async function pointRestore(argv) {
  const { values, rest, changed } = parseFlags(argv, { ...COMMON, ...RESTORE, ...POINT_FLAGS });
  if (rest.length > 0) throw new BrError(`unknown command "${rest[0]}" for "br restore point"`);
  if (values['start-ts'] && values['full-backup-storage']) throw invalid('start-ts and full-backup-storage are mutually exclusive');
  if (!values['full-backup-storage'])
    throw new BrError('the test BR does not simulate a restore of the log alone (--start-ts without --full-backup-storage)');
  const restoredTs = parseTS(values['restored-ts']);
  if (values['check-requirements']) versionCheck(process.env.BR_SIM_TIKV_VERSION ?? BR_VERSION);
  // RunStreamRestore: the log's storage, then the snapshot's (getFullBackupTS).
  const stream = await logRange(s3Client(parseStorage(values.storage, values)));
  const full = await readBackup(s3Client(parseStorage(values['full-backup-storage'], values)), values['crypter.method']);
  if (full.clusterId !== stream.clusterId)
    throw invalid(
      `the full snapshot(from cluster ID:${full.clusterId}) and log(from cluster ID:${stream.clusterId}) come from different cluster.`,
    );
  const startTs = full.endVersion;
  if (startTs < stream.min)
    throw invalid(
      `it has gap between full backup ts:${startTs}(${tsTime(startTs)}) and log backup ts:${stream.min}(${tsTime(stream.min)}). `,
    );
  const target = restoredTs === 0n ? stream.max : restoredTs;
  if (!(stream.min <= startTs && startTs <= target && target <= stream.max)) {
    throw invalid(
      `restore log from ${startTs}(${tsTime(startTs)}) to ${target}(${tsTime(target)}),  but the current existed log from ${stream.min}(${tsTime(stream.min)}) to ${stream.max}(${tsTime(stream.max)})`,
    );
  }
  log('INFO', 'start point in time restore', {
    'restore-from': startTs,
    'restore-to': target,
    'log-min-ts': stream.min,
    'log-max-ts': stream.max,
  });
  // createLogClient parses the log's storage again, with the options as the snapshot's URL left them,
  // and InstallLogFileManager reads the log's metadata from it (log_file_manager.go `loadShiftTS`,
  // stream.FastUnmarshalMetaData walking `v1/backupmeta/`), before the snapshot is restored.
  await s3Client(parseStorage(values.storage, values)).list('v1/backupmeta/');
  const filter = tableFilter(values.filter, values['case-sensitive']);
  await snapshotRestore('full', 'Full Restore', { ...values, storage: values['full-backup-storage'] }, filter, changed.has('filter'));
  const targetEnd = tso();
  log('INFO', 'restore log success summary', {
    'total-take': goDuration(process.hrtime.bigint() - START),
    'source-start-point': startTs,
    'source-end-point': target,
    'target-end-point': targetEnd,
    'source-start': JSON.stringify(tsTime(startTs)),
    'source-end': JSON.stringify(tsTime(target)),
    'target-end': JSON.stringify(tsTime(targetEnd)),
    'total-kv-count': 0,
    'skipped-kv-count-by-checkpoint': 0,
    'total-size': '0B',
    'skipped-size-by-checkpoint': '0B',
    'average-speed (log)': '0B/s',
  });
}

async function main(argv) {
  const [command, sub, ...rest] = argv;
  if (command === 'backup') return backup(sub, rest);
  if (command === 'restore') return restore(sub, rest);
  if (command === 'log') return logCommand(sub, rest);
  throw new BrError(`unknown command "${command}" for "br"`);
}

main(process.argv.slice(2)).then(
  () => process.exit(0),
  (e) => {
    const message = e instanceof BrError ? e.message : `internal error: ${e?.stack ?? e}`;
    process.stderr.write(`Error: ${message}\n`);
    log('ERROR', 'br failed', { error: JSON.stringify(message) });
    process.exit(1);
  },
);
