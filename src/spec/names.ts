/**
 * Object names, labels and annotation keys shared by the renderer and the controller, so the two can
 * never disagree on `<cluster>-pd-peer` or a selector. Names and label values follow tidb-operator v1,
 * which is what lets an operator-made cluster be adopted without recreating a Pod or PVC.
 */

/** Components rendered as StatefulSets, in the order the operator reconciles them. */
export const COMPONENTS = ['pd', 'tiproxy', 'tiflash', 'tikv', 'pump', 'tidb', 'ticdc'] as const;
export type ComponentKind = (typeof COMPONENTS)[number];

/** Label keys (`app.kubernetes.io/*`) and the fixed values the operator uses. */
export const LABEL = {
  name: 'app.kubernetes.io/name',
  managedBy: 'app.kubernetes.io/managed-by',
  instance: 'app.kubernetes.io/instance',
  component: 'app.kubernetes.io/component',
  usedBy: 'app.kubernetes.io/used-by',
} as const;

/**
 * The label values stay `tidb-cluster` / `tidb-operator` although no operator runs: they are part of
 * every selector, and selectors are immutable on a StatefulSet.
 */
export const LABEL_VALUE = {
  name: 'tidb-cluster',
  managedBy: 'tidb-operator',
} as const;

/** Annotation keys this project writes for its companion controller. */
export const ANNOTATION = {
  /** Desired replica count of a component StatefulSet; the controller owns `spec.replicas`. */
  replicas: 'tidb-gitops.io/replicas',
  /** JSON of the component's operation settings (failover, eviction timeouts...) for the controller. */
  settings: 'tidb-gitops.io/settings',
} as const;

export type Labels = Record<string, string>;

/** The four selector labels of a component: on StatefulSets, their selectors, Services and ConfigMaps. */
export function selectorLabels(instance: string, component: ComponentKind | 'discovery'): Labels {
  return {
    [LABEL.name]: LABEL_VALUE.name,
    [LABEL.managedBy]: LABEL_VALUE.managedBy,
    [LABEL.instance]: instance,
    [LABEL.component]: component,
  };
}

export const names = {
  statefulSet: (cluster: string, c: ComponentKind) => `${cluster}-${c}`,
  /**
   * Headless Service that gives Pods stable DNS names (`serviceName` of the StatefulSet). Pump's has no
   * `-peer` suffix, as with the operator.
   */
  peerService: (cluster: string, c: ComponentKind) => (c === 'pump' ? `${cluster}-pump` : `${cluster}-${c}-peer`),
  /** Client Service (PD always, TiDB when `spec.tidb.service` is set). */
  service: (cluster: string, c: ComponentKind) => `${cluster}-${c}`,
  /** ConfigMap base name; `configUpdateStrategy: RollingUpdate` appends `-<hash>`. */
  configMap: (cluster: string, c: ComponentKind) => `${cluster}-${c}`,
  discovery: (cluster: string) => `${cluster}-discovery`,
  pod: (cluster: string, c: ComponentKind, ordinal: number) => `${cluster}-${c}-${ordinal}`,
  /** volumeClaimTemplate name of the main data volume (PD `pd`, TiKV `tikv`; TiDB has none). */
  dataVolume: (c: 'pd' | 'tikv') => c,
  /** Secret holding a component's cluster certificate (`ca.crt`, `tls.crt`, `tls.key`) with `tlsCluster`. */
  clusterSecret: (cluster: string, c: ComponentKind) => `${cluster}-${c}-cluster-secret`,
  /** Client certificate for talking to the cluster's components (`mountClusterClientSecret`, TiCDC). */
  clusterClientSecret: (cluster: string) => `${cluster}-cluster-client-secret`,
  /** TiDB's SQL server certificate (`spec.tidb.tlsClient.enabled`). */
  tidbServerSecret: (cluster: string) => `${cluster}-tidb-server-secret`,
  /** Client certificate for internal SQL clients (PD dashboard, TiProxy) with `tlsClient`. */
  tidbClientSecret: (cluster: string) => `${cluster}-tidb-client-secret`,
  /** volumeClaimTemplate name of an extra storage volume, e.g. `tikv-raft`. */
  storageVolume: (c: ComponentKind, volume: string) => `${c}-${volume}`,
  pvc: (claimTemplate: string, statefulSet: string, ordinal: number) => `${claimTemplate}-${statefulSet}-${ordinal}`,
} as const;

/** Fixed ports (tidb-operator v1 defaults). */
export const PORT = {
  pdClient: 2379,
  pdPeer: 2380,
  tikvServer: 20160,
  tikvStatus: 20180,
  tidbServer: 4000,
  tidbStatus: 10080,
  tiflashFlash: 3930,
  tiflashProxy: 20170,
  tiflashMetrics: 8234,
  tiflashProxyStatus: 20292,
  tiflashTcp: 9000,
  tiflashHttp: 8123,
  tiflashInternal: 9009,
  ticdc: 8301,
  pump: 8250,
  tiproxySql: 6000,
  tiproxyApi: 3080,
  tiproxyPeer: 3081,
  discovery: 10261,
} as const;
