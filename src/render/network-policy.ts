import { Construct } from 'constructs';
import type { NetworkPolicy, NetworkPolicyIngressRule, NetworkPolicyPeer } from '../../imports/k8s';
import {
  LABEL,
  LABEL_VALUE,
  names,
  PORT,
  selectorLabels,
  BACKUP_LABEL,
  drainerChartLabels,
  type ComponentKind,
} from '../tidbcluster/names';
import type { ResolvedCluster } from '../tidbcluster/resolve';
import { namespaced } from './component';
import { kubeObject } from './kube';

/** The ports a component serves, by who may reach them. */
export interface ComponentPorts {
  /** Anyone may connect: the SQL ports applications use. */
  readonly clients: readonly (number | string)[];
  /** The cluster's own Pods (servers, the controller, backup and restore Jobs). */
  readonly peers: readonly number[];
  /** Prometheus, from the `tidb-gitops.io/metrics-from` namespace (the peers reach them too). */
  readonly metrics: readonly number[];
  /**
   * A Drainer of tidb-operator's `tidb-drainer` chart, with binlog: it asks PD for timestamps and the
   * Pumps' addresses, reads the DDL jobs from TiKV, and pulls the binlog from each Pump. @default []
   */
  readonly drainer?: readonly number[];
}

/**
 * What each component listens on (the ports of tidb-operator's Services and start scripts). TiFlash
 * before v6 also served 9000, 8123 and 9009; they stay open to peers for clusters that still run it.
 */
export function componentPorts(cluster: ResolvedCluster, kind: ComponentKind | 'discovery'): ComponentPorts {
  switch (kind) {
    case 'pd':
    case 'tso':
    case 'scheduling':
      return {
        clients: [],
        peers: [PORT.pdClient, PORT.pdPeer],
        metrics: [PORT.pdClient],
        ...(kind === 'pd' && { drainer: [PORT.pdClient] }),
      };
    case 'tikv':
      return { clients: [], peers: [PORT.tikvServer, PORT.tikvStatus], metrics: [PORT.tikvStatus], drainer: [PORT.tikvServer] };
    case 'tiflash':
      return {
        clients: [],
        peers: [
          PORT.tiflashFlash,
          PORT.tiflashProxy,
          PORT.tiflashMetrics,
          PORT.tiflashProxyStatus,
          PORT.tiflashTcp,
          PORT.tiflashHttp,
          PORT.tiflashInternal,
        ],
        metrics: [PORT.tiflashMetrics, PORT.tiflashProxyStatus],
      };
    case 'tidb': {
      // The Service's extra ports reach the TiDB container where their targetPort says.
      const extra = (cluster.tidb?.service?.additionalPorts ?? []).map((p) => p.targetPort ?? p.port);
      return { clients: [...new Set([PORT.tidbServer, ...extra])], peers: [PORT.tidbStatus], metrics: [PORT.tidbStatus] };
    }
    case 'ticdc':
      return { clients: [], peers: [PORT.ticdc], metrics: [PORT.ticdc] };
    case 'pump':
      return { clients: [], peers: [PORT.pump], metrics: [PORT.pump], drainer: [PORT.pump] };
    case 'tiproxy':
      return { clients: [PORT.tiproxySql], peers: [PORT.tiproxyApi, PORT.tiproxyPeer], metrics: [PORT.tiproxyApi] };
    case 'discovery':
      return { clients: [], peers: [PORT.discovery, PORT.discoveryMetrics], metrics: [PORT.discoveryMetrics] };
  }
}

export interface NetworkPolicyProps {
  readonly cluster: ResolvedCluster;
  readonly kind: ComponentKind | 'discovery';
}

/**
 * The NetworkPolicy `<cluster>-<component>` (`<cluster>-discovery` for the controller): ingress to the
 * component's Pods only on its own ports, the SQL ports from anywhere, every other port from the
 * Pods of the TiDB clusters of this namespace (and of the one `spec.cluster` joins), the ports a
 * Drainer of the operator's `tidb-drainer` chart uses from it, and the metrics ports from
 * Prometheus's namespace. Egress is left alone (backups write to storage, TiCDC to its
 * sinks). Policies add up: a NetworkPolicy of your own beside the cluster admits more.
 */
export class NetworkPolicyComponent extends Construct {
  constructor(scope: Construct, id: string, props: NetworkPolicyProps) {
    super(scope, id);
    kubeObject(this, 'policy', networkPolicy(props.cluster, props.kind));
  }
}

const tcp = (ports: readonly (number | string)[]) => ports.map((port) => ({ protocol: 'TCP', port }));

/** Every Pod this project or the operator made, in the namespaces the cluster's peers live in. */
function peers(cluster: ResolvedCluster): NetworkPolicyPeer[] {
  const podSelector = {
    matchExpressions: [{ key: LABEL.managedBy, operator: 'In', values: [LABEL_VALUE.managedBy, BACKUP_LABEL.managedBy] }],
  };
  const out: NetworkPolicyPeer[] = [{ podSelector }];
  const joined = cluster.joinCluster?.namespace;
  if (joined !== undefined && joined !== cluster.namespace) {
    out.push({ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': joined } }, podSelector });
  }
  return out;
}

/**
 * The Drainers of tidb-operator's `tidb-drainer` chart that may reach the cluster, by the labels the
 * chart gives them: the cluster's own, where it has Pumps (the chart puts a Drainer beside its
 * cluster), and the one of the cluster `spec.cluster` joins, which reads this cluster's stores and
 * Pumps too. Only Pods of those namespaces carry them.
 */
function drainers(cluster: ResolvedCluster): NetworkPolicyPeer[] {
  const out: NetworkPolicyPeer[] = [];
  if (cluster.pump) out.push({ podSelector: { matchLabels: drainerChartLabels(cluster.name) } });
  const joined = cluster.joinCluster;
  if (joined !== undefined) {
    const podSelector = { matchLabels: drainerChartLabels(joined.name) };
    const ns = joined.namespace;
    out.push(
      ns !== undefined && ns !== cluster.namespace
        ? { namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': ns } }, podSelector }
        : { podSelector },
    );
  }
  return out;
}

export function networkPolicy(cluster: ResolvedCluster, kind: ComponentKind | 'discovery'): NetworkPolicy {
  const ports = componentPorts(cluster, kind);
  const labels = selectorLabels(cluster.instance, kind);
  const ingress: NetworkPolicyIngressRule[] = [];
  if (ports.clients.length > 0) ingress.push({ ports: tcp(ports.clients) });
  ingress.push({ from: peers(cluster), ports: tcp(ports.peers) });
  const drainerFrom = drainers(cluster);
  const drainerPorts = ports.drainer ?? [];
  if (drainerFrom.length > 0 && drainerPorts.length > 0) ingress.push({ from: drainerFrom, ports: tcp(drainerPorts) });
  const metricsFrom = cluster.networkPolicy?.metricsFrom;
  if (metricsFrom !== undefined) {
    ingress.push({
      from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': metricsFrom } } }],
      ports: tcp(ports.metrics),
    });
  }
  return {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: namespaced(cluster, kind === 'discovery' ? names.discovery(cluster.name) : names.statefulSet(cluster.name, kind), labels),
    spec: { podSelector: { matchLabels: labels }, policyTypes: ['Ingress'], ingress },
  };
}
