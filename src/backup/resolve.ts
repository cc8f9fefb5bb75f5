/**
 * A Backup, BackupSchedule or Restore document as the renderer and the controller act on it: storage
 * checked, defaults applied, what is not carried out refused. One document at a time; tying each to its
 * TidbCluster is `link.ts`'s.
 */
import type { SpecIssue } from '../tidbcluster/errors';
import { logBackupOfSchedule, names } from '../tidbcluster/names';
import type { CleanPolicy } from '../tidbcluster/contract';
import { parseTs, type TsZone } from '../base/tso';
import { imageProblem } from '../tidbcluster/api-rules';
import { brSettingsIssues } from './br-flags';
import { OLDEST_KUBE_MINOR } from '../tidbcluster/kube-version';
import { cronProblem } from './cron';
import { brPodIssues } from './job-pod';
import { removalIssue, retentionOf, type Retention } from './retention';
import { resolveStorage, type ResolvedStorage } from './storage';
import type { BRConfig, Backup, BackupSchedule, BackupSpec, JobPodSettings, Restore, StorageProvider } from './types';

/** The TidbCluster an operation acts on. */
export interface ClusterRef {
  readonly name: string;
  /** @default the operation's own namespace */
  readonly namespace?: string;
}

interface OperationBase {
  readonly name: string;
  /** @default none (objects take the namespace they are applied to) */
  readonly namespace?: string;
  readonly cluster: ClusterRef;
  readonly labels: Readonly<Record<string, string>>;
}

/** What one BR Job does, and in what Pod. */
export interface BrJob {
  readonly storage: ResolvedStorage;
  readonly br: BRConfig;
  readonly pod: JobPodSettings;
  readonly backupType: 'full' | 'db' | 'table';
  /** BR's `--filter` rules. */
  readonly tableFilter: readonly string[];
  /** The BR image, once the operation is tied to its cluster (`link.ts`). @default none */
  readonly image?: string;
}

/** A snapshot backup (BR's `backup full|db|table`, once), or a log backup task kept in a state. */
export interface ResolvedBackup extends OperationBase, BrJob {
  readonly kind: 'Backup';
  /** Snapshot: BR's `--backupts`. @default none (now) */
  readonly commitTs?: string;
  /** A log backup (`backupMode: log`): the task BR keeps, named like the document. @default none (a snapshot backup) */
  readonly log?: LogBackup;
}

/** The state a log backup task is kept in, from `logSubcommand` and `logStop`. */
export type LogTaskState = 'running' | 'paused' | 'stopped';

/** A log backup (PITR) task as its document declares it. */
export interface LogBackup {
  /**
   * tidb-operator's `ParseLogBackupSubcommand` (pkg/apis/pingcap/v1alpha1/backup.go) read as a state:
   * `log-start` (or nothing) running, `log-pause` paused, `log-stop` or `logStop: true` stopped.
   */
  readonly state: LogTaskState;
  /** `br log start --start-ts`, from `commitTs`. @default none (now) */
  readonly startTs?: string;
  /**
   * `logTruncateUntil` as a TSO: the log before it is removed (`br log truncate --until`), once the
   * task's checkpoint has passed it, as the operator's `log-truncate`. @default none
   */
  readonly truncateUntil?: string;
  /**
   * Each start writes into a new folder under the prefix, `log-<the start's UTC time,
   * 2006-01-02t15-04-05>`, as a BackupSchedule's log backup does (tidb-operator
   * pkg/backup/backupschedule/backup_schedule_manager.go, `buildLogBackup`). @default false (the prefix itself)
   */
  readonly timestamped?: boolean;
}

export interface ResolvedSchedule extends OperationBase {
  readonly kind: 'BackupSchedule';
  readonly schedule: string;
  readonly pause: boolean;
  /** `maxBackups` or `maxReservedTime`: the controller removes older backups from the storage. @default none (keep all) */
  readonly retention?: Retention;
  /** Each run's backup: the template's settings, with the schedule's storage when it has one. */
  readonly backup: BrJob;
  /**
   * `logBackupTemplate`: the log backup kept beside the snapshots, named `log-<schedule>` as the
   * operator names it (`GetLogBackupCRDName`). @default none
   */
  readonly logBackup?: ResolvedBackup;
}

