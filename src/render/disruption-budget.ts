import { Construct } from 'constructs';
import type { PodDisruptionBudget } from '../../imports/k8s';
import { LABEL, names, selectorLabels, type ComponentKind } from '../tidbcluster/names';
import type { ResolvedCluster } from '../tidbcluster/resolve';
import type { DisruptionBudget } from '../tidbcluster/guard-rails';
import { QUORUM_COMPONENTS } from '../tidbcluster/serving';
import { namespaced } from './component';
import { kubeObject } from './kube';

export interface DisruptionBudgetProps {
  /** The resolved cluster. */
  readonly cluster: ResolvedCluster;
  /** The component whose Pods the budget guards. */
  readonly kind: ComponentKind;
  /** How many of them a voluntary disruption may take at once. */
  readonly budget: DisruptionBudget;
}

/**
 * The PodDisruptionBudget `<cluster>-<component>`, which the Eviction API (`kubectl drain`, the
 * cluster autoscaler, node upgrades) honours and nothing else does. The controller's own restarts and
 * scale-ins delete Pods or lower a StatefulSet's replicas, never evict, so they are never held by it.
 */
export class DisruptionBudgetComponent extends Construct {
  constructor(scope: Construct, id: string, props: DisruptionBudgetProps) {
    super(scope, id);
    kubeObject(this, 'pdb', disruptionBudget(props.cluster, props.kind, props.budget));
  }
}

/**
 * Which Pods that are not Ready a drain may evict. PD and TiKV (`QUORUM_COMPONENTS`):
 * `IfHealthyBudget`, since their Pods are Ready only while they serve (the readiness gate of
 * `tidbcluster/serving.ts`): a Pod that is not serving is evicted only while the budget holds without
 * it, so a TiKV that still holds replicas is never taken while another store is down. The others:
 * `AlwaysAllow`, so that a crash-looping TiDB or TiCDC never blocks a node drain.
 */
export function disruptionBudget(cluster: ResolvedCluster, kind: ComponentKind, budget: DisruptionBudget): PodDisruptionBudget {
  const labels = selectorLabels(cluster.instance, kind);
  // Over the clusters of one PD: their Pods differ only in the instance label.
  const { [LABEL.instance]: _own, ...shared } = labels;
  const selector = budget.instances
    ? { matchLabels: shared, matchExpressions: [{ key: LABEL.instance, operator: 'In', values: [...budget.instances] }] }
    : { matchLabels: labels };
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: namespaced(cluster, names.disruptionBudget(cluster.name, kind), labels),
    spec: {
      maxUnavailable: budget.maxUnavailable,
      selector,
      unhealthyPodEvictionPolicy: QUORUM_COMPONENTS.includes(kind) ? 'IfHealthyBudget' : 'AlwaysAllow',
    },
  };
}
