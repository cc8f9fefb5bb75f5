/**
 * Risks of a change to the PodDisruptionBudgets: a budget removed from a component that stays, or
 * one that lets a drain take more of its Pods at once than before.
 */
import { LABEL } from '../tidbcluster/names';
import { compareComponents, kindOf, labelsOf, type ClusterModel } from './model';
import { RISK, type Risk } from './report';
import { isPlainObject } from './values';
import { podsAllowed } from '../tidbcluster/budget-quorum';

/** The budgets of a cluster's components, by component: `maxUnavailable` as written. */
function budgetsOf(cluster: ClusterModel | undefined): Map<string, number | string | undefined> {
  const out = new Map<string, number | string | undefined>();
  for (const o of cluster?.objects.values() ?? []) {
    if (kindOf(o) !== 'PodDisruptionBudget') continue;
    const component = labelsOf(o)[LABEL.component];
    const spec = (o as { spec?: unknown }).spec;
    const max = isPlainObject(spec) ? spec.maxUnavailable : undefined;
    if (component) out.set(component, typeof max === 'number' || typeof max === 'string' ? max : undefined);
  }
  return out;
}

/** What taking several Pods of a component at once can cost. */
const WHAT_A_DRAIN_RISKS: Readonly<Record<string, string>> = {
  pd: 'PD stops serving (and so does the whole cluster) once a majority of its members is down',
  tso: 'TSO stops being served once every TSO server is down',
  scheduling: 'scheduling stops once every scheduling server is down',
  tikv: 'a region whose replicas lose their majority (two of three) cannot be read or written until they are back',
  tiflash: 'TiFlash replicas of a table can all be down at once, and its analytic queries fail or fall back to TiKV',
};

/** "1 Pod", "25% of the Pods". */
const describe = (max: number | string | undefined): string =>
  max === undefined
    ? 'as many Pods as its minAvailable leaves'
    : typeof max === 'number'
      ? `${max} Pod${max === 1 ? '' : 's'}`
      : `${max} of the Pods`;

/** Whether the new budget lets more Pods go at once than the old one did (for the replicas each had). */
function weaker(
  before: number | string | undefined,
  beforeReplicas: number | undefined,
  after: number | string | undefined,
  afterReplicas: number | undefined,
): boolean {
  if (before === after) return false;
  const was = podsAllowed(before, beforeReplicas);
  const now = podsAllowed(after, afterReplicas);
  return was === undefined || now === undefined || now > was;
}

export function disruptionBudgetRisks(before: ClusterModel | undefined, after: ClusterModel): Risk[] {
  const was = budgetsOf(before);
  const now = budgetsOf(after);
  const out: Risk[] = [];
  for (const [component, old] of [...was].sort(([a], [b]) => compareComponents(a, b))) {
    // A component that goes has its own risk.
    if (!after.components.get(component)?.workload) continue;
    if (!now.has(component)) {
      out.push({
        id: RISK.disruptionBudget,
        component,
        message: `The PodDisruptionBudget of ${component} is removed (it allowed ${describe(old)} at once): a node drain or a cluster autoscaler may then evict any number of its Pods together; ${WHAT_A_DRAIN_RISKS[component] ?? `check that enough of ${component} stays up to serve`}.`,
      });
    } else if (weaker(old, before?.components.get(component)?.replicas, now.get(component), after.components.get(component)?.replicas)) {
      out.push({
        id: RISK.disruptionBudget,
        component,
        message: `The PodDisruptionBudget of ${component} allows ${describe(now.get(component))} to be evicted at once, where it allowed ${describe(old)}: ${WHAT_A_DRAIN_RISKS[component] ?? `check that enough of ${component} stays up to serve through a node drain`}.`,
      });
    }
  }
  return out;
}

/** The cluster's NetworkPolicies, by name, with the namespaces their rules name. */
function policiesOf(cluster: ClusterModel | undefined): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const o of cluster?.objects.values() ?? []) {
    if (kindOf(o) !== 'NetworkPolicy' || !labelsOf(o)[LABEL.component]) continue;
    const text = JSON.stringify((o as { spec?: unknown }).spec ?? {});
    const namespaces = [...text.matchAll(/"kubernetes\.io\/metadata\.name":"([^"]+)"/g)].map((m) => m[1]);
    out.set(String((o.metadata as { name?: unknown } | undefined)?.name ?? ''), [...new Set(namespaces)].sort());
  }
  return out;
}

/**
 * Network policies turned on for a running cluster: every client the policies do not name loses its
 * connections to the ports other than SQL. Turning them off, or changing the namespaces they name, is
 * reported too: the first opens every port, the second moves who reads the metrics.
 */
export function networkPolicyRisks(before: ClusterModel | undefined, after: ClusterModel): Risk[] {
  const was = policiesOf(before);
  const now = policiesOf(after);
  const running = [...(before?.components.values() ?? [])].some((c) => c.workload);
  if (now.size > 0 && was.size === 0 && running) {
    return [
      {
        id: RISK.networkPolicy,
        message:
          "NetworkPolicies start admitting only the cluster's own ports: SQL (TiDB, TiProxy) from anywhere, every other port from the TiDB clusters' Pods of this namespace" +
          ` and metrics from ${[...new Set([...now.values()].flat())].join(', ') || 'no other namespace'}. A client elsewhere (a PD or TiCDC API user, a Prometheus not named, a cluster joining from another namespace) loses its connections.`,
      },
    ];
  }
  if (now.size === 0 && was.size > 0) {
    return [
      {
        id: RISK.networkPolicy,
        message: "The cluster's NetworkPolicies are removed: every port of every component is open to every Pod again.",
      },
    ];
  }
  const changed = [...now].filter(([name, ns]) => was.has(name) && JSON.stringify(was.get(name)) !== JSON.stringify(ns));
  if (changed.length > 0) {
    const from = (m: Map<string, string[]>) => [...new Set([...m.values()].flat())].join(', ') || 'none';
    return [
      {
        id: RISK.networkPolicy,
        message: `The namespaces the NetworkPolicies admit change from ${from(was)} to ${from(now)}: Pods in a namespace no longer named lose their connections.`,
      },
    ];
  }
  return [];
}
