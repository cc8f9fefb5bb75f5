/**
 * A cluster's monitoring for Prometheus Operator and a Grafana dashboard sidecar: a PodMonitor per
 * component and one for the controller (rendered, reviewed in Git), and a Job that publishes PingCAP's
 * alert rules (a PrometheusRule) and dashboards (ConfigMaps) for the cluster's release at run time,
 * from PingCAP's `tidb-monitor-initializer` image, so that none of them is copied into Git.
 *
 * The scrape labels are the operator's (`pkg/monitor/monitor/template.go` of tidb-operator v1):
 * `instance` the Pod's name, `component`, `cluster` and `tidb_cluster` (`<namespace>-<cluster>`), and
 * `job` the component (as the rules' and dashboards' `job="tikv"` selectors expect).
 *
 * What becomes of the PodMonitors and the rules where the target may lack the Prometheus Operator's
 * CRDs (left out, or in a later Argo CD sync wave) is decided in `monitoring/crds.ts`.
 */
import { createHash } from 'node:crypto';
import { Construct } from 'constructs';
import type { Container, Job, PodSpec, PolicyRule, Role, RoleBinding, ServiceAccount } from '../../imports/k8s';
import type { ClusterMonitoring } from '../monitoring/types';
import { MONITORING_API, unknownCrdAnnotations } from '../monitoring/crds';
import { BACKUP_LABEL, LABEL, JOB_NAME_LABEL, names, PORT, selectorLabels, type ComponentKind } from '../tidbcluster/names';
import {
  CONTROLLER_ENV,
  encodeMonitoringPublishInfo,
  MONITORING_ENV,
  MONITORING_JOB_ENV,
  type MonitoringPublishInfo,
} from '../tidbcluster/contract';
import { stableJson } from '../base/stable-json';
import type { ResolvedCluster } from '../tidbcluster/resolve';
import { fieldRefEnv, namespaced } from './component';
import { kubeObject } from './kube';

export interface MonitoringProps {
  readonly cluster: ResolvedCluster;
  readonly monitoring: ClusterMonitoring;
}

/** Where the rules and dashboards are copied to from the initializer image, in the Job's Pod. */
export const ASSETS_DIR = '/assets';

/** The scrape endpoints of each kind of Pod: the port, its path, and whether it speaks the cluster's TLS. */
interface Endpoint {
  /** The port number scraped. */
  readonly port: number;
  /** The container port name of that number, when the Pod declares it. */
  readonly name?: string;
  readonly path: string;
  /** 'cluster': https with the cluster client certificate when tlsCluster; 'skip-verify': https, no client certificate; 'plain': http always. */
  readonly tls: 'cluster' | 'skip-verify' | 'plain';
}

/** The kinds of Pods that are scraped, with their endpoints (tidb-operator's `AnnProm` ports and paths). */
export function scrapeEndpoints(cluster: ResolvedCluster): [ComponentKind | 'discovery', Endpoint[]][] {
  const out: [ComponentKind | 'discovery', Endpoint[]][] = [];
  if (cluster.pd) out.push(['pd', [{ port: PORT.pdClient, name: 'client', path: '/metrics', tls: 'cluster' }]]);
  if (cluster.tso) out.push(['tso', [{ port: PORT.pdClient, name: 'server', path: '/metrics', tls: 'cluster' }]]);
  if (cluster.scheduling) out.push(['scheduling', [{ port: PORT.pdClient, name: 'server', path: '/metrics', tls: 'cluster' }]]);
  if (cluster.tikv)
    out.push([
      'tikv',
      [{ port: PORT.tikvStatus, ...(cluster.tikv.enableNamedStatusPort && { name: 'status' }), path: '/metrics', tls: 'cluster' }],
    ]);
  if (cluster.tidb) out.push(['tidb', [{ port: PORT.tidbStatus, name: 'status', path: '/metrics', tls: 'cluster' }]]);
  if (cluster.tiflash) {
    out.push([
      'tiflash',
      [
        { port: PORT.tiflashMetrics, name: 'metrics', path: '/metrics', tls: 'cluster' },
        // The proxy's status port is not a declared container port (as with the operator).
        { port: PORT.tiflashProxyStatus, path: '/metrics', tls: 'cluster' },
      ],
    ]);
  }
  if (cluster.ticdc) out.push(['ticdc', [{ port: PORT.ticdc, name: 'ticdc', path: '/metrics', tls: 'cluster' }]]);
  if (cluster.pump) out.push(['pump', [{ port: PORT.pump, name: 'pump', path: '/metrics', tls: 'cluster' }]]);
  // TiProxy serves TiDB's certificate, which names no peer address (the operator skips verification too).
  if (cluster.tiproxy) out.push(['tiproxy', [{ port: PORT.tiproxyApi, name: 'tiproxy-api', path: '/api/metrics', tls: 'skip-verify' }]]);
  out.push(['discovery', [{ port: PORT.discoveryMetrics, name: 'metrics', path: '/metrics', tls: 'plain' }]]);
  return out;
}

