/**
 * The controller's view of the objects it reads, as plain data: only the fields it uses, so the
 * decision code needs neither the Kubernetes client nor a cluster to be exercised.
 */

export interface ObjectMeta {
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
  generation?: number;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  /** A Date from the client library, a string on the wire. */
  deletionTimestamp?: Date | string;
  creationTimestamp?: Date | string;
  ownerReferences?: OwnerReference[];
}

export interface OwnerReference {
  apiVersion?: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
}

/** A Pod volume: only the ConfigMaps it mounts matter (directly or through a projection). */
export interface Volume {
  name?: string;
  configMap?: { name?: string };
  projected?: { sources?: { configMap?: { name?: string } }[] };
}

export interface StatefulSet {
  metadata: ObjectMeta;
  spec?: {
    replicas?: number;
    template?: { spec?: { volumes?: Volume[]; containers?: { name?: string; image?: string }[] } };
    updateStrategy?: { type?: string; rollingUpdate?: { partition?: number } };
    /** A Pod's claims are `<template>-<pod>`; the size is what a new claim asks for. */
    volumeClaimTemplates?: { metadata?: { name?: string }; spec?: { resources?: { requests?: Record<string, unknown> } } }[];
  };
  status?: {
    observedGeneration?: number;
    replicas?: number;
    readyReplicas?: number;
    currentReplicas?: number;
    updatedReplicas?: number;
    currentRevision?: string;
    updateRevision?: string;
  };
}

export interface PodCondition {
  type: string;
  status: string;
  reason?: string;
  lastTransitionTime?: Date | string;
}

export interface Pod {
  metadata: ObjectMeta;
  spec?: {
    volumes?: Volume[];
    nodeName?: string;
    containers?: { name: string; image?: string }[];
    terminationGracePeriodSeconds?: number;
    /** Conditions kubelet waits for, beside the containers' readiness, before it counts the Pod Ready. */
    readinessGates?: { conditionType: string }[];
  };
  status?: {
    phase?: string;
    podIP?: string;
    podIPs?: { ip: string }[];
    conditions?: PodCondition[];
    containerStatuses?: {
      name: string;
      restartCount?: number;
      /** Set once the container has stopped: its exit and the message it left (`terminationMessagePath`). */
      state?: {
        terminated?: { exitCode?: number; message?: string; finishedAt?: Date | string };
        running?: { startedAt?: Date | string };
        /** Why a container has not started: `CreateContainerConfigError` (a missing Secret), `ImagePullBackOff`... */
        waiting?: { reason?: string; message?: string };
      };
    }[];
  };
}

/** A Job as the backup run records see it: its identity, labels and how it stands. */
export interface Job {
  metadata: ObjectMeta;
  status?: {
    startTime?: Date | string;
    completionTime?: Date | string;
    /** `Complete` and `Failed` (with their reason and message) once the Job is over. */
    conditions?: (PodCondition & { reason?: string; message?: string })[];
  };
}

/** A ConfigMap as the garbage collection of old config revisions sees it: identity and labels. */
export interface ConfigMapMeta {
  metadata: ObjectMeta;
}

/** A PersistentVolumeClaim: its identity and annotations, and its size asked for and reached. */
export interface Pvc {
  metadata: ObjectMeta;
  /** `volumeName`: the PV the claim is bound to (set when it binds). */
  spec?: { resources?: { requests?: Record<string, unknown> }; volumeName?: string };
  status?: { phase?: string; capacity?: Record<string, unknown>; conditions?: { type: string; status: string }[] };
}

/** A PersistentVolume (cluster-scoped): its reclaim policy and the claim it is bound to. */
export interface PersistentVolume {
  metadata: ObjectMeta;
  spec?: {
    persistentVolumeReclaimPolicy?: string;
    claimRef?: { namespace?: string; name?: string; uid?: string };
  };
}

export const isReady = (pod: Pod): boolean =>
  !pod.metadata.deletionTimestamp && (pod.status?.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

/**
 * Ready for at least `minReadySeconds` (Kubernetes' notion of available, as the operator's
 * upgraders use it): the Ready condition's lastTransitionTime is that long before `now`.
 */
export function isAvailable(pod: Pod, minReadySeconds: number, now: number): boolean {
  if (!isReady(pod)) return false;
  if (minReadySeconds <= 0) return true;
  const since = (pod.status?.conditions ?? []).find((c) => c.type === 'Ready')?.lastTransitionTime;
  const at = since === undefined ? NaN : new Date(since).getTime();
  return Number.isFinite(at) && at + minReadySeconds * 1000 <= now;
}

export const isTerminating = (pod: Pod): boolean => Boolean(pod.metadata.deletionTimestamp);

/** The StatefulSet revision a Pod was made from. */
export const podRevision = (pod: Pod): string | undefined => pod.metadata.labels?.['controller-revision-hash'];

/** Ordinal of `<statefulset>-<n>`, or undefined for a name of another shape. */
export function ordinalOf(podName: string, stsName: string): number | undefined {
  if (!podName.startsWith(`${stsName}-`)) return undefined;
  const rest = podName.slice(stsName.length + 1);
  return /^(0|[1-9]\d*)$/.test(rest) ? Number(rest) : undefined;
}
