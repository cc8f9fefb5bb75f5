/**
 * Ties each Backup, BackupSchedule and Restore to the TidbCluster it names (`spec.br.cluster`,
 * `spec.br.clusterNamespace`), and each TidbInitializer to its `spec.cluster`, among the clusters of
 * the same input. A reference to a cluster that is not there, a document in another namespace than its
 * cluster's, or one defined twice is an error naming the file, document, path and line.
 */
import type { LoadedCluster, LoadedDocument } from '../tidbcluster/load';
import type { ResolvedCluster } from '../tidbcluster/resolve';
import { formatIssue } from '../tidbcluster/errors';
import { metricsFromIssue } from '../tidbcluster/guard-rails';
import { imageTag } from '../base/version';
import type { ChangefeedsInfo, SqlAccountsInfo } from '../tidbcluster/contract';
import { removesData, type BackupRetentionInfo, type ControllerClusterInfo } from '../tidbcluster/contract';
import type { ResolvedInitializer } from '../initializer/types';
import type { ResolvedMonitor } from '../monitoring/types';
import type { CompanionDocument } from './companions';
import { operationJobName, type BrJob, type ClusterRef, type ResolvedBackup, type ResolvedRestore, type ResolvedSchedule } from './resolve';
import type { ResolvedStorage } from './storage';

/** The operations of one cluster, in input order. */
export interface ClusterOperations {
  readonly backups: readonly ResolvedBackup[];
  readonly schedules: readonly ResolvedSchedule[];
  readonly restores: readonly ResolvedRestore[];
  /** The cluster's TidbInitializer. @default none */
  readonly initializer?: ResolvedInitializer;
  /** The TidbMonitor naming the cluster. @default none */
  readonly monitor?: ResolvedMonitor;
  /** The SQL accounts and resource groups its SqlUser, SqlRole and ResourceGroup documents declare (tied by `database/link.ts`). @default none */
  readonly sql?: SqlAccountsInfo;
  /** The changefeeds its Changefeed documents declare (tied by `database/link-changefeeds.ts`). @default none */
  readonly changefeeds?: ChangefeedsInfo;
}

export const NO_OPERATIONS: ClusterOperations = { backups: [], schedules: [], restores: [] };

export interface Linked {
  /** Per cluster of the input, in the same order. */
  readonly operations: ClusterOperations[];
  /** `file: document N: path (line L): message`, one per problem. */
  readonly errors: string[];
}

