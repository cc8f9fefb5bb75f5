/**
 * Which of a schedule's backups retention removes (`maxBackups`, `maxReservedTime`), from the run
 * records alone: a backup this schedule did not make is never a candidate, whatever else the bucket
 * holds. Pure.
 *
 * - Only `Complete` runs count as backups to keep; the newest of them is always kept, whatever the
 *   limits say.
 * - `maxBackups: n` keeps the n newest complete runs; `maxReservedTime` keeps those that started
 *   within it (tidb-operator pkg/backup/backupschedule/backup_schedule_manager.go,
 *   `backupGCByMaxBackups` and `calculateExpiredBackups`, minus their counting of running and failed
 *   backups as kept ones).
 * - `maxReservedTime` beside a log backup keeps every point of the window restorable, as the
 *   operator's `calculateExpiredBackupsWithLogBackup` does: the window ends at the later of the log's
 *   checkpoint and the newest snapshot, the snapshots taken after its start are kept, and so is the
 *   newest one taken before it, the one the log is replayed on from the window's start (and truncated
 *   to). While the log backup's checkpoint cannot be read, nothing expires by time.
 * - A `Failed` or `Lost` run's folder goes once a newer run completed: it holds a partial backup
 *   nothing can restore from.
 * - What happens to an expired run's data is the schedule's `cleanPolicy`, as tidb-operator's cleaner
 *   decides it for a Backup its retention deleted (pkg/apis/pingcap/v1alpha1/backup.go,
 *   `IsCleanCandidate` and `NeedRetainData`): `Retain` (the default) releases it, the run leaving the
 *   records with its storage still named; `Delete` removes it; `OnFailure` removes a failed or lost
 *   run's partial backup and releases a complete one.
 * - A folder is removed only when the run's record shows it is the run's own ({@link ownFolder}), and
 *   no other run's record names it, a folder inside it or one around it (a run under way, a kept
 *   backup, any run of another schedule); else the run is released, its data kept.
 */
import { logBackupOfSchedule } from '../../tidbcluster/names';
import type { BackupRetentionInfo, CleanPolicy } from '../../tidbcluster/contract';
import { newestFirst, type BackupRun } from '../records/backup-runs';
import type { ClusterInfo } from '../model/cluster';
import { tsoMillis } from './log-backups';

/** An expired run, and what retention does with its data. */
export type Expired =
  | {
      readonly run: BackupRun;
      readonly action: 'delete';
      /** The folder's key prefix in the bucket, ending in `/`. */
      readonly folder: string;
    }
  | {
      readonly run: BackupRun;
      readonly action: 'release';
      /** Why the data stays though the policy removes it: the folder may not be the run's alone. @default none (the policy keeps it) */
      readonly kept?: string;
    };

/**
 * A schedule's log backup as retention sees it: none, one whose tasks could not be read this pass, or
 * one with its checkpoint's time (none when its task is not running: stopped, or not started yet).
 */
export type LogWindow = { readonly kind: 'none' } | { readonly kind: 'unknown' } | { readonly kind: 'log'; readonly checkpointMs?: number };

/** The runs of `schedule` whose data retention lets go now. */
export function expiredRuns(
  schedule: string,
  runs: Readonly<Record<string, BackupRun>>,
  policy: BackupRetentionInfo,
  now: number,
  log: LogWindow = { kind: 'none' },
): Expired[] {
  const mine = Object.values(runs)
    .filter((r) => r.schedule === schedule)
    .sort(newestFirst);
  const complete = mine.filter((r) => r.phase === 'Complete');
  if (complete.length === 0) return [];
  const newest = complete[0];
  const keep = new Set<BackupRun>([newest]);
  complete.forEach((r, i) => {
    if (policy.maxBackups !== undefined && i < policy.maxBackups) keep.add(r);
  });
  if (policy.maxReservedSeconds !== undefined) for (const r of reserved(complete, policy.maxReservedSeconds * 1000, now, log)) keep.add(r);
  // A folder that a kept backup, a run under way or any run of another schedule names, or one inside
  // or around it, is never removed (it may be that run's own): its expired run is released.
  const others = Object.values(runs).filter(
    (r) => (r.schedule !== schedule && r.phase !== 'Deleted') || (r.schedule === schedule && r.phase === 'Running') || keep.has(r),
  );
  const out: Expired[] = [];
  for (const r of mine) {
    const expired =
      r.phase === 'Complete' ? !keep.has(r) : (r.phase === 'Failed' || r.phase === 'Lost') && startedMs(r) < startedMs(newest);
    if (!expired) continue;
    if (!deletes(policy.cleanPolicy ?? 'Retain', r)) {
      out.push({ run: r, action: 'release' });
      continue;
    }
    const own = ownFolder(r, policy);
    const shared = typeof own === 'string' ? others.find((o) => o !== r && overlap(keyPrefixOf(o.storage, policy), own)) : undefined;
    if (typeof own !== 'string') out.push({ run: r, action: 'release', kept: own.why });
    else if (shared)
      out.push({
        run: r,
        action: 'release',
        kept: `its folder holds, or is held in, the folder of ${shared.job} (${shared.phase.toLowerCase()})`,
      });
    else out.push({ run: r, action: 'delete', folder: own });
  }
  return out;
}

