/**
 * Old config revisions. With `configUpdateStrategy: RollingUpdate` every config change renders a
 * ConfigMap with a new hash-suffixed name, and the GitOps tool leaves the old one in place (the
 * renderer marks these ConfigMaps as never to be pruned), because Pods still running the old
 * revision, and Pods the StatefulSet re-creates from it, mount it until the rollout is done. This
 * module decides which of them nothing can need any more; the controller deletes those.
 */
import { isConfigRevision, names, type ComponentKind } from '../../tidbcluster/names';
import type { ClusterInfo } from '../model/cluster';
import type { ConfigMapMeta, Pod, StatefulSet, Volume } from '../model/objects';
import { toMillis } from '../model/values';

/** How long a hash-named ConfigMap newer than the one in use is kept. @default 1 hour */
export const DEFAULT_CONFIG_GRACE_MS = 60 * 60 * 1000;

export interface StaleConfigInput {
  readonly cluster: ClusterInfo;
  /** The cluster's StatefulSets (current specs: what Git last applied, with the controller's fields). */
  readonly statefulSets: readonly StatefulSet[];
  /** Every Pod of the cluster, running or terminating. */
  readonly pods: readonly Pod[];
  /** The cluster's ConfigMaps (any; only hash-named component ones are candidates). */
  readonly configMaps: readonly ConfigMapMeta[];
  readonly now: number;
  /**
   * A ConfigMap that is newer than the one in use (or whose component has no StatefulSet) is kept
   * this long after its creation: Git may be applying a new revision whose StatefulSet is still on
   * its way. @default DEFAULT_CONFIG_GRACE_MS
   */
  readonly graceMs?: number;
}

export interface StaleConfigResult {
  /** Safe to delete now. */
  readonly stale: readonly ConfigMapMeta[];
  /** The earliest time a ConfigMap kept only by the grace period becomes deletable, if any. */
  readonly recheckAt?: number;
  /** Components whose rollout is still under way: nothing of theirs was considered. */
  readonly rollingOut: readonly ComponentKind[];
}

/** The ConfigMap names a set of volumes mounts. */
export function configMapsOf(volumes: readonly Volume[] | undefined): string[] {
  const out: string[] = [];
  for (const v of volumes ?? []) {
    if (v.configMap?.name) out.push(v.configMap.name);
    for (const s of v.projected?.sources ?? []) if (s.configMap?.name) out.push(s.configMap.name);
  }
  return out;
}

/**
 * A StatefulSet has finished rolling out when it has seen its latest spec and every replica runs the
 * update revision, which the StatefulSet controller then makes the current one. Only then can no Pod
 * be re-created from an older template.
 */
export function rolloutDone(sts: StatefulSet): boolean {
  const st = sts.status;
  if (!st) return false;
  if ((st.observedGeneration ?? 0) < (sts.metadata.generation ?? 0)) return false;
  if (!st.currentRevision || st.currentRevision !== st.updateRevision) return false;
  return (st.updatedReplicas ?? 0) >= (sts.spec?.replicas ?? 1);
}

/**
 * The hash-named component ConfigMaps that no Pod mounts, no StatefulSet template names, and that are
 * not a revision Git may be bringing in. A component in the middle of a rollout is left alone whole.
 */
export function staleConfigMaps(input: StaleConfigInput): StaleConfigResult {
  const grace = input.graceMs ?? DEFAULT_CONFIG_GRACE_MS;
  const c = input.cluster;
  const used = new Set<string>();
  for (const p of input.pods) for (const n of configMapsOf(p.spec?.volumes)) used.add(n);
  for (const s of input.statefulSets) for (const n of configMapsOf(s.spec?.template?.spec?.volumes)) used.add(n);
  const created = (cm: ConfigMapMeta) => toMillis(cm.metadata.creationTimestamp) ?? input.now;

  const stale: ConfigMapMeta[] = [];
  const rollingOut: ComponentKind[] = [];
  let recheckAt: number | undefined;
  for (const kind of c.components) {
    const mine = input.configMaps.filter((cm) => isConfigRevision(c.name, kind, cm.metadata.name ?? '') && !cm.metadata.deletionTimestamp);
    if (mine.length === 0) continue;
    const sts = input.statefulSets.find((s) => s.metadata.name === names.statefulSet(c.name, kind));
    if (sts && !rolloutDone(sts)) {
      rollingOut.push(kind);
      continue;
    }
    // The revision in use: what the StatefulSet's template mounts. Older unused ones are history.
    const mounted = configMapsOf(sts?.spec?.template?.spec?.volumes);
    const inUse = mine.filter((cm) => mounted.includes(cm.metadata.name!));
    const inUseSince = inUse.length > 0 ? Math.min(...inUse.map(created)) : undefined;
    for (const cm of mine) {
      if (used.has(cm.metadata.name!)) continue;
      const born = created(cm);
      if (inUseSince !== undefined && born < inUseSince) {
        stale.push(cm);
      } else if (input.now - born >= grace) {
        stale.push(cm);
      } else {
        recheckAt = Math.min(recheckAt ?? Infinity, born + grace);
      }
    }
  }
  return { stale, recheckAt, rollingOut };
}
