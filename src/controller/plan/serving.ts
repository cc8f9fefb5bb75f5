/**
 * The readiness gate's condition (`tidb-gitops.io/serving`, see `tidbcluster/serving.ts`) each gated
 * Pod should carry, from what the servers say: kubelet counts the Pod Ready only while it is True,
 * so a PodDisruptionBudget counts only Pods that serve.
 *
 * - TiKV: the store of the Pod is Up in PD, and its region leaders are back (it leads some region),
 *   unless nothing can bring them: it has no regions, an evict-leader scheduler keeps them away, or
 *   it has run for {@link LEADERS_BACK_WAIT_MS} without any (placement rules or a leader weight of 0
 *   may keep leaders off a store for good). Once True, the condition stays True while the store is
 *   Up: leaders that move away later (a balance, an eviction before a restart) are no reason to take
 *   the Pod out of its Services or its budget.
 * - TiFlash: the store of the Pod is Up (a TiFlash store holds learners, never leaders).
 * - PD: the member of the Pod answers healthy in PD's `/pd/api/v1/health`.
 * - TiDB: the server's `/status` answers 200 (pingcap/tidb `pkg/server/http_status.go` `handleStatus`
 *   answers 500 once the server is shutting down).
 *
 * Only running Pods that are not being deleted are judged. While PD cannot be read, the conditions of
 * PD, TiKV and TiFlash Pods stay as they are: a controller that loses PD for a moment must not take
 * every Pod out of its Services.
 *
 * Pure: returns the conditions to write.
 */
import { SERVING_CONDITION } from '../../tidbcluster/serving';
import type { ComponentKind } from '../../tidbcluster/names';
import { isTerminating, type Pod } from '../model/objects';
import { memberOfPod, storeOfPod } from '../view/lookups';
import type { PdStore } from '../clients/pd';
import type { ComponentState, PdState, Probes } from '../view/view';

/** How long a store may be Up without leaders before it counts as serving anyway. */
export const LEADERS_BACK_WAIT_MS = 5 * 60_000;

/** The condition one Pod should carry. */
export interface ServingCondition {
  readonly pod: string;
  readonly uid: string;
  readonly status: 'True' | 'False';
  /** A CamelCase reason, as condition reasons are. */
  readonly reason: string;
  readonly message: string;
}

export interface ServingInput {
  readonly cluster: { readonly name: string };
  readonly components: readonly ComponentState[];
  readonly pd?: PdState | { readonly error: string };
  readonly probes?: Probes;
  readonly now: number;
}

/** The Pod's gate condition as it stands, if any. */
export function servingConditionOf(pod: Pod): { readonly status: string; readonly reason?: string } | undefined {
  return pod.status?.conditions?.find((c) => c.type === SERVING_CONDITION);
}

/** Whether the Pod's spec has the serving readiness gate. */
export const hasGate = (pod: Pod): boolean => (pod.spec?.readinessGates ?? []).some((g) => g.conditionType === SERVING_CONDITION);

/**
 * The conditions that differ from what the Pods carry (status or reason), to be written, and whether
 * any gated Pod runs without serving (the controller looks again soon then).
 */
export function servingChanges(input: ServingInput): { readonly changes: ServingCondition[]; readonly notServing: boolean } {
  const changes: ServingCondition[] = [];
  let notServing = false;
  for (const c of input.components) {
    for (const pod of c.pods) {
      if (!hasGate(pod) || isTerminating(pod) || !running(pod)) continue;
      const wanted = judge(input, c.kind, pod);
      const current = servingConditionOf(pod);
      notServing ||= (wanted?.status ?? current?.status) !== 'True';
      if (!wanted || (current?.status === wanted.status && current.reason === wanted.reason)) continue;
      changes.push({ pod: pod.metadata.name!, uid: pod.metadata.uid ?? '', ...wanted });
    }
  }
  return { changes, notServing };
}

