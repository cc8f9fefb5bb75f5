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
import { backupArgs, restoreArgs, storageUrlTemplate } from '../backup/br-args';
import { operationJobName, type ResolvedBackup, type ResolvedRestore } from '../backup/resolve';
import { BACKUP_LABEL, LABEL, OPERATION_KEY } from '../tidbcluster/names';
import type { ResolvedCluster } from '../tidbcluster/resolve';
import { brPodTemplate } from './br-pod';
import { namespaced } from './component';
import { oneShotScript } from './scripts/br';

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
      data: { [OPERATION_KEY.job]: `${JSON.stringify(operationJob(cluster, operation), null, 2)}\n` },
    });
  }
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
    args: op.kind === 'Backup' ? backupArgs(op, brCluster, '@STORAGE@', op.commitTs) : restoreArgs(op, brCluster, '@STORAGE@'),
    env: [{ name: 'BR_STORAGE', value: storageUrlTemplate(op.storage, '') }],
  });
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: { name: operationJobName(op), labels },
    spec: { backoffLimit: op.kind === 'Restore' ? op.backoffLimit : 0, template },
  };
}