export interface ResolvedRestore extends OperationBase, BrJob {
  readonly kind: 'Restore';
  /** Retries of the restore Job. */
  readonly backoffLimit: number;
  /** A point-in-time restore (`restoreMode: pitr`): the log in `storage`, replayed on a snapshot. @default none (a snapshot restore) */
  readonly pitr?: PointInTime;
}

/** What a point-in-time restore (`br restore point`) needs besides the log backup's storage. */
export interface PointInTime {
  /** `--restored-ts`: the TSO, or time with its zone, to restore to. @default none (the end of the log) */
  readonly restoredTs?: string;
  /** `--full-backup-storage`: the snapshot backup the log is replayed on (`pitrFullBackupStorageProvider`). */
  readonly fullBackup: ResolvedStorage;
}

export type ResolvedOperation = ResolvedBackup | ResolvedSchedule | ResolvedRestore;

/** The Job's (and its ConfigMap's) name of a one-shot Backup or Restore: `backup-<name>`, `restore-<name>`. */
export function operationJobName(op: { readonly kind: 'Backup' | 'Restore'; readonly name: string }): string {
  return names.operationJob(op.kind, op.name);
}

/** Options the whole render shares. */
export interface OperationOptions {
  /** The `--namespace` of `render`, for documents that name none. @default none */
  readonly namespace?: string;
  /** The Kubernetes minor rendered for, whose rules the Pod fields follow. @default 31 (the oldest supported) */
  readonly kubeMinor?: number;
}

export function resolveBackup(doc: Backup, options: OperationOptions = {}): { value?: ResolvedBackup; issues: SpecIssue[] } {
  const s = doc.spec;
  const issues: SpecIssue[] = backupModeIssues(s, 'spec');
  const job = brJob(s, s, 'spec', 'spec', issues, options);
  const log = s.backupMode === 'log' ? logBackupOf(s, 'spec', issues) : undefined;
  // `br backup --backupts` reads a time without a zone in the Pod's (br/pkg/task/backup.go).
  if (s.backupMode !== 'log') issues.push(...tsIssues(s.commitTs, 'spec.commitTs', 'optional'));
  if (issues.length > 0 || !job) return { issues };
  const commitTs = s.commitTs !== undefined && s.commitTs !== '' ? s.commitTs : undefined;
  if (log)
    return {
      value: { kind: 'Backup', ...base(doc, options), ...job, log: { ...log, ...(commitTs !== undefined && { startTs: commitTs }) } },
      issues,
    };
  return { value: { kind: 'Backup', ...base(doc, options), ...job, ...(commitTs !== undefined && { commitTs }) }, issues };
}

export function resolveSchedule(doc: BackupSchedule, options: OperationOptions = {}): { value?: ResolvedSchedule; issues: SpecIssue[] } {
  const s = doc.spec;
  const issues: SpecIssue[] = [];
  const cron = cronProblem(s.schedule ?? '');
  if (cron) issues.push({ path: 'spec.schedule', message: cron });
  const retention = retentionOf(s, issues);
  if (!s.backupTemplate) {
    issues.push({ path: 'spec.backupTemplate', message: 'required field is missing: what each run backs up' });
    return { issues };
  }
  const t = s.backupTemplate;
  issues.push(...backupModeIssues(t, 'spec.backupTemplate', { cleanPolicy: true }));
  const cleanPolicy: CleanPolicy = t.cleanPolicy ?? 'Retain';
  if (t.backupMode === 'log')
    issues.push({
      path: 'spec.backupTemplate.backupMode',
      message: "a schedule's runs are snapshot backups; a log backup goes in spec.logBackupTemplate",
    });
  if (s.br !== undefined) issues.push({ path: 'spec.br', message: 'give BR settings in spec.backupTemplate.br' });
  if (t.commitTs !== undefined)
    issues.push({
      path: 'spec.backupTemplate.commitTs',
      message: 'a schedule backs up the data as it is when each run starts; commitTs would make every run the same backup',
    });
  // The schedule's own storage, when it names one, is where every run goes (operator v1.6+).
  const own = hasStorage(s);
  const job = brJob(t, own ? s : t, 'spec.backupTemplate', own ? 'spec' : 'spec.backupTemplate', issues, options);
  if (own && hasStorage(t))
    issues.push({ path: 'spec.backupTemplate', message: 'storage is given both in spec and in spec.backupTemplate; give it once' });
  // Retention removes data only under Delete and OnFailure; under Retain it needs no keys, on any storage.
  const removal =
    retention && job && cleanPolicy !== 'Retain' ? removalIssue(job.storage, cleanPolicy, own ? 'spec' : 'spec.backupTemplate') : undefined;
  if (removal) issues.push(removal);
  const logBackup = s.logBackupTemplate !== undefined ? scheduleLogBackup(doc, s.logBackupTemplate, options, issues) : undefined;
  if (issues.length > 0 || !job) return { issues };
  return {
    value: {
      kind: 'BackupSchedule',
      ...base({ metadata: doc.metadata, spec: { br: t.br } }, options),
      schedule: s.schedule.trim(),
      pause: s.pause === true,
      backup: job,
      ...(retention && { retention: { ...retention, cleanPolicy } }),
      ...(logBackup && { logBackup }),
    },
    issues,
  };
}