export function linkOperations(clusters: readonly LoadedCluster[], documents: readonly LoadedDocument<CompanionDocument>[]): Linked {
  const ops = clusters.map(() => ({
    backups: [] as ResolvedBackup[],
    schedules: [] as ResolvedSchedule[],
    restores: [] as ResolvedRestore[],
    initializer: undefined as ResolvedInitializer | undefined,
    initializerAt: undefined as LoadedDocument<CompanionDocument> | undefined,
    monitor: undefined as ResolvedMonitor | undefined,
    monitorAt: undefined as LoadedDocument<CompanionDocument> | undefined,
  }));
  const errors: string[] = [];
  const seen = new Map<string, LoadedDocument<CompanionDocument>>();
  for (const doc of documents) {
    const op = doc.value;
    const fail = (path: string, message: string) => errors.push(formatIssue({ path, line: doc.line(path), message }, doc.source));
    if (op.kind === 'TidbMonitor') {
      op.clusters.forEach((ref, i) => {
        const at = `spec.clusters[${i}].name`;
        const index = findCluster(clusters, { cluster: ref });
        if (index < 0) {
          fail(
            at,
            `no TidbCluster ${JSON.stringify(ref.name)}${ref.namespace ? ` in namespace ${ref.namespace}` : ''} in the input${clusters.length ? ` (have: ${clusters.map((c) => describe(c.resolved)).join(', ')})` : ''}; a cluster's monitoring renders with it`,
          );
          return;
        }
        const cluster = clusters[index].resolved;
        const first = ops[index].monitorAt;
        if (first) {
          fail(
            at,
            `TidbCluster ${describe(cluster)} is already monitored by the TidbMonitor ${JSON.stringify(first.value.name)} at ${first.source.file}: document ${first.source.document}; name it in one`,
          );
        } else if (cluster.monitoring.enabled === false) {
          fail(
            at,
            `TidbCluster ${describe(cluster)} turns monitoring off (tidb-gitops.io/monitoring: "false"): drop the annotation or this cluster from the TidbMonitor`,
          );
        } else {
          ops[index].monitor = op;
          ops[index].monitorAt = doc;
          // The fix is on the cluster (its metrics-from), so the problem is reported there.
          const scrape = metricsFromIssue(
            cluster.networkPolicy,
            `the TidbMonitor ${JSON.stringify(op.name)} at ${doc.source.file}: document ${doc.source.document}`,
            cluster.namespace,
          );
          if (scrape) errors.push(formatIssue({ ...scrape, line: clusters[index].line?.(scrape.path) }, clusters[index].source));
        }
      });
      continue;
    }
    if (op.kind === 'TidbInitializer') {
      const index = findCluster(clusters, op);
      if (index < 0) {
        fail(
          'spec.cluster.name',
          `no TidbCluster ${JSON.stringify(op.cluster.name)}${op.cluster.namespace ? ` in namespace ${op.cluster.namespace}` : ''} in the input${clusters.length ? ` (have: ${clusters.map((c) => describe(c.resolved)).join(', ')})` : ''}; a TidbInitializer renders with its cluster`,
        );
        continue;
      }
      const cluster = clusters[index].resolved;
      const first = ops[index].initializerAt;
      if ((op.namespace ?? cluster.namespace ?? '') !== (cluster.namespace ?? '')) {
        fail(
          'metadata.namespace',
          `a TidbInitializer must be in its cluster's namespace ${JSON.stringify(cluster.namespace ?? '')}: the cluster's controller reads its Secrets with rights in that namespace only`,
        );
      } else if (first) {
        fail(
          'metadata.name',
          `TidbCluster ${describe(cluster)} already has the TidbInitializer ${JSON.stringify(first.value.name)} at ${first.source.file}: document ${first.source.document}; a cluster is initialized once, keep one`,
        );
      } else if (!cluster.tidb) {
        fail('spec.cluster.name', `TidbCluster ${describe(cluster)} has no TiDB (spec.tidb) for the controller to log in to`);
      } else if (cluster.createPassword) {
        fail(
          'spec.cluster.name',
          `TidbCluster ${describe(cluster)} sets spec.tidb.initializer.createPassword, which initializes it too: drop createPassword and give root's password in this TidbInitializer's passwordSecret (key root)`,
        );
      } else {
        ops[index].initializer = {
          ...op,
          ...(op.namespace === undefined && cluster.namespace !== undefined && { namespace: cluster.namespace }),
        };
        ops[index].initializerAt = doc;
      }
      continue;
    }
    const at = op.kind === 'BackupSchedule' ? 'spec.backupTemplate.br' : 'spec.br';
    const index = findCluster(clusters, op);
    if (index < 0) {
      const known = clusters.map((c) => describe(c.resolved));
      fail(
        `${at}.cluster`,
        `no TidbCluster ${JSON.stringify(op.cluster.name)}${op.cluster.namespace ? ` in namespace ${op.cluster.namespace}` : ''} in the input${known.length ? ` (have: ${known.join(', ')})` : ''}; a ${op.kind} renders with its cluster`,
      );
      continue;
    }
    const cluster = clusters[index].resolved;
    const namespace = op.namespace ?? cluster.namespace;
    if ((namespace ?? '') !== (cluster.namespace ?? '')) {
      fail(
        'metadata.namespace',
        `a ${op.kind} must be in its cluster's namespace ${JSON.stringify(cluster.namespace ?? '')}: the cluster's controller runs it with rights in that namespace only`,
      );
      continue;
    }
    // The Job names share one namespace: `backup-<name>` for Backups and schedules alike.
    const id = `${namespace ?? ''}/${op.kind === 'Restore' ? 'restore' : 'backup'}-${op.name}`;
    const first = seen.get(id);
    if (first) {
      fail(
        'metadata.name',
        `${op.kind} ${JSON.stringify(op.name)} would run as the same Job as the ${first.value.kind} at ${first.source.file}: document ${first.source.document}; rename one`,
      );
      continue;
    }
    seen.set(id, doc);
    const job = op.kind === 'BackupSchedule' ? op.backup : op;
    const image = brImage(job, cluster);
    if (typeof image !== 'string') {
      fail(`${op.kind === 'BackupSchedule' ? 'spec.backupTemplate' : 'spec'}.toolImage`, image.problem);
      continue;
    }
    const where = namespace !== undefined ? { namespace } : {};
    // A schedule's log backup runs as the Backup `log-<schedule>` would: its name is taken too.
    const log = op.kind === 'BackupSchedule' ? op.logBackup : undefined;
    if (log) {
      const logId = `${namespace ?? ''}/backup-${log.name}`;
      const other = seen.get(logId);
      if (other) {
        fail(
          'spec.logBackupTemplate',
          `the schedule's log backup runs as Backup ${JSON.stringify(log.name)}, which the ${other.value.kind} at ${other.source.file}: document ${other.source.document} is already; rename one`,
        );
        continue;
      }
      const logImage = brImage(log, cluster);
      if (typeof logImage !== 'string') {
        fail('spec.logBackupTemplate.toolImage', logImage.problem);
        continue;
      }
      seen.set(logId, doc);
      ops[index].backups.push({ ...log, ...where, image: logImage });
    }
    if (op.kind === 'Backup') ops[index].backups.push({ ...op, ...where, image });
    else if (op.kind === 'BackupSchedule') ops[index].schedules.push({ ...op, ...where, backup: { ...op.backup, image } });
    else ops[index].restores.push({ ...op, ...where, image });
  }
  return {
    operations: ops.map(({ initializerAt: _i, monitorAt: _m, initializer, monitor, ...o }) => ({
      ...o,
      ...(initializer && { initializer }),
      ...(monitor && { monitor }),
    })),
    errors,
  };
}

