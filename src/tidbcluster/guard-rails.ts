/**
 * The cluster's guard rails, set on the TidbCluster with annotations under `tidb-gitops.io/`, since
 * the operator's CRD has no field for them: against voluntary disruptions (node drains, cluster
 * autoscaler scale-downs), a PodDisruptionBudget per component and the preStop hooks that let a
 * draining PD, TiKV or TiCDC Pod hand its leadership, region leaders or tables over before it stops,
 * both on by default; and, opt-in, a NetworkPolicy per component.
 *
 * ```yaml
 * metadata:
 *   annotations:
 *     tidb-gitops.io/disruption-budgets: "tidb=25%, ticdc=none"   # or "none" for no budget at all
 *     tidb-gitops.io/drain-hooks: "false"
 *     tidb-gitops.io/network-policy: "true"
 *     tidb-gitops.io/metrics-from: monitoring
 *     tidb-gitops.io/monitoring: "true"
 *     tidb-gitops.io/monitoring-labels: "release=kube-prometheus-stack"
 *     tidb-gitops.io/pv-reclaim-policy: "true"
 * ```
 *
 * Pure: reads the annotations, reports what it cannot read as issues at their annotation.
 */
import { labelValueProblem, qualifiedNameProblem } from './api-rules';
import type { SpecIssue } from './errors';
import { jobLabelProblem } from './job-pod-input';
import { GRAFANA_DASHBOARD_LABEL, LABEL, type ComponentKind } from './names';
import { REPLACE_ANNOTATION } from './replace';

/** The annotation that sets or turns off the PodDisruptionBudgets, per component. */
export const DISRUPTION_BUDGETS_ANNOTATION = 'tidb-gitops.io/disruption-budgets';
/** `"false"` leaves the preStop hooks out of the PD (and micro-services), TiKV and TiCDC Pods. */
export const DRAIN_HOOKS_ANNOTATION = 'tidb-gitops.io/drain-hooks';

/** `"true"` renders a NetworkPolicy per component (see `render/network-policy.ts`). */
export const NETWORK_POLICY_ANNOTATION = 'tidb-gitops.io/network-policy';
/** The namespace whose Pods (Prometheus) may read the metrics ports, with network policies on. */
export const METRICS_FROM_ANNOTATION = 'tidb-gitops.io/metrics-from';

/**
 * `"true"`: PodMonitors for Prometheus Operator, and PingCAP's alert rules and dashboards for the
 * cluster's version (see `render/monitoring.ts`); `"false"` refuses a TidbMonitor naming the cluster.
 */
export const MONITORING_ANNOTATION = 'tidb-gitops.io/monitoring';
/** Labels put on every monitoring object, so that a Prometheus's or Grafana's selector takes them. */
export const MONITORING_LABELS_ANNOTATION = 'tidb-gitops.io/monitoring-labels';

/**
 * `"true"` lets the controller set `spec.pvReclaimPolicy` on the PersistentVolumes bound to the
 * cluster's claims, as tidb-operator does: PVs are cluster-scoped, so this renders a ClusterRole
 * (`get` and `patch` on persistentvolumes). Off by default, everything stays namespaced.
 */
export const PV_RECLAIM_POLICY_ANNOTATION = 'tidb-gitops.io/pv-reclaim-policy';

/** Every annotation key under `tidb-gitops.io/` a TidbCluster may carry. */
export const CLUSTER_SETTING_ANNOTATIONS: readonly string[] = [
  DISRUPTION_BUDGETS_ANNOTATION,
  DRAIN_HOOKS_ANNOTATION,
  NETWORK_POLICY_ANNOTATION,
  METRICS_FROM_ANNOTATION,
  MONITORING_ANNOTATION,
  MONITORING_LABELS_ANNOTATION,
  PV_RECLAIM_POLICY_ANNOTATION,
  REPLACE_ANNOTATION,
];

/** A component's PodDisruptionBudget: how many of its Pods a voluntary disruption may take at once. */
export interface DisruptionBudget {
  /** `maxUnavailable`: a count (1 or more) or a percentage of the replicas (`"25%"`). @default 1 */
  readonly maxUnavailable: number | string;
  /**
   * The `app.kubernetes.io/instance` of every cluster whose Pods of the component the budget counts:
   * the clusters that share one PD (`spec.cluster`), whose stores hold replicas of the same regions
   * (see `budget-groups.ts`). @default only this cluster's
   */
  readonly instances?: readonly string[];
}