/** Whether a policy removes an expired run's data. */
function deletes(policy: CleanPolicy, run: BackupRun): boolean {
  return policy === 'Delete' || (policy === 'OnFailure' && (run.phase === 'Failed' || run.phase === 'Lost'));
}

/** The URL schemes BR reads each provider's storage by (br/pkg/storage/parse.go, `ParseBackend`). */
const SCHEMES: Readonly<Record<string, readonly string[]>> = { s3: ['s3'], gcs: ['gcs', 'gs'], azblob: ['azure', 'azblob'] };

/**
 * The key prefix (ending in `/`) a storage URL names in the policy's bucket, under its prefix; else
 * undefined (another bucket or provider, the prefix itself, or above it).
 */
export function keyPrefixOf(
  storage: string | undefined,
  policy: Pick<BackupRetentionInfo, 'bucket' | 'prefix' | 'storageKind'>,
): string | undefined {
  if (!storage || policy.bucket === undefined || policy.prefix === undefined) return undefined;
  const m = /^([a-z0-9]+):\/\/([^/?]+)\/([^?]*)(\?.*)?$/.exec(storage);
  if (!m || !(SCHEMES[policy.storageKind ?? 's3'] ?? []).includes(m[1]) || m[2] !== policy.bucket) return undefined;
  const path = m[3].replace(/\/+$/, '');
  if (path.split('/').some((p) => p === '' || p === '.' || p === '..')) return undefined;
  const prefix = policy.prefix.replace(/^\/+|\/+$/g, '');
  if (prefix !== '' && !path.startsWith(`${prefix}/`)) return undefined;
  return `${path}/`;
}

/**
 * The folder of a run that is the run's own, as its key prefix; else why it may not be.
 *
 * - A schedule's runs write to `<prefix>/<schedule>/<cluster>-pd.<namespace>-2379-<time>-<uid>`,
 *   `<uid>` being the start of the run's Job UID (src/render/scripts/br.ts): no other schedule, no
 *   cluster of the same name in another Kubernetes cluster, and no other run writes there. The folder
 *   is the run's own when it sits under the schedule's folder and ends in the UID its record holds.
 * - Runs from before (and tidb-operator's) wrote to `<prefix>/<cluster>-pd.<namespace>-2379-<time>`,
 *   which a schedule of the same minute, or a cluster of the same name elsewhere, writes too. Only a
 *   complete run owns one: BR writes only into a folder without a backup in it
 *   (br/pkg/backup/client.go, `SetStorageAndCheckNotInUse`), so the run that failed is the one that
 *   found the folder taken, and its partial backup is left where it is.
 */
