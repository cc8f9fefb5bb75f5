/**
 * The controller's view of the objects it reads, as plain data: only the fields it uses, so the
 * decision code needs neither the Kubernetes client nor a cluster to be exercised.
 */
import { COMPONENTS, names, type ComponentKind, type ControllerClusterInfo } from '../../tidbcluster/names';
import { tagVersionAtLeast } from '../../base/version';

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
  lastTransitionTime?: Date | string;
}

export interface Pod {
  metadata: ObjectMeta;
  spec?: { volumes?: Volume[]; nodeName?: string; containers?: { name: string; image?: string }[] };
  status?: {
    phase?: string;
    podIP?: string;
    podIPs?: { ip: string }[];
    conditions?: PodCondition[];
    containerStatuses?: { name: string; restartCount?: number }[];
  };
}

/** A ConfigMap as the garbage collection of old config revisions sees it: identity and labels. */
export interface ConfigMapMeta {
  metadata: ObjectMeta;
}

/** A PersistentVolumeClaim: its identity and annotations, and its size asked for and reached. */
export interface Pvc {
  metadata: ObjectMeta;
  spec?: { resources?: { requests?: Record<string, unknown> } };
  status?: { phase?: string; capacity?: Record<string, unknown>; conditions?: { type: string; status: string }[] };
}

/**
 * What the renderer tells the controller about the cluster (the `TIDB_GITOPS_CLUSTER` JSON), plus the
 * namespace the controller runs in.
 */
export interface ClusterInfo extends ControllerClusterInfo {
  readonly namespace: string;
}

/** Operation settings from a StatefulSet's `tidb-gitops.io/settings` annotation (renderer-written). */
export interface ComponentSettings {
  /** @default false */
  paused?: boolean;
  /**
   * How Pods pick up a new template (`spec.<component>.statefulSetUpdateStrategy`). The controller
   * owns the StatefulSet's `spec.updateStrategy` and writes this type with the partition in one
   * request, so a switch either way restarts nothing by itself. @default "RollingUpdate"
   */
  updateStrategy?: 'RollingUpdate' | 'OnDelete';
  /** Skip the health checks and let the StatefulSet roll every Pod. @default false */
  forceUpgrade?: boolean;
  /** TiKV: how long to wait for region leaders to leave a store before restarting it anyway. @default "1500m" */
  evictLeaderTimeout?: string;
  /** TiKV: how long to wait for leaders to come back to an upgraded store. @default "400s" */
  waitLeaderTransferBackTimeout?: string;
  /** PD, TiKV, TiFlash, TiDB: failure records (extra replicas) at most; 0 turns failover off. @default 3 */
  maxFailoverCount?: number;
  /** TiKV, TiFlash: remove the failover replicas once every failed store is Up again. @default false */
  recoverFailover?: boolean;
  /** TiKV, TiFlash: remove the failover replicas once, when this equals the recorded failover UID. */
  recoverByUID?: string;
  /** TiCDC: how long a capture may take to hand its tables over before it is removed anyway. @default "10m" */
  gracefulShutdownTimeout?: string;
  /** PD, TiKV, TiFlash, TiDB, TiProxy: seconds an upgraded Pod must have been Ready before the next restarts. @default 0 */
  minReadySeconds?: number;
  /** PD: restart a member only while more than a majority plus one are healthy. @default false */
  checkQuorumBeforeUpgrade?: boolean;
  /** TiKV: restart a store only while every store in PD is Up or Tombstone. @default false */
  checkStoresUpBeforeUpgrade?: boolean;
  /** TiKV: ask log backup to flush once a store has no leaders, before its restart. @default true */
  flushLogBackup?: boolean;
  [key: string]: unknown;
}

/** A Pod's host name under its component's headless Service: `<pod>.<cluster>-<kind>-peer.<ns>` (what the operator's clients dial). */
export const podHost = (c: Pick<ClusterInfo, 'name' | 'namespace'>, kind: ComponentKind, pod: string): string => `${pod}.${names.peerService(c.name, kind)}.${c.namespace}`;

