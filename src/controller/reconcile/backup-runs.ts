/**
 * Each pass, the runs of the cluster's BackupSchedules: their Jobs and Pods are read, the run records
 * in the status ConfigMap follow them (view/backup-runs.ts), each run that finished gets an Event on
 * its Job (`BackupComplete`, `BackupFailed`, `BackupLost`), and so does one whose container cannot
 * start (`BackupStuck`: a missing Secret, an image that cannot be pulled), and a schedule with
 * retention lets its expired runs go, one a pass, as plan/retention.ts decides and
 * actions/retention.ts carries out: removed from the bucket where its cleanPolicy says so, else
 * released with their data kept. Each schedule's health goes on its CronJob. Only for a cluster with
 * schedules: its Role grants reading Jobs (and the buckets' Secrets) then, and not otherwise. A side
 * task of the pass.
 */
import { ANNOTATION, BACKUP_LABEL, LABEL, logBackupOfSchedule, names } from '../../tidbcluster/names';
import type { BackupRetentionInfo } from '../../tidbcluster/contract';
import { deleteExpired, releaseExpired, retentionFailed, type RetentionDeps } from '../actions/retention';
import { BackupAccess } from '../clients/backups';
import type { KubeAccess } from '../clients/kube';
import { describe } from '../clients/kube-errors';
import type { ClusterInfo } from '../model/cluster';
import { observeRuns, scheduleProblem } from '../view/backup-runs';
import { tsoMillis } from '../plan/log-backups';
import { expiredRuns, type LogWindow } from '../plan/retention';
import type { LogBackupView } from '../plan/log-backups';
import { backupRunsOf, listRuns, type BackupRun } from '../records/backup-runs';
import type { StatusRecords } from '../records/store';
import type { Logger } from '../runtime/log';
import type { SidePass, SideTask } from './side-task';

export interface BackupRunDeps {
  readonly cluster: ClusterInfo;
  readonly kube: Pick<KubeAccess, 'send' | 'path' | 'namespace' | 'event'>;
  readonly log: Logger;
}

export class BackupRunRecorder implements SideTask {
  readonly name = 'backup runs';
  readonly readsOnly = false;
  private access?: BackupAccess;
  /** The last retention problem reported per schedule, so that a standing one is announced once. */
  private readonly problems = new Map<string, string>();
  /** What was last noted on each schedule's CronJob: why it is unwell, or null. */
  private readonly health = new Map<string, string | null>();

  constructor(
    private readonly d: BackupRunDeps,
    private readonly records: StatusRecords,
  ) {}

  /** {@link pass}, with the log backups' tasks as read this pass. */
  run(p: SidePass): Promise<void> {
    return this.pass(p.view.now, p.logBackups());
  }

  /**
   * Brings the run records up to date, then keeps each schedule's retention, by the log backups' tasks
   * as read this pass; failures are logged and tried again next pass.
   */
  async pass(now: number, logBackups?: LogBackupView): Promise<void> {
    const schedules = this.d.cluster.backupSchedules ?? [];
    if (schedules.length === 0) return;
    this.access ??= new BackupAccess(this.d.kube);
    try {
      await this.record(schedules, now);
    } catch (err) {
      this.d.log.warn('could not bring the backup runs up to date', { error: describe(err) });
      return;
    }
    for (const [schedule, policy] of Object.entries(this.d.cluster.backupRetention ?? {}))
      await this.retain(schedule, policy, now, logWindow(this.d.cluster, schedule, logBackups));
    for (const schedule of schedules) await this.noteHealth(schedule);
  }

  /**
   * Notes on the schedule's CronJob whether it is unwell (a failed, lost or stuck last run, a failing
   * retention), for the Argo CD and Flux health checks; only when that changed since it last did.
   */
  private async noteHealth(schedule: string): Promise<void> {
    const problem = scheduleProblem(schedule, this.records.backupRuns, this.problems.get(schedule)) ?? null;
    if (this.health.has(schedule) && this.health.get(schedule) === problem) return;
    const annotations = { [ANNOTATION.scheduleHealth]: problem === null ? null : 'Degraded', [ANNOTATION.operationMessage]: problem };
    try {
      await this.access!.annotateCronJob(names.backupSchedule(schedule), annotations);
      this.health.set(schedule, problem);
    } catch (err) {
      this.d.log.warn("could not note the schedule's health on its CronJob", { schedule, error: describe(err) });
    }
  }

