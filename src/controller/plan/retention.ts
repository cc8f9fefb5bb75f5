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
 * - A `Failed` or `Lost` run's folder goes once a newer run completed: it holds a partial backup
 *   nothing can restore from.
 * - A run with no storage path, or one outside the schedule's bucket and prefix, is never touched; nor
 *   is a folder that a kept backup names.
 */
import type { BackupRetentionInfo } from '../../tidbcluster/names';
import type { BackupRun } from '../records/backup-runs';
import type { ClusterInfo } from '../model/cluster';

export interface Expired {
  readonly run: BackupRun;
  /** The folder's key prefix in the bucket, ending in `/`. */
  readonly folder: string;
}

/** The runs of `schedule` whose data retention removes now. */
export function expiredRuns(schedule: string, runs: Readonly<Record<string, BackupRun>>, policy: BackupRetentionInfo, now: number): Expired[] {
  const mine = Object.values(runs)
    .filter((r) => r.schedule === schedule)
    .sort((a, b) => startedMs(b) - startedMs(a));
  const complete = mine.filter((r) => r.phase === 'Complete');
  if (complete.length === 0) return [];
  const newest = complete[0];
  const keep = new Set<BackupRun>([newest]);
  complete.forEach((r, i) => {
    if (policy.maxBackups !== undefined && i < policy.maxBackups) keep.add(r);
    if (policy.maxReservedSeconds !== undefined && now - startedMs(r) <= policy.maxReservedSeconds * 1000) keep.add(r);
  });
  // A folder a kept backup names is never removed, whichever other run names it too.
  const kept = new Set([...keep].map((r) => folderOf(r.storage, policy)));
  const out: Expired[] = [];
  for (const r of mine) {
    const expired = r.phase === 'Complete' ? !keep.has(r) : (r.phase === 'Failed' || r.phase === 'Lost') && startedMs(r) < startedMs(newest);
    if (!expired) continue;
    const folder = folderOf(r.storage, policy);
    if (folder && !kept.has(folder)) out.push({ run: r, folder });
  }
  return out;
}

/**
 * The key prefix of a run's folder (`<prefix>/<folder>/`) when its storage URL is in the schedule's
 * bucket, directly under its prefix; else undefined (not this schedule's to remove).
 */
export function folderOf(storage: string | undefined, policy: Pick<BackupRetentionInfo, 'bucket' | 'prefix'>): string | undefined {
  if (!storage) return undefined;
  const m = /^s3:\/\/([^/?]+)\/([^?]*)(\?.*)?$/.exec(storage);
  if (!m || m[1] !== policy.bucket) return undefined;
  const path = m[2].replace(/\/+$/, '');
  const prefix = policy.prefix.replace(/^\/+|\/+$/g, '');
  const rest = prefix === '' ? path : path.startsWith(`${prefix}/`) ? path.slice(prefix.length + 1) : undefined;
  // One folder directly under the prefix, never the prefix itself or anything above it.
  if (rest === undefined || rest === '' || rest.includes('/') || rest === '.' || rest === '..') return undefined;
  return `${path}/`;
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
    const configMap = `backup-log-${schedule}`;
    if (!(cluster.logBackups ?? []).includes(configMap)) continue;
    const until = truncationPoint(schedule, runs);
    if (until !== undefined) out[configMap] = until;
  }
  return out;
}
