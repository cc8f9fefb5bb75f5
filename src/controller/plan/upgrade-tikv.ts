/**
 * TiKV in an upgrade, as tidb-operator's `tikv_upgrader.go` steps it: a store's region leaders leave
 * (an evict-leader scheduler) before its Pod restarts, until PD and the server itself count none or
 * `evictLeaderTimeout` passes; its log backup is asked to flush; once upgraded and Up, its scheduler
 * goes and the next restart waits (within `waitLeaderTransferBackTimeout`) for leaders to come back.
 */
import type { PdStore } from '../clients/pd';
import { EVICT_BEGIN_ANNOTATION, EVICT_END_ANNOTATION, LOG_BACKUP_FLUSHED_ANNOTATION, USER_EVICT_ANNOTATIONS } from '../model/annotations';
import type { Pod } from '../model/objects';
import type { ComponentSettings } from '../../tidbcluster/contract';
import { parseDuration, toMillis } from '../model/values';
import { ownsEviction, pdStoresOf, storeOfPod } from '../view/lookups';
import type { ComponentState, PdState, PlanInput } from '../view/view';
import { act, evictBegin, OK, wait, waitPd, type Step, type UpgradeChecks } from './action';
import { upTikvStores } from './store-safety';

/** Below this even share of leaders per store, an upgraded store is not waited for. */
const LEADERS_BACK_MIN_SHARE = 200;

/**
 * A TiKV store loses its region leaders before its Pod restarts: the evict-leader scheduler moves
 * them, and the restart waits until both PD and the server's own `/metrics` count none (PD's count
 * follows region heartbeats, the server's gauge is refreshed every 10 s: neither alone is proof), or
 * until `evictLeaderTimeout`. Then log backup is asked to flush, unless the cluster opts out.
 */
function prepareStore(input: PlanInput, c: ComponentState, pod: Pod, settings: ComponentSettings): Step {
  const name = pod.metadata.name!;
  const pd = pdStoresOf(input);
  if (typeof pd === 'string') return waitPd(pd);
  if (settings.checkStoresUpBeforeUpgrade === true) {
    // tidb-operator's IsTiKVStable, asked before every TiKV restart.
    const down = pd.stores.find((s) => s.state !== 'Up' && s.state !== 'Tombstone');
    if (down)
      return wait(
        `tikv-check-all-stores-up-before-upgrade: store ${down.id} (${down.address}) is ${down.state}; ${name} restarts once every store is Up`,
      );
  }
  const store = storeOfPod(pd.stores, input.cluster.name, 'tikv', name);
  if (!store) return OK;
  if (upTikvStores(pd.stores, store).length === 0) return OK; // Nowhere to move leaders to.
  const begin = toMillis(pod.metadata.annotations?.[EVICT_BEGIN_ANNOTATION]);
  const metric = input.probes?.tikvLeaders?.[name];
  const left = Math.max(store.leaderCount, metric?.count ?? 0);
  const timeout = parseDuration(settings.evictLeaderTimeout) ?? 1500 * 60_000;
  // (Re)adds the scheduler: the first time, or when it went missing (a PD restart, a manual removal).
  // Before the timeout: a begin time left on a Pod by an upgrade taken back in Git must not cut the
  // next eviction short (a fresh scheduler writes a fresh begin time).
  if (begin === undefined || !pd.evicting.has(store.id)) {
    return {
      ok: false,
      reason: `evicting region leaders from store ${store.id} (${name})`,
      action: evictBegin(input, pd, name, store.id, EVICT_BEGIN_ANNOTATION, 'upgrade'),
      event: {
        type: 'Normal',
        reason: 'EvictLeaderBegin',
        message: `evicting region leaders from store ${store.id} before the restart`,
        pod: name,
      },
    };
  }
  if (input.now >= begin + timeout && left > 0) {
    return {
      ok: true,
      event: {
        type: 'Warning',
        reason: 'EvictLeaderTimeout',
        message: `store ${store.id} still has ${left} region leaders after evictLeaderTimeout ${settings.evictLeaderTimeout ?? '1500m'}; restarting ${name} anyway`,
        pod: name,
      },
    };
  }
  if (store.leaderCount > 0) return wait(`waiting for region leaders to leave store ${store.id} (${name}): ${store.leaderCount} left`);
  if (!metric) return wait(`PD counts no leaders on store ${store.id}; reading ${name}'s own count from its /metrics`);
  if (metric.count !== undefined && metric.count > 0) {
    return wait(
      `PD counts no leaders on store ${store.id}, but ${name}'s /metrics still shows ${metric.count} (TiKV refreshes it every 10 s)`,
    );
  }
  const flush = flushStep(pod, store.id, settings, c.sts.status?.updateRevision ?? '', 'the restart');
  if (flush) return flush;
  if (metric.count === undefined) {
    return {
      ok: true,
      event: {
        type: 'Warning',
        reason: 'LeaderCountUnverified',
        message: `could not read ${name}'s own leader count (${metric.detail}); restarting it on PD's count of 0`,
        pod: name,
      },
    };
  }
  return OK;
}

