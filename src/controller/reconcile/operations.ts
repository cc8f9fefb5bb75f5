/**
 * Each pass, the cluster's one-shot Backups and Restores: their ConfigMaps, Jobs and Pods are read,
 * each operation is started once when the cluster is ready and none other runs, its record in the
 * status ConfigMap follows its Job, and where it stands goes on its ConfigMap for the health checks
 * (`tidb-gitops.io/phase`, `tidb-gitops.io/message`) and into Events on it: `BackupStarted`,
 * `BackupComplete`, `BackupFailed`, `BackupLost`, `BackupStuck`, `BackupWaiting`, `BackupChanged`, and
 * the same for a Restore. Only for a cluster with such documents: its Role lets it create Jobs then.
 */
import { createHash } from 'node:crypto';
import { ANNOTATION, BACKUP_LABEL, LABEL, OPERATION_KEY } from '../../tidbcluster/names';
import { BackupAccess, type OperationConfigMap } from '../clients/backups';
import { describe, KubeError, type KubeAccess } from '../clients/kube';
import type { ClusterInfo } from '../model/cluster';
import type { Job } from '../model/objects';
import { planOperations, podsOf, type OperationStep } from '../plan/operations';
import { keptOperations, messageOf, type OperationRecord } from '../records/operations';
import type { StatusRecords } from '../records/store';
import type { LogBackupView } from './log-backups';
import type { Logger } from '../runtime/log';

export interface OperationDeps {
  readonly cluster: ClusterInfo;
  readonly kube: Pick<KubeAccess, 'send' | 'path' | 'namespace' | 'event'>;
  readonly log: Logger;
}

export class OperationRunner {
  private access?: BackupAccess;

  constructor(
    private readonly d: OperationDeps,
    private readonly records: StatusRecords,
  ) {}

  /**
   * One pass over the operations. `notReady`: why the cluster cannot take a backup or restore now.
   * Failures are logged and tried again next pass; a Job is never created without its record written first.
   */
  async pass(now: number, notReady: string | undefined, logBackups?: LogBackupView): Promise<void> {
    const names = this.d.cluster.operations ?? [];
    // Without documents in Git the Role grants no Job access: the records stay as they are.
    if (names.length === 0) return;
    this.access ??= new BackupAccess(this.d.kube);
    try {
      await this.run(names, now, notReady, logBackups);
    } catch (err) {
      this.d.log.warn('could not bring the backup and restore operations up to date', { error: describe(err) });
    }
  }

  private async run(names: readonly string[], now: number, notReady: string | undefined, logBackups: LogBackupView | undefined): Promise<void> {
    const access = this.access!;
    // Runs of documents that left Git are followed to their end, never started.
    const running = Object.values(this.records.operations).filter((r) => r.phase === 'Running' && !names.includes(r.job)).map((r) => r.job);
    const tracked = [...names, ...running];
    const selector = `${BACKUP_LABEL.operation} in (${tracked.join(',')}),${LABEL.managedBy}=${BACKUP_LABEL.managedBy}`;
    const [configMaps, { jobs, pods }] = await Promise.all([access.listConfigMaps(selector), access.listJobsAndPods(selector)]);
    const scheduledRun = Object.values(this.records.backupRuns).find((r) => r.phase === 'Running')?.job;
    const steps = planOperations({
      operations: tracked.map((job) => {
        const cm = names.includes(job) ? configMaps.find((c) => c.name === job) : undefined;
        const json = cm?.data[OPERATION_KEY.job];
        return {
          job,
          ...(json !== undefined && { template: { json, digest: `sha256:${createHash('sha256').update(json).digest('hex')}` } }),
          record: this.records.operations[job],
          live: jobs.find((j) => j.metadata.name === job),
          pods: podsOf(job, pods),
        };
      }),
      ...(notReady !== undefined && { notReady }),
      ...(scheduledRun !== undefined && { scheduledRun }),
      ...(logBackups && { logBackup: 'error' in logBackups ? `the log backup tasks cannot be read from PD: ${logBackups.error}` : logBackups.tasks[0] && `the log backup task ${logBackups.tasks[0].name} runs in this cluster (${logBackups.tasks[0].state}); stop it before restoring into the cluster` }),
      now,
    });
    // Records first: a Job is created only once its record says so.
    const next = keptOperations({ ...this.records.operations, ...Object.fromEntries(steps.map((s) => [s.record.job, s.record])) }, names);
    if (JSON.stringify(next) !== JSON.stringify(this.records.operations)) await this.records.setOperations(next);
    for (const step of steps) {
      const cm = configMaps.find((c) => c.name === step.record.job);
      const record = step.create && cm ? await this.create(step.record, cm, now) : step.record;
      if (step.news) await this.announce(step, record, cm, jobs.find((j) => j.metadata.name === record.job), now);
      if (cm) await this.publish(cm, record);
    }
  }

