/**
 * BR's command lines, as tidb-operator's backup-manager builds them (cmd/backup-manager/app/backup/
 * backup.go `backupCommandTemplate`, cmd/backup-manager/app/util/util.go
 * `ConstructBRGlobalOptionsForBackup` and `constructBRGlobalOptions`, pkg/backup/util/remote.go
 * `GenStorageArgsForFlag`), with BR's own flag names (pingcap/tidb br/pkg/task/common.go,
 * backup.go, restore.go). Pure: the same operation always gives the same arguments.
 */
import type { BrJob, PointInTime } from './resolve';
import type { ResolvedStorage } from './storage';
import { names, PORT } from '../tidbcluster/names';

/** Where the cluster client certificate is mounted (tidb-operator's `util.ClusterClientTLSPath`). */
export const CLUSTER_CLIENT_TLS_DIR = '/var/lib/cluster-client-tls';
/** Where a GCS service account key is mounted, read by BR's `--gcs.credentials-file`. */
export const GCS_CREDENTIALS_DIR = '/var/lib/gcs-credentials';

/** What the arguments need to know of the cluster. */
export interface BrCluster {
  /** The TidbCluster's name. */
  readonly name: string;
  /** `spec.tlsCluster.enabled`. */
  readonly tls: boolean;
}

/**
 * `--pd`, and the TLS flags when the cluster speaks TLS. The namespace is the Pod's own (`$(NAMESPACE)`,
 * expanded by the kubelet): an operation always runs in its cluster's namespace.
 */
export function connectionArgs(cluster: BrCluster): string[] {
  const args = [`--pd=${names.service(cluster.name, 'pd')}.$(NAMESPACE):${PORT.pdClient}`];
  if (cluster.tls)
    args.push(
      `--ca=${CLUSTER_CLIENT_TLS_DIR}/ca.crt`,
      `--cert=${CLUSTER_CLIENT_TLS_DIR}/tls.crt`,
      `--key=${CLUSTER_CLIENT_TLS_DIR}/tls.key`,
    );
  return args;
}

/**
 * `br backup <type>` for a snapshot backup into `storage` (the run's own folder): connection, global
 * options, storage, filters, then the backup options, and `spec.br.options` last so that they win.
 */
export function backupArgs(job: BrJob, cluster: BrCluster, storage: string, commitTs?: string): string[] {
  const br = job.br;
  return [
    'backup',
    job.backupType,
    ...(commitTs !== undefined ? [`--backupts=${commitTs}`] : []),
    ...connectionArgs(cluster),
    ...globalArgs(job),
    ...storageArgs(job.storage, storage),
    ...filterArgs(job),
    ...(br.concurrency !== undefined ? [`--concurrency=${br.concurrency}`] : []),
    ...(br.rateLimit !== undefined ? [`--ratelimit=${br.rateLimit}`] : []),
    ...(br.timeAgo ? [`--timeago=${br.timeAgo}`] : []),
    ...(br.checksum !== undefined ? [`--checksum=${br.checksum}`] : []),
    ...(br.checkRequirements !== undefined ? [`--check-requirements=${br.checkRequirements}`] : []),
    ...(br.options ?? []),
  ];
}

/**
 * `br restore <type>` from `storage` (the backup's folder), in the order of the operator's
 * backup-manager (cmd/backup-manager/app/restore/restore.go `restoreData` and `constructBROptions`,
 * cmd/backup-manager/app/util/util.go `ConstructBRGlobalOptionsForRestore`): connection, global
 * options, storage, filters, then `--concurrency`, `--checksum`, `--check-requirements`,
 * `--ratelimit`, `--online`, and `spec.br.options` last so that they win.
 */
export function restoreArgs(job: BrJob, cluster: BrCluster, storage: string): string[] {
  return [
    'restore',
    job.backupType,
    ...connectionArgs(cluster),
    ...globalArgs(job),
    ...storageArgs(job.storage, storage),
    ...filterArgs(job),
    ...restoreOptions(job),
  ];
}

/**
 * `br log <command> --task-name=<name>` as the operator's backup-manager runs it (cmd/backup-manager/app/
 * backup/backup.go `doStartLogBackup`, `doStopLogBackup`, `doPauseLogBackup`, `doResumeLogBackup`):
 * the task named like the document, `--start-ts` from `commitTs` for a start, then the connection and
 * global options; a start also takes the storage (the task's folder, the storage's prefix itself) and
 * the table filter, then `--concurrency`, `--ratelimit`, `--checksum` and `--check-requirements` in
 * the operator's order (`constructOptions`; BR's common flags, which `br log start` takes). `spec.br.options`
 * go last, to a start only: the other commands take no BR options besides the connection's.
 */