/** Parses and checks the cluster JSON; errors say which key is wrong. */
export function parseClusterInfo(json: string, namespace: string): ClusterInfo {
  let raw: unknown;
  try {
    raw = JSON.parse(json);
  } catch (e) {
    throw new Error(`TIDB_GITOPS_CLUSTER is not JSON: ${(e as Error).message}`);
  }
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) throw new Error('TIDB_GITOPS_CLUSTER must be a JSON object');
  const o = raw as Record<string, unknown>;
  const str = (k: string, dflt?: string): string => {
    const v = o[k] ?? dflt;
    if (typeof v !== 'string') throw new Error(`TIDB_GITOPS_CLUSTER.${k}: expected a string`);
    return v;
  };
  const bool = (k: string): boolean => {
    const v = o[k] ?? false;
    if (typeof v !== 'boolean') throw new Error(`TIDB_GITOPS_CLUSTER.${k}: expected true or false`);
    return v;
  };
  const components = (o.components ?? []) as unknown[];
  if (!Array.isArray(components) || components.some((c) => !(COMPONENTS as readonly unknown[]).includes(c))) {
    throw new Error(`TIDB_GITOPS_CLUSTER.components: expected a list of ${COMPONENTS.join(', ')}`);
  }
  const pdAddresses = (o.pdAddresses ?? []) as unknown[];
  if (!Array.isArray(pdAddresses) || pdAddresses.some((a) => typeof a !== 'string')) {
    throw new Error('TIDB_GITOPS_CLUSTER.pdAddresses: expected a list of URLs');
  }
  const ref = o.cluster as { name?: unknown; namespace?: unknown; clusterDomain?: unknown } | null | undefined;
  if (ref !== undefined && ref !== null && (typeof ref !== 'object' || typeof ref.name !== 'string')) {
    throw new Error('TIDB_GITOPS_CLUSTER.cluster: expected null or {name, namespace, clusterDomain}');
  }
  return {
    name: str('name'),
    namespace,
    clusterDomain: str('clusterDomain', ''),
    acrossK8s: bool('acrossK8s'),
    tls: bool('tls'),
    discoveryMtls: bool('discoveryMtls'),
    pdAddresses: pdAddresses as string[],
    cluster: ref ? { name: ref.name as string, namespace: String(ref.namespace ?? ''), clusterDomain: String(ref.clusterDomain ?? '') } : null,
    // Keep the reconcile order whatever order the list came in.
    components: COMPONENTS.filter((c) => components.includes(c)),
    ...(bool('readsNodes') && { readsNodes: true as const }),
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

/**
 * Go duration (`1500m`, `400s`, `1h30m`, `250ms`) in milliseconds; undefined when it does not parse.
 */
export function parseDuration(text: string | undefined): number | undefined {
  if (!text) return undefined;
  const unit: Record<string, number> = { ns: 1e-6, us: 1e-3, 'µs': 1e-3, ms: 1, s: 1000, m: 60_000, h: 3_600_000 };
  const re = /(\d+(?:\.\d+)?)(ns|us|µs|ms|s|m|h)/gy;
  let total = 0;
  let m: RegExpExecArray | null;
  let consumed = 0;
  while ((m = re.exec(text)) !== null) {
    total += Number(m[1]) * unit[m[2]];
    consumed = re.lastIndex;
  }
  return consumed === text.length && consumed > 0 ? total : undefined;
}

/** The tag of the image of a StatefulSet's container (`pingcap/tiflash:v8.5.0` -> `v8.5.0`), if any. */
export function imageTag(sts: StatefulSet, container: string): string | undefined {
  const image = sts.spec?.template?.spec?.containers?.find((c) => c.name === container)?.image;
  const name = image?.split('@')[0];
  const colon = name?.lastIndexOf(':') ?? -1;
  return name !== undefined && colon > name.lastIndexOf('/') ? name.slice(colon + 1) : undefined;
}

/** Whether a version tag is at least `min`, as tidb-operator compares them; undefined for no tag or no version. */
export function versionAtLeast(tag: string | undefined, min: string): boolean | undefined {
  return tag === undefined ? undefined : tagVersionAtLeast(tag, min);
}

export function toMillis(t: Date | string | undefined): number | undefined {
  if (t === undefined) return undefined;
  const ms = t instanceof Date ? t.getTime() : Date.parse(t);
  return Number.isNaN(ms) ? undefined : ms;
}
