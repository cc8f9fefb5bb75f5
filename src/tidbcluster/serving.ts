/**
 * What "Ready" means for the Pods a PodDisruptionBudget counts. A container that runs is not a server
 * that serves: PD and TiKV have no readiness probe unless the spec sets one, so a TiKV still opening
 * RocksDB, or one whose store PD sees Down or Disconnected, would count as healthy, and a drain could
 * take a second replica of a region. The Pods of PD, TiKV, TiFlash and TiDB therefore carry a
 * readiness gate (`spec.readinessGates`): kubelet counts the Pod Ready only once the condition
 * {@link SERVING_CONDITION} is True, and the controller sets it from what the servers say
 * (`controller/plan/serving.ts`).
 *
 * Pure: names and rules both sides of the contract read.
 */
import type { ComponentKind } from './names';

/**
 * The Pod condition the controller sets: True while the server serves (TiKV and TiFlash: the store
 * is Up in PD; PD: the member is healthy; TiDB: `/status` answers 200), False otherwise.
 */
export const SERVING_CONDITION = 'tidb-gitops.io/serving';

/** The components whose Pods carry the readiness gate when they have a disruption budget. */
export const GATED_COMPONENTS: readonly ComponentKind[] = ['pd', 'tikv', 'tiflash', 'tidb'];

/**
 * The components where evicting a Pod that is not Ready can lose a quorum (a PD member of the Raft
 * group of etcd, a TiKV store with region replicas): their budgets use `IfHealthyBudget`, so a Pod
 * that is not serving is evicted only while the budget still holds without it.
 */
export const QUORUM_COMPONENTS: readonly ComponentKind[] = ['pd', 'tikv'];

/**
 * Whether a component's Pods carry the gate: one of {@link GATED_COMPONENTS} whose Pods a budget
 * counts (the cluster's annotation gives it one, even when the budget itself is rendered with the
 * cluster whose PD it joins).
 */
export function hasServingGate(kind: ComponentKind, budgeted: Readonly<Partial<Record<ComponentKind, unknown>>>): boolean {
  return GATED_COMPONENTS.includes(kind) && budgeted[kind] !== undefined;
}