export function logArgs(
  job: BrJob & { readonly name: string },
  cluster: BrCluster,
  command: 'start' | 'pause' | 'resume' | 'stop',
  storage?: string,
  startTs?: string,
): string[] {
  const start = command === 'start';
  return [
    'log',
    command,
    `--task-name=${job.name}`,
    ...(start && startTs !== undefined ? [`--start-ts=${startTs}`] : []),
    ...connectionArgs(cluster),
    ...globalArgs(job),
    ...(start && storage !== undefined ? [...storageArgs(job.storage, storage), ...filterArgs(job)] : []),
    ...(start && job.br.concurrency !== undefined ? [`--concurrency=${job.br.concurrency}`] : []),
    ...(start && job.br.rateLimit !== undefined ? [`--ratelimit=${job.br.rateLimit}`] : []),
    ...(start && job.br.checksum !== undefined ? [`--checksum=${job.br.checksum}`] : []),
    ...(start && job.br.checkRequirements !== undefined ? [`--check-requirements=${job.br.checkRequirements}`] : []),
    ...(start ? (job.br.options ?? []) : []),
  ];
}

/**
 * `br restore point` (a point-in-time restore) from the log backup in `storage`, on the snapshot in
 * `pitr.fullBackup`, in the operator's order (cmd/backup-manager/app/restore/restore.go `restoreData`
 * for `--mode=pitr`): connection, global options, the log's storage, filters, `--restored-ts` and
 * `--full-backup-storage`, then the restore options and `spec.br.options`.
 */
export function pointInTimeArgs(job: BrJob, cluster: BrCluster, storage: string, pitr: PointInTime): string[] {
  return [
    'restore',
    'point',
    ...connectionArgs(cluster),
    ...globalArgs(job),
    ...storageArgs(job.storage, storage),
    ...filterArgs(job),
    ...(pitr.restoredTs !== undefined ? [`--restored-ts=${pitr.restoredTs}`] : []),
    `--full-backup-storage=${pointInTimeUrls(job.storage, pitr.fullBackup).full}`,
    ...restoreOptions(job),
  ];
}

/**
 * The storage URLs of a point-in-time restore: the log's (`--storage`) and the snapshot's
 * (`--full-backup-storage`). BR reads each URL's query into the one set of options every storage of
 * the command shares (br/pkg/storage/parse.go `ExtractQueryParameters(u, &options.S3)`, the options
 * being `&cfg.BackendOptions`), and parses the log's URL, then the snapshot's, then the log's again
 * (br/pkg/task/stream.go `RunStreamRestore`, `getFullBackupTS`, `createLogClient`): a value only the
 * snapshot's URL names would be the log's too. So where the two differ in what the URL can say
 * (S3: endpoint, region, provider, path style; Azure: account and SAS token), both URLs name every
 * one of those, empty where a storage has none, and each parse leaves the options its own.
 */
export function pointInTimeUrls(log: ResolvedStorage, full: ResolvedStorage): { readonly log: string; readonly full: string } {
  const [a, b] = [urlOptions(log), urlOptions(full)];
  if (!a || !b || log.provider !== full.provider || JSON.stringify(a) === JSON.stringify(b))
    return { log: storageUrlTemplate(log, ''), full: storageUrlTemplate(full, '') };
  const withQuery = (s: ResolvedStorage, q: Readonly<Record<string, string>>) =>
    `${storageUrlTemplate(s, '').replace(/\?.*$/, '')}?${Object.entries(q)
      .map(([k, v]) => `${k}=${encodeURIComponent(v)}`)
      .join('&')}`;
  return { log: withQuery(log, a), full: withQuery(full, b) };
}

/** What a storage URL's query can set for one storage, as BR reads it, in a fixed order; undefined for a provider with none. */
function urlOptions(s: ResolvedStorage): Readonly<Record<string, string>> | undefined {
  switch (s.provider) {
    case 's3': {
      // BR's path style: the flag's default true, false for alibaba and netease whatever is asked (storage/s3.go `Apply`).
      const path = s.spec.provider === 'alibaba' || s.spec.provider === 'netease' ? false : (s.spec.forcePathStyle ?? true);
      return {
        endpoint: s.spec.endpoint ?? '',
        region: s.spec.region ?? '',
        provider: s.spec.provider ?? '',
        'force-path-style': String(path),
      };
    }
    case 'azblob':
      return { 'account-name': s.spec.storageAccount ?? '', 'sas-token': s.spec.sasToken ?? '' };
    default:
      return undefined;
  }
}

/**
 * `br log truncate --until=<ts>` on the log's storage, as the operator's backup-manager runs it
 * (`doTruncateLogBackup`: no task name, BR's prompt answered yes because no terminal is attached);
 * `until` is `@UNTIL@`, which the controller replaces with the oldest snapshot its schedule keeps.
 */
export function truncateArgs(job: BrJob, cluster: BrCluster, storage: string): string[] {
  return ['log', 'truncate', '--until=@UNTIL@', ...connectionArgs(cluster), ...globalArgs(job), ...storageArgs(job.storage, storage)];
}