  /** Creates the Job from its ConfigMap and records its UID; a Job that was created meanwhile is found next pass. */
  private async create(record: OperationRecord, cm: OperationConfigMap, now: number): Promise<OperationRecord> {
    let body: Record<string, unknown>;
    try {
      body = JSON.parse(cm.data[OPERATION_KEY.job]) as Record<string, unknown>;
    } catch (err) {
      return this.fail(record, `its ConfigMap's ${OPERATION_KEY.job} is not JSON: ${(err as Error).message}`);
    }
    try {
      const job = await this.access!.createJob(body);
      const created = { ...record, uid: job.metadata.uid };
      await this.records.setOperations({ ...this.records.operations, [record.job]: created });
      this.d.log.info('started an operation', { job: record.job });
      return created;
    } catch (err) {
      // A Job of that name exists: ours, when a create landed before its answer was lost (adopted next
      // pass, by its label), or another's, which is never adopted.
      if (err instanceof KubeError && err.code === 409) {
        const waiting: OperationRecord = { job: record.job, phase: 'Waiting', reason: `a Job named ${record.job} exists that this operation did not create; delete it or rename the document` };
        await this.records.setOperations({ ...this.records.operations, [record.job]: waiting });
        return waiting;
      }
      if (err instanceof KubeError && (err.code === 422 || err.code === 400)) return this.fail(record, `Kubernetes refused its Job: ${err.message}`);
      this.d.log.warn('could not create an operation\'s Job; tried again next pass', { job: record.job, error: describe(err), now });
      return record;
    }
  }

  /** A Job Kubernetes refuses is a failed run, never retried: the document must change name to run. */
  private async fail(record: OperationRecord, error: string): Promise<OperationRecord> {
    const failed: OperationRecord = { ...record, phase: 'Failed', error };
    await this.records.setOperations({ ...this.records.operations, [record.job]: failed });
    return failed;
  }

  private async announce(step: OperationStep, r: OperationRecord, cm: OperationConfigMap | undefined, job: Job | undefined, now: number): Promise<void> {
    const what = r.job.startsWith('restore-') ? 'Restore' : 'Backup';
    const target = cm ? { kind: 'ConfigMap' as const, name: cm.name, uid: cm.uid } : job ? { kind: 'Job' as const, name: r.job, uid: job.metadata.uid } : undefined;
    if (!target) return;
    const [type, reason] = ((): ['Normal' | 'Warning', string] => {
      switch (step.news) {
        case 'started':
          return ['Normal', `${what}Started`];
        case 'waiting':
          return ['Normal', `${what}Waiting`];
        case 'stuck':
          return ['Warning', `${what}Stuck`];
        case 'changed':
          return ['Warning', `${what}Changed`];
        default:
          return [r.phase === 'Complete' ? 'Normal' : 'Warning', `${what}${r.phase}`];
      }
    })();
    await this.d.kube.event(target, type, reason, messageOf(r), now);
  }

  /** Where the operation stands, on its ConfigMap for the health checks; written only when it changes. */
  private async publish(cm: OperationConfigMap, r: OperationRecord): Promise<void> {
    const want = { [ANNOTATION.operationPhase]: r.phase, [ANNOTATION.operationMessage]: messageOf(r).slice(0, 1000) };
    const patch = Object.fromEntries(Object.entries(want).filter(([k, v]) => cm.annotations[k] !== v));
    if (Object.keys(patch).length === 0) return;
    try {
      await this.access!.annotateConfigMap(cm.name, patch);
    } catch (err) {
      this.d.log.warn('cannot annotate the operation\'s ConfigMap for the health checks', { job: r.job, error: describe(err) });
    }
  }
}
