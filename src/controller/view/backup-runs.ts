/**
 * What the Jobs of the BackupSchedules' CronJobs say about each run, against what the records hold:
 * the records to keep, and the runs whose outcome is news (for an Event). Pure.
 *
 * A Job is Complete or Failed by its conditions (the Job controller's `Complete` and `Failed`,
 * kubernetes pkg/controller/job); the outcome's details come from the run's termination message, the
 * JSON line the run's script writes (src/render/scripts/br.ts), or the last lines of its log when BR
 * died before the script could write it (`FallbackToLogsOnError`).
 */
import { BACKUP_LABEL, JOB_NAME_LABEL } from '../../tidbcluster/names';
import type { Job, Pod } from '../model/objects';
import { newestFirst, type BackupRun, type RunReport } from '../records/backup-runs';
import { compareCodeUnits } from '../../base/order';
import { hideUrlSecrets } from '../../base/url-secrets';

export interface RunChanges {
  /** Every run record, updated. */
  readonly runs: Record<string, BackupRun>;
  /** Runs that finished (or were lost) since the records were written. */
  readonly finished: readonly BackupRun[];
  /** Running runs whose container cannot start, newly or for a new reason (`error` says why). */
  readonly stuck: readonly BackupRun[];
}

/**
 * Why a run's container cannot start, from its Pods' waiting states: the kubelet retries these for
 * ever, so the Job neither runs nor fails (a Secret the storage names that does not exist, a key
 * missing from it, an image that cannot be pulled).
 */
const STUCK = new Set(['CreateContainerConfigError', 'CreateContainerError', 'ErrImagePull', 'ImagePullBackOff', 'InvalidImageName']);

/** The run records after looking at the schedules' Jobs and their Pods. */
export function observeRuns(jobs: readonly Job[], pods: readonly Pod[], known: Readonly<Record<string, BackupRun>>): RunChanges {
  const runs: Record<string, BackupRun> = { ...known };
  const finished: BackupRun[] = [];
  const stuck: BackupRun[] = [];
  const seen = new Set<string>();
  for (const job of jobs) {
    const name = job.metadata.name;
    const schedule = job.metadata.labels?.[BACKUP_LABEL.schedule];
    if (!name || !schedule) continue;
    seen.add(name);
    const before = known[name];
    if (before && before.phase !== 'Running') continue;
    const run = runOf(
      job,
      schedule,
      pods.filter((p) => p.metadata.labels?.[JOB_NAME_LABEL] === name),
    );
    runs[name] = run;
    if (run.phase !== 'Running') finished.push(run);
    else if (run.error !== undefined && run.error !== before?.error) stuck.push(run);
  }
  // A run seen running whose Job is gone did not report how it ended.
  for (const [name, r] of Object.entries(known)) {
    if (r.phase !== 'Running' || seen.has(name)) continue;
    const lost: BackupRun = { ...r, phase: 'Lost', error: 'its Job was deleted before it finished' };
    runs[name] = lost;
    finished.push(lost);
  }
  return { runs, finished, stuck };
}

function runOf(job: Job, schedule: string, pods: readonly Pod[]): BackupRun {
  const { phase, details } = runOutcome(job, pods);
  return { schedule, job: job.metadata.name!, ...(job.metadata.uid && { uid: job.metadata.uid }), phase, ...details };
}

/** The outcome of a BR Job (a schedule's run, a one-shot run, a log backup command): its phase and what it reported. */
export function runOutcome(job: Job, pods: readonly Pod[]): { phase: 'Running' | 'Complete' | 'Failed'; details: RunReport } {
  const conditions = job.status?.conditions ?? [];
  const holds = (type: string) => conditions.some((c) => c.type === type && c.status === 'True');
  const phase = holds('Complete') ? 'Complete' : holds('Failed') ? 'Failed' : 'Running';
  const started = time(job.status?.startTime);
  const finishedAt =
    phase === 'Complete'
      ? time(job.status?.completionTime)
      : phase === 'Failed'
        ? time(conditions.find((c) => c.type === 'Failed')?.lastTransitionTime)
        : undefined;
  const outcome = phase === 'Running' ? waitingProblem(pods) : terminationOutcome(pods);
  const failedWithout =
    phase === 'Failed' && outcome.error === undefined
      ? { error: conditions.find((c) => c.type === 'Failed')?.message ?? 'the run failed' }
      : {};
  return {
    phase,
    details: {
      ...(started && { started }),
      ...(finishedAt && { finished: finishedAt }),
      ...outcome,
      ...failedWithout,
    },
  };
}