/** The budget of each component that has one; a component that is absent has none. */
export type DisruptionBudgets = Readonly<Partial<Record<ComponentKind, DisruptionBudget>>>;

/**
 * Every component gets `maxUnavailable: 1`: a drain takes one PD member, one TiKV store (so no
 * region with three replicas loses two), one TiDB server, one TiCDC capture at a time.
 */
export const DEFAULT_MAX_UNAVAILABLE = 1;

const path = (key: string): string => `metadata.annotations["${key}"]`;

/**
 * Reads `tidb-gitops.io/disruption-budgets` for the components the cluster has: `none`, or a
 * comma-separated list of `<component>=<value>` where the value is a count (1 or more), a percentage
 * (`1%` to `100%`) or `none`. Components the list does not name keep the default.
 */
export function disruptionBudgets(
  annotations: Readonly<Record<string, string>>,
  components: readonly ComponentKind[],
  issues: SpecIssue[],
): DisruptionBudgets {
  const text = annotations[DISRUPTION_BUDGETS_ANNOTATION];
  const out: Partial<Record<ComponentKind, DisruptionBudget>> = {};
  for (const c of components) out[c] = { maxUnavailable: DEFAULT_MAX_UNAVAILABLE };
  if (text === undefined) return out;
  const where = path(DISRUPTION_BUDGETS_ANNOTATION);
  if (text.trim() === 'none') return {};
  const seen = new Set<string>();
  for (const raw of text.split(',')) {
    const item = raw.trim();
    const m = /^([a-z]+)\s*=\s*(\S+)$/.exec(item);
    if (!m) {
      issues.push({
        path: where,
        message: `expected "none" or a list such as "tidb=25%, ticdc=none" (<component>=<count, percentage or none>, separated by commas), got ${JSON.stringify(item)} in ${JSON.stringify(text)}`,
      });
      continue;
    }
    const [, component, value] = m;
    if (!(BUDGET_COMPONENTS as readonly string[]).includes(component)) {
      issues.push({
        path: where,
        message: `unknown component ${JSON.stringify(component)}; expected one of ${BUDGET_COMPONENTS.join(', ')}`,
      });
      continue;
    }
    if (seen.has(component)) {
      issues.push({ path: where, message: `${component} is named twice` });
      continue;
    }
    seen.add(component);
    const kind = component as ComponentKind;
    if (!components.includes(kind)) {
      issues.push({
        path: where,
        message: `${component}: the cluster has no ${component} (its spec has no such component), so there is no budget to set`,
      });
      continue;
    }
    const budget = budgetValue(value);
    if (typeof budget === 'string') {
      issues.push({ path: where, message: `${component}=${value}: ${budget}` });
      continue;
    }
    if (budget === undefined) delete out[kind];
    else out[kind] = budget;
  }
  return out;
}

/** The components a budget can be set for, in the order docs/reference.md lists them. */
export const BUDGET_COMPONENTS: readonly ComponentKind[] = [
  'pd',
  'tso',
  'scheduling',
  'tikv',
  'tiflash',
  'tidb',
  'ticdc',
  'pump',
  'tiproxy',
];

/** A budget, undefined for `none`, or what is wrong with the value. */
function budgetValue(value: string): DisruptionBudget | undefined | string {
  if (value === 'none') return undefined;
  if (/^\d{1,6}$/.test(value)) {
    const n = Number(value);
    if (n === 0)
      return 'a budget of 0 refuses every eviction, so no node holding one of these Pods could ever be drained; write none for no budget, or 1 or more';
    return { maxUnavailable: n };
  }
  const pct = /^(\d{1,3})%$/.exec(value);
  if (pct) {
    const n = Number(pct[1]);
    if (n >= 1 && n <= 100) return { maxUnavailable: `${n}%` };
    return 'expected a percentage from 1% to 100%';
  }
  return 'expected a count of Pods (1 or more), a percentage of the replicas such as 25%, or none';
}

/** Reads `tidb-gitops.io/drain-hooks`: `"true"` (the default) or `"false"`. */
export function drainHooks(annotations: Readonly<Record<string, string>>, issues: SpecIssue[]): boolean {
  const text = annotations[DRAIN_HOOKS_ANNOTATION];
  if (text === undefined || text === 'true') return true;
  if (text === 'false') return false;
  issues.push({ path: path(DRAIN_HOOKS_ANNOTATION), message: `expected "true" or "false", got ${JSON.stringify(text)}` });
  return true;
}

