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
 * - A run with no storage path, or one outside the schedule's bucket and prefix, is never removed
 *   (only released); nor is a folder that a kept backup, a run under way or another schedule's run
 *   names.
 */
import { logBackupOfSchedule, type BackupRetentionInfo, type CleanPolicy } from '../../tidbcluster/names';
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
  | { readonly run: BackupRun; readonly action: 'release' };

/**
 * A schedule's log backup as retention sees it: none, one whose tasks could not be read this pass, or
 * one with its checkpoint's time (none when its task is not running: stopped, or not started yet).
 */
export type LogWindow = { readonly kind: 'none' } | { readonly kind: 'unknown' } | { readonly kind: 'log'; readonly checkpointMs?: number };

/** The runs of `schedule` whose data retention lets go now. */
export function expiredRuns(schedule: string, runs: Readonly<Record<string, BackupRun>>, policy: BackupRetentionInfo, now: number, log: LogWindow = { kind: 'none' }): Expired[] {
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
  // A folder a kept backup names is never removed, whichever other run names it too; nor one a run
  // still under way names, nor one any run of another schedule names (it may be that run's own).
  const others = Object.values(runs).filter((r) => (r.schedule !== schedule && r.phase !== 'Deleted') || (r.schedule === schedule && r.phase === 'Running'));
  const kept = new Set([...keep, ...others].map((r) => folderOf(r.storage, policy)));
  const out: Expired[] = [];
  for (const r of mine) {
    const expired = r.phase === 'Complete' ? !keep.has(r) : (r.phase === 'Failed' || r.phase === 'Lost') && startedMs(r) < startedMs(newest);
    if (!expired) continue;
    const folder = deletes(policy.cleanPolicy ?? 'Retain', r) ? folderOf(r.storage, policy) : undefined;
    if (folder === undefined) out.push({ run: r, action: 'release' });
    else if (!kept.has(folder)) out.push({ run: r, action: 'delete', folder });
  }
  return out;
}

/** Whether a policy removes an expired run's data. */
function deletes(policy: CleanPolicy, run: BackupRun): boolean {
  return policy === 'Delete' || (policy === 'OnFailure' && (run.phase === 'Failed' || run.phase === 'Lost'));
}

/**
 * The key prefix of a run's folder (`<prefix>/<folder>/`) when its storage URL is in the schedule's
 * bucket, directly under its prefix; else undefined (not this schedule's to remove).
 */
export function folderOf(storage: string | undefined, policy: Pick<BackupRetentionInfo, 'bucket' | 'prefix'>): string | undefined {
  if (!storage || policy.bucket === undefined || policy.prefix === undefined) return undefined;
  const m = /^s3:\/\/([^/?]+)\/([^?]*)(\?.*)?$/.exec(storage);
  if (!m || m[1] !== policy.bucket) return undefined;
  const path = m[2].replace(/\/+$/, '');
  const prefix = policy.prefix.replace(/^\/+|\/+$/g, '');
  const rest = prefix === '' ? path : path.startsWith(`${prefix}/`) ? path.slice(prefix.length + 1) : undefined;
  // One folder directly under the prefix, never the prefix itself or anything above it.
  if (rest === undefined || rest === '' || rest.includes('/') || rest === '.' || rest === '..') return undefined;
  return `${path}/`;
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
  return kept.map((r) => BigInt(r.backupTS!)).reduce((a, b) => (b < a ? b : a)).toString();
}

/**
 * Up to where each schedule's log backup (`backup-log-<schedule>`) may be truncated, for the schedules
 * whose retention removes old snapshots: the oldest snapshot still kept.
 */
export function logTruncation(cluster: Pick<ClusterInfo, 'backupRetention' | 'logBackups'>, runs: Readonly<Record<string, BackupRun>>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const schedule of Object.keys(cluster.backupRetention ?? {})) {
    const { configMap } = logBackupOfSchedule(schedule);
    if (!(cluster.logBackups ?? []).includes(configMap)) continue;
    const until = truncationPoint(schedule, runs);
    if (until !== undefined) out[configMap] = until;
  }
  return out;
}