export function resolveRestore(doc: Restore, options: OperationOptions = {}): { value?: ResolvedRestore; issues: SpecIssue[] } {
  const s = doc.spec;
  const issues: SpecIssue[] = [];
  if (s.restoreMode === 'volume-snapshot')
    issues.push({
      path: 'spec.restoreMode',
      message: 'not supported: volume-snapshot restores (EBS snapshots across Kubernetes clusters) are not carried out',
    });
  for (const f of ['pitrRestoredTs', 'pitrFullBackupStorageProvider'] as const) {
    if (s[f] !== undefined && s.restoreMode !== 'pitr') issues.push({ path: `spec.${f}`, message: 'only counts with restoreMode: pitr' });
  }
  const backoffLimit = s.backoffLimit ?? 0;
  if (!Number.isInteger(backoffLimit) || backoffLimit < 0)
    issues.push({
      path: 'spec.backoffLimit',
      message: `expected a whole number of retries, 0 or more, got ${JSON.stringify(s.backoffLimit)}`,
    });
  const job = brJob(s, s, 'spec', 'spec', issues, options);
  const pitr = s.restoreMode === 'pitr' ? pointInTime(s, job?.storage, issues) : undefined;
  if (issues.length > 0 || !job) return { issues };
  return { value: { kind: 'Restore', ...base(doc, options), ...job, backoffLimit, ...(pitr && { pitr }) }, issues };
}

/**
 * A schedule's `logBackupTemplate` as the log backup `log-<schedule>`: the template's storage (the
 * schedule's when the template names none), each start into its own `log-<time>` folder. `pause`
 * does not touch it, as with the operator, whose paused schedule leaves its log backup running.
 */
function scheduleLogBackup(doc: BackupSchedule, t: BackupSpec, options: OperationOptions, issues: SpecIssue[]): ResolvedBackup | undefined {
  const at = 'spec.logBackupTemplate';
  const before = issues.length;
  if (t.backupMode !== 'log')
    issues.push({
      path: `${at}.backupMode`,
      message: `expected log: the template of the schedule's log backup, got ${JSON.stringify(t.backupMode ?? 'snapshot')}`,
    });
  issues.push(...backupModeIssues(t, at));
  const own = !hasStorage(t) && hasStorage(doc.spec);
  const job = brJob(t, own ? doc.spec : t, at, own ? 'spec' : at, issues, options);
  const log = logBackupOf(t, at, issues);
  if (issues.length > before || !job || !log) return undefined;
  const startTs = t.commitTs !== undefined && t.commitTs !== '' ? t.commitTs : undefined;
  const name = logBackupOfSchedule(doc.metadata.name).task;
  return {
    kind: 'Backup',
    ...base({ metadata: { ...doc.metadata, name }, spec: { br: t.br } }, options),
    ...job,
    log: { ...log, ...(startTs !== undefined && { startTs }), timestamped: true },
  };
}

/**
 * What a backup's mode allows. `cleanPolicy` is carried out for a schedule's runs, by its retention
 * (`allow.cleanPolicy`); a one-shot Backup's data is never removed when its document leaves Git.
 */
function backupModeIssues(s: BackupSpec, at: string, allow: { cleanPolicy?: boolean } = {}): SpecIssue[] {
  const issues: SpecIssue[] = [];
  if (s.backupMode === 'volume-snapshot')
    issues.push({
      path: `${at}.backupMode`,
      message: 'not supported: volume-snapshot backups (EBS snapshots across Kubernetes clusters) are not carried out',
    });
  for (const f of ['logSubcommand', 'logStop', 'logTruncateUntil'] as const) {
    if (s[f] !== undefined && s.backupMode !== 'log') issues.push({ path: `${at}.${f}`, message: 'only counts with backupMode: log' });
  }
  if (!allow.cleanPolicy && s.cleanPolicy !== undefined && s.cleanPolicy !== 'Retain')
    issues.push({
      path: `${at}.cleanPolicy`,
      message: "removing a backup's data when its document leaves Git is not carried out yet; the data stays (Retain), remove cleanPolicy",
    });
  return issues;
}