/** A declared port of each kind of Pod, from which an undeclared one is reached on the same Pod IP. */
const DECLARED: Readonly<Record<string, string>> = { tikv: 'server', tiflash: 'metrics' };

export class MonitoringComponent extends Construct {
  constructor(scope: Construct, id: string, props: MonitoringProps) {
    super(scope, id);
    const { cluster, monitoring } = props;
    // Left out where the target is known to lack the CRD (the warning says so: monitoring/crds.ts).
    if (monitoring.podMonitors !== 'missing') {
      for (const [kind, endpoints] of scrapeEndpoints(cluster))
        kubeObject(this, `${kind}-monitor`, podMonitor(cluster, monitoring, kind, endpoints));
    }
    if (monitoring.rules || monitoring.dashboards) {
      kubeObject(this, 'service-account', publisherServiceAccount(cluster, monitoring));
      kubeObject(this, 'role', publisherRole(cluster, monitoring));
      kubeObject(this, 'role-binding', publisherRoleBinding(cluster, monitoring));
      kubeObject(this, 'job', publishJob(cluster, monitoring));
    }
  }
}

const RBAC_GROUP = 'rbac.authorization.k8s.io';
const MONITORING_GROUP = 'monitoring.coreos.com';

/**
 * A PodMonitor carries the labels of the Pods it selects; the publishing Job and what it publishes are
 * managed by tidb-gitops (`BACKUP_LABEL.managedBy`), so that the controller, which reads the cluster's
 * Pods by `managed-by: tidb-operator`, never takes the Job's Pod for a server.
 */
function labels(cluster: ResolvedCluster, monitoring: ClusterMonitoring, component: ComponentKind | 'discovery' | 'monitoring') {
  const own = selectorLabels(cluster.instance, component);
  return { ...monitoring.labels, ...own, ...(component === 'monitoring' && { [LABEL.managedBy]: BACKUP_LABEL.managedBy }) };
}

/** `instance` the Pod, and the operator's `component`, `cluster`, `tidb_cluster`, `kubernetes_namespace`. */
function targetRelabelings(cluster: ResolvedCluster, kind: string, endpoint: Endpoint, declared: boolean): Record<string, unknown>[] {
  const address = declared
    ? []
    : [
        // Pod IPs: IPv4 as they are, IPv6 in brackets.
        {
          sourceLabels: ['__meta_kubernetes_pod_ip'],
          regex: '([^:]+)',
          targetLabel: '__address__',
          replacement: `$1:${endpoint.port}`,
          action: 'replace',
        },
        {
          sourceLabels: ['__meta_kubernetes_pod_ip'],
          regex: '(.+:.+)',
          targetLabel: '__address__',
          replacement: `[$1]:${endpoint.port}`,
          action: 'replace',
        },
      ];
  return [
    ...address,
    { sourceLabels: ['__meta_kubernetes_pod_name'], targetLabel: 'instance', action: 'replace' },
    { targetLabel: 'component', replacement: kind, action: 'replace' },
    { targetLabel: 'cluster', replacement: cluster.name, action: 'replace' },
    { sourceLabels: ['__meta_kubernetes_namespace'], targetLabel: 'tidb_cluster', replacement: `$1-${cluster.name}`, action: 'replace' },
    { sourceLabels: ['__meta_kubernetes_namespace'], targetLabel: 'kubernetes_namespace', action: 'replace' },
  ];
}

/**
 * A name the certificate a Pod of `kind` serves holds, as tidb-operator's TLS guide issues them
 * (docs "Enable TLS between TiDB Components", cfssl `hosts` and cert-manager `dnsNames`): its peer
 * Service (`<peer>.<namespace>.svc`), except Pump's, which names only its Pods
 * (`*.<c>-pump`, `*.<c>-pump.<namespace>`, `*.<c>-pump.<namespace>.svc`): the first Pod's address.
 */
function serverName(cluster: ResolvedCluster, kind: ComponentKind): string {
  const peer = names.peerService(cluster.name, kind);
  const host = kind === 'pump' ? `${names.pod(cluster.name, kind, 0)}.${peer}` : peer;
  return cluster.namespace !== undefined ? `${host}.${cluster.namespace}.svc` : host;
}