/** The outcome the newest finished Pod left in its termination message. */
export function terminationOutcome(pods: readonly Pod[]): Pick<BackupRun, 'storage' | 'backupTS' | 'size' | 'error'> {
  const messages = pods
    .flatMap((p) => (p.status?.containerStatuses ?? []).map((s) => s.state?.terminated))
    .filter((t): t is NonNullable<typeof t> => t !== undefined)
    .sort((a, b) => compareCodeUnits(time(b.finishedAt) ?? '', time(a.finishedAt) ?? ''));
  const message = messages[0]?.message?.trim();
  if (!message) return {};
  try {
    const o = JSON.parse(message) as Record<string, unknown>;
    const text = (k: string) => (typeof o[k] === 'string' && o[k] !== '' ? { [k]: hideUrlSecrets(o[k] as string) } : {});
    return { ...text('storage'), ...text('backupTS'), ...text('size'), ...text('error') };
  } catch {
    // BR died before the script wrote its line: the kubelet kept the log's last lines instead.
    return { error: hideUrlSecrets(message.split('\n').slice(-3).join('\n')).slice(-1000) };
  }
}

/** Why the run's container cannot start, as `{ error }`, or nothing while it starts or runs normally. */
function waitingProblem(pods: readonly Pod[]): Pick<BackupRun, 'error'> {
  for (const p of pods) {
    for (const s of p.status?.containerStatuses ?? []) {
      const w = s.state?.waiting;
      if (w?.reason && STUCK.has(w.reason)) return { error: `${w.reason}: ${w.message ?? 'the container cannot start'}` };
    }
  }
  return {};
}

/** A time from the API (a Date from the client library, or RFC 3339 text) as RFC 3339 without fractions. */
function time(t: unknown): string | undefined {
  if (t === undefined || t === null || t === '') return undefined;
  const d = t instanceof Date ? t : new Date(String(t));
  return Number.isNaN(d.getTime()) ? undefined : d.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * Why a schedule is unwell, for the health checks of its CronJob; undefined while it is well. Its
 * newest run that has an outcome decides (a run under way is passed over, unless its container cannot
 * start): a failed or lost run, or one stuck, makes it Degraded until a newer run completes; so does a
 * retention that failed its last try (`retention`, its error). The CronJob's own status cannot say
 * this: its controller counts a run that never starts as active for ever, and Argo CD's own CronJob
 * check calls a schedule whose runs never succeeded Healthy.
 */
export function scheduleProblem(schedule: string, runs: Readonly<Record<string, BackupRun>>, retention?: string): string | undefined {
  const problems: string[] = [];
  const mine = Object.values(runs)
    .filter((r) => r.schedule === schedule && r.phase !== 'Deleted' && r.phase !== 'Released')
    .sort(newestFirst);
  const last = mine.find((r) => r.phase !== 'Running' || r.error !== undefined);
  if (last?.phase === 'Running') problems.push(`the run ${last.job} cannot start: ${last.error}`);
  else if (last?.phase === 'Failed') problems.push(`the last run ${last.job} failed: ${last.error ?? 'no reason reported'}`);
  else if (last?.phase === 'Lost') problems.push(`the last run ${last.job} was lost: ${last.error ?? 'its Job went away'}`);
  if (retention !== undefined) problems.push(`retention could not remove expired backups: ${retention}`);
  return problems.length > 0 ? problems.join('; ').slice(0, 1000) : undefined;
}