/**
 * `restoreMode: pitr`, as the operator's backup-manager runs it (cmd/backup-manager/app/restore/
 * restore.go, `restoreData`): `br restore point` from the log backup in the Restore's storage, on the
 * snapshot in `pitrFullBackupStorageProvider`, to `pitrRestoredTs`. BR reads both storages with the one
 * set of credentials and flags of the Pod: the snapshot must be on the same kind of storage, with the
 * same Secret (or volume).
 */
function pointInTime(s: Restore['spec'], log: ResolvedStorage | undefined, issues: SpecIssue[]): PointInTime | undefined {
  const at = 'spec.pitrFullBackupStorageProvider';
  const before = issues.length;
  if (s.backupType !== undefined && s.backupType !== 'full')
    issues.push({
      path: 'spec.backupType',
      message: 'a point-in-time restore takes tableFilter rules, not backupType db or table: br restore point has no --db or --table',
    });
  issues.push(...tsIssues(s.pitrRestoredTs, 'spec.pitrRestoredTs'));
  if (!s.pitrFullBackupStorageProvider) {
    issues.push({
      path: at,
      message:
        'required with restoreMode: pitr: the snapshot backup the log is replayed on (logRestoreStartTs, a restore of the log alone, is not carried out yet)',
    });
    return undefined;
  }
  const { storage: full, issues: fullIssues } = resolveStorage(s.pitrFullBackupStorageProvider, at);
  issues.push(...fullIssues);
  if (full && log) {
    if (full.provider !== log.provider)
      issues.push({
        path: `${at}.${full.provider}`,
        message: `expected ${log.provider} storage like the log backup's: the restore's Job gives BR the log storage's credentials only, which do not reach a snapshot on ${full.provider}; copy the snapshot to ${log.provider} storage they reach`,
      });
    else if (
      full.provider === 'local' && log.provider === 'local'
        ? full.bucket !== log.bucket
        : (full.secretName ?? '') !== (log.secretName ?? '')
    ) {
      const what =
        full.provider === 'local'
          ? `volume ${JSON.stringify(log.bucket)}`
          : log.secretName
            ? `secretName ${JSON.stringify(log.secretName)}`
            : 'no secretName';
      issues.push({
        path: `${at}.${full.provider}.${full.provider === 'local' ? 'volume.name' : 'secretName'}`,
        message: `expected the log backup's ${what}: BR reads both storages with one set of credentials`,
      });
    }
  }
  if (issues.length > before || !full) return undefined;
  return { fullBackup: full, ...(s.pitrRestoredTs !== undefined && s.pitrRestoredTs !== '' && { restoredTs: s.pitrRestoredTs }) };
}

/** Why BR refuses the time at `path` (`ParseTSString`, src/base/tso.ts); none when it is unset. */
function tsIssues(value: string | undefined, path: string, zone: TsZone = 'required'): SpecIssue[] {
  const problem = value === undefined || value === '' ? undefined : parseTs(value, zone).problem;
  return problem === undefined ? [] : [{ path, message: problem }];
}

/** The state a log backup's task is kept in, and what `br log start` cannot take. */
function logBackupOf(s: BackupSpec, at: string, issues: SpecIssue[]): Omit<LogBackup, 'startTs'> | undefined {
  const before = issues.length;
  issues.push(...tsIssues(s.logTruncateUntil, `${at}.logTruncateUntil`));
  issues.push(...tsIssues(s.commitTs, `${at}.commitTs`));
  if (s.backupType !== undefined && s.backupType !== 'full')
    issues.push({
      path: `${at}.backupType`,
      message: 'a log backup takes tableFilter rules, not backupType db or table: br log start has no --db or --table',
    });
  // `--concurrency` is one of BR's common flags, which every `br log` command takes (br/pkg/task/common.go
  // `DefineCommonFlags`); `--timeago` belongs to `br backup` alone (backup.go `DefineBackupFlags`).
  if (s.br?.timeAgo !== undefined)
    issues.push({ path: `${at}.br.timeAgo`, message: 'is a snapshot backup setting; br log start has no such flag' });
  if (issues.length > before) return undefined;
  // Both at once the CRD refuses (its x-kubernetes-validations rule on logStop).
  const state: LogTaskState =
    s.logSubcommand === 'log-pause'
      ? 'paused'
      : s.logSubcommand === 'log-stop' || (s.logSubcommand === undefined && s.logStop === true)
        ? 'stopped'
        : 'running';
  const until = s.logTruncateUntil !== undefined && s.logTruncateUntil !== '' ? parseTs(s.logTruncateUntil, 'required').tso : undefined;
  return { state, ...(until !== undefined && { truncateUntil: until }) };
}

