/**
 * Tells the Argo CD and Flux health checks what only the controller knows, on the StatefulSet itself:
 * the failover replicas it added (so they are not read as a pending scale-in) and a refusal to scale
 * in or to grow volumes (so a refused change is not healthy). Written only when they change.
 */
import { ANNOTATION } from '../../tidbcluster/names';
import type { KubeAccess } from '../clients/kube';
import type { ComponentPlan } from '../plan/plan';
import { extraReplicas, type FailoverState } from '../records/failover';
import type { Logger } from '../runtime/log';
import type { ComponentState } from '../view/view';

/** Reasons of the refusals the health checks must show as failed (`tidb-gitops.io/refused`). */
const REFUSALS = new Set(['FailedScaleIn', 'VolumeShrinkRefused', 'VolumeResizeRefused']);

export async function publishHealth(
  d: { readonly kube: KubeAccess; readonly log: Logger; readonly acting: () => boolean },
  components: readonly ComponentState[],
  plans: readonly ComponentPlan[],
  failover: FailoverState,
): Promise<void> {
  for (const p of plans) {
    const sts = components.find((x) => x.kind === p.kind)?.sts;
    if (!sts || !d.acting()) continue;
    const extra = extraReplicas(p.kind, failover);
    const want: Record<string, string | null> = {
      [ANNOTATION.failoverReplicas]: extra > 0 ? String(extra) : null,
      [ANNOTATION.refused]: p.event && REFUSALS.has(p.event.reason) ? p.reason : null,
    };
    const have = sts.metadata.annotations ?? {};
    const patch = Object.fromEntries(Object.entries(want).filter(([k, v]) => (have[k] ?? null) !== v));
    if (Object.keys(patch).length === 0) continue;
    try {
      await d.kube.annotateStatefulSet(sts.metadata.name!, patch);
    } catch (e) {
      d.log.with({ component: p.kind }).warn(`cannot annotate the StatefulSet for the health checks: ${(e as Error).message}`);
    }
  }
}
