/**
 * TiKV region leader eviction: PD's evict-leader scheduler for a store, added before a restart, a
 * scale-in or a Pod's own request, and removed once it is done. A scheduler the controller adds is
 * recorded in the status before PD is asked, so that it can tell its own from an administrator's.
 */
import { EVICT_END_ANNOTATION } from '../model/annotations';
import { rfc3339, type Handlers } from './context';

const withoutKeys = <T>(o: Readonly<Record<string, T>>, keys: readonly string[]): Record<string, T> =>
  Object.fromEntries(Object.entries(o).filter(([k]) => !keys.includes(k)));

export const evictActions: Pick<Handlers, 'evict-begin' | 'evict-end' | 'evict-cleanup'> = {
  async 'evict-begin'(action, ctx) {
    // The record comes first: a crash after PD added the scheduler must not leave it unowned.
    if (action.record) await ctx.records.setEvictions({ ...ctx.records.evictions, [String(action.storeId)]: action.record });
    await ctx.pd.addEvictLeader(action.storeId);
    // When PD took the scheduler, not when the pass began: evictLeaderTimeout counts from here. A
    // fresh eviction (no scheduler, none recorded) replaces a begin time an earlier one left.
    const pod = ctx.pods.find((x) => x.metadata.name === action.pod);
    if (action.annotation && (action.record || !pod?.metadata.annotations?.[action.annotation])) {
      await ctx.kube.annotatePod(action.pod, { [action.annotation]: rfc3339(Date.now()) });
    }
    ctx.log.info(ctx.reason, { pod: action.pod, store: action.storeId });
  },

  async 'evict-end'(action, ctx) {
    if (action.remove) {
      await ctx.pd.removeEvictLeader(action.storeId);
      await ctx.records.setEvictions(withoutKeys(ctx.records.evictions, [String(action.storeId)]));
    }
    const pod = ctx.pods.find((x) => x.metadata.name === action.pod);
    if (!pod?.metadata.annotations?.[EVICT_END_ANNOTATION])
      await ctx.kube.annotatePod(action.pod, { [EVICT_END_ANNOTATION]: rfc3339(ctx.now) });
    ctx.log.info(ctx.reason, { pod: action.pod, store: action.storeId });
  },

  async 'evict-cleanup'(action, ctx) {
    for (const id of action.storeIds) await ctx.pd.removeEvictLeader(id);
    await ctx.records.setEvictions(withoutKeys(ctx.records.evictions, action.storeIds.map(String)));
    ctx.log.info(ctx.reason, { stores: action.storeIds });
  },
};
