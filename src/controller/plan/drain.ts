/**
 * A TiKV Pod that someone else deletes: a node drain's eviction (which the PodDisruptionBudget let
 * through), a cluster autoscaler, `kubectl delete pod`. Its container's preStop hook holds TiKV for a
 * bounded time; the controller uses it to move the store's region leaders away first, as it does
 * before its own restarts, so that no leader is lost with the Pod. The scheduler stays until the
 * Pod is back and Ready (`leftovers.ts`), so leaders do not return to a store that is going.
 */
import { isTerminating } from '../model/objects';
import { pdStoresOf, storeOfPod } from '../view/lookups';
import type { ComponentState, PlanInput } from '../view/view';
import { act, evictBegin, type Step } from './action';

/**
 * The first terminating TiKV Pod whose store is Up with leaders and no evict-leader scheduler yet.
 * The controller's own deletions always come after their eviction (a scheduler exists), and a store
 * that is going (Offline) or down has nothing to move; both are left alone.
 */
export function drainStep(input: PlanInput, c: ComponentState): Step | undefined {
  if (c.kind !== 'tikv') return undefined;
  const terminating = c.pods.filter(isTerminating);
  if (terminating.length === 0) return undefined;
  // Without PD's stores there is nothing to ask; what the component does next decides.
  const pd = pdStoresOf(input);
  if (typeof pd === 'string') return undefined;
  for (const pod of terminating) {
    const name = pod.metadata.name!;
    const store = storeOfPod(pd.stores, input.cluster.name, 'tikv', name);
    if (!store || store.state !== 'Up' || store.leaderCount === 0 || pd.evicting.has(store.id)) continue;
    return act(`${name} is being deleted (a node drain, or someone deleting it): evicting region leaders from its store ${store.id} while its preStop hook holds it`, evictBegin(input, pd, name, store.id, undefined, 'drain'), {
      type: 'Normal',
      reason: 'DrainEvictLeader',
      message: `${name} is being deleted: moving the region leaders of store ${store.id} (${store.leaderCount}) away before TiKV stops`,
      pod: name,
    });
  }
  return undefined;
}
