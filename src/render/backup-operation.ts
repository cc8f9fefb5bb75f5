/**
 * A one-shot Backup or Restore as a ConfigMap `backup-<name>` or `restore-<name>` holding the Job that
 * carries it out, which the companion controller creates exactly once. The Job itself is never in Git:
 * a rendered Job runs again whenever it is re-created (a TTL, a re-sync, a re-created Argo CD
 * Application), the trap the operator's old Helm Jobs fell into. The controller records each run in
 * the `<cluster>-status` ConfigMap and never creates a Job for a document it has run, and writes where
 * the run stands on this ConfigMap (`tidb-gitops.io/phase`, `tidb-gitops.io/message`), where the Argo CD
 * and Flux health checks read it.
 */
import { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import { backupArgs, logArgs, pointInTimeArgs, pointInTimeUrls, restoreArgs, storageUrlTemplate, truncateArgs } from '../backup/br-args';
import { operationJobName, type LogBackup, type ResolvedBackup, type ResolvedRestore } from '../backup/resolve';
import { BACKUP_LABEL, LABEL, LOG_COMMANDS, logCommandKey, names, OPERATION_KEY, type LogCommand } from '../tidbcluster/names';
import type { ResolvedCluster } from '../tidbcluster/resolve';
import { brPodTemplate } from './br-pod';
import { namespaced } from './component';
import { logCommandScript, oneShotScript } from './scripts/br';

export interface BackupOperationProps {
  readonly cluster: ResolvedCluster;
  readonly operation: ResolvedBackup | ResolvedRestore;
}

/** The ConfigMap of one Backup or Restore. */
export class BackupOperationConfigMap extends Construct {
  constructor(scope: Construct, id: string, props: BackupOperationProps) {
    super(scope, id);
    const { cluster, operation } = props;
    const name = operationJobName(operation);
    new ApiObject(this, 'configmap', {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: namespaced(cluster, name, operationLabels(cluster, operation)),
      data:
        operation.kind === 'Backup' && operation.log
          ? logBackupData(cluster, operation, operation.log)
          : { [OPERATION_KEY.job]: json(operationJob(cluster, operation)) },
    });
  }
}

const json = (o: unknown): string => `${JSON.stringify(o, null, 2)}\n`;

/**
 * A log backup's ConfigMap: the task and the state to keep it in, and a Job for each BR command the
 * controller may run to get it there (`br log start|pause|resume|stop`) or to truncate its log. The
 * controller keeps the stop Job too, so that the task is stopped when the document leaves Git.
 */
function logBackupData(cluster: ResolvedCluster, op: ResolvedBackup, log: LogBackup): Record<string, string> {
  const data: Record<string, string> = {
    [OPERATION_KEY.logTask]: json({
      task: op.name,
      state: log.state,
      ...(log.truncateUntil !== undefined && { truncateUntil: log.truncateUntil }),
    }),
  };
  for (const command of LOG_COMMANDS) data[logCommandKey(command)] = json(logCommandJob(cluster, op, log, command));
  return data;
}

/**
 * One `br log` command's Job, named `backup-<name>-log-<command>` as tidb-operator names it
 * (`GetBackupJobName`); the controller adds `-<n>`, the how-manieth command Job of this log backup.
 * Only `start` and `truncate` need the storage (and its credentials): the others act on the task in
 * PD alone, and work after the storage's Secret is gone. The controller runs `truncate` on the folder
 * the task writes to (`BR_STORAGE`, as the start reported it) up to the oldest snapshot its schedule
 * keeps (`@UNTIL@`). BR is not retried by the Job: the controller runs the command again when the
 * task is still not where it should be.
 */
export function logCommandJob(cluster: ResolvedCluster, op: ResolvedBackup, log: LogBackup, command: LogCommand): Record<string, unknown> {
  const labels = operationLabels(cluster, op);
  const start = command === 'start';
  const storage = start || command === 'truncate';
  const brCluster = { name: cluster.name, tls: cluster.tlsCluster };
  const template = brPodTemplate({
    cluster,
    job: op,
    container: 'log-backup',
    labels,
    script: logCommandScript(),
    args:
      command === 'truncate'
        ? truncateArgs(op, brCluster, '@STORAGE@')
        : logArgs(op, brCluster, command, start ? '@STORAGE@' : undefined, start ? log.startTs : undefined),
    env: storage ? [{ name: 'BR_STORAGE', value: storageUrlTemplate(op.storage, log.timestamped ? '{run}' : '') }] : [],
    storage,
  });
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: names.logCommandTemplate(operationJobName(op), command), labels },
    spec: { backoffLimit: 0, template },
  };
}

function operationLabels(cluster: ResolvedCluster, op: ResolvedBackup | ResolvedRestore): Record<string, string> {
  const component = op.kind === 'Backup' ? 'backup' : 'restore';
  return {
    ...op.labels,
    [LABEL.name]: component,
    [LABEL.managedBy]: BACKUP_LABEL.managedBy,
    [LABEL.instance]: cluster.instance,
    [LABEL.component]: component,
    [BACKUP_LABEL.operation]: operationJobName(op),
  };
}

/**
 * The Job: BR once, into (or from) the storage's folder itself, as the operator's Backup and Restore
 * use it (pkg/backup/util/remote.go: the prefix is the backup's folder). No TTL: the finished Job stays
 * for `kubectl logs` until deleted, and a deleted one is not created again. A backup never retries
 * (BR refuses a folder that holds a backup); a restore retries `backoffLimit` times, as the operator's.
 */
export function operationJob(cluster: ResolvedCluster, op: ResolvedBackup | ResolvedRestore): Record<string, unknown> {
  const labels = operationLabels(cluster, op);
  const action = op.kind === 'Backup' ? 'backup' : 'restore';
  const brCluster = { name: cluster.name, tls: cluster.tlsCluster };
  const template = brPodTemplate({
    cluster,
    job: op,
    container: action,
    labels,
    script: oneShotScript(action),
    args:
      op.kind === 'Backup'
        ? backupArgs(op, brCluster, '@STORAGE@', op.commitTs)
        : op.pitr
          ? pointInTimeArgs(op, brCluster, '@STORAGE@', op.pitr)
          : restoreArgs(op, brCluster, '@STORAGE@'),
    env: [
      {
        name: 'BR_STORAGE',
        value: op.kind === 'Restore' && op.pitr ? pointInTimeUrls(op.storage, op.pitr.fullBackup).log : storageUrlTemplate(op.storage, ''),
      },
    ],
  });
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: operationJobName(op), labels },
    spec: { backoffLimit: op.kind === 'Restore' ? op.backoffLimit : 0, template },
  };
}
