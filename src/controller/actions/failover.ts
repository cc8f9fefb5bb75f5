/**
 * Failover: the failure records (each one an extra replica) replaced in the status, and a failed PD
 * member replaced: the member deleted from PD, then its claims and its Pod, so that the StatefulSet
 * starts a new member on a fresh volume in its place.
 */
import type { FailoverKind } from '../records/failover';
import type { Handlers } from './context';

/** How long a failover's deletes are given to show in the caches before they are sent again. */
const FAILOVER_DELETE_PATIENCE_MS = 30_000;

export function failoverActions(): Pick<Handlers, 'failover-set' | 'failover-delete'> {
  /** Pod uid -> when this process deleted that failed PD member with its Pod and claims. */
  const deletes = new Map<string, number>();
  return {
    async 'failover-set'(action, ctx) {
      const kind = ctx.kind as FailoverKind;
      const before = Object.keys(ctx.records.failover.components[kind]?.records ?? {}).length;
      await ctx.records.setFailover(kind, action.failover);
      const added = Object.keys(action.failover?.records ?? {}).length - before;
      if (added > 0) ctx.metrics.inc('tidb_gitops_failures_recorded_total', { component: ctx.kind }, added);
      ctx.log.info(ctx.reason, { records: Object.keys(action.failover?.records ?? {}) });
    },

    async 'failover-delete'(action, ctx) {
      // Claims before their Pod (see plan/failover.ts); the planner marks the record once all are gone.
      const r = action.record;
      // The next pass may come before the caches show the deletes: wait for them rather than
      // deleting, and announcing, the same member again. After a while, try again.
      const issued = r.podUid === undefined ? undefined : deletes.get(r.podUid);
      if (issued !== undefined && ctx.now - issued < FAILOVER_DELETE_PATIENCE_MS) return false;
      for (const [uid, at] of deletes) if (ctx.now - at >= FAILOVER_DELETE_PATIENCE_MS) deletes.delete(uid);
      if (r.podUid !== undefined) deletes.set(r.podUid, ctx.now);
      if (r.memberId) await ctx.pd.deleteMemberById(r.memberId);
      for (const v of r.volumes ?? []) await ctx.kube.deleteIfSame('pvc', v.name, v.uid);
      // Without a grace period: the member is gone from PD already, and on a node that is lost no
      // kubelet would ever confirm a graceful deletion (the operator force-deletes a failure
      // member's Pod whose host is down, pkg/manager/member/failure_recovery.go).
      await ctx.kube.deleteIfSame('pod', r.pod, r.podUid, 0);
      ctx.log.warn(ctx.reason, { member: action.key, pod: r.pod, volumes: (r.volumes ?? []).map((v) => v.name) });
    },
  };
}
