/**
 * The backup run records: each run of a BackupSchedule's CronJob as the controller saw it finish, kept
 * in the status ConfigMap after the CronJob's history limit deletes its Job, so that the outcome of
 * every run (where it wrote, its backup TS and size, or BR's error) stays where users look, and
 * retention can later tell the schedule's own good backups from anything else in the bucket.
 */

/**
 * Where a run stands. `Lost`: its Job went away before it finished (deleted by hand). `Deleted`:
 * retention removed what it wrote from the storage.
 */
export type BackupRunPhase = 'Running' | 'Complete' | 'Failed' | 'Lost' | 'Deleted';

/** What a BR Job reported, from its Job and its termination message. */
export interface RunReport {
  /** When the Job started (RFC 3339). @default none (not started yet) */
  readonly started?: string;
  /** When it finished (RFC 3339). @default none (not finished) */
  readonly finished?: string;
  /** The storage URL BR wrote to or read from, from its termination message. @default none */
  readonly storage?: string;
  /** BR's BackupTS: the backup's, or the one a restore restored. @default none */
  readonly backupTS?: string;
  /** BR's Size, in bytes. @default none */
  readonly size?: string;
  /** BR's error, or why the run failed or cannot start. @default none */
  readonly error?: string;
}

/** One run of a schedule (a Job of its CronJob). */
export interface BackupRun extends RunReport {
  readonly schedule: string;
  /** The Job's name, `backup-<schedule>-<minutes>`. */
  readonly job: string;
  readonly phase: BackupRunPhase;
  /** When retention removed its data (RFC 3339). @default none */
  readonly deleted?: string;
}

/** How many runs of each schedule are kept, newest first. */
export const RUNS_KEPT = 100;

const PHASES: readonly BackupRunPhase[] = ['Running', 'Complete', 'Failed', 'Lost', 'Deleted'];

/** Reads back the run records (by Job name) from a status document written before. */
export function backupRunsOf(doc: unknown): Record<string, BackupRun> {
  const runs = (doc as { backupRuns?: unknown } | undefined)?.backupRuns;
  if (!Array.isArray(runs)) return {};
  const out: Record<string, BackupRun> = {};
  for (const r of runs as Partial<BackupRun>[]) {
    if (typeof r?.job !== 'string' || typeof r.schedule !== 'string' || !PHASES.includes(r.phase as BackupRunPhase)) continue;
    const optional = (k: 'started' | 'finished' | 'storage' | 'backupTS' | 'size' | 'error' | 'deleted') => (typeof r[k] === 'string' ? { [k]: r[k] } : {});
    out[r.job] = {
      schedule: r.schedule,
      job: r.job,
      phase: r.phase as BackupRunPhase,
      ...optional('started'),
      ...optional('finished'),
      ...optional('storage'),
      ...optional('backupTS'),
      ...optional('size'),
      ...optional('error'),
      ...optional('deleted'),
    };
  }
  return out;
}

/** The runs as the status document lists them: by schedule, newest first, at most {@link RUNS_KEPT} each. */
export function listRuns(runs: Readonly<Record<string, BackupRun>>): BackupRun[] {
  const bySchedule = new Map<string, BackupRun[]>();
  for (const r of Object.values(runs)) bySchedule.set(r.schedule, [...(bySchedule.get(r.schedule) ?? []), r]);
  return [...bySchedule.keys()].sort().flatMap((s) => bySchedule.get(s)!.sort((a, b) => newestFirst(a, b)).slice(0, RUNS_KEPT));
}

/** Newest first: by start time, then by the Job name's scheduled minute. */
function newestFirst(a: BackupRun, b: BackupRun): number {
  const key = (r: BackupRun) => `${r.started ?? '9999'}|${r.job.padStart(80, '0')}`;
  return key(b) < key(a) ? -1 : key(b) > key(a) ? 1 : 0;
}
