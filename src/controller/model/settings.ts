/**
 * What Git asks of a component, read from the annotations the renderer writes on its StatefulSet:
 * the desired replicas and the operation settings (update strategy, failover, timeouts...).
 */
import { ANNOTATION } from '../../tidbcluster/names';
import type { StatefulSet } from './objects';

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

/** Parses the settings annotation; a bad one counts as none (the renderer always writes valid JSON). */
export function settingsOf(sts: StatefulSet): ComponentSettings {
  const text = sts.metadata.annotations?.[ANNOTATION.settings];
  if (!text) return {};
  try {
    const v = JSON.parse(text) as unknown;
    return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as ComponentSettings) : {};
  } catch {
    return {};
  }
}

export function desiredReplicas(sts: StatefulSet): number | undefined {
  const text = sts.metadata.annotations?.[ANNOTATION.replicas];
  return text !== undefined && /^\d+$/.test(text) ? Number(text) : undefined;
}

export const replicasOf = (sts: StatefulSet): number => sts.spec?.replicas ?? 1;

/** The update strategy Git asks for (the settings annotation; RollingUpdate when it names none). */
export const desiredStrategy = (sts: StatefulSet): 'RollingUpdate' | 'OnDelete' => (settingsOf(sts).updateStrategy === 'OnDelete' ? 'OnDelete' : 'RollingUpdate');

export const isRolling = (sts: StatefulSet): boolean => desiredStrategy(sts) === 'RollingUpdate';