/** The cluster a document names: same name, and same namespace when the document has one. */
function findCluster(clusters: readonly LoadedCluster[], op: { readonly cluster: ClusterRef }): number {
  const named = clusters.map((c, i) => [c.resolved, i] as const).filter(([c]) => c.name === op.cluster.name);
  if (op.cluster.namespace !== undefined) return named.find(([c]) => (c.namespace ?? '') === op.cluster.namespace)?.[1] ?? -1;
  return named.length === 1 ? named[0][1] : -1;
}

/**
 * The BR image: `toolImage`, with the TiKV version added when it has neither a tag nor a digest, else
 * `pingcap/br:<TiKV version>` (tidb-operator pkg/backup/backup/backup_manager.go, `makeBRBackupJob`):
 * BR must match the cluster it backs up. A digest (`…@sha256:…`) pins the image as it is.
 */
function brImage(job: BrJob, cluster: ResolvedCluster): string | { problem: string } {
  const tool = job.pod.toolImage;
  if (tool && (imageHasTag(tool) || tool.includes('@'))) return tool;
  const tikv = cluster.tikv?.image;
  const version = tikv && imageHasTag(tikv) ? imageTag(tikv) : undefined;
  if (version === undefined) {
    return {
      problem: `required with this cluster: BR's version must match TiKV's, and ${tikv ? `TiKV's image ${JSON.stringify(tikv)} has no tag` : 'the cluster has no TiKV'} to take it from; give a BR image with its tag`,
    };
  }
  return `${tool || 'pingcap/br'}:${version}`;
}

/** Whether the image names a tag (`repo:tag`, also before a digest: `repo:tag@sha256:…`). */
function imageHasTag(image: string): boolean {
  const name = image.split('@')[0];
  return name.lastIndexOf(':') > name.lastIndexOf('/');
}

function describe(c: ResolvedCluster): string {
  return c.namespace ? `${c.namespace}/${c.name}` : c.name;
}

/**
 * What the controller must know of a cluster's backup documents: the schedules' names and how each
 * keeps its backups, and the Job names of the one-shot Backups and Restores it runs.
 */
export function controllerBackupInfo(
  ops: ClusterOperations,
): Pick<ControllerClusterInfo, 'backupSchedules' | 'backupRetention' | 'operations' | 'logBackups'> {
  const oneShot = [...ops.backups.filter((b) => !b.log), ...ops.restores].map(operationJobName).sort();
  const logBackups = ops.backups
    .filter((b) => b.log)
    .map(operationJobName)
    .sort();
  const operations = { ...(oneShot.length > 0 && { operations: oneShot }), ...(logBackups.length > 0 && { logBackups }) };
  const schedules = ops.schedules;
  if (schedules.length === 0) return operations;
  const retention: Record<string, BackupRetentionInfo> = {};
  for (const s of schedules) {
    const storage = s.backup.storage;
    if (!s.retention) continue;
    const { maxBackups, maxReservedSeconds, cleanPolicy } = s.retention;
    const limits = {
      ...(maxBackups !== undefined && { maxBackups }),
      ...(maxReservedSeconds !== undefined && { maxReservedSeconds }),
      cleanPolicy,
    };
    // The bucket and its keys only where the policy removes data (resolve refuses it elsewhere).
    retention[s.name] = removesData(s.retention) ? { ...limits, ...removalTarget(storage) } : limits;
  }
  return {
    backupSchedules: schedules.map((s) => s.name).sort(),
    ...(Object.keys(retention).length > 0 && { backupRetention: retention }),
    ...operations,
  };
}

/**
 * Where retention removes expired runs from, and with which credentials: the bucket (Azure's
 * container) and prefix, each provider's settings, and the Secret. Nothing where the storage cannot
 * be reached that way (resolve refuses a policy that removes data there).
 */
function removalTarget(storage: ResolvedStorage): Partial<BackupRetentionInfo> {
  const where = { bucket: storage.bucket, prefix: storage.prefix };
  switch (storage.provider) {
    case 's3':
      if (!storage.secretName) return {};
      return {
        ...where,
        ...(storage.spec.endpoint && { endpoint: storage.spec.endpoint }),
        ...(storage.spec.region && { region: storage.spec.region }),
        ...(storage.spec.provider && { provider: storage.spec.provider }),
        ...(storage.spec.forcePathStyle !== undefined && { forcePathStyle: storage.spec.forcePathStyle }),
        secretName: storage.secretName,
      };
    case 'gcs':
      return storage.secretName ? { storageKind: 'gcs', ...where, secretName: storage.secretName } : {};
    case 'azblob': {
      const { storageAccount: account, sasToken } = storage.spec;
      if (!storage.secretName && !(sasToken && account)) return {};
      return {
        storageKind: 'azblob',
        ...where,
        ...(storage.secretName && { secretName: storage.secretName }),
        ...(account && { account }),
        ...(sasToken && { sasToken }),
      };
    }
    case 'local':
      return {};
  }
}
