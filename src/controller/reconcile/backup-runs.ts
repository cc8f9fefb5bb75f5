/**
 * Each pass, the runs of the cluster's BackupSchedules: their Jobs and Pods are read, the run records
 * in the status ConfigMap follow them, and each run that finished gets an Event on its Job
 * (`BackupComplete`, `BackupFailed`, `BackupLost`). Only for a cluster with schedules: its Role grants
 * reading Jobs then, and not otherwise.
 */
import type { KubeAccess } from '../clients/kube';
import { describe } from '../clients/kube';
import type { ClusterInfo } from '../model/cluster';
import { BACKUP_LABEL, LABEL } from '../../tidbcluster/names';
import { observeRuns } from '../plan/backup-runs';
import { backupRunsOf, listRuns, type BackupRun } from '../records/backup-runs';
import type { StatusRecords } from '../records/store';
import type { Logger } from '../runtime/log';

export interface BackupRunDeps {
  readonly cluster: ClusterInfo;
  readonly kube: Pick<KubeAccess, 'listJobsAndPods' | 'event'>;
  readonly log: Logger;
}

export class BackupRunRecorder {
  constructor(
    private readonly d: BackupRunDeps,
    private readonly records: StatusRecords,
  ) {}

  /** Brings the run records up to date; a failure to read or write is logged and tried again next pass. */
  async pass(now: number): Promise<void> {
    const schedules = this.d.cluster.backupSchedules ?? [];
    if (schedules.length === 0) return;
    try {
      const { jobs, pods } = await this.d.kube.listJobsAndPods(`${BACKUP_LABEL.schedule} in (${schedules.join(',')}),${LABEL.managedBy}=${BACKUP_LABEL.managedBy}`);
      const observed = observeRuns(jobs, pods, this.records.backupRuns);
      // Only what the status document keeps (the newest runs of each schedule) stays in memory too.
      const runs = backupRunsOf({ backupRuns: listRuns(observed.runs) });
      const finished = observed.finished;
      if (JSON.stringify(runs) === JSON.stringify(this.records.backupRuns)) return;
      await this.records.setBackupRuns(runs);
      for (const run of finished) {
        const uid = jobs.find((j) => j.metadata.name === run.job)?.metadata.uid;
        await this.d.kube.event({ kind: 'Job', name: run.job, uid }, run.phase === 'Complete' ? 'Normal' : 'Warning', `Backup${run.phase}`, message(run), now);
      }
    } catch (err) {
      this.d.log.warn('could not bring the backup runs up to date', { error: describe(err) });
    }
  }
}

function message(run: BackupRun): string {
  if (run.phase === 'Complete') return `backup of schedule ${run.schedule} written to ${run.storage ?? '(no storage path reported)'}, BackupTS ${run.backupTS ?? '?'}, ${run.size ?? '?'} bytes`;
  if (run.phase === 'Lost') return `the run of schedule ${run.schedule} ended without an outcome: ${run.error}`;
  return `backup of schedule ${run.schedule} failed${run.storage ? ` (into ${run.storage})` : ''}: ${run.error}`;
}
