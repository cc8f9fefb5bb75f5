/**
 * The Pod of a BR Job, shared by every backup and restore: BR's image running a script, the storage's
 * credentials, the cluster client certificate when the cluster speaks TLS, and the Pod settings of the
 * document (tidb-operator pkg/backup/backup/backup_manager.go, `makeBRBackupJob`, whose backup-manager
 * wrapper this Pod does without: BR runs directly in its own image).
 */
import type { EnvFromSource, EnvVar, Volume, VolumeMount } from '../../imports/k8s';
import { CLUSTER_CLIENT_TLS_DIR, GCS_CREDENTIALS_DIR } from '../backup/br-args';
import { BR_VOLUME } from '../backup/job-pod';
import type { BrJob } from '../backup/resolve';
import type { ResolvedStorage } from '../backup/storage';
import { names } from '../tidbcluster/names';
import type { ResolvedCluster } from '../tidbcluster/resolve';
import { TERMINATION_LOG } from './scripts/br';

export interface BrPodProps {
  readonly cluster: ResolvedCluster;
  readonly job: BrJob;
  /** The container's name (`backup`, `restore`). */
  readonly container: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly script: string;
  readonly args: readonly string[];
  /** Variables the script reads, before the storage's and the document's own. */
  readonly env: readonly EnvVar[];
  /** Whether BR reaches the storage (its credentials and volume). @default true */
  readonly storage?: boolean;
}

/** The Pod template (`metadata` and `spec`) of a BR Job. */
export function brPodTemplate(p: BrPodProps): Record<string, unknown> {
  const { job, cluster } = p;
  const pod = job.pod;
  const storage = p.storage === false ? NO_ACCESS : storageAccess(job.storage);
  const tls = cluster.tlsCluster
    ? {
        volume: { name: BR_VOLUME.clusterTls, secret: { secretName: names.clusterClientSecret(cluster.name) } },
        mount: { name: BR_VOLUME.clusterTls, mountPath: CLUSTER_CLIENT_TLS_DIR, readOnly: true },
      }
    : undefined;
  const volumes: Volume[] = [...(tls ? [tls.volume] : []), ...storage.volumes, ...(pod.additionalVolumes ?? [])];
  const mounts: VolumeMount[] = [...(tls ? [tls.mount] : []), ...storage.mounts, ...(pod.additionalVolumeMounts ?? [])];
  const env = overwrite(
    [
      { name: 'NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
      ...p.env,
      // BR logs to the terminal rather than a file in the container (br/cmd/br/cmd.go, `Init`).
      { name: 'BR_LOG_TO_TERM', value: '1' },
      ...storage.env,
    ],
    pod.env ?? [],
  );
  const container = {
    name: p.container,
    image: job.image,
    imagePullPolicy: 'IfNotPresent',
    command: ['/bin/sh', '-c', p.script, 'br'],
    args: [...p.args],
    env,
    ...(storage.envFrom.length > 0 && { envFrom: storage.envFrom }),
    ...(pod.resources && Object.keys(pod.resources).length > 0 && { resources: pod.resources }),
    ...(mounts.length > 0 && { volumeMounts: mounts }),
    terminationMessagePath: TERMINATION_LOG,
    // A BR that dies before the script writes its outcome still leaves its last lines there.
    terminationMessagePolicy: 'FallbackToLogsOnError',
  };
  return {
    metadata: { labels: { ...p.labels } },
    spec: {
      restartPolicy: 'Never',
      ...(pod.serviceAccount && { serviceAccountName: pod.serviceAccount }),
      ...(pod.automountServiceAccountToken !== undefined && { automountServiceAccountToken: pod.automountServiceAccountToken }),
      ...(pod.podSecurityContext && { securityContext: pod.podSecurityContext }),
      ...(pod.priorityClassName && { priorityClassName: pod.priorityClassName }),
      ...(pod.affinity && { affinity: pod.affinity }),
      ...(pod.tolerations && pod.tolerations.length > 0 && { tolerations: pod.tolerations }),
      ...(pod.imagePullSecrets && pod.imagePullSecrets.length > 0 && { imagePullSecrets: pod.imagePullSecrets }),
      containers: [container],
      ...(volumes.length > 0 && { volumes }),
    },
  };
}

interface StorageAccess {
  readonly env: EnvVar[];
  readonly envFrom: EnvFromSource[];
  readonly volumes: Volume[];
  readonly mounts: VolumeMount[];
}

/**
 * How BR reaches the storage (tidb-operator pkg/backup/util/util.go, `GenerateStorageCertEnv`): S3 keys
 * from the Secret's `access_key` and `secret_key` for the AWS SDK's default chain; a GCS key file for
 * `--gcs.credentials-file`; Azure's `AZURE_*` variables, which BR reads itself (br/pkg/storage/azblob.go);
 * a local volume mounted where the storage URL points.
 */
const NO_ACCESS: StorageAccess = { env: [], envFrom: [], volumes: [], mounts: [] };

function storageAccess(storage: ResolvedStorage): StorageAccess {
  const none = NO_ACCESS;
  const secret = storage.secretName;
  switch (storage.provider) {
    case 's3':
      if (!secret) return none;
      return {
        ...none,
        env: [
          { name: 'AWS_ACCESS_KEY_ID', valueFrom: { secretKeyRef: { name: secret, key: 'access_key' } } },
          { name: 'AWS_SECRET_ACCESS_KEY', valueFrom: { secretKeyRef: { name: secret, key: 'secret_key' } } },
        ],
      };
    case 'gcs':
      if (!secret) return none;
      return {
        ...none,
        volumes: [{ name: BR_VOLUME.gcsCredentials, secret: { secretName: secret, items: [{ key: 'credentials', path: 'credentials' }] } }],
        mounts: [{ name: BR_VOLUME.gcsCredentials, mountPath: GCS_CREDENTIALS_DIR, readOnly: true }],
      };
    case 'azblob':
      return secret ? { ...none, envFrom: [{ secretRef: { name: secret } }] } : none;
    case 'local':
      return { ...none, volumes: [storage.volume], mounts: [storage.volumeMount] };
  }
}

/** `base` with each variable of `extra` replacing the one of the same name, or added (the operator's `AppendOverwriteEnv`). */
function overwrite(base: readonly EnvVar[], extra: readonly EnvVar[]): EnvVar[] {
  const out = [...base];
  for (const e of extra) {
    const i = out.findIndex((b) => b.name === e.name);
    if (i >= 0) out[i] = e;
    else out.push(e);
  }
  return out;
}
