/**
 * Each pass, the cluster's log backups: their ConfigMaps, command Jobs and Pods are read, each task is
 * brought toward the state its document asks for with one `br log` command Job at a time (recorded in
 * the status ConfigMap before it is created), and where it stands goes on its ConfigMap for the health
 * checks and into Events on it (`LogBackupCommand`, `LogBackupStarted`, `LogBackupPaused`,
 * `LogBackupResumed`, `LogBackupStopped`, `LogBackupCommandFailed`, `LogBackupCommandLost`,
 * `LogBackupStuck`, `LogBackupWaiting`, `LogBackupAdopted`, `LogBackupLagPaused`, `LogBackupPausedAgain`).
 * A log backup whose document left Git is
 * stopped with the stop Job its record keeps, then forgotten. A side task of the pass; a command that
 * ends has the tasks read again from PD on the next pass.
 */
import { ANNOTATION, BACKUP_LABEL, LABEL } from '../../tidbcluster/names';
import { BackupAccess, type OperationConfigMap } from '../clients/backups';
import { type KubeAccess } from '../clients/kube';
import { describe, KubeError } from '../clients/kube-errors';
import type { ClusterInfo } from '../model/cluster';
import { logBackupDocOf, planLogTasks, type LogTaskStep, type LogTasksContext } from '../plan/log-tasks';
import { logTruncation } from '../plan/retention';
import type { LogTaskRecord } from '../records/log-tasks';
import type { StatusRecords } from '../records/store';
import type { Logger } from '../runtime/log';
import type { LogBackupReader } from './log-backups';
import type { SidePass, SideTask } from './side-task';

export interface LogTaskDeps {
  readonly cluster: ClusterInfo;
  readonly kube: Pick<KubeAccess, 'send' | 'path' | 'namespace' | 'event'>;
  readonly log: Logger;
}

export class LogTaskRunner implements SideTask {
  readonly name = 'log backup commands';
  readonly readsOnly = false;
  private access?: BackupAccess;

  /** `reader`: the log backups' reader, told to read the tasks again once a command ended. */
  constructor(
    private readonly d: LogTaskDeps,
    private readonly records: StatusRecords,
    private readonly reader: Pick<LogBackupReader, 'invalidate'>,
  ) {}

  /** Whether there is anything to do: log backups in Git, or records of ones that left it. */
  get active(): boolean {
    return (this.d.cluster.logBackups?.length ?? 0) > 0 || Object.keys(this.records.logTasks).length > 0;
  }

  /**
   * One pass, with the tasks as read this pass, the cluster's readiness, and the log each schedule's
   * retention lets go (from the run records as they are now).
   */
  async run({ view, notReady, logBackups }: SidePass): Promise<void> {
    const tasks = logBackups();
    const truncateUntil = logTruncation(this.d.cluster, this.records.backupRuns);
    if (await this.pass({ ...(tasks && { view: tasks }), ...(notReady !== undefined && { notReady }), truncateUntil, now: view.now }))
      this.reader.invalidate();
  }

  /**
   * Returns whether a command ended this pass (the tasks should be read again before the next).
   * Failures are logged and tried again next pass.
   */
  private async pass(ctx: LogTasksContext): Promise<boolean> {
    if (!this.active) return false;
    this.access ??= new BackupAccess(this.d.kube);
    try {
      return await this.step(ctx);
    } catch (err) {
      this.d.log.warn('could not bring the log backup tasks up to date', { error: describe(err) });
      return false;
    }
  }

