/**
 * The risks of a change to a cluster's backup documents, read from what the renderer gives the
 * controller (the discovery Deployment's `TIDB_GITOPS_CLUSTER`: each schedule's retention), from the
 * schedules' CronJobs and from the one-shot operations' ConfigMaps: retention that starts removing, or
 * removes more of, a schedule's backups; a schedule that goes (no new backups; the old ones stay, and
 * retention no longer touches them); a Restore, always; and a log backup paused, stopped or removed.
 */
import { BACKUP_LABEL, logCommandKey, OPERATION_KEY } from '../tidbcluster/names';
import { CONTROLLER_ENV, parseControllerClusterInfo, removesData, type BackupRetentionInfo } from '../tidbcluster/contract';
import { kindOf, labelsOf, nameOf, type ClusterModel, type KubeObject } from './model';
import { RISK, type Risk } from './report';
import { isPlainObject } from './values';
import { compareCodeUnits } from '../base/order';

/** The schedules' risks, in schedule order. */
export function backupRisks(before: ClusterModel | undefined, after: ClusterModel): Risk[] {
  const was = schedulesOf(before);
  const now = schedulesOf(after);
  const keptBefore = retentionOf(before);
  const keptNow = retentionOf(after);
  const out: Risk[] = [];
  for (const name of [...new Set([...was.keys(), ...now.keys()])].sort()) {
    if (was.has(name) && !now.has(name)) {
      out.push({
        id: RISK.backupScheduleRemoved,
        component: 'backup',
        message: `BackupSchedule ${name} is removed (CronJob ${nameOf(was.get(name)!)}): no new backups are taken, and those it made stay in the storage, no longer removed by its retention.`,
      });
      continue;
    }
    const old = keptBefore[name];
    const neu = keptNow[name];
    // A new schedule has no runs yet: its retention removes nothing now.
    if (!was.has(name) || !neu || !deletesMore(old, neu)) continue;
    const where = `${URL_SCHEME[neu.storageKind ?? 's3']}://${neu.bucket}/${neu.prefix}${neu.prefix ? '/' : ''}`;
    const what =
      neu.cleanPolicy === 'OnFailure'
        ? `the partial backups of this schedule's failed runs from ${where} for good (expired good backups leave the records and their data stays: cleanPolicy OnFailure)`
        : `this schedule's older good backups, and failed runs' partial ones, from ${where} for good (cleanPolicy Delete; the newest good backup always stays)`;
    out.push({
      id: RISK.backupRetention,
      component: 'backup',
      message:
        `BackupSchedule ${name} now keeps ${describe(neu)}${old ? ` (was ${describe(old)}${old.cleanPolicy !== neu.cleanPolicy ? `, cleanPolicy ${old.cleanPolicy ?? 'Retain'}` : ''})` : ' (it kept every backup)'}: ` +
        `on its next pass the controller removes ${what}. Backups made by hand or before a move are never touched.`,
    });
  }
  return out;
}

/**
 * A Restore added, or changed: the controller runs it once, writing the backup's data into the live
 * cluster. A changed one that already ran is not run again, which the risk says too.
 */
export function restoreRisks(before: ClusterModel | undefined, after: ClusterModel): Risk[] {
  const was = restoresOf(before);
  const out: Risk[] = [];
  for (const [name, cm] of [...restoresOf(after)].sort(([a], [b]) => compareCodeUnits(a, b))) {
    const old = was.get(name);
    const job = jobOf(cm);
    if (old && jobOf(old) === job) continue;
    const what = describeRestore(job);
    out.push({
      id: RISK.restore,
      component: 'restore',
      message: old
        ? `Restore ${name.replace(/^restore-/, '')} changed: a Restore runs once, so if it already ran this change does nothing (give it a new name to restore again); if it has not, it runs as changed: ${what}.`
        : `Restore ${name.replace(/^restore-/, '')} is added: once this lands, the controller ${what}, once, when the cluster is ready and no other backup or restore runs.`,
    });
  }
  return out;
}

/**
 * A log backup that stops covering new writes: paused or stopped in its document, or its document
 * removed (the controller stops the task). The log written so far stays in the storage; no point in
 * time after this can be restored to until it runs again.
 */
export function logBackupRisks(before: ClusterModel | undefined, after: ClusterModel): Risk[] {
  const was = logBackupsOf(before);
  const now = logBackupsOf(after);
  const out: Risk[] = [];
  for (const [name, old] of [...was].sort(([a], [b]) => compareCodeUnits(a, b))) {
    const neu = now.get(name);
    // Already stopped, running on, or as paused as before: nothing more is lost.
    if (old.state === 'stopped' || neu?.state === 'running' || neu?.state === old.state) continue;
    const what = !neu
      ? 'is removed: the controller stops its task (br log stop)'
      : neu.state === 'paused'
        ? 'is paused (br log pause)'
        : 'is stopped (br log stop)';
    out.push({
      id: RISK.logBackup,
      component: 'backup',
      message: `Log backup ${old.task} ${what}: what it wrote stays in ${old.storage}, but no point in time after this can be restored to${neu?.state === 'paused' ? ' until it is resumed' : ''}.`,
    });
  }
  return out;
}

