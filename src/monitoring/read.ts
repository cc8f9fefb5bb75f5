/**
 * The TidbMonitor as a document kind the input reader takes beside TidbClusters: checked against its
 * CRD, each field either mapped onto what tidb-gitops renders, accepted as describing a server
 * tidb-gitops does not run, or refused with the reason; and each cluster's monitoring, from its
 * TidbMonitor or its `tidb-gitops.io/monitoring` annotation.
 */
import { DNS1123_LABEL, DNS1123_SUBDOMAIN } from '../base/patterns';
import { imageTag } from '../base/version';
import { unsafeTextIssues } from '../tidbcluster/check';
import { validateSchema, type CompactSchema } from '../tidbcluster/crd-schema';
import type { SpecIssue } from '../tidbcluster/errors';
import type { DocumentKind } from '../tidbcluster/load';
import { podFieldIssues } from '../tidbcluster/job-pod-input';
import type { ResolvedCluster } from '../tidbcluster/resolve';
import { MONITORING_ANNOTATION } from '../tidbcluster/guard-rails';
import schema from './generated/tidbmonitor.schema.json';
import { fitToTarget } from './crds';
import {
  INITIALIZER_IMAGE,
  MONITOR_KIND,
  type ClusterMonitoring,
  type MonitoringFetch,
  type ResolvedMonitor,
  type TidbMonitor,
} from './types';

/** The image fields of the operator's monitor containers: mapped for the initializer, unused for the others. */
const CONTAINER_FIELDS = ['baseImage', 'version', 'imagePullPolicy', 'requests', 'limits', 'securityContext'];

/**
 * Fields that describe the Prometheus, Grafana and reloaders the operator runs and tidb-gitops does
 * not (the user's Prometheus Operator and Grafana take their place): accepted, so that an operator
 * user's document reads as it is, and not used. Nothing that is monitored, or where data and alerts
 * go, depends on them.
 */
export const UNUSED_FIELDS: readonly string[] = [
  ...['prometheus', 'grafana', 'reloader', 'prometheusReloader'].flatMap((c) => [...CONTAINER_FIELDS, 'logLevel'].map((f) => `${c}.${f}`)),
  'replicas',
  'clusterScoped',
  'timezone',
  'automountServiceAccountToken',
  'preferIPv6',
  'pvReclaimPolicy',
];

/** Fields carried over: what is monitored, the rules and dashboards' image, and its Pod. */
export const MAPPED_FIELDS: readonly string[] = [
  'clusters',
  ...CONTAINER_FIELDS.map((f) => `initializer.${f}`),
  'grafana',
  'enableAlertRules',
  'imagePullPolicy',
  'imagePullSecrets',
  'nodeSelector',
  'tolerations',
  'podSecurityContext',
  'annotations',
  'labels',
];

const NO_PROMETHEUS =
  'tidb-gitops runs no Prometheus: your Prometheus Operator scrapes the rendered PodMonitors, so this is set on its Prometheus resource';
const NO_GRAFANA =
  "tidb-gitops runs no Grafana: the dashboards are ConfigMaps for your Grafana's dashboard sidecar, so this is set on your Grafana";
const NO_DATA =
  'tidb-gitops runs no Prometheus, so it keeps no monitoring data: your Prometheus stores it (spec.storage of its Prometheus resource)';

/** Why each field with no counterpart is refused; a field not listed here gets `NO_PROMETHEUS`. */
const REFUSED: Readonly<Record<string, string>> = {
  alertmanagerURL:
    "where alerts go is your Prometheus's setting (spec.alerting of its Prometheus resource); for the alert rules, set enableAlertRules: true",
  alertManagerRulesVersion: 'the rules come from the initializer image: set initializer.version to the release whose rules you want',
  externalLabels: NO_PROMETHEUS,
  replicaExternalLabelName: NO_PROMETHEUS,
  kubePrometheusURL: "the Kubernetes dashboards (nodes, pods) are not published: kube-prometheus's own cover them",
  dm: 'DM clusters are not rendered by tidb-gitops',
  thanos: NO_PROMETHEUS,
  shards: NO_PROMETHEUS,
  persistent: NO_DATA,
  storage: NO_DATA,
  storageClassName: NO_DATA,
  additionalContainers: 'there is no monitor Pod to add containers to',
  additionalVolumes: 'there is no monitor Pod to add volumes to',
  'initializer.envs': "the rules and dashboards are published by tidb-gitops, not by the image's init.sh that reads these variables",
  'initializer.claims': 'resource claims are not carried over to the Pod that fetches the rules and dashboards',
  'prometheus.retentionTime': NO_DATA,
  'prometheus.reserveDays': NO_DATA,
  'prometheus.disableCompaction': NO_DATA,
  'reloader.service': 'tidb-gitops runs no rule reloader: the rules are a PrometheusRule, edited in Git',
  ...Object.fromEntries(
    ['service', 'ingress', 'username', 'password', 'usernameSecret', 'passwordSecret', 'envs', 'additionalVolumeMounts', 'claims'].map(
      (f) => [`grafana.${f}`, NO_GRAFANA],
    ),
  ),
};

