/**
 * What an operation that is over (or was taken back in Git) leaves behind on an idle component: the
 * evict-leader schedulers the controller added, and the marks its steps wrote on Pods.
 */
import { names } from '../../tidbcluster/names';
import { LOG_BACKUP_FLUSHED_ANNOTATION, OPERATION_MARKS } from '../model/annotations';
import { isReady, isTerminating, ordinalOf } from '../model/objects';
import { replicasOf } from '../model/settings';
import type { ComponentState, PlanInput } from '../view/view';
import { requests } from './evict-requests';
import { pdStoresOf, storeOfPod } from '../view/lookups';
import { heardSinceStart, running } from './serving';

/**
 * The controller's own eviction records of this component, once nothing needs them: the component
 * is neither upgrading nor scaling (the caller's condition). Schedulers anyone else added are never
 * recorded, so never removed.
 */
export function leftoverEvictions(input: PlanInput, c: ComponentState): number[] {
  const sts = names.statefulSet(input.cluster.name, c.kind);
  // A request still standing keeps its scheduler; it goes once the Pod no longer asks.
  const asking = new Set(requests(c).map((r) => r.pod.metadata.name));
  return Object.entries(input.evictions ?? {})
    .filter(
      ([, r]) =>
        ordinalOf(r.pod, sts) !== undefined &&
        !(r.for === 'request' && asking.has(r.pod)) &&
        !(r.for === 'drain' && drainPending(input, c, r.pod, sts)),
    )
    .map(([id]) => Number(id));
}

/**
 * A drained Pod keeps its scheduler until its successor runs and its store is Up in PD again: removed
 * earlier, PD would send leaders back to a store that is stopping or not serving yet. Not until the
 * Pod is Ready: its readiness gate waits for the leaders to come back (`serving.ts`), which the
 * scheduler would keep away. A Pod the StatefulSet no longer has (scaled in meanwhile) does not come
 * back.
 */
function drainPending(input: PlanInput, c: ComponentState, pod: string, sts: string): boolean {
  const ordinal = ordinalOf(pod, sts)!;
  const live = c.pods.find((p) => p.metadata.name === pod);
  if (!live) return ordinal < replicasOf(c.sts);
  if (isTerminating(live)) return true;
  const pd = pdStoresOf(input);
  if (typeof pd === 'string') return !isReady(live);
  const store = storeOfPod(pd.stores, input.cluster.name, c.kind, pod);
  return !running(live) || store?.state !== 'Up' || !heardSinceStart(store, live);
}

export function leftoverMarks(c: ComponentState): { pod: string; keys: string[] }[] {
  // A Pod that asks to be deleted keeps its flush mark until it is.
  const deleting = new Set(
    requests(c)
      .filter((r) => r.deletePod)
      .map((r) => r.pod.metadata.name),
  );
  return c.pods
    .filter((p) => !isTerminating(p))
    .map((p) => ({
      pod: p.metadata.name!,
      keys: OPERATION_MARKS.filter(
        (k) => p.metadata.annotations?.[k] !== undefined && !(k === LOG_BACKUP_FLUSHED_ANNOTATION && deleting.has(p.metadata.name)),
      ),
    }))
    .filter((m) => m.keys.length > 0);
}