/** The BR Job settings of a Backup or Restore spec, storage read from `storageSpec`. */
function brJob(
  s: BackupSpec | Restore['spec'],
  storageSpec: StorageProvider,
  at: string,
  storageAt: string,
  issues: SpecIssue[],
  options: OperationOptions,
): BrJob | undefined {
  const given: string | undefined = s.backupType;
  const backupType = given === undefined || given === '' ? 'full' : given;
  if (backupType !== 'full' && backupType !== 'db' && backupType !== 'table') {
    issues.push({ path: `${at}.backupType`, message: `expected one of full, db, table, got ${JSON.stringify(s.backupType)}` });
  }
  const br = s.br;
  if (backupType !== 'full' && !br?.db) issues.push({ path: `${at}.br.db`, message: `required with backupType: ${backupType}` });
  if (backupType === 'table' && !br?.table) issues.push({ path: `${at}.br.table`, message: 'required with backupType: table' });
  if (backupType !== 'table' && br?.table) issues.push({ path: `${at}.br.table`, message: 'only counts with backupType: table' });
  if (backupType === 'full' && br?.db) issues.push({ path: `${at}.br.db`, message: 'only counts with backupType: db or table' });
  if (backupType !== 'full' && s.tableFilter && s.tableFilter.length > 0)
    issues.push({ path: `${at}.tableFilter`, message: 'only counts with backupType: full (BR takes --filter or --db/--table, not both)' });
  if (!br?.cluster) issues.push({ path: `${at}.br.cluster`, message: 'required field is missing: the TidbCluster to back up or restore' });
  issues.push(...brSettingsIssues(br, `${at}.br`));
  const tool = s.toolImage !== undefined && s.toolImage !== '' ? imageProblem(s.toolImage) : undefined;
  if (tool) issues.push({ path: `${at}.toolImage`, message: tool });
  const { storage, issues: storageIssues } = resolveStorage(storageSpec, storageAt);
  issues.push(...storageIssues);
  issues.push(...brPodIssues(s, at, storage, 'backupMode' in s && s.backupMode === 'log', options.kubeMinor ?? OLDEST_KUBE_MINOR));
  if (!storage || !br) return undefined;
  const pod: JobPodSettings = pick(s);
  return { storage, br, pod, backupType: backupType as BrJob['backupType'], tableFilter: s.tableFilter ?? [] };
}

const POD_KEYS = [
  'resources',
  'env',
  'affinity',
  'tolerations',
  'imagePullSecrets',
  'serviceAccount',
  'priorityClassName',
  'podSecurityContext',
  'automountServiceAccountToken',
  'additionalVolumes',
  'additionalVolumeMounts',
  'toolImage',
] as const satisfies readonly (keyof JobPodSettings)[];

function pick(s: JobPodSettings): JobPodSettings {
  const out: Record<string, unknown> = {};
  for (const k of POD_KEYS) if (s[k] !== undefined && s[k] !== null) out[k] = s[k];
  return out as JobPodSettings;
}

function hasStorage(s: StorageProvider): boolean {
  return (['s3', 'gcs', 'azblob', 'local'] as const).some((p) => s[p] !== undefined && s[p] !== null);
}

function base(doc: { metadata: Backup['metadata']; spec: { br?: BRConfig } }, options: OperationOptions): OperationBase {
  const namespace = doc.metadata.namespace ?? options.namespace;
  const br = doc.spec.br;
  const clusterNamespace = br?.clusterNamespace || namespace;
  return {
    name: doc.metadata.name,
    ...(namespace !== undefined && { namespace }),
    cluster: { name: br?.cluster ?? '', ...(clusterNamespace !== undefined && { namespace: clusterNamespace }) },
    labels: doc.metadata.labels ?? {},
  };
}