  private async record(schedules: readonly string[], now: number): Promise<void> {
    const { jobs, pods } = await this.access!.listJobsAndPods(
      `${BACKUP_LABEL.schedule} in (${schedules.join(',')}),${LABEL.managedBy}=${BACKUP_LABEL.managedBy}`,
    );
    const observed = observeRuns(jobs, pods, this.records.backupRuns);
    // Only what the status document keeps (the newest runs of each schedule) stays in memory too.
    const runs = backupRunsOf({ backupRuns: listRuns(observed.runs, retainedSchedules(this.d.cluster)) });
    if (JSON.stringify(runs) === JSON.stringify(this.records.backupRuns)) return;
    await this.records.setBackupRuns(runs);
    const uid = (job: string) => jobs.find((j) => j.metadata.name === job)?.metadata.uid;
    for (const run of observed.finished) {
      await this.d.kube.event(
        { kind: 'Job', name: run.job, uid: uid(run.job) },
        run.phase === 'Complete' ? 'Normal' : 'Warning',
        `Backup${run.phase}`,
        message(run),
        now,
      );
    }
    for (const run of observed.stuck) {
      await this.d.kube.event(
        { kind: 'Job', name: run.job, uid: uid(run.job) },
        'Warning',
        'BackupStuck',
        `the run of schedule ${run.schedule} cannot start: ${run.error}`,
        now,
      );
    }
  }

  /**
   * Lets the oldest of the schedule's expired runs go, one a pass, so that a first retention over many
   * old backups never holds up the cluster's own work. A removal that fails is logged each pass, and
   * announced once per reason.
   */
  private async retain(schedule: string, policy: BackupRetentionInfo, now: number, log: LogWindow): Promise<void> {
    const [expired] = expiredRuns(schedule, this.records.backupRuns, policy, now, log).slice(-1);
    // With nothing left to let go, no removal is failing.
    if (expired === undefined) {
      this.problems.delete(schedule);
      return;
    }
    const d: RetentionDeps = { kube: this.d.kube, access: this.access!, records: this.records, log: this.d.log };
    if (expired.action === 'release') return releaseExpired(d, schedule, policy, expired, now);
    try {
      await deleteExpired(d, schedule, policy, expired, now);
      this.problems.delete(schedule);
    } catch (err) {
      const why = err instanceof Error ? err.message : String(err);
      this.d.log.warn('could not remove expired backups', { schedule, error: why });
      if (this.problems.get(schedule) === why) return;
      this.problems.set(schedule, why);
      await retentionFailed(d, schedule, why, now);
    }
  }
}

/**
 * A schedule's log backup (`log-<schedule>`, from its `logBackupTemplate`) as retention reads it: its
 * checkpoint while its task runs or is paused, unknown while the tasks cannot be read.
 */
function logWindow(cluster: Pick<ClusterInfo, 'logBackups'>, schedule: string, view: LogBackupView | undefined): LogWindow {
  const log = logBackupOfSchedule(schedule);
  if (!(cluster.logBackups ?? []).includes(log.configMap)) return { kind: 'none' };
  if (view === undefined || 'error' in view) return { kind: 'unknown' };
  const task = view.tasks.find((t) => t.name === log.task);
  return task && /^\d+$/.test(task.checkpointTS) ? { kind: 'log', checkpointMs: tsoMillis(BigInt(task.checkpointTS)) } : { kind: 'log' };
}

/** The schedules with retention, whose records retention decides from. */
function retainedSchedules(cluster: Pick<ClusterInfo, 'backupRetention'>): ReadonlySet<string> {
  return new Set(Object.keys(cluster.backupRetention ?? {}));
}

function message(run: BackupRun): string {
  if (run.phase === 'Complete')
    return `backup of schedule ${run.schedule} written to ${run.storage ?? '(no storage path reported)'}, BackupTS ${run.backupTS ?? '?'}, ${run.size ?? '?'} bytes`;
  if (run.phase === 'Lost') return `the run of schedule ${run.schedule} ended without an outcome: ${run.error}`;
  return `backup of schedule ${run.schedule} failed${run.storage ? ` (into ${run.storage})` : ''}: ${run.error}`;
}
