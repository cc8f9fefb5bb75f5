/**
 * Writes to Pods that no other family owns: a Pod deleted once its leader eviction request is met,
 * and the operation marks an operation that is over left behind.
 */
import type { Handlers } from './context';

export const podActions: Pick<Handlers, 'delete-pod' | 'clear-marks'> = {
  async 'delete-pod'(action, ctx) {
    await ctx.kube.deleteIfSame('pod', action.pod, action.uid);
    ctx.log.info(ctx.reason, { pod: action.pod, store: action.storeId });
  },

  async 'clear-marks'(action, ctx) {
    for (const m of action.marks) await ctx.kube.annotatePod(m.pod, Object.fromEntries(m.keys.map((k) => [k, null])));
    ctx.log.info(ctx.reason, { pods: action.marks.map((m) => m.pod) });
  },
};
