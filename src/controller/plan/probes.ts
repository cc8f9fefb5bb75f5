/**
 * What the controller reads before it plans, decided from the StatefulSets and Pods alone (the
 * reconciler does the reading): which parts of PD's view, and which Pods' own servers.
 */
import { EVICT_BEGIN_ANNOTATION } from '../model/annotations';
import { isReady, isTerminating, podRevision } from '../model/objects';
import { isRolling, settingsOf } from '../model/settings';
import { isUpgrading, targetReplicas } from '../view/lookups';
import type { ComponentState, PlanInput } from '../view/view';
import { requests } from './evict-requests';
import { isMsService, type MsService } from './pdms';
import { replacePodsAsked } from './replace';
import { tiflashStatusChecked } from './upgrade-tiflash';
import { hasGate } from './serving';

/** The parts of PD's view the planner needs. */
export interface PdReads {
  /** Stores and evict-leader schedulers: the cluster runs TiKV or TiFlash. */
  readonly stores: boolean;
  /**
   * Tombstone stores and `replication.max-replicas`: only while a TiKV or TiFlash store may be taken
   * out, that is while the component has more replicas than it should, or a replacement is asked for
   * (by Git or by a Pod's `tidb.pingcap.com/replace-volume`; checked the same way before the store goes
   * offline).
   */
  readonly storeRemovals: boolean;
  /** The micro-services whose servers and primary are read from PD's registry. */
  readonly msServices: readonly MsService[];
}

/**
 * What the planner needs read from PD, or undefined when it needs nothing (the cluster runs no PD,
 * TiKV, TiFlash or PD micro-service). `failover`: the failure records, whose extra replicas count.
 */
export function pdReadsWanted(components: readonly ComponentState[], failover: PlanInput['failover']): PdReads | undefined {
  const storeKinds = components.filter((x) => x.kind === 'tikv' || x.kind === 'tiflash');
  const msServices = components.map((x) => x.kind).filter(isMsService);
  if (storeKinds.length === 0 && msServices.length === 0 && !components.some((x) => x.kind === 'pd')) return undefined;
  const replacing = storeKinds.some((x) => replacePodsAsked(x, settingsOf(x.sts)).length > 0);
  const scalingIn = storeKinds.some((x) => (x.sts.spec?.replicas ?? 1) > (targetReplicas({ failover }, x) ?? Infinity));
  return { stores: storeKinds.length > 0, storeRemovals: replacing || scalingIn, msServices };
}

/**
 * The Pods whose servers the controller asks before planning: every Ready Pod at the update
 * revision of an upgrading PD (its `/pd/api/v2/ready`) or TiFlash (its `/tiflash/store-status`), and
 * every TiKV Pod of an upgrading TiKV whose leaders are being evicted for its restart (its `/metrics`),
 * and every running TiDB Pod whose readiness gate the controller keeps (its `/status`, `serving.ts`).
 */
export function probesWanted(components: readonly ComponentState[]): {
  pdReady: string[];
  tiflashStatus: string[];
  tikvLeaders: string[];
  tidbStatus: string[];
} {
  const out = { pdReady: [] as string[], tiflashStatus: [] as string[], tikvLeaders: [] as string[], tidbStatus: [] as string[] };
  for (const c of components) {
    if (c.kind === 'tidb')
      out.tidbStatus.push(
        ...c.pods.filter((p) => hasGate(p) && !isTerminating(p) && p.status?.phase === 'Running').map((p) => p.metadata.name!),
      );
    out.tikvLeaders.push(
      ...requests(c)
        .filter((r) => r.deletePod)
        .map((r) => r.pod.metadata.name!),
    );
    if (!isRolling(c.sts) || !isUpgrading(c.sts, c.pods)) continue;
    const update = c.sts.status?.updateRevision;
    if (c.kind === 'tikv') {
      const evicting = c.pods.filter(
        (p) => podRevision(p) !== update && !isTerminating(p) && p.metadata.annotations?.[EVICT_BEGIN_ANNOTATION] !== undefined,
      );
      out.tikvLeaders.push(...evicting.map((p) => p.metadata.name!).filter((n) => !out.tikvLeaders.includes(n)));
      continue;
    }
    if (c.kind !== 'pd' && !(c.kind === 'tiflash' && tiflashStatusChecked(c.sts))) continue;
    const pods = c.pods.filter((p) => podRevision(p) === update && isReady(p)).map((p) => p.metadata.name!);
    (c.kind === 'pd' ? out.pdReady : out.tiflashStatus).push(...pods);
  }
  return out;
}