function tlsConfig(cluster: ResolvedCluster, kind: ComponentKind | 'discovery', endpoint: Endpoint): Record<string, unknown> {
  if (endpoint.tls === 'plain' || !cluster.tlsCluster) return { scheme: 'http' };
  if (endpoint.tls === 'skip-verify') return { scheme: 'https', tlsConfig: { insecureSkipVerify: true } };
  const secret = names.clusterClientSecret(cluster.name);
  return {
    scheme: 'https',
    tlsConfig: {
      ca: { secret: { name: secret, key: 'ca.crt' } },
      cert: { secret: { name: secret, key: 'tls.crt' } },
      keySecret: { name: secret, key: 'tls.key' },
      serverName: serverName(cluster, kind as ComponentKind),
    },
  };
}

/**
 * The PodMonitor `<cluster>-<component>`, selecting exactly that component's Pods in the cluster's
 * namespace; for a later Argo CD sync wave when it is not known that the target serves its kind.
 */
export function podMonitor(
  cluster: ResolvedCluster,
  monitoring: ClusterMonitoring,
  kind: ComponentKind | 'discovery',
  endpoints: readonly Endpoint[],
): Record<string, unknown> {
  const name = kind === 'discovery' ? names.discovery(cluster.name) : names.statefulSet(cluster.name, kind);
  return {
    apiVersion: MONITORING_API,
    kind: 'PodMonitor',
    metadata: namespaced(
      cluster,
      name,
      labels(cluster, monitoring, kind),
      monitoring.podMonitors === 'unknown' ? unknownCrdAnnotations() : undefined,
    ),
    spec: {
      jobLabel: LABEL.component,
      selector: { matchLabels: selectorLabels(cluster.instance, kind) },
      podMetricsEndpoints: endpoints.map((e) => {
        const declared = e.name !== undefined;
        return {
          port: e.name ?? DECLARED[kind],
          path: e.path,
          honorLabels: true,
          ...tlsConfig(cluster, kind, e),
          relabelings: targetRelabelings(cluster, kind, e, declared),
        };
      }),
    },
  };
}

function publisherMeta(cluster: ResolvedCluster, monitoring: ClusterMonitoring) {
  return namespaced(cluster, names.monitoring(cluster.name), labels(cluster, monitoring, 'monitoring'));
}

export function publisherServiceAccount(cluster: ResolvedCluster, monitoring: ClusterMonitoring): ServiceAccount {
  return { apiVersion: 'v1', kind: 'ServiceAccount', metadata: publisherMeta(cluster, monitoring) };
}

/**
 * What the publishing Job does and no more: read its own Job (the owner of what it publishes), and
 * write the PrometheusRule and the dashboard ConfigMaps. A dashboard's name comes from the image, so
 * ConfigMaps cannot be named ahead; the PrometheusRule can.
 */
export function publisherRules(cluster: ResolvedCluster, monitoring: ClusterMonitoring): PolicyRule[] {
  return [
    { apiGroups: ['batch'], resources: ['jobs'], resourceNames: [publishJobName(cluster, monitoring)], verbs: ['get'] },
    ...(monitoring.dashboards ? [{ apiGroups: [''], resources: ['configmaps'], verbs: ['create', 'patch'] }] : []),
    ...(monitoring.rules
      ? [
          { apiGroups: [MONITORING_GROUP], resources: ['prometheusrules'], verbs: ['create'] },
          {
            apiGroups: [MONITORING_GROUP],
            resources: ['prometheusrules'],
            resourceNames: [names.alertRules(cluster.name)],
            verbs: ['patch'],
          },
        ]
      : []),
  ];
}

export function publisherRole(cluster: ResolvedCluster, monitoring: ClusterMonitoring): Role {
  return {
    apiVersion: `${RBAC_GROUP}/v1`,
    kind: 'Role',
    metadata: publisherMeta(cluster, monitoring),
    rules: publisherRules(cluster, monitoring),
  };
}

export function publisherRoleBinding(cluster: ResolvedCluster, monitoring: ClusterMonitoring): RoleBinding {
  const name = names.monitoring(cluster.name);
  return {
    apiVersion: `${RBAC_GROUP}/v1`,
    kind: 'RoleBinding',
    metadata: publisherMeta(cluster, monitoring),
    subjects: [{ kind: 'ServiceAccount', name, ...(cluster.namespace !== undefined && { namespace: cluster.namespace }) }],
    roleRef: { apiGroup: RBAC_GROUP, kind: 'Role', name },
  };
}