/** A restore's options in the operator's order (`constructBROptions`), then `spec.br.options` so that they win. */
function restoreOptions(job: BrJob): string[] {
  const br = job.br;
  return [
    ...(br.concurrency !== undefined ? [`--concurrency=${br.concurrency}`] : []),
    ...(br.checksum !== undefined ? [`--checksum=${br.checksum}`] : []),
    ...(br.checkRequirements !== undefined ? [`--check-requirements=${br.checkRequirements}`] : []),
    ...(br.rateLimit !== undefined ? [`--ratelimit=${br.rateLimit}`] : []),
    ...(br.onLine !== undefined ? [`--online=${br.onLine}`] : []),
    ...(br.options ?? []),
  ];
}

/** `--log-level`, `--status-addr` and `--send-credentials-to-tikv` (backup-manager's `constructBRGlobalOptions`). */
function globalArgs(job: BrJob): string[] {
  const br = job.br;
  return [
    ...(br.logLevel ? [`--log-level=${br.logLevel}`] : []),
    ...(br.statusAddr ? [`--status-addr=${br.statusAddr}`] : []),
    ...(br.sendCredToTikv !== undefined ? [`--send-credentials-to-tikv=${br.sendCredToTikv}`] : []),
  ];
}

/** `--filter` per rule, else `--db` and `--table` for a db or table backup. */
function filterArgs(job: BrJob): string[] {
  if (job.tableFilter.length > 0) return job.tableFilter.flatMap((f) => ['--filter', f]);
  if (job.backupType === 'table') return [`--table=${job.br.table}`, `--db=${job.br.db}`];
  if (job.backupType === 'db') return [`--db=${job.br.db}`];
  return [];
}

/**
 * `--storage` and the provider's flags (tidb-operator pkg/backup/util/remote.go `newS3StorageOptionForFlag`,
 * `newGcsStorageOptionForFlag`, `newAzblobStorageOptionForFlag`, `newLocalStorageOptionForFlag`).
 * `url` is the storage URL of the backup's folder, as {@link storageUrlTemplate} gives it.
 */
export function storageArgs(storage: ResolvedStorage, url: string): string[] {
  const args = [`--storage=${url}`];
  switch (storage.provider) {
    case 's3': {
      const s = storage.spec;
      if (s.region) args.push(`--s3.region=${s.region}`);
      if (s.provider) args.push(`--s3.provider=${s.provider}`);
      if (s.endpoint) args.push(`--s3.endpoint=${s.endpoint}`);
      if (s.sse) args.push(`--s3.sse=${s.sse}`);
      if (s.acl) args.push(`--s3.acl=${s.acl}`);
      if (s.storageClass) args.push(`--s3.storage-class=${s.storageClass}`);
      // `options` are rclone's (the operator's cleaner and Dumpling read them), never BR's: BR refuses
      // them as unknown flags, so they are not passed, as the operator does not pass them.
      break;
    }
    case 'gcs': {
      const s = storage.spec;
      if (s.storageClass) args.push(`--gcs.storage-class=${s.storageClass}`);
      if (s.objectAcl) args.push(`--gcs.predefined-acl=${s.objectAcl}`);
      if (storage.secretName) args.push(`--gcs.credentials-file=${GCS_CREDENTIALS_DIR}/credentials`);
      break;
    }
    case 'azblob':
      if (storage.spec.accessTier) args.push(`--azblob.access-tier=${storage.spec.accessTier}`);
      break;
    case 'local':
      break;
  }
  return args;
}

/**
 * The storage URL of the folder `sub` under the storage's prefix, as BR reads it (br/pkg/storage/parse.go
 * `ParseBackend`): S3 carries `force-path-style` in the URL when it is set, as the operator does, since
 * BR has no flag for it; GCS and Azure URLs end in `/`, and Azure's carry the account and SAS token.
 */
export function storageUrlTemplate(storage: ResolvedStorage, sub: string): string {
  const folder = [storage.prefix, sub].filter((p) => p !== '').join('/');
  switch (storage.provider) {
    case 's3': {
      const force = storage.spec.forcePathStyle;
      return `s3://${storage.bucket}/${folder}${force !== undefined ? `?force-path-style=${force}` : ''}`;
    }
    case 'gcs':
      return `gcs://${storage.bucket}/${folder}/`;
    case 'azblob': {
      const query = new URLSearchParams();
      if (storage.spec.storageAccount) query.append('account-name', storage.spec.storageAccount);
      if (storage.spec.sasToken) query.append('sas-token', storage.spec.sasToken);
      const q = query.toString();
      return `azure://${storage.bucket}/${folder}/${q ? `?${q}` : ''}`;
    }
    case 'local': {
      const mount = storage.volumeMount.mountPath.replace(/\/+$/, '');
      return `local://${mount}/${folder}`;
    }
  }
}
