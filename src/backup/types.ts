/**
 * The `Backup`, `BackupSchedule` and `Restore` inputs (apiVersion `pingcap.com/v1alpha1`), as
 * tidb-operator v1 users already write them beside their TidbCluster. Only the fields this project
 * carries out are typed here; the CRD schemas decide what else is valid, and `support.ts` refuses every
 * valid field that is not carried out.
 */
import type { Affinity, EnvVar, LocalObjectReference, PodSecurityContext, Toleration, Volume, VolumeMount } from '../../imports/k8s';
import type { ResourcesSpec } from '../tidbcluster/spec-parts';

export const BACKUP_KIND = 'Backup';
export const SCHEDULE_KIND = 'BackupSchedule';
export const RESTORE_KIND = 'Restore';

export interface ObjectMeta {
  name: string;
  /** @default the `--namespace` of `render`, else the namespace of the cluster it names */
  namespace?: string;
  /** @default {} */
  labels?: Record<string, string>;
  /** @default {} */
  annotations?: Record<string, string>;
}

/** Where backup data lives: exactly one of `s3`, `gcs`, `azblob` or `local`. */
export interface StorageProvider {
  /** @default none */
  s3?: S3Storage;
  /** @default none */
  gcs?: GcsStorage;
  /** @default none */
  azblob?: AzblobStorage;
  /** @default none */
  local?: LocalStorage;
}

/** Amazon S3 or an S3-compatible server (Ceph, MinIO, ...). */
export interface S3Storage {
  /** `aws`, `ceph`, `minio`, ... (BR's `--s3.provider`). @default none */
  provider?: string;
  /** @default none (BR's default region) */
  region?: string;
  /** @default none (AWS's endpoint for the region) */
  endpoint?: string;
  /** The bucket; `bucket/folder` puts the folder before `prefix`. @default none (an error: a storage needs a bucket) */
  bucket?: string;
  /** The folder under the bucket. @default "" */
  prefix?: string;
  /** The old way to give `bucket/prefix` in one; refused when `bucket` is set too. @default none */
  path?: string;
  /** @default none */
  storageClass?: string;
  /** @default none */
  sse?: string;
  /** @default none */
  acl?: string;
  /** Address buckets as `endpoint/bucket` rather than `bucket.endpoint`. @default true (BR's default) */
  forcePathStyle?: boolean;
  /** A Secret with `access_key` and `secret_key`. @default none (the Pod's IAM role, e.g. IRSA) */
  secretName?: string;
  /** More BR storage flags, appended after the ones above. @default [] */
  options?: string[];
}

export interface GcsStorage {
  /** @default none */
  projectId?: string;
  /** @default none */
  location?: string;
  /** @default none (an error: a storage needs a bucket) */
  bucket?: string;
  /** @default "" */
  prefix?: string;
  /** @default none */
  path?: string;
  /** @default none */
  storageClass?: string;
  /** @default none */
  objectAcl?: string;
  /** @default none */
  bucketAcl?: string;
  /** A Secret with `credentials` (a service account key). @default none (workload identity) */
  secretName?: string;
}

export interface AzblobStorage {
  /** @default none */
  storageAccount?: string;
  /** @default none (an error: a storage needs a container) */
  container?: string;
  /** @default "" */
  prefix?: string;
  /** @default none */
  path?: string;
  /** @default none */
  accessTier?: string;
  /** A Secret with `AZURE_STORAGE_ACCOUNT` and a key or client credentials. @default none (workload identity) */
  secretName?: string;
  /** @default none */
  sasToken?: string;
}

/** A volume every BR Pod mounts (an NFS share, a PVC with ReadWriteMany). */
export interface LocalStorage {
  volume: Volume;
  volumeMount: VolumeMount;
  /** @default "" */
  prefix?: string;
}

/** BR's settings (`spec.br`). */
export interface BRConfig {
  /** The TidbCluster this acts on. */
  cluster: string;
  /** @default the document's own namespace */
  clusterNamespace?: string;
  /** BR's `--log-level`. @default none (BR's `info`) */
  logLevel?: string;
  /** BR's `--status-addr`. @default none */
  statusAddr?: string;
  /** BR's `--concurrency`. @default none (BR's default) */
  concurrency?: number;
  /** BR's `--ratelimit` in MiB/s per TiKV. @default none (no limit) */
  rateLimit?: number;
  /** BR's `--timeago` (back up the data as it was this long ago). @default none */
  timeAgo?: string;
  /** BR's `--checksum`. @default none (BR's `true`) */
  checksum?: boolean;
  /** BR's `--send-credentials-to-tikv`. @default none (BR's `true`) */
  sendCredToTikv?: boolean;
  /** BR's `--online` (restore only). @default none */
  onLine?: boolean;
  /** BR's `--check-requirements`. @default none (BR's `true`) */
  checkRequirements?: boolean;
  /** With `backupType: db` or `table`. @default none */
  db?: string;
  /** With `backupType: table`. @default none */
  table?: string;
  /** More BR flags, appended last. @default [] */
  options?: string[];
}