/**
 * Once a store has no leaders and its Pod is about to go: log backup asked to flush, unless the
 * cluster opts out or it was asked already. The mark names the revision it was for (the update
 * revision in an upgrade), so a Pod that stayed (an upgrade taken back in Git) flushes again before
 * the next one.
 */
export function flushStep(pod: Pod, storeId: number, settings: ComponentSettings, revision: string, before: string): Step | undefined {
  if (settings.flushLogBackup === false || pod.metadata.annotations?.[LOG_BACKUP_FLUSHED_ANNOTATION] === revision) return undefined;
  const name = pod.metadata.name!;
  return act(`store ${storeId} (${name}) has no leaders: asking log backup to flush before ${before}`, {
    type: 'flush-log-backup',
    pod: name,
    storeId,
    revision,
  });
}

export const userEvicting = (pod: Pod): boolean => USER_EVICT_ANNOTATIONS.some((k) => pod.metadata.annotations?.[k] !== undefined);

export const tikvUpgrade: UpgradeChecks = {
  prepare: prepareStore,

  upgraded(input, c, pod, settings) {
    const name = pod.metadata.name!;
    const up = upStore(input, c, name);
    if (!('store' in up)) return up;
    const { pd, store } = up;
    if (pd.evicting.has(store.id) && ownsEviction(input, store.id) && !userEvicting(pod)) {
      return {
        ok: false,
        reason: `store ${store.id} (${name}) is upgraded: removing its evict-leader scheduler`,
        action: { type: 'evict-end', pod: name, storeId: store.id, remove: true },
        event: { type: 'Normal', reason: 'EvictLeaderEnd', message: `removing the evict-leader scheduler of store ${store.id}`, pod: name },
      };
    }
    const endAt = toMillis(pod.metadata.annotations?.[EVICT_END_ANNOTATION]);
    if (endAt !== undefined) {
      const upStores = upTikvStores(pd.stores);
      const share = upStores.reduce((n, s) => n + s.leaderCount, 0) / Math.max(1, upStores.length);
      const timeout = parseDuration(settings.waitLeaderTransferBackTimeout) ?? 400_000;
      if (share >= LEADERS_BACK_MIN_SHARE && store.leaderCount < (2 * share) / 3 && input.now < endAt + timeout) {
        return wait(
          `waiting for region leaders to come back to store ${store.id} (${name}): ${store.leaderCount} of about ${Math.round(share)}`,
        );
      }
    }
    return OK;
  },
};

/** The store of an upgraded TiKV or TiFlash Pod, once it is registered with PD and Up; else what is awaited. */
export function upStore(input: PlanInput, c: ComponentState, name: string): { readonly pd: PdState; readonly store: PdStore } | Step {
  const pd = pdStoresOf(input);
  if (typeof pd === 'string') return waitPd(pd);
  const store = storeOfPod(pd.stores, input.cluster.name, c.kind, name);
  if (!store) return wait(`waiting for the store of ${name} to register with PD`);
  if (store.state !== 'Up')
    return wait(`waiting for store ${store.id} (${name}) to be Up, it is ${store.state}`, undefined, 'store-not-up', store.id);
  return { pd, store };
}