/**
 * Reads `tidb-gitops.io/pv-reclaim-policy` (`"true"` or `"false"`, off by default). A ClusterRoleBinding
 * must name its ServiceAccount's namespace, so turning it on needs one at render time.
 */
export function pvReclaimPolicyAccess(
  annotations: Readonly<Record<string, string>>,
  namespace: string | undefined,
  issues: SpecIssue[],
): boolean {
  const text = annotations[PV_RECLAIM_POLICY_ANNOTATION];
  if (text === undefined || text === 'false') return false;
  if (text !== 'true') {
    issues.push({ path: path(PV_RECLAIM_POLICY_ANNOTATION), message: `expected "true" or "false", got ${JSON.stringify(text)}` });
    return false;
  }
  if (namespace === undefined) {
    issues.push({
      path: 'metadata.namespace',
      message: `required with ${PV_RECLAIM_POLICY_ANNOTATION}: "true": the controller patches PersistentVolumes through a ClusterRoleBinding, which must name its ServiceAccount's namespace; set it here or pass --namespace`,
    });
  }
  return true;
}

/** The network policy settings: on or off, and where Prometheus runs. */
export interface NetworkPolicySettings {
  /**
   * The namespace whose Pods may read the metrics ports; required when the cluster is monitored.
   * @default none (only the TiDB clusters' own Pods)
   */
  readonly metricsFrom?: string;
}

/**
 * Reads `tidb-gitops.io/network-policy` (`"true"` or `"false"`, off by default) and
 * `tidb-gitops.io/metrics-from` (a namespace, only with network policies on).
 */
export function networkPolicy(
  annotations: Readonly<Record<string, string>>,
  issues: SpecIssue[],
  refusal?: string,
): NetworkPolicySettings | undefined {
  const on = annotations[NETWORK_POLICY_ANNOTATION];
  const from = annotations[METRICS_FROM_ANNOTATION];
  if (on !== undefined && on !== 'true' && on !== 'false') {
    issues.push({ path: path(NETWORK_POLICY_ANNOTATION), message: `expected "true" or "false", got ${JSON.stringify(on)}` });
    return undefined;
  }
  if (on !== 'true') {
    if (from !== undefined)
      issues.push({
        path: path(METRICS_FROM_ANNOTATION),
        message: `applies with ${NETWORK_POLICY_ANNOTATION}: "true" only (without network policies every Pod may read the metrics)`,
      });
    return undefined;
  }
  if (refusal) {
    issues.push({ path: path(NETWORK_POLICY_ANNOTATION), message: refusal });
    return undefined;
  }
  if (from === undefined) return {};
  if (!/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/.test(from) || from.length > 63) {
    issues.push({
      path: path(METRICS_FROM_ANNOTATION),
      message: `expected the name of a namespace (where Prometheus runs), got ${JSON.stringify(from)}`,
    });
    return undefined;
  }
  return { metricsFrom: from };
}

/** Where Kubernetes says how NetworkPolicy treats Pods on their node's network. */
const HOST_NETWORK_DOC = 'https://kubernetes.io/docs/concepts/services-networking/network-policies/#networkpolicy-and-hostnetwork-pods';

/**
 * Refuses network policies for a cluster whose components run on their nodes' network, at each
 * `hostNetwork` field that puts some there (`at`: the field's path and the components it decides).
 * Such a Pod connects from its node's address, which no Pod selector of the policies names, so its
 * peers would refuse it; and Kubernetes leaves NetworkPolicy undefined for such Pods. The nodes'
 * addresses are not known when rendering, so no rule can admit them.
 */
export function hostNetworkIssues(at: ReadonlyMap<string, readonly string[]>, issues: SpecIssue[]): void {
  for (const [where, components] of at) {
    issues.push({
      path: where,
      message:
        `not with ${NETWORK_POLICY_ANNOTATION}: "true": it puts the Pods of ${listed(components)} on their nodes' network, so they connect from a node's address, ` +
        "which the policies' Pod selectors do not name, and the other components would refuse them; and Kubernetes leaves NetworkPolicy undefined for such Pods " +
        `(most network plugins neither match them nor filter what reaches them; ${HOST_NETWORK_DOC}). ` +
        `Turn hostNetwork off, or turn ${NETWORK_POLICY_ANNOTATION} off and keep NetworkPolicies of your own that admit the nodes' addresses (an ipBlock of the node network)`,
    });
  }
}