/** The log backups' ConfigMaps, by name: task, state and storage. */
function logBackupsOf(cluster: ClusterModel | undefined): Map<string, { task: string; state: string; storage: string }> {
  const out = new Map<string, { task: string; state: string; storage: string }>();
  for (const o of cluster?.objects.values() ?? []) {
    const name = labelsOf(o)[BACKUP_LABEL.operation];
    const data = (o as { data?: unknown }).data;
    if (kindOf(o) !== 'ConfigMap' || !name || !isPlainObject(data) || typeof data[OPERATION_KEY.logTask] !== 'string') continue;
    try {
      const spec = JSON.parse(data[OPERATION_KEY.logTask] as string) as { task?: string; state?: string };
      const start = JSON.parse(String(data[logCommandKey('start')] ?? '{}')) as {
        spec?: { template?: { spec?: { containers?: { env?: { name: string; value?: string }[] }[] } } };
      };
      const storage = start.spec?.template?.spec?.containers?.[0]?.env?.find((e) => e.name === 'BR_STORAGE')?.value ?? 'its storage';
      out.set(name, { task: spec.task ?? name, state: spec.state ?? 'running', storage });
    } catch {
      // Not one this renderer wrote: no risk read from it.
    }
  }
  return out;
}

/** The one-shot Restores' ConfigMaps, by name (`restore-<name>`). */
function restoresOf(cluster: ClusterModel | undefined): Map<string, KubeObject> {
  const out = new Map<string, KubeObject>();
  for (const o of cluster?.objects.values() ?? []) {
    const name = labelsOf(o)[BACKUP_LABEL.operation];
    if (kindOf(o) === 'ConfigMap' && name?.startsWith('restore-')) out.set(name, o);
  }
  return out;
}

function jobOf(cm: KubeObject): string {
  const data = (cm as { data?: unknown }).data;
  return isPlainObject(data) && typeof data[OPERATION_KEY.job] === 'string' ? (data[OPERATION_KEY.job] as string) : '';
}

/** `restores <storage> into the cluster (BR restore full)`, from the Job's BR arguments and storage. */
function describeRestore(jobJson: string): string {
  try {
    const job = JSON.parse(jobJson) as {
      spec?: { template?: { spec?: { containers?: { args?: string[]; env?: { name: string; value?: string }[] }[] } } };
    };
    const c = job.spec?.template?.spec?.containers?.[0];
    const storage = c?.env?.find((e) => e.name === 'BR_STORAGE')?.value ?? '(unknown storage)';
    return `restores ${storage} into the cluster (BR ${(c?.args ?? []).slice(0, 2).join(' ')})`;
  } catch {
    return 'restores a backup into the cluster';
  }
}

/** The scheme of BR's storage URLs (src/backup/br-args.ts), which the risk names the storage by. */
const URL_SCHEME: Readonly<Record<NonNullable<BackupRetentionInfo['storageKind']>, string>> = { s3: 's3', gcs: 'gcs', azblob: 'azure' };

/**
 * Whether `neu` removes data from the storage that `old` kept: it removes data at all (cleanPolicy
 * Delete or OnFailure; Retain never does), and `old` did not, removed less (OnFailure before Delete),
 * or kept more (a looser limit, or none).
 */
function deletesMore(old: BackupRetentionInfo | undefined, neu: BackupRetentionInfo): boolean {
  if (!removesData(neu)) return false;
  if (!old || !removesData(old)) return true;
  if (old.cleanPolicy === 'OnFailure' && neu.cleanPolicy === 'Delete') return true;
  if (neu.maxBackups !== undefined) return old.maxBackups === undefined || neu.maxBackups < old.maxBackups;
  return old.maxReservedSeconds === undefined || (neu.maxReservedSeconds ?? 0) < old.maxReservedSeconds;
}

function describe(r: BackupRetentionInfo): string {
  if (r.maxBackups !== undefined) return `the ${r.maxBackups} newest backup${r.maxBackups === 1 ? '' : 's'}`;
  const s = r.maxReservedSeconds ?? 0;
  return `the backups of the last ${s % 86_400 === 0 ? `${s / 86_400} day${s === 86_400 ? '' : 's'}` : s % 3600 === 0 ? `${s / 3600} hours` : `${s} seconds`}`;
}

/** The schedules' CronJobs, by schedule name. */
function schedulesOf(cluster: ClusterModel | undefined): Map<string, KubeObject> {
  const out = new Map<string, KubeObject>();
  for (const o of cluster?.objects.values() ?? []) {
    const name = labelsOf(o)[BACKUP_LABEL.schedule];
    if (kindOf(o) === 'CronJob' && name) out.set(name, o);
  }
  return out;
}

/** Each schedule's retention, from the controller's `TIDB_GITOPS_CLUSTER`. */
function retentionOf(cluster: ClusterModel | undefined): Record<string, BackupRetentionInfo> {
  const discovery = cluster?.components.get('discovery')?.workload;
  const containers =
    (discovery as { spec?: { template?: { spec?: { containers?: unknown[] } } } } | undefined)?.spec?.template?.spec?.containers ?? [];
  for (const c of containers) {
    const env = isPlainObject(c) && Array.isArray(c.env) ? c.env : [];
    const value = env.find(
      (e): e is { value: string } => isPlainObject(e) && e.name === CONTROLLER_ENV.cluster && typeof e.value === 'string',
    )?.value;
    if (value === undefined) continue;
    try {
      return { ...parseControllerClusterInfo(value).backupRetention };
    } catch {
      return {};
    }
  }
  return {};
}