export function ownFolder(
  run: BackupRun,
  policy: Pick<BackupRetentionInfo, 'bucket' | 'prefix' | 'storageKind'>,
): string | { why: string } {
  const folder = keyPrefixOf(run.storage, policy);
  if (folder === undefined)
    return { why: run.storage ? `${run.storage} is not under the schedule's storage` : 'the run reported no storage path' };
  const prefix = (policy.prefix ?? '').replace(/^\/+|\/+$/g, '');
  const rest = (prefix === '' ? folder : folder.slice(prefix.length + 1)).replace(/\/$/, '').split('/');
  const time = scheduledTime(run.job);
  const uid = run.uid?.slice(0, 8).toLowerCase();
  const named = (name: string, suffix: string) => time !== undefined && name.endsWith(`-${time}${suffix}`);
  if (rest.length === 2 && rest[0] === run.schedule && uid !== undefined && /^[0-9a-f]{8}$/.test(uid) && named(rest[1], `-${uid}`))
    return folder;
  if (rest.length === 1 && named(rest[0], '')) {
    return run.phase === 'Complete'
      ? folder
      : { why: `a ${run.phase.toLowerCase()} run's folder in the layout shared with other schedules may hold another run's backup` };
  }
  return { why: `${run.storage} is not the folder this run's Job writes` };
}

/** Whether two key prefixes overlap: removing one removes some of the other. */
function overlap(a: string | undefined, b: string): boolean {
  return a !== undefined && (a.startsWith(b) || b.startsWith(a));
}

/**
 * The time a CronJob's Job was scheduled for, as a run's folder names it (`2006-01-02t15-04-05`,
 * UTC): the CronJob controller names the Job `<cronjob>-<minutes since the epoch>`.
 */
function scheduledTime(job: string): string | undefined {
  const m = /-(\d{1,12})$/.exec(job);
  if (!m) return undefined;
  return new Date(Number(m[1]) * 60_000).toISOString().slice(0, 19).replace('T', 't').replace(/:/g, '-');
}

/** The complete runs (newest first) `maxReservedTime` keeps. */
function reserved(complete: readonly BackupRun[], windowMs: number, now: number, log: LogWindow): BackupRun[] {
  if (log.kind === 'none') return complete.filter((r) => now - startedMs(r) <= windowMs);
  if (log.kind === 'unknown') return [...complete];
  const latest = Math.max(log.checkpointMs ?? -Infinity, ...complete.map(snapshotMs));
  const start = latest - windowMs;
  const inside = complete.filter((r) => snapshotMs(r) > start);
  const before = complete.filter((r) => snapshotMs(r) <= start).sort((a, b) => snapshotMs(b) - snapshotMs(a))[0];
  return before ? [...inside, before] : inside;
}

/** When a snapshot was taken: its BackupTS's physical time, else when its run started. */
function snapshotMs(r: BackupRun): number {
  return r.backupTS && /^\d+$/.test(r.backupTS) ? tsoMillis(BigInt(r.backupTS)) : startedMs(r);
}

function startedMs(r: BackupRun): number {
  const t = r.started ? Date.parse(r.started) : Number.NaN;
  return Number.isNaN(t) ? 0 : t;
}

/**
 * Up to where a schedule's log backup may be truncated: the BackupTS of the oldest snapshot of this
 * schedule still kept (its `Complete` runs; the expired ones go one a pass, so this only moves
 * forward). Log before it cannot be replayed on any snapshot left. Undefined while a kept run's
 * BackupTS is unknown, or no run completed: nothing is truncated on a guess.
 */
export function truncationPoint(schedule: string, runs: Readonly<Record<string, BackupRun>>): string | undefined {
  const kept = Object.values(runs).filter((r) => r.schedule === schedule && r.phase === 'Complete');
  if (kept.length === 0 || kept.some((r) => !r.backupTS || !/^\d+$/.test(r.backupTS))) return undefined;
  return kept
    .map((r) => BigInt(r.backupTS!))
    .reduce((a, b) => (b < a ? b : a))
    .toString();
}

/**
 * Up to where each schedule's log backup (`backup-log-<schedule>`) may be truncated, for the schedules
 * whose retention removes old snapshots: the oldest snapshot still kept.
 */
export function logTruncation(
  cluster: Pick<ClusterInfo, 'backupRetention' | 'logBackups'>,
  runs: Readonly<Record<string, BackupRun>>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const schedule of Object.keys(cluster.backupRetention ?? {})) {
    const { configMap } = logBackupOfSchedule(schedule);
    if (!(cluster.logBackups ?? []).includes(configMap)) continue;
    const until = truncationPoint(schedule, runs);
    if (until !== undefined) out[configMap] = until;
  }
  return out;
}
