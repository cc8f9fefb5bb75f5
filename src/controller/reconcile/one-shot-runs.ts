/**
 * Each pass, the cluster's one-shot Backups and Restores: their ConfigMaps, Jobs and Pods are read,
 * each run is started once when the cluster is ready and none other runs, its record in the
 * status ConfigMap follows its Job, and where it stands goes on its ConfigMap for the health checks
 * (`tidb-gitops.io/phase`, `tidb-gitops.io/message`) and into Events on it: `BackupStarted`,
 * `BackupComplete`, `BackupFailed`, `BackupLost`, `BackupStuck`, `BackupWaiting`, `BackupChanged`, and
 * the same for a Restore. Only for a cluster with such documents: its Role lets it create Jobs then.
 * PD's cluster ID is read each pass: the record and the Job of a run say which instance of the
 * cluster it ran against. A side task of the pass.
 */
import { ANNOTATION, BACKUP_LABEL, LABEL, OPERATION_KEY } from '../../tidbcluster/names';
import { BackupAccess, type OperationConfigMap } from '../clients/backups';
import { type KubeAccess } from '../clients/kube';
import { describe, KubeError } from '../clients/kube-errors';
import type { ClientTls } from '../clients/http';
import type { PdClient } from '../clients/pd';
import { tidbStatusBase, tidbTables } from '../clients/tidb';
import type { ClusterInfo } from '../model/cluster';
import { isReady, type Job, type Pod } from '../model/objects';
import { oneShotDigests, planOneShotRuns, podsOf, type OneShotInput, type OneShotStep } from '../plan/one-shot-runs';
import { isSystemSchema, needsTables, restoreBlocked, restoreWrites } from '../plan/restore-check';
import { keptOperations, messageOf, type OperationRecord } from '../records/operations';
import type { StatusRecords } from '../records/store';
import type { LogBackupView } from '../plan/log-backups';
import type { Logger } from '../runtime/log';
import type { SidePass, SideTask } from './side-task';

export interface OneShotRunDeps {
  readonly cluster: ClusterInfo;
  readonly kube: Pick<KubeAccess, 'send' | 'path' | 'namespace' | 'event'>;
  /** PD, for the cluster's ID. */
  readonly pd: Pick<PdClient, 'clusterId'>;
  /** The cluster's TLS, for TiDB's status port. @default none */
  readonly tls?: ClientTls;
  readonly log: Logger;
}

export class OneShotRunner implements SideTask {
  readonly name = 'one-shot runs';
  readonly readsOnly = false;
  private access?: BackupAccess;

  constructor(
    private readonly d: OneShotRunDeps,
    private readonly records: StatusRecords,
  ) {}

  /**
   * One pass over the one-shot runs, the cluster's readiness and the log backups' tasks as this pass
   * found them. Failures are logged and tried again next pass; a Job is never created without its
   * record written first.
   */
  async run({ view, notReady, logBackups, tidbPods }: SidePass): Promise<void> {
    const now = view.now;
    const names = this.d.cluster.operations ?? [];
    // Without documents in Git the Role grants no Job access: the records stay as they are.
    if (names.length === 0) return;
    this.access ??= new BackupAccess(this.d.kube);
    try {
      await this.step(names, now, notReady, logBackups(), tidbPods);
    } catch (err) {
      this.d.log.warn('could not bring the backup and restore operations up to date', { error: describe(err) });
    }
  }