/** Pod settings of a BR Job. */
export interface JobPodSettings {
  /** @default none */
  resources?: ResourcesSpec;
  /** @default [] */
  env?: EnvVar[];
  /** @default none */
  affinity?: Affinity;
  /** @default [] */
  tolerations?: Toleration[];
  /** @default [] */
  imagePullSecrets?: LocalObjectReference[];
  /** @default the cluster's controller ServiceAccount is not used: the namespace's `default` */
  serviceAccount?: string;
  /** @default none */
  priorityClassName?: string;
  /** @default none */
  podSecurityContext?: PodSecurityContext;
  /** @default none (the namespace's default) */
  automountServiceAccountToken?: boolean;
  /** @default [] */
  additionalVolumes?: Volume[];
  /** @default [] */
  additionalVolumeMounts?: VolumeMount[];
  /** The BR image; without a tag the TiKV version is added. @default `pingcap/br:<TiKV version>` */
  toolImage?: string;
}

export interface BackupSpec extends StorageProvider, JobPodSettings {
  br: BRConfig;
  /** @default "snapshot" */
  backupMode?: 'snapshot' | 'log' | 'volume-snapshot';
  /** @default "full" */
  backupType?: 'full' | 'db' | 'table';
  /** BR's `--filter`, one rule each. @default [] */
  tableFilter?: string[];
  /** Snapshot: BR's `--backupts`; log: the task's `--start-ts`. @default none (now) */
  commitTs?: string;
  /** Log backup: the state the task should be in. @default "log-start" */
  logSubcommand?: 'log-start' | 'log-stop' | 'log-pause';
  /** Log backup, the old way to say `logSubcommand: log-stop`. @default false */
  logStop?: boolean;
  /** Log backup: remove log data before this TS (`br log truncate --until`). @default none */
  logTruncateUntil?: string;
  /** What removing the document from Git does to its data. @default "Retain" */
  cleanPolicy?: 'Retain' | 'OnFailure' | 'Delete';
}

export interface Backup {
  apiVersion: 'pingcap.com/v1alpha1';
  kind: typeof BACKUP_KIND;
  metadata: ObjectMeta;
  spec: BackupSpec;
}

export interface BackupScheduleSpec extends StorageProvider {
  /** A cron expression, as a CronJob reads it. */
  schedule: string;
  /** No new run starts while set. @default false */
  pause?: boolean;
  /** Keep this many successful snapshot backups. @default none (keep all) */
  maxBackups?: number;
  /** Keep the snapshot backups younger than this (`24h`, `7d`...). @default none (keep all) */
  maxReservedTime?: string;
  /** What each run backs up, and where (the schedule's own storage, when set, wins). @default none */
  backupTemplate?: BackupSpec;
  /** The log backup task kept running beside the snapshots. @default none */
  logBackupTemplate?: BackupSpec;
  /** @default none */
  br?: BRConfig;
}

export interface BackupSchedule {
  apiVersion: 'pingcap.com/v1alpha1';
  kind: typeof SCHEDULE_KIND;
  metadata: ObjectMeta;
  spec: BackupScheduleSpec;
}

export interface RestoreSpec extends StorageProvider, JobPodSettings {
  br: BRConfig;
  /** @default "snapshot" */
  restoreMode?: 'snapshot' | 'pitr' | 'volume-snapshot';
  /** @default "full" */
  backupType?: 'full' | 'db' | 'table';
  /** @default [] */
  tableFilter?: string[];
  /** PITR: the TS (or time) to restore to. @default none (the log backup's newest checkpoint) */
  pitrRestoredTs?: string;
  /** PITR: the snapshot backup the log is replayed on. @default none */
  pitrFullBackupStorageProvider?: StorageProvider;
  /** Retries of the restore Job. @default 0 */
  backoffLimit?: number;
}

export interface Restore {
  apiVersion: 'pingcap.com/v1alpha1';
  kind: typeof RESTORE_KIND;
  metadata: ObjectMeta;
  spec: RestoreSpec;
}
