import { Construct } from 'constructs';
import type { PodDisruptionBudget } from '../../imports/k8s';
import { LABEL, names, selectorLabels, type ComponentKind } from '../tidbcluster/names';
import type { ResolvedCluster } from '../tidbcluster/resolve';
import type { DisruptionBudget } from '../tidbcluster/guard-rails';
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
 * `unhealthyPodEvictionPolicy: AlwaysAllow`: a Pod that is not Ready (crash-looping, or stuck
 * starting) is evicted whatever the budget says, so a dead Pod never blocks a node drain; with the
 * default (`IfHealthyBudget`) one broken Pod beside another not yet Ready would hold the drain for good.
 */
export function disruptionBudget(cluster: ResolvedCluster, kind: ComponentKind, budget: DisruptionBudget): PodDisruptionBudget {
  const labels = selectorLabels(cluster.instance, kind);
  // Over the clusters of one PD: their Pods differ only in the instance label.
  const { [LABEL.instance]: _own, ...shared } = labels;
  const selector = budget.instances ? { matchLabels: shared, matchExpressions: [{ key: LABEL.instance, operator: 'In', values: [...budget.instances] }] } : { matchLabels: labels };
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: namespaced(cluster, names.disruptionBudget(cluster.name, kind), labels),
    spec: {
      maxUnavailable: budget.maxUnavailable,
      selector,
      unhealthyPodEvictionPolicy: 'AlwaysAllow',
    },
  };
}