  private async step(
    names: readonly string[],
    now: number,
    notReady: string | undefined,
    logBackups: LogBackupView | undefined,
    tidbPods: readonly Pod[],
  ): Promise<void> {
    const access = this.access!;
    // Runs of documents that left Git are followed to their end, never started.
    const running = Object.values(this.records.operations)
      .filter((r) => r.phase === 'Running' && !names.includes(r.job))
      .map((r) => r.job);
    const tracked = [...names, ...running];
    const selector = `${BACKUP_LABEL.operation} in (${tracked.join(',')}),${LABEL.managedBy}=${BACKUP_LABEL.managedBy}`;
    const [configMaps, { jobs, pods }, clusterId] = await Promise.all([
      access.listConfigMaps(selector),
      access.listJobsAndPods(selector),
      this.clusterId(),
    ]);
    const scheduledRun = Object.values(this.records.backupRuns).find((r) => r.phase === 'Running')?.job;
    const runs: OneShotInput[] = tracked.map((job) => {
      const cm = names.includes(job) ? configMaps.find((c) => c.name === job) : undefined;
      const json = cm?.data[OPERATION_KEY.job];
      return {
        job,
        ...(json !== undefined && { template: { json, ...oneShotDigests(json) } }),
        record: this.records.operations[job],
        live: jobs.find((j) => j.metadata.name === job),
        pods: podsOf(job, pods),
      };
    });
    const blocked: Record<string, string> = {};
    const plan = () =>
      planOneShotRuns({
        operations: runs.map((o) => (blocked[o.job] === undefined ? o : { ...o, blocked: blocked[o.job] })),
        ...(notReady !== undefined && { notReady }),
        ...(clusterId !== undefined && { clusterId }),
        ...(scheduledRun !== undefined && { scheduledRun }),
        ...(logBackups && {
          logBackup:
            'error' in logBackups
              ? `the log backup tasks cannot be read from PD: ${logBackups.error}`
              : logBackups.tasks[0] &&
                `the log backup task ${logBackups.tasks[0].name} runs in this cluster (${logBackups.tasks[0].state}); stop it before restoring into the cluster`,
        }),
        now,
      });
    // A restore about to start is checked against the cluster's tables first; one held back lets the
    // plan go on to the next run, which is checked in turn.
    let steps = plan();
    for (;;) {
      const starting = steps.find(
        (s) => s.news === 'started' && s.record.job.startsWith('restore-') && blocked[s.record.job] === undefined,
      );
      const template = starting && runs.find((o) => o.job === starting.record.job)?.template;
      if (!starting || !template) break;
      const why = await this.restoreCheck(template.json, tidbPods);
      if (why === undefined) break;
      blocked[starting.record.job] = why;
      steps = plan();
    }
    // Records first: a Job is created only once its record says so.
    const next = keptOperations({ ...this.records.operations, ...Object.fromEntries(steps.map((s) => [s.record.job, s.record])) }, names);
    if (JSON.stringify(next) !== JSON.stringify(this.records.operations)) await this.records.setOperations(next);
    for (const step of steps) {
      const cm = configMaps.find((c) => c.name === step.record.job);
      const record = step.create && cm ? await this.create(step.record, cm, now) : step.record;
      if (step.news)
        await this.announce(
          step,
          record,
          cm,
          jobs.find((j) => j.metadata.name === record.job),
          now,
        );
      if (cm) await this.publish(cm, record);
    }
  }

  /**
   * Why a restore may not start on the cluster as it is, or undefined when it may: the tables it
   * would restore into must not exist (see plan/restore-check.ts), read from a ready TiDB Pod.
   */
  private async restoreCheck(jobJson: string, tidbPods: readonly Pod[]): Promise<string | undefined> {
    const writes = restoreWrites(jobJson);
    if (!needsTables(writes)) return restoreBlocked(writes, []);
    const pod = tidbPods
      .filter(isReady)
      .map((p) => p.metadata.name)
      .sort()[0];
    if (pod === undefined) return 'no TiDB Pod is ready to read the tables of the cluster from, to check that none it restores into exists';
    try {
      const tables = await tidbTables(
        tidbStatusBase(this.d.cluster, pod),
        { ...(this.d.tls && { tls: this.d.tls }), timeoutMs: 10_000 },
        (schema) => !isSystemSchema(schema),
      );
      return restoreBlocked(writes, tables);
    } catch (err) {
      return `the tables of the cluster cannot be read from TiDB (${describe(err)}), to check that none it restores into exists`;
    }
  }