type Judgement = Omit<ServingCondition, 'pod' | 'uid'>;

const yes = (reason: string, message: string): Judgement => ({ status: 'True', reason, message });
const no = (reason: string, message: string): Judgement => ({ status: 'False', reason, message });

function judge(input: ServingInput, kind: ComponentKind, pod: Pod): Judgement | undefined {
  const name = pod.metadata.name!;
  if (kind === 'tidb') {
    const probe = input.probes?.tidbStatus?.[name];
    if (!probe) return undefined;
    return probe.ok ? yes('StatusOK', `${name} answers /status`) : no('StatusFailing', `${name} does not answer /status: ${probe.detail}`);
  }
  const pd = input.pd;
  if (!pd || 'error' in pd) return undefined;
  if (kind === 'pd') {
    const member = memberOfPod(pd.members, name);
    if (!member) return no('NotAMember', `${name} is not a PD member yet`);
    return member.healthy
      ? yes('MemberHealthy', `PD member ${member.name} is healthy`)
      : no('MemberUnhealthy', `PD member ${member.name} is not healthy`);
  }
  if (kind !== 'tikv' && kind !== 'tiflash') return undefined;
  if (pd.storesError !== undefined) return undefined;
  const store = storeOfPod(pd.stores, input.cluster.name, kind, name);
  if (!store) return no('NoStore', `${name} has no store in PD yet`);
  if (store.state !== 'Up') return no('StoreNotUp', `store ${store.id} of ${name} is ${store.state} in PD`);
  if (!heardSinceStart(store, pod))
    return no('StoreNotHeard', `store ${store.id} of ${name} has not sent PD a heartbeat since the Pod started`);
  const up = yes('StoreUp', `store ${store.id} of ${name} is Up`);
  if (kind === 'tiflash' || servingConditionOf(pod)?.status === 'True') return up;
  if (store.leaderCount > 0) return yes('StoreUp', `store ${store.id} of ${name} is Up with ${store.leaderCount} region leaders`);
  if (store.regionCount === 0) return yes('StoreUp', `store ${store.id} of ${name} is Up and holds no regions yet`);
  if (pd.evicting.has(store.id))
    return yes('StoreUp', `store ${store.id} of ${name} is Up; an evict-leader scheduler keeps its leaders away`);
  const since = runningSince(pod);
  if (since !== undefined && input.now - since >= LEADERS_BACK_WAIT_MS) {
    return yes(
      'StoreUp',
      `store ${store.id} of ${name} is Up; no region leader came back in ${LEADERS_BACK_WAIT_MS / 60_000} minutes (placement rules or a leader weight of 0 may keep them away)`,
    );
  }
  return no('LeadersNotBack', `store ${store.id} of ${name} is Up, waiting for its region leaders to come back`);
}

/**
 * Whether PD has heard from the store since the Pod's containers started: until then, an Up state
 * and leader count are the previous Pod's. True when PD does not say when it last heard.
 */
export function heardSinceStart(store: PdStore, pod: Pod): boolean {
  const since = runningSince(pod);
  return store.lastHeartbeat === undefined || since === undefined || store.lastHeartbeat >= since;
}

/** Whether every container of the Pod runs (kubelet has started them). */
export function running(pod: Pod): boolean {
  const statuses = pod.status?.containerStatuses ?? [];
  return pod.status?.phase === 'Running' && statuses.length > 0 && statuses.every((s) => s.state?.running !== undefined);
}

/** When the Pod's containers last started (the latest start), in epoch milliseconds. */
function runningSince(pod: Pod): number | undefined {
  const times = (pod.status?.containerStatuses ?? []).map((s) =>
    s.state?.running?.startedAt === undefined ? NaN : new Date(s.state.running.startedAt).getTime(),
  );
  return times.length === 0 || times.some((t) => !Number.isFinite(t)) ? undefined : Math.max(...times);
}