  private async step(ctx: LogTasksContext): Promise<boolean> {
    const access = this.access!;
    const inGit = new Set(this.d.cluster.logBackups ?? []);
    const names = [...new Set([...inGit, ...Object.keys(this.records.logTasks)])].sort();
    const selector = `${BACKUP_LABEL.operation} in (${names.join(',')}),${LABEL.managedBy}=${BACKUP_LABEL.managedBy}`;
    const [configMaps, { jobs, pods }] = await Promise.all([access.listConfigMaps(selector), access.listJobsAndPods(selector)]);
    const steps = planLogTasks(
      names.map((configMap) => {
        const cm = inGit.has(configMap) ? configMaps.find((c) => c.name === configMap) : undefined;
        const own = jobs.filter((j) => j.metadata.labels?.[BACKUP_LABEL.operation] === configMap);
        return {
          configMap,
          inGit: inGit.has(configMap),
          ...(cm && { doc: logBackupDocOf(cm.data) }),
          record: this.records.logTasks[configMap],
          jobs: own,
          pods,
        };
      }),
      ctx,
    );
    // Records first: a Job is created only once its record says so.
    const next: Record<string, LogTaskRecord> = Object.fromEntries(steps.filter((s) => s.record).map((s) => [s.configMap, s.record!]));
    if (JSON.stringify(next) !== JSON.stringify(this.records.logTasks)) await this.records.setLogTasks(next);
    for (const step of steps) {
      // A ConfigMap whose document left Git may linger until pruned; the Role no longer covers it.
      const cm = inGit.has(step.configMap) ? configMaps.find((c) => c.name === step.configMap) : undefined;
      const s = step.create && step.record ? await this.create(step, step.record, step.create.body) : step;
      if (s.news) await this.announce(s, cm, ctx.now);
      if (cm) await this.publish(cm, s);
    }
    // A command seen ending this pass: the tasks are read again before the next is chosen.
    const now = new Date(ctx.now).toISOString().replace(/\.\d{3}Z$/, 'Z');
    return steps.some((s) => s.record?.last?.seen === now);
  }

  /** Creates the command's Job and records its UID. */
  private async create(step: LogTaskStep, record: LogTaskRecord, body: Record<string, unknown>): Promise<LogTaskStep> {
    const last = record.last!;
    try {
      const job = await this.access!.createJob(body);
      const created: LogTaskRecord = { ...record, last: { ...last, uid: job.metadata.uid } };
      await this.records.setLogTasks({ ...this.records.logTasks, [record.configMap]: created });
      this.d.log.info('started a log backup command', { job: last.job, command: last.command });
      return { ...step, record: created };
    } catch (err) {
      // A Job of that name exists, or Kubernetes refused it: the command failed, and runs again (under
      // the next name) after the retry period.
      if (err instanceof KubeError && (err.code === 409 || err.code === 422 || err.code === 400)) {
        const error = err.code === 409 ? `a Job named ${last.job} exists already` : `Kubernetes refused its Job: ${err.message}`;
        const failed: LogTaskRecord = {
          ...record,
          last: { ...last, phase: 'Failed', error, seen: new Date().toISOString().replace(/\.\d{3}Z$/, 'Z') },
        };
        await this.records.setLogTasks({ ...this.records.logTasks, [record.configMap]: failed });
        return {
          ...step,
          record: failed,
          phase: 'Failed',
          message: `br log ${last.command}: ${error}`,
          news: { type: 'Warning', reason: 'LogBackupCommandFailed', message: `br log ${last.command}: ${error}` },
        };
      }
      this.d.log.warn("could not create a log backup command's Job; tried again next pass", { job: last.job, error: describe(err) });
      return step;
    }
  }

  /** An Event on the ConfigMap, or on the command's Job once the document (and its ConfigMap) left Git. */
  private async announce(step: LogTaskStep, cm: OperationConfigMap | undefined, now: number): Promise<void> {
    const last = step.record?.last;
    const target = cm
      ? { kind: 'ConfigMap' as const, name: cm.name, uid: cm.uid }
      : last?.uid
        ? { kind: 'Job' as const, name: last.job, uid: last.uid }
        : undefined;
    if (!target || !step.news) return;
    await this.d.kube.event(target, step.news.type, step.news.reason, step.news.message, now);
  }

  /** Where the log backup stands, on its ConfigMap for the health checks; written only when it changes. */
  private async publish(cm: OperationConfigMap, s: LogTaskStep): Promise<void> {
    const want = { [ANNOTATION.operationPhase]: s.phase, [ANNOTATION.operationMessage]: s.message.slice(0, 1000) };
    const patch = Object.fromEntries(Object.entries(want).filter(([k, v]) => cm.annotations[k] !== v));
    if (Object.keys(patch).length === 0) return;
    try {
      await this.access!.annotateConfigMap(cm.name, patch);
    } catch (err) {
      this.d.log.warn("cannot annotate the log backup's ConfigMap for the health checks", { configMap: cm.name, error: describe(err) });
    }
  }
}
