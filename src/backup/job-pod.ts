/**
 * The Pod fields of a Backup, a schedule's template or a Restore, checked where the document is read
 * with the rules of a TidbCluster's Pod fields (`tidbcluster/job-pod-input.ts`): the API server sees
 * them only when a CronJob or the controller creates the Job, after the apply. The volumes a BR Pod
 * gets from tidb-gitops (`render/br-pod.ts`) are named here, so that the document's own are checked
 * beside them.
 */
import type { SpecIssue } from '../tidbcluster/errors';
import { podFieldIssues, volumeIssues, type RenderedVolume } from '../tidbcluster/job-pod-input';
import type { ResolvedStorage } from './storage';
import type { JobPodSettings } from './types';

/**
 * The volumes tidb-gitops gives a BR Pod, by name. (Where it mounts them is `br-args.ts`', which
 * reads the resolved document: a mount of the document's own there is left to the API server.)
 */
export const BR_VOLUME = {
  /** The cluster's client certificate, when the cluster speaks TLS. */
  clusterTls: 'cluster-client-tls',
  /** A GCS service account key from the storage's Secret. */
  gcsCredentials: 'gcs-credentials',
} as const;

/**
 * What the API server would refuse in the Pod of the document's BR Jobs, `at` being the spec (or
 * template) that holds the Pod fields. A log backup's pause, resume and stop Jobs do not reach the
 * storage, so their Pods lack its volume: `log` says the document has such Jobs. Without a storage
 * (its own problems are reported), the volumes are not checked: which ones the Pod has is not known.
 */
export function brPodIssues(
  s: JobPodSettings,
  at: string,
  storage: ResolvedStorage | undefined,
  log: boolean,
  kubeMinor: number,
): SpecIssue[] {
  const spec = s as Record<string, unknown>;
  const issues = podFieldIssues(
    spec,
    at,
    {
      tolerations: 'tolerations',
      affinity: 'affinity',
      podSecurityContext: 'podSecurityContext',
      env: 'env',
      resources: 'resources',
      serviceAccountName: 'serviceAccount',
      priorityClassName: 'priorityClassName',
    },
    kubeMinor,
  );
  const claims = s.resources?.claims;
  if (Array.isArray(claims) && claims.length > 0) {
    issues.push({
      path: `${at}.resources.claims`,
      message: 'the BR Pod has no resource claims (spec.resourceClaims) for its container to name; remove claims',
    });
  }
  if (!storage) return issues;
  return [
    ...issues,
    ...volumeIssues(
      s.additionalVolumes,
      `${at}.additionalVolumes`,
      s.additionalVolumeMounts,
      `${at}.additionalVolumeMounts`,
      renderedVolumes(storage, log),
    ),
  ];
}

function renderedVolumes(storage: ResolvedStorage, log: boolean): RenderedVolume[] {
  const partial = log
    ? {
        notMountable:
          "a log backup's pause, resume and stop Jobs do not reach the storage, and their Pods have no volume of it: mount a volume of your own",
      }
    : {};
  const out: RenderedVolume[] = [
    {
      name: BR_VOLUME.clusterTls,
      notMountable:
        "tidb-gitops mounts the cluster's client certificate itself when the cluster speaks TLS (and the volume is not there when it does not): mount a volume of your own",
    },
  ];
  if (storage.provider === 'gcs' && storage.secretName) out.push({ name: BR_VOLUME.gcsCredentials, ...partial });
  if (storage.provider === 'local') out.push({ name: storage.volume.name, mountPath: storage.volumeMount.mountPath, ...partial });
  return out;
}
