/**
 * The operation settings of a component (the `tidb-gitops.io/settings` annotation on its
 * StatefulSet): what the renderer writes and how the controller reads it back.
 */
import { stableJson } from '../../base/stable-json';

/**
 * Operation settings from a StatefulSet's `tidb-gitops.io/settings` annotation (renderer-written).
 * The controller reads the annotation without checking each field's type, so its readers keep their
 * own checks where a wrong type would mislead them.
 */
export interface ComponentSettings {
  /** `spec.paused`: the controller changes no replicas or partition. @default false */
  readonly paused?: boolean;
  /**
   * `spec.pvReclaimPolicy`, which the controller sets on the PVs bound to the cluster's claims when it
   * may patch them; anything but `Delete` reads as `Retain`. @default "Retain"
   */
  readonly pvReclaimPolicy?: string;
  /** `spec.enablePVReclaim`. @default false */
  readonly enablePVReclaim?: boolean;
  /** The Kubernetes version the render targets (`1.33`): read by `diff`, which reports a change of target. @default none */
  readonly kubeVersion?: string;
  /**
   * How Pods pick up a new template (`spec.<component>.statefulSetUpdateStrategy`). The controller
   * owns the StatefulSet's `spec.updateStrategy` and writes this type with the partition in one
   * request, so a switch either way restarts nothing by itself. @default "RollingUpdate"
   */
  readonly updateStrategy?: 'RollingUpdate' | 'OnDelete';
  /** Skip the health checks and let the StatefulSet roll every Pod. @default false */
  readonly forceUpgrade?: boolean;
  /** TiKV: how long to wait for region leaders to leave a store before restarting it anyway. @default "1500m" */
  readonly evictLeaderTimeout?: string;
  /** TiKV: how long to wait for leaders to come back to an upgraded store. @default "400s" */
  readonly waitLeaderTransferBackTimeout?: string;
  /** PD, TiKV, TiFlash, TiDB: failure records (extra replicas) at most; 0 turns failover off. @default 3 */
  readonly maxFailoverCount?: number;
  /** TiKV, TiFlash: remove the failover replicas once every failed store is Up again. @default false */
  readonly recoverFailover?: boolean;
  /** TiKV, TiFlash: remove the failover replicas once, when this equals the recorded failover UID. @default none */
  readonly recoverByUID?: string;
  /** PD, TiKV: `spec.<component>.spareVolReplaceReplicas`. @default 1 */
  readonly spareVolReplaceReplicas?: number;
  /** TiKV, TiFlash, TiDB: `spec.<component>.scalePolicy.scaleInParallelism`. @default 1 */
  readonly scaleInParallelism?: number;
  /** TiKV, TiFlash, TiDB: `spec.<component>.scalePolicy.scaleOutParallelism`. @default 1 */
  readonly scaleOutParallelism?: number;
  /** TiKV: `spec.tikv.storeLabels`, more Node label keys for the stores. @default [] */
  readonly storeLabels?: readonly string[];
  /** TiDB, TiProxy: `spec.<component>.serverLabels`. @default {} */
  readonly serverLabels?: Readonly<Record<string, string>>;
  /** TiCDC: how long a capture may take to hand its tables over before it is removed anyway. @default "10m" */
  readonly gracefulShutdownTimeout?: string;
  /** PD, TiKV, TiFlash: the Pods to replace once (`tidb-gitops.io/replace`), in ordinal order. @default none */
  readonly replace?: readonly string[];
  /** PD, TiKV, TiFlash, TiDB, TiProxy: seconds an upgraded Pod must have been Ready before the next restarts. @default 0 */
  readonly minReadySeconds?: number;
  /** PD: restart a member only while more than a majority plus one are healthy. @default false */
  readonly checkQuorumBeforeUpgrade?: boolean;
  /** TiKV: restart a store only while every store in PD is Up or Tombstone. @default false */
  readonly checkStoresUpBeforeUpgrade?: boolean;
  /** TiKV: ask log backup to flush once a store has no leaders, before its restart. @default true */
  readonly flushLogBackup?: boolean;
}

/** The annotation's text: keys sorted, unset fields left out. */
export const encodeComponentSettings = (settings: ComponentSettings): string => stableJson(settings);

/**
 * Reads the annotation's text; a missing or bad one counts as none (the renderer always writes valid
 * JSON). The fields are taken as they are, unchecked.
 */
export function parseComponentSettings(text: string | undefined): ComponentSettings {
  if (!text) return {};
  try {
    const v = JSON.parse(text) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as ComponentSettings) : {};
  } catch {
    return {};
  }
}