/** What the publishing container is told (`TIDB_GITOPS_MONITORING`). */
export function publishInfo(cluster: ResolvedCluster, monitoring: ClusterMonitoring): MonitoringPublishInfo {
  return {
    cluster: cluster.name,
    image: monitoring.image,
    components: scrapeEndpoints(cluster)
      .map(([k]) => k)
      .filter((k): k is ComponentKind => k !== 'discovery'),
    rules: monitoring.rules,
    dashboards: monitoring.dashboards,
    labels: { ...monitoring.labels },
    assets: ASSETS_DIR,
  };
}

const RESTRICTED: Container['securityContext'] = {
  allowPrivilegeEscalation: false,
  readOnlyRootFilesystem: true,
  runAsNonRoot: true,
  capabilities: { drop: ['ALL'] },
};

function publishPodSpec(cluster: ResolvedCluster, monitoring: ClusterMonitoring): PodSpec {
  const f = monitoring.fetch;
  const assets = { name: 'assets', mountPath: ASSETS_DIR };
  return {
    serviceAccountName: names.monitoring(cluster.name),
    restartPolicy: 'OnFailure',
    securityContext: f.podSecurityContext ?? {
      runAsNonRoot: true,
      runAsUser: 65534,
      runAsGroup: 65534,
      seccompProfile: { type: 'RuntimeDefault' },
    },
    ...(f.imagePullSecrets && { imagePullSecrets: [...f.imagePullSecrets] }),
    ...(f.nodeSelector && { nodeSelector: { ...f.nodeSelector } }),
    ...(f.tolerations && { tolerations: [...f.tolerations] }),
    initContainers: [
      {
        name: 'fetch',
        image: monitoring.image,
        imagePullPolicy: (f.imagePullPolicy ?? 'IfNotPresent') as Container['imagePullPolicy'],
        // The image keeps every rule file and dashboard of its release in /tmp.
        command: ['/bin/sh', '-c', `cp /tmp/*.rules.yml /tmp/*.json ${ASSETS_DIR}/`],
        ...(f.resources && { resources: f.resources }),
        securityContext: f.securityContext ?? RESTRICTED,
        volumeMounts: [assets],
      },
    ],
    containers: [
      {
        name: 'publish',
        image: cluster.discovery.image,
        imagePullPolicy: cluster.discovery.imagePullPolicy as Container['imagePullPolicy'],
        command: ['tidb-gitops', 'publish-monitoring'],
        env: [
          fieldRefEnv(CONTROLLER_ENV.podNamespace, 'metadata.namespace'),
          // The Job owns what it publishes; Kubernetes labels its Pods with its name.
          fieldRefEnv(MONITORING_JOB_ENV, `metadata.labels['${JOB_NAME_LABEL}']`),
          { name: MONITORING_ENV, value: encodeMonitoringPublishInfo(publishInfo(cluster, monitoring)) },
        ],
        securityContext: RESTRICTED,
        volumeMounts: [{ ...assets, readOnly: true }],
      },
    ],
    volumes: [{ name: 'assets', emptyDir: {} }],
  };
}

/**
 * The Job's name carries a hash of its Pod: a new release (or any change) is a new Job, which
 * publishes again, while the Job of the release before is pruned with what only it published.
 */
export function publishJobName(cluster: ResolvedCluster, monitoring: ClusterMonitoring): string {
  const hash = createHash('sha256')
    .update(stableJson(publishPodSpec(cluster, monitoring)))
    .digest('hex')
    .slice(0, 7);
  return names.monitoringJob(cluster.name, hash);
}

/**
 * Publishes once per release: the PrometheusRule and dashboard ConfigMaps name this Job as their
 * owner, so pruning the Job (the next release's Job replacing it in Git, or monitoring turned off)
 * lets Kubernetes' garbage collector remove what it published. No TTL: a Job removed after it ran
 * would take its objects with it.
 */
export function publishJob(cluster: ResolvedCluster, monitoring: ClusterMonitoring): Job {
  const podLabels = { ...labels(cluster, monitoring, 'monitoring'), ...monitoring.fetch.labels };
  const annotations = monitoring.fetch.annotations;
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: namespaced(cluster, publishJobName(cluster, monitoring), labels(cluster, monitoring, 'monitoring')),
    spec: {
      backoffLimit: 6,
      template: {
        metadata: { labels: podLabels, ...(annotations && Object.keys(annotations).length > 0 && { annotations: { ...annotations } }) },
        spec: publishPodSpec(cluster, monitoring),
      },
    },
  };
}