  /** PD's cluster ID, or undefined (said in the log) while PD does not give it. */
  private async clusterId(): Promise<string | undefined> {
    try {
      return await this.d.pd.clusterId();
    } catch (err) {
      this.d.log.warn("cannot read PD's cluster ID; no backup or restore starts until it can", { error: describe(err) });
      return undefined;
    }
  }

  /** Creates the Job from its ConfigMap and records its UID; a Job that was created meanwhile is found next pass. */
  private async create(record: OperationRecord, cm: OperationConfigMap, now: number): Promise<OperationRecord> {
    let body: Record<string, unknown>;
    try {
      body = jobToCreate(JSON.parse(cm.data[OPERATION_KEY.job]) as Record<string, unknown>, record.clusterId);
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
        const waiting: OperationRecord = {
          job: record.job,
          phase: 'Waiting',
          reason: `a Job named ${record.job} exists that this operation did not create; delete it or rename the document`,
        };
        await this.records.setOperations({ ...this.records.operations, [record.job]: waiting });
        return waiting;
      }
      if (err instanceof KubeError && (err.code === 422 || err.code === 400))
        return this.fail(record, `Kubernetes refused its Job: ${err.message}`);
      this.d.log.warn("could not create an operation's Job; tried again next pass", { job: record.job, error: describe(err), now });
      return record;
    }
  }

  /** A Job Kubernetes refuses is a failed run, never retried: the document must change name to run. */
  private async fail(record: OperationRecord, error: string): Promise<OperationRecord> {
    const failed: OperationRecord = { ...record, phase: 'Failed', error };
    await this.records.setOperations({ ...this.records.operations, [record.job]: failed });
    return failed;
  }

  private async announce(
    step: OneShotStep,
    r: OperationRecord,
    cm: OperationConfigMap | undefined,
    job: Job | undefined,
    now: number,
  ): Promise<void> {
    const what = r.job.startsWith('restore-') ? 'Restore' : 'Backup';
    const target = cm
      ? { kind: 'ConfigMap' as const, name: cm.name, uid: cm.uid }
      : job
        ? { kind: 'Job' as const, name: r.job, uid: job.metadata.uid }
        : undefined;
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

  /** Where the run stands, on its ConfigMap for the health checks; written only when it changes. */
  private async publish(cm: OperationConfigMap, r: OperationRecord): Promise<void> {
    const want = { [ANNOTATION.operationPhase]: r.phase, [ANNOTATION.operationMessage]: messageOf(r).slice(0, 1000) };
    const patch = Object.fromEntries(Object.entries(want).filter(([k, v]) => cm.annotations[k] !== v));
    if (Object.keys(patch).length === 0) return;
    try {
      await this.access!.annotateConfigMap(cm.name, patch);
    } catch (err) {
      this.d.log.warn("cannot annotate the operation's ConfigMap for the health checks", { job: r.job, error: describe(err) });
    }
  }
}

/**
 * The Job as the controller creates it from its template: marked with the cluster instance it runs
 * against (`tidb-gitops.io/cluster-id`), and without the `app.kubernetes.io/instance` label on the Job
 * itself (its Pods keep it, for network policies): Argo CD's label tracking takes every object with
 * that label and the Application's name for one of the Application's, and prunes one that is not in
 * Git, which this Job never is.
 */
export function jobToCreate(template: Record<string, unknown>, clusterId: string | undefined): Record<string, unknown> {
  const metadata = (template.metadata ?? {}) as { labels?: Record<string, string>; annotations?: Record<string, string> };
  const { [LABEL.instance]: _instance, ...labels } = metadata.labels ?? {};
  return {
    ...template,
    metadata: {
      ...metadata,
      labels,
      ...(clusterId !== undefined && { annotations: { ...metadata.annotations, [ANNOTATION.operationCluster]: clusterId } }),
    },
  };
}
