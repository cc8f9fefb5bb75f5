/**
 * Leader eviction asked for on a TiKV Pod (tidb-operator's `tidb.pingcap.com/evict-leader` Pod
 * annotation), carried out while TiKV is idle.
 */
import { EVICT_REQUEST_ANNOTATION, EVICT_REQUEST_EXPIRY_ANNOTATION } from '../model/annotations';
import { isTerminating, podRevision, type Pod } from '../model/objects';
import { settingsOf } from '../model/settings';
import { toMillis } from '../model/values';
import { pdStoresOf, storeOfPod } from '../view/lookups';
import type { ComponentState, PlanInput } from '../view/view';
import { act, evictBegin, wait, waitPd, type Step } from './action';
import { flushStep } from './upgrade-tikv';

/** TiKV Pods that ask for leader eviction with a value the operator knows, not terminating. */
export function requests(c: ComponentState): { pod: Pod; deletePod: boolean }[] {
  if (c.kind !== 'tikv') return [];
  return c.pods
    .filter((p) => !isTerminating(p))
    .map((p) => ({ pod: p, value: p.metadata.annotations?.[EVICT_REQUEST_ANNOTATION] }))
    .filter((r) => r.value === 'none' || r.value === 'delete-pod')
    .map((r) => ({ pod: r.pod, deletePod: r.value === 'delete-pod' }));
}

/**
 * tidb-operator's Pod-level leader eviction (`pkg/controller/tidbcluster/pod_control.go`), taken on
 * while TiKV is idle: a request past its expiration time is removed; otherwise, with every store Up,
 * the store's leaders are evicted (a scheduler the controller records as the request's), and with
 * `delete-pod` the Pod is deleted once PD and the server count no leaders, after a log backup flush.
 * The scheduler is removed once the Pod no longer asks (the re-created Pod does not carry the request).
 */
export function evictRequestStep(input: PlanInput, c: ComponentState): Step | undefined {
  const standing = requests(c);
  if (standing.length === 0) return undefined;
  const settings = settingsOf(c.sts);
  for (const { pod, deletePod } of standing) {
    const name = pod.metadata.name!;
    const expiry = toMillis(pod.metadata.annotations?.[EVICT_REQUEST_EXPIRY_ANNOTATION]);
    if (expiry !== undefined && input.now >= expiry) {
      return act(`the leader eviction asked for on ${name} expired: removing the request`, {
        type: 'clear-marks',
        marks: [{ pod: name, keys: [EVICT_REQUEST_ANNOTATION, EVICT_REQUEST_EXPIRY_ANNOTATION] }],
      });
    }
    const pd = pdStoresOf(input);
    if (typeof pd === 'string') return waitPd(pd);
    const store = storeOfPod(pd.stores, input.cluster.name, 'tikv', name);
    if (!store) continue;
    if (!pd.evicting.has(store.id)) {
      // As the operator does before it adds the scheduler: every store must be Up.
      const down = pd.stores.find((s) => s.state !== 'Up' && s.state !== 'Tombstone');
      if (down) return wait(`leader eviction asked for on ${name} waits: store ${down.id} is ${down.state}`);
      return act(
        `evicting region leaders from store ${store.id} (${name}), as its ${EVICT_REQUEST_ANNOTATION} annotation asks`,
        evictBegin(input, pd, name, store.id, undefined, 'request'),
        {
          type: 'Normal',
          reason: 'EvictLeaderBegin',
          message: `evicting region leaders from store ${store.id}, as the Pod's ${EVICT_REQUEST_ANNOTATION} annotation asks`,
          pod: name,
        },
      );
    }
    if (!deletePod) continue;
    const metric = input.probes?.tikvLeaders?.[name];
    if (store.leaderCount > 0)
      return wait(`waiting for region leaders to leave store ${store.id} (${name}) before deleting the Pod: ${store.leaderCount} left`);
    if (metric?.count === undefined)
      return wait(
        `PD counts no leaders on store ${store.id}; reading ${name}'s own count before deleting the Pod${metric ? ` (${metric.detail})` : ''}`,
      );
    if (metric.count > 0) return wait(`PD counts no leaders on store ${store.id}, but ${name}'s /metrics still shows ${metric.count}`);
    const flush = flushStep(pod, store.id, settings, podRevision(pod) ?? '', 'deleting the Pod');
    if (flush) return flush;
    return act(
      `deleting ${name}, whose store ${store.id} has no leaders, as its ${EVICT_REQUEST_ANNOTATION}: delete-pod annotation asks`,
      { type: 'delete-pod', pod: name, uid: pod.metadata.uid, storeId: store.id },
      {
        type: 'Normal',
        reason: 'EvictLeaderDeletePod',
        message: `store ${store.id} has no leaders: deleting the Pod, as its ${EVICT_REQUEST_ANNOTATION}: delete-pod annotation asks`,
        pod: name,
      },
    );
  }
  return undefined;
}