/**
 * Why Prometheus could not scrape a monitored cluster with network policies on: they admit the metrics
 * ports from the `metrics-from` namespace and the TiDB clusters' own Pods only. Reported at the
 * `network-policy` annotation; undefined when a namespace is named or the policies are off.
 * `monitoredBy` says what turned monitoring on; `namespace` is the cluster's, if it has one.
 */
export function metricsFromIssue(
  policy: NetworkPolicySettings | undefined,
  monitoredBy: string,
  namespace: string | undefined,
): SpecIssue | undefined {
  if (policy === undefined || policy.metricsFrom !== undefined) return undefined;
  const here =
    namespace !== undefined ? `${METRICS_FROM_ANNOTATION}: ${namespace}` : `${METRICS_FROM_ANNOTATION} to the cluster's namespace`;
  return {
    path: path(NETWORK_POLICY_ANNOTATION),
    message:
      `with monitoring on (${monitoredBy}), set ${METRICS_FROM_ANNOTATION}: <the namespace Prometheus runs in>: the network policies admit the metrics ports ` +
      `only from that namespace and from the TiDB clusters' own Pods, so without it Prometheus could not scrape the cluster. When Prometheus runs in the cluster's namespace, set ${here}`,
  };
}

/** `a`, `a and b`, `a, b and c`. */
function listed(items: readonly string[]): string {
  return items.length < 2 ? items.join('') : `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

/** The cluster's own monitoring settings, from its annotations. */
export interface MonitoringSettings {
  /** `tidb-gitops.io/monitoring`: true on, false off (a TidbMonitor naming the cluster is refused). @default undefined (on only with a TidbMonitor) */
  readonly enabled?: boolean;
  /** `tidb-gitops.io/monitoring-labels`: labels for every monitoring object. @default {} */
  readonly labels: Readonly<Record<string, string>>;
}

/**
 * The labels the monitoring objects always carry with tidb-gitops's values: the PodMonitors select
 * and the controller tells its objects by them, and the published dashboards are found by theirs.
 */
const OWN_MONITORING_LABELS: readonly string[] = [LABEL.name, LABEL.managedBy, LABEL.instance, LABEL.component, GRAFANA_DASHBOARD_LABEL];

/**
 * Reads `tidb-gitops.io/monitoring` (`"true"` or `"false"`) and `tidb-gitops.io/monitoring-labels`
 * (`key=value` pairs separated by commas, each a valid Kubernetes label).
 */
export function monitoringSettings(annotations: Readonly<Record<string, string>>, issues: SpecIssue[]): MonitoringSettings {
  const on = annotations[MONITORING_ANNOTATION];
  let enabled: boolean | undefined;
  if (on === 'true' || on === 'false') enabled = on === 'true';
  else if (on !== undefined)
    issues.push({ path: path(MONITORING_ANNOTATION), message: `expected "true" or "false", got ${JSON.stringify(on)}` });
  const labels: Record<string, string> = {};
  const text = annotations[MONITORING_LABELS_ANNOTATION];
  if (text !== undefined) {
    const where = path(MONITORING_LABELS_ANNOTATION);
    for (const raw of text.split(',')) {
      const item = raw.trim();
      if (item === '') continue;
      const eq = item.indexOf('=');
      const key = eq < 0 ? item : item.slice(0, eq).trim();
      const value = eq < 0 ? undefined : item.slice(eq + 1).trim();
      const problem = value === undefined ? undefined : (qualifiedNameProblem(key) ?? labelValueProblem(value));
      if (value === undefined || problem !== undefined) {
        issues.push({
          path: where,
          message: `expected labels such as "release=kube-prometheus-stack, team=db" (key=value, each a Kubernetes label), got ${JSON.stringify(item)}${problem ? `: ${problem}` : ''}`,
        });
      } else if (key in labels) {
        issues.push({ path: where, message: `label ${JSON.stringify(key)} is given twice` });
      } else if (jobLabelProblem(key)) {
        // The publishing Job's Pods carry these labels.
        issues.push({ path: where, message: jobLabelProblem(key)! });
      } else if (OWN_MONITORING_LABELS.includes(key)) {
        issues.push({
          path: where,
          message: `label ${JSON.stringify(key)} is one tidb-gitops sets itself on the monitoring objects (${OWN_MONITORING_LABELS.join(', ')}), so this value would be replaced; leave it out, or use a label of your own`,
        });
      } else {
        labels[key] = value;
      }
    }
  }
  return { ...(enabled !== undefined && { enabled }), labels };
}

/** The operator's annotation domains (`tidb.pingcap.com/`, `tiflash.tidb.pingcap.com/`, `tiproxy.pingcap.com/`...). */
const OPERATOR_KEY = /^([a-z0-9-]+\.)*pingcap\.com\//;

/**
 * A `tidb-gitops.io/` annotation this project does not read is most likely a typo of one it does:
 * refused, with the keys it knows, rather than ignored. So is a key of ours or of the operator's
 * written with capitals: Kubernetes takes it (annotation keys are checked in lower case) but keeps it
 * as written, and keys are compared as written, so nothing would read it.
 */
export function unknownClusterSettings(annotations: Readonly<Record<string, string>>, issues: SpecIssue[]): void {
  for (const key of Object.keys(annotations)) {
    const lower = key.toLowerCase();
    const ours = lower.startsWith('tidb-gitops.io/');
    if (lower !== key && (CLUSTER_SETTING_ANNOTATIONS.includes(lower) || OPERATOR_KEY.test(lower))) {
      const readers = ours ? 'tidb-gitops reads' : 'tidb-gitops and tidb-operator read';
      issues.push({
        path: path(key),
        message: `annotation keys are case-sensitive and ${readers} them in lower case, so this one would be ignored; did you mean ${JSON.stringify(lower)}?`,
      });
      continue;
    }
    if (!ours || CLUSTER_SETTING_ANNOTATIONS.includes(key)) continue;
    issues.push({
      path: path(key),
      message: `unknown setting; a TidbCluster takes ${CLUSTER_SETTING_ANNOTATIONS.slice(0, -1).join(', ')} and ${CLUSTER_SETTING_ANNOTATIONS[CLUSTER_SETTING_ANNOTATIONS.length - 1]}`,
    });
  }
}

/**
 * Seconds of a Pod's termination grace period kept for the server itself to stop (flush and close)
 * after its preStop hook: the hook waits at most the rest.
 */
export const STOP_RESERVE_SECONDS = 10;

/** The Kubernetes default of `terminationGracePeriodSeconds`. */
export const DEFAULT_GRACE_SECONDS = 30;

/**
 * `terminationGracePeriodSeconds` of TiKV Pods with drain hooks when `spec.tikv` sets none: the
 * preStop hook waits while the store's region leaders move away (at most this less
 * {@link STOP_RESERVE_SECONDS}), and the controller answers as soon as none is left or the count
 * stops dropping, so a small store stops as fast as before. PD moves the leaders of a large store
 * (tens of thousands) in minutes, not in the Kubernetes default of 30 seconds. 600 is the cluster
 * autoscaler's default `--max-graceful-termination-sec`: a scale-down drain gives no Pod more, so more
 * would be cut short there anyway. (tidb-operator v2 gives TiKV 65535 and lets its checker decide.)
 */
export const TIKV_DRAIN_GRACE_SECONDS = 600;

/**
 * How long a draining Pod's preStop hook waits for what it hands over: its grace period less
 * {@link STOP_RESERVE_SECONDS}, so that kubelet never has to kill the server. 0: no wait (and no hook).
 */
export function drainWaitSeconds(terminationGracePeriodSeconds: number | undefined): number {
  return Math.max(0, (terminationGracePeriodSeconds ?? DEFAULT_GRACE_SECONDS) - STOP_RESERVE_SECONDS);
}

/**
 * The preStop hook asks `GET /prestop/<pod>?wait=<seconds>` with this many seconds: the controller
 * answers within them, with a body starting {@link PRESTOP_AGAIN} while the Pod still holds what it
 * hands over (the hook asks again at once), with anything else once it may stop. Short asks let the
 * hook tell a controller it cannot reach from one that is still moving leaders, however long that takes.
 */
export const PRESTOP_ASK_SECONDS = 25;

/** How an answer to `/prestop/<pod>?wait=...` that means "ask again" starts. */
export const PRESTOP_AGAIN = 'wait: ';