/** The reader of TidbMonitor documents, for `parseDocuments`. */
export function monitorKind(options: { readonly namespace?: string } = {}): DocumentKind<ResolvedMonitor> {
  return {
    kind: MONITOR_KIND,
    group: 'pingcap.com',
    check(doc) {
      const unsafe = unsafeTextIssues(doc, MONITOR_KIND);
      if (unsafe.length > 0) return unsafe;
      const issues: SpecIssue[] = [...validateSchema(schema as CompactSchema, doc), ...metadataIssues(doc.metadata)];
      if (issues.length > 0) return issues;
      return resolveMonitor(doc as unknown as TidbMonitor, options).issues;
    },
    read(doc) {
      const { value } = resolveMonitor(doc as unknown as TidbMonitor, options);
      if (!value) throw new Error(`${MONITOR_KIND}: read() of a document check() refused`);
      return value;
    },
  };
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** Every field set, as dotted paths: the top level, and one level into the containers. */
function fieldsSet(spec: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const [k, v] of Object.entries(spec)) {
    if (v === undefined || v === null) continue;
    if (['initializer', 'prometheus', 'grafana', 'reloader', 'prometheusReloader'].includes(k) && isObject(v)) {
      if (k === 'grafana') out.push(k);
      for (const [f, fv] of Object.entries(v)) if (fv !== undefined && fv !== null) out.push(`${k}.${f}`);
    } else {
      out.push(k);
    }
  }
  return out;
}

export function resolveMonitor(
  doc: TidbMonitor,
  options: { readonly namespace?: string } = {},
): { value?: ResolvedMonitor; issues: SpecIssue[] } {
  const s = doc.spec;
  const issues: SpecIssue[] = [];
  for (const field of fieldsSet(s as Record<string, unknown>)) {
    if (MAPPED_FIELDS.includes(field) || UNUSED_FIELDS.includes(field)) continue;
    issues.push({ path: `spec.${field}`, message: `not carried over: ${REFUSED[field] ?? NO_PROMETHEUS}; remove it` });
  }
  const clusters = s.clusters ?? [];
  if (clusters.length === 0) issues.push({ path: 'spec.clusters', message: 'no cluster to monitor: name at least one TidbCluster' });
  clusters.forEach((c, i) => {
    if (!DNS1123_LABEL.test(c.name) || c.name.length > 63)
      issues.push({ path: `spec.clusters[${i}].name`, message: `invalid cluster name ${JSON.stringify(c.name)}` });
    if (c.namespace !== undefined && c.namespace !== '' && (!DNS1123_LABEL.test(c.namespace) || c.namespace.length > 63)) {
      issues.push({ path: `spec.clusters[${i}].namespace`, message: `invalid namespace ${JSON.stringify(c.namespace)}` });
    }
  });
  const init = s.initializer;
  const base = init.baseImage ?? INITIALIZER_IMAGE;
  if (!/^[^\s:@]+(:\d+)?(\/[^\s:@]+)*$/.test(base))
    issues.push({
      path: 'spec.initializer.baseImage',
      message: `invalid image name ${JSON.stringify(base)}: expected a repository such as ${INITIALIZER_IMAGE}, without a tag`,
    });
  if (init.version !== undefined && !/^[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}$/.test(init.version)) {
    issues.push({
      path: 'spec.initializer.version',
      message: `invalid image tag ${JSON.stringify(init.version)}: expected a TiDB release such as v8.5.0`,
    });
  }
  const policy = init.imagePullPolicy ?? s.imagePullPolicy;
  if (policy !== undefined && !['Always', 'IfNotPresent', 'Never'].includes(policy)) {
    issues.push({
      path: init.imagePullPolicy !== undefined ? 'spec.initializer.imagePullPolicy' : 'spec.imagePullPolicy',
      message: `expected Always, IfNotPresent or Never, got ${JSON.stringify(policy)}`,
    });
  }
  // The publishing Job's Pod takes these; the API server checks them only when the Job creates it.
  issues.push(
    ...podFieldIssues(s as Record<string, unknown>, 'spec', {
      tolerations: 'tolerations',
      nodeSelector: 'nodeSelector',
      podSecurityContext: 'podSecurityContext',
      podLabels: 'labels',
      podAnnotations: 'annotations',
    }),
  );
  issues.push(...podFieldIssues({ initializer: init }, 'spec', { resources: 'initializer' }));
  issues.push(...podFieldIssues(init, 'spec.initializer', { containerSecurityContext: 'securityContext' }));
  if (issues.length > 0) return { issues };
  const namespace = doc.metadata.namespace ?? options.namespace;
  const resources =
    init.requests !== undefined || init.limits !== undefined
      ? { ...(init.requests && { requests: init.requests }), ...(init.limits && { limits: init.limits }) }
      : undefined;
  const fetch: MonitoringFetch = {
    ...(policy !== undefined && { imagePullPolicy: policy }),
    ...(resources && { resources: resources as MonitoringFetch['resources'] }),
    ...(init.securityContext && { securityContext: init.securityContext }),
    ...(s.imagePullSecrets && { imagePullSecrets: s.imagePullSecrets }),
    ...(s.nodeSelector && { nodeSelector: s.nodeSelector }),
    ...(s.tolerations && { tolerations: s.tolerations }),
    ...(s.podSecurityContext && { podSecurityContext: s.podSecurityContext }),
    ...(s.annotations && { annotations: s.annotations }),
    ...(s.labels && { labels: s.labels }),
  };
  return {
    issues,
    value: {
      kind: MONITOR_KIND,
      name: doc.metadata.name,
      ...(namespace !== undefined && { namespace }),
      clusters: clusters.map((c) => {
        const ns = c.namespace || namespace;
        return { name: c.name, ...(ns !== undefined && { namespace: ns }) };
      }),
      image: init.version !== undefined ? `${base}:${init.version}` : base,
      fetch,
      rules: s.enableAlertRules === true,
      dashboards: s.grafana !== undefined,
    },
  };
}

