/**
 * The backup run records: each run of a BackupSchedule's CronJob as the controller saw it finish, kept
 * in the status ConfigMap after the CronJob's history limit deletes its Job, so that the outcome of
 * every run (where it wrote, its backup TS and size, or BR's error) stays where users look, and
 * retention can later tell the schedule's own good backups from anything else in the bucket.
 */

/**
 * Where a run stands. `Lost`: its Job went away before it finished (deleted by hand). `Deleted`:
 * retention removed what it wrote from the storage. `Released`: retention let it go and its data stays
 * where `storage` says (cleanPolicy Retain, or OnFailure for a complete run).
 */
export type BackupRunPhase = 'Running' | 'Complete' | 'Failed' | 'Lost' | 'Deleted' | 'Released';

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
  /** The Job's UID, whose start names the run's folder. @default none (a run recorded before it was kept) */
  readonly uid?: string;
  readonly phase: BackupRunPhase;
  /** When retention removed its data, or released it (RFC 3339). @default none */
  readonly deleted?: string;
}

/**
 * How many runs of each schedule are kept, newest first: of a schedule without retention, all its runs;
 * of one with retention, those it has let go (`Deleted`, `Released`), its history.
 */
export const RUNS_KEPT = 100;

const PHASES: readonly BackupRunPhase[] = ['Running', 'Complete', 'Failed', 'Lost', 'Deleted', 'Released'];

/** Reads back the run records (by Job name) from a status document written before. */
export function backupRunsOf(doc: unknown): Record<string, BackupRun> {
  const runs = (doc as { backupRuns?: unknown } | undefined)?.backupRuns;
  if (!Array.isArray(runs)) return {};
  const out: Record<string, BackupRun> = {};
  for (const r of runs as Partial<BackupRun>[]) {
    if (typeof r?.job !== 'string' || typeof r.schedule !== 'string' || !PHASES.includes(r.phase as BackupRunPhase)) continue;
    const optional = (k: 'uid' | 'started' | 'finished' | 'storage' | 'backupTS' | 'size' | 'error' | 'deleted') =>
      typeof r[k] === 'string' ? { [k]: r[k] } : {};
    out[r.job] = {
      schedule: r.schedule,
      job: r.job,
      phase: r.phase as BackupRunPhase,
      ...optional('uid'),
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

/**
 * The runs as the status document lists them: by schedule, newest first. Of a schedule in `retained`
 * (one with retention), every run retention has yet to act on (`Running`, `Complete`, `Failed`, `Lost`)
 * is kept, whatever their number, so that no limit on the records changes what retention or log
 * truncation decides; the limit, {@link RUNS_KEPT}, applies to the runs it has let go. Of any other
 * schedule, the newest {@link RUNS_KEPT} runs. The runs retention keeps are bounded by its own limits.
 */
export function listRuns(runs: Readonly<Record<string, BackupRun>>, retained: ReadonlySet<string> = new Set()): BackupRun[] {
  return bySchedule(runs).flatMap(([s, sorted]) => {
    if (!retained.has(s)) return sorted.slice(0, RUNS_KEPT);
    let history = 0;
    return sorted.filter((r) => !LET_GO.includes(r.phase) || history++ < RUNS_KEPT);
  });
}

/** Every run, by schedule, newest first. */
export function sortRuns(runs: Readonly<Record<string, BackupRun>>): BackupRun[] {
  return bySchedule(runs).flatMap(([, sorted]) => sorted);
}

function bySchedule(runs: Readonly<Record<string, BackupRun>>): [string, BackupRun[]][] {
  const out = new Map<string, BackupRun[]>();
  for (const r of Object.values(runs)) out.set(r.schedule, [...(out.get(r.schedule) ?? []), r]);
  return [...out.keys()].sort().map((s) => [s, out.get(s)!.sort((a, b) => newestFirst(a, b))]);
}

/** The phases of a run retention is done with. */
const LET_GO: readonly BackupRunPhase[] = ['Deleted', 'Released'];

/** Newest first: by start time, then by the Job name's scheduled minute (a total order: ties never depend on where a record was read from). */
export function newestFirst(a: BackupRun, b: BackupRun): number {
  const key = (r: BackupRun) => `${r.started ?? '9999'}|${r.job.padStart(80, '0')}`;
  return key(b) < key(a) ? -1 : key(b) > key(a) ? 1 : 0;
}
