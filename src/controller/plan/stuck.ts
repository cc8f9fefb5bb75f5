/**
 * Operations that do not move. An upgrade, scale-in or failover that waits with the same reason
 * for `stuckAfterMs` is stuck: the status says so with a way out, chosen by the wait's code, and a
 * Warning event `OperationStuck` says it once. A reason that changes (fewer leaders left, another
 * Pod) is progress and starts the count again; so does any action, and a wait that ends by itself
 * is never stuck. Pure, like the planner.
 */
import type { ComponentKind } from '../../tidbcluster/names';
import { isReady, type Pod } from '../model/objects';
import type { ComponentState } from '../view/view';
import { SELF_ENDING_WAITS, type WaitCode } from './action';
import type { ComponentPlan } from './plan';

/** How long one wait may last before it counts as stuck (`--stuck-after`). */
export const DEFAULT_STUCK_AFTER_MS = 30_000;

/** The phases of an operation; a component in Normal waits for nothing that could be stuck. */
const OPERATION_PHASES: readonly string[] = ['Upgrading', 'Scaling', 'Failover'];

/** A component's current wait: its reason, since when, and whether it was reported. */
export interface WaitMark {
  readonly reason: string;
  readonly since: number;
  readonly reported: boolean;
}

/** A component whose operation has waited too long, and what may get it out. */
export interface StuckReport {
  readonly kind: ComponentKind;
  readonly phase: string;
  readonly reason: string;
  readonly since: number;
  /** What holds it, read from the Pods where that says more than the reason, and the way out. */
  readonly hint: string;
}

export interface WaitTracking {
  readonly marks: ReadonlyMap<ComponentKind, WaitMark>;
  /** Every component stuck now. */
  readonly stuck: ReadonlyMap<ComponentKind, StuckReport>;
  /** The ones stuck since this pass, to report once. */
  readonly report: readonly StuckReport[];
}

/** The next marks from this pass's plans: a busy plan without an action keeps (or starts) its wait. */
export function trackWaits(
  marks: ReadonlyMap<ComponentKind, WaitMark>,
  plans: readonly ComponentPlan[],
  components: readonly ComponentState[],
  now: number,
  stuckAfterMs = DEFAULT_STUCK_AFTER_MS,
): WaitTracking {
  const next = new Map<ComponentKind, WaitMark>();
  const stuck = new Map<ComponentKind, StuckReport>();
  const report: StuckReport[] = [];
  for (const p of plans) {
    if (!p.busy || p.action || !OPERATION_PHASES.includes(p.phase) || (p.wait !== undefined && SELF_ENDING_WAITS.includes(p.wait)))
      continue;
    const before = marks.get(p.kind);
    const mark = before?.reason === p.reason ? before : { reason: p.reason, since: now, reported: false };
    if (now - mark.since < stuckAfterMs) {
      next.set(p.kind, mark);
      continue;
    }
    const component = components.find((c) => c.kind === p.kind);
    const found: StuckReport = {
      kind: p.kind,
      phase: p.phase,
      reason: p.reason,
      since: mark.since,
      hint: stuckHint(p.reason, component?.pods ?? [], p.wait, p.storeId),
    };
    stuck.set(p.kind, found);
    if (!mark.reported) report.push(found);
    next.set(p.kind, { ...mark, reported: true });
  }
  return { marks: next, stuck, report };
}

/** Why a Pod is not running, as its container statuses and conditions say; undefined when nothing does. */
export function podTrouble(pod: Pod): string | undefined {
  if (isReady(pod)) return undefined;
  for (const s of pod.status?.containerStatuses ?? []) {
    const waiting = s.state?.waiting?.reason;
    if (waiting && waiting !== 'ContainerCreating' && waiting !== 'PodInitializing') {
      const restarts = s.restartCount ?? 0;
      return `${waiting}${restarts > 0 ? `, restarted ${restarts} time${restarts === 1 ? '' : 's'}` : ''}`;
    }
  }
  const scheduled = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
  if (pod.status?.phase === 'Pending' && scheduled?.status === 'False') return 'Unschedulable';
  return undefined;
}

/** Whether `text` names the Pod `name` (not `c-tikv-10` for `c-tikv-1`). */
const mentions = (text: string, name: string): boolean =>
  new RegExp(`(?<![\\w.-])${name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}(?![\\w-])`).test(text);

/**
 * The way out of a wait: what the Pods its reason names report, else by its code (`storeId`: the
 * store it is about).
 */
export function stuckHint(reason: string, pods: readonly Pod[], code?: WaitCode, storeId?: number): string {
  const troubled = pods.flatMap((p) => {
    const name = p.metadata.name!;
    const trouble = podTrouble(p);
    return trouble && mentions(reason, name) ? [{ name, trouble }] : [];
  });
  if (troubled.length > 0) {
    const what = troubled.map((t) => `${t.name} is ${t.trouble}`).join('; ');
    const t = troubled[0].trouble;
    if (/ImagePull|ErrImage|InvalidImageName/.test(t))
      return `${what}: its image cannot be pulled; fix the image or its pull secret in Git`;
    if (/CreateContainerConfigError/.test(t)) return `${what}: a Secret or ConfigMap it mounts or reads is missing; create it`;
    if (t === 'Unschedulable')
      return `${what}: no node can take it (kubectl describe pod ${troubled[0].name}); free or add a node, or relax its affinity, tolerations or resources in Git`;
    return (
      `${what}: read kubectl logs --previous ${troubled[0].name} and fix the cause; the operation goes on once it is Ready. ` +
      'A Pod still at the old revision that cannot start on it gets the new one only with tidb.pingcap.com/force-upgrade: "true" on the TidbCluster (every remaining Pod then restarts without checks)'
    );
  }
  const store = storeId ?? '<id>';
  switch (code) {
    case 'upgraded-pod-not-ready':
      return 'the new revision does not become Ready: fix it in Git, or take the change back; the Pod restarts with what Git gives next';
    case 'store-offline-moving':
      return `PD cannot move the store's regions: too few Up stores for max-replicas, or placement rules no other store meets (pd-ctl store ${store}, pd-ctl operator show). To keep the store, take the scale-in back in Git and run pd-ctl store cancel-delete ${store}`;
    case 'too-few-up-stores':
      return 'add a TiKV, or lower PD replication.max-replicas, or take the scale-in back in Git';
    case 'store-not-up':
      return 'the store does not heartbeat PD: read its TiKV log; the operation goes on once PD reports it Up';
    case 'pd-unreadable':
      return 'the controller cannot read PD: look at the PD Pods and the controller log';
    default:
      return 'see the reason; docs/operations.md, "When an operation is stuck", lists the ways out';
  }
}