function metadataIssues(metadata: unknown): SpecIssue[] {
  if (!isObject(metadata)) return [{ path: 'metadata', message: `required field is missing: a ${MONITOR_KIND} needs metadata.name` }];
  const { name, namespace } = metadata;
  const issues: SpecIssue[] = [];
  if (typeof name !== 'string') issues.push({ path: 'metadata.name', message: 'required field is missing' });
  else if (name.length > 253 || !DNS1123_SUBDOMAIN.test(name))
    issues.push({
      path: 'metadata.name',
      message: `invalid name ${JSON.stringify(name)}: expected lowercase letters, digits, '-' and '.'`,
    });
  if (namespace !== undefined && (typeof namespace !== 'string' || !DNS1123_LABEL.test(namespace) || namespace.length > 63)) {
    issues.push({
      path: 'metadata.namespace',
      message: `invalid namespace ${JSON.stringify(namespace)}: expected a DNS label (lowercase letters, digits and '-')`,
    });
  }
  return issues;
}

/**
 * The release whose rules and dashboards a cluster gets: its TiDB's image tag, else PD's, TiKV's or
 * any component's (they run one release).
 */
export function clusterRelease(cluster: ResolvedCluster): string {
  for (const c of [cluster.tidb, cluster.pd, cluster.tikv, cluster.tiflash, cluster.ticdc, cluster.tiproxy, cluster.pump]) {
    if (c) return imageTag(c.image);
  }
  return 'latest';
}

/**
 * A cluster's monitoring, or undefined for none: from the TidbMonitor naming it (its image, and the
 * cluster's release where the monitor gives no version), else from `tidb-gitops.io/monitoring: "true"`
 * (rules and dashboards both, from PingCAP's image for the cluster's release); less what needs a CRD
 * the target is known not to serve.
 */
export function clusterMonitoring(cluster: ResolvedCluster, monitor: ResolvedMonitor | undefined): ClusterMonitoring | undefined {
  const { enabled, labels } = cluster.monitoring;
  if (monitor) {
    const image = monitor.image.slice(monitor.image.lastIndexOf('/') + 1).includes(':')
      ? monitor.image
      : `${monitor.image}:${clusterRelease(cluster)}`;
    return fitToTarget(cluster, {
      source: `${MONITOR_KIND} ${JSON.stringify(monitor.name)}`,
      image,
      fetch: monitor.fetch,
      rules: monitor.rules,
      dashboards: monitor.dashboards,
      labels,
    });
  }
  if (enabled !== true) return undefined;
  return fitToTarget(cluster, {
    source: MONITORING_ANNOTATION,
    image: `${INITIALIZER_IMAGE}:${clusterRelease(cluster)}`,
    fetch: {},
    rules: true,
    dashboards: true,
    labels,
  });
}
