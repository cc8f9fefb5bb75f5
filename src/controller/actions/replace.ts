/**
 * Replacing a Pod Git names (`plan/replace.ts`): its record written to the status, and its PD
 * member, claims and Pod deleted, each only if it is still the one recorded.
 */
import type { Handlers } from './context';

/** How long a replacement's deletes are given to show in the caches before they are sent again. */
const REPLACE_DELETE_PATIENCE_MS = 30_000;

export function replaceActions(): Pick<Handlers, 'replace-set' | 'replace-delete'> {
  /** `<pod>/<phase>` -> when this process last sent that replacement's deletes. */
  const sent = new Map<string, number>();
  return {
    async 'replace-set'(action, ctx) {
      await ctx.records.setReplacement(action.pod, action.record);
      ctx.log.info(ctx.reason, { pod: action.pod, phase: action.record?.phase ?? 'forgotten' });
    },

    async 'replace-delete'(action, ctx) {
      const r = action.record;
      const key = `${action.pod}/${r.phase}`;
      const last = sent.get(key);
      if (last !== undefined && ctx.now - last < REPLACE_DELETE_PATIENCE_MS) return false;
      sent.set(key, ctx.now);
      if (r.phase === 'removing' && r.memberId) await ctx.pd.deleteMemberById(r.memberId);
      if (r.phase === 'deleting') {
        // Claims first (they stay, protected, until their Pod is gone), then the Pod, at once.
        for (const v of r.volumes) await ctx.kube.deleteIfSame('pvc', v.name, v.uid);
        await ctx.kube.deleteIfSame('pod', action.pod, r.podUid, 0);
      }
      ctx.log.warn(ctx.reason, { pod: action.pod, member: r.memberId, volumes: r.volumes.map((v) => v.name) });
    },
  };
}
