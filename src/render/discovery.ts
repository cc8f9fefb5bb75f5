import type { ApiObject } from 'cdk8s';
import { Construct } from 'constructs';
import type {
  ClusterRole,
  ClusterRoleBinding,
  Container,
  Deployment,
  PolicyRule,
  Probe,
  Role,
  RoleBinding,
  Service,
  ServiceAccount,
  Volume,
  VolumeMount,
} from '../../imports/k8s';
import { DISCOVERY_DEFAULTS, type ResolvedDiscoveryProbe } from '../tidbcluster/discovery';
import type { ResolvedCluster } from '../tidbcluster/resolve';
import { COMPONENTS, names, PORT, selectorLabels } from '../tidbcluster/names';
import { CONTROLLER_ENV, CONTROLLER_HTTP, encodeControllerClusterInfo, type ControllerClusterInfo } from '../tidbcluster/contract';
import { basePodSpec, fieldRefEnv, finishPodSpec, hasResources, mergeContainers, mergeEnv, namespaced, podLabels } from './component';
import { kubeObject } from './kube';
import { controllerBackupInfo, NO_OPERATIONS, type ClusterOperations } from '../backup/link';
import { initializerInfo } from '../initializer/read';
import { dualStack } from './service';
import { secretMount, TLS_DIR, type SecretMount } from './tls';
import { refuseAtSynthesis } from './checked';

export interface DiscoveryComponentProps {
  /** The resolved cluster (`cluster.discovery` is always set). */
  readonly cluster: ResolvedCluster;
  /**
   * The cluster's backup documents: the controller records the schedules' runs and keeps their
   * retention, and runs each one-shot Backup and Restore once; with its SQL accounts where the input
   * has SqlUsers or SqlRoles (`ClusterOperations.sql`), which it keeps. @default none
   */
  readonly operations?: ClusterOperations;
}

/**
 * The companion controller of one cluster, all named `<cluster>-discovery`: ServiceAccount, Role and
 * RoleBinding (namespace-scoped, the verbs the controller uses and no more), the Service where PD
 * bootstrap discovery answers (10261, as tidb-operator's discovery did), and the Deployment running
 * `tidb-gitops controller`.
 */
export class DiscoveryComponent extends Construct {
  /** ServiceAccount `<cluster>-discovery`, the controller's. */
  readonly serviceAccount: ApiObject;
  /** Role `<cluster>-discovery`. */
  readonly role: ApiObject;
  /** RoleBinding `<cluster>-discovery`. */
  readonly roleBinding: ApiObject;
  /** Service `<cluster>-discovery` (PD discovery, the controller's HTTP port). */
  readonly service: ApiObject;
  /** Deployment `<cluster>-discovery`, running `tidb-gitops controller`. */
  readonly deployment: ApiObject;

  constructor(scope: Construct, id: string, props: DiscoveryComponentProps) {
    super(scope, id);
    refuseAtSynthesis(this, props.cluster.kubeMinor);
    const { cluster } = props;
    const ops = props.operations ?? NO_OPERATIONS;
    this.serviceAccount = kubeObject(this, 'service-account', discoveryServiceAccount(cluster));
    this.role = kubeObject(this, 'role', discoveryRole(cluster, ops));
    this.roleBinding = kubeObject(this, 'role-binding', discoveryRoleBinding(cluster));
    if (cluster.nodeAccess || cluster.patchesVolumes) {
      kubeObject(this, 'node-reader', nodeReaderRole(cluster));
      kubeObject(this, 'node-reader-binding', nodeReaderBinding(cluster));
    }
    this.service = kubeObject(this, 'service', discoveryService(cluster));
    this.deployment = kubeObject(this, 'deployment', discoveryDeployment(cluster, ops));
  }
}

const RBAC_GROUP = 'rbac.authorization.k8s.io';

function meta(cluster: ResolvedCluster) {
  return namespaced(cluster, names.discovery(cluster.name), selectorLabels(cluster.instance, 'discovery'));
}

export function discoveryServiceAccount(cluster: ResolvedCluster): ServiceAccount {
  return { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta(cluster) };
}

/**
 * What the controller does, and no more: read and patch StatefulSets (replicas, partition) and Pods,
 * keep its state ConfigMap and its Lease, delete old config revisions, and record Events. `create`
 * has rules of its own because Kubernetes cannot restrict it by resource name; so do `list` and
 * `delete` on ConfigMaps, whose old revisions have names known only once rendered. Reading and
 * writing ConfigMaps and Leases is otherwise limited to the controller's two objects.
 */
export function discoveryRules(cluster: ResolvedCluster, ops: ClusterOperations = NO_OPERATIONS): PolicyRule[] {
  const info = controllerBackupInfo(ops);
  const init = initializerInfo(cluster, ops.initializer);
  const sql = ops.sql;
  const secrets = [
    ...Object.values(info.backupRetention ?? {}).flatMap((r) => (r.secretName ? [r.secretName] : [])),
    ...(init?.passwordSecret ? [init.passwordSecret] : []),
    ...(init?.tls ? [init.tls.secret] : []),
    ...(sql
      ? [sql.loginSecret, ...(sql.tls ? [sql.tls.secret] : []), ...sql.accounts.flatMap((a) => (a.password ? [a.password.secret] : []))]
      : []),
    ...(ops.changefeeds?.feeds.flatMap((f) => (f.credentials ? [f.credentials.secret] : [])) ?? []),
  ];
  const oneShot = [
    ...(info.operations ?? []),
    ...(info.logBackups ?? []),
    ...(init ? [names.initializer(cluster.name)] : []),
    ...(ops.changefeeds?.feeds.map((f) => names.changefeed(f.document)) ?? []),
  ].sort();
  const schedules = (info.backupSchedules ?? []).map(names.backupSchedule);
  const sqlConfigMap = init?.sql && init.sql.configMap !== names.initializer(cluster.name) ? [init.sql.configMap] : [];
  return [
    // create and delete: a StatefulSet whose volumes grew is re-created, its Pods orphaned and kept.
    { apiGroups: ['apps'], resources: ['statefulsets'], verbs: ['get', 'list', 'watch', 'patch', 'create', 'delete'] },
    { apiGroups: [''], resources: ['pods'], verbs: ['get', 'list', 'watch', 'patch', 'delete'] },
    // The readiness gate's condition (`tidb-gitops.io/serving`) lives in the Pods' status.
    ...(cluster.servingGates.length > 0 ? [{ apiGroups: [''], resources: ['pods/status'], verbs: ['patch'] }] : []),
    { apiGroups: [''], resources: ['persistentvolumeclaims'], verbs: ['get', 'list', 'watch', 'patch', 'delete'] },
    // list and delete: old config revisions have hash names no resourceNames rule can list ahead.
    { apiGroups: [''], resources: ['configmaps'], verbs: ['create', 'list', 'delete'] },
    { apiGroups: [''], resources: ['configmaps'], resourceNames: [names.status(cluster.name)], verbs: ['get', 'patch', 'update'] },
    { apiGroups: [''], resources: ['configmaps'], resourceNames: [names.volumeSizes(cluster.name)], verbs: ['get'] },
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], resourceNames: [names.lease(cluster.name)], verbs: ['get', 'update'] },
    { apiGroups: [''], resources: ['events'], verbs: ['create', 'patch'] },
    // The runs of the cluster's BackupSchedules, one-shot operations and log backup commands: their Jobs
    // (their Pods are read with the rule above); a one-shot operation's Job is created once from its
    // ConfigMap, on which the controller notes where it stands for the health checks. Granted with no
    // backup document too: a log backup whose document left Git is stopped by a Job, and the Role
    // rendered without that document must still allow it (creating a Job gives no more than creating
    // a StatefulSet, which the first rule grants).
    { apiGroups: ['batch'], resources: ['jobs'], verbs: ['list', 'create'] },
    // The schedules' CronJobs, on which the controller notes a failing schedule for the health checks.
    ...(schedules.length > 0 ? [{ apiGroups: ['batch'], resources: ['cronjobs'], resourceNames: schedules, verbs: ['patch'] }] : []),
    ...(oneShot.length > 0 ? [{ apiGroups: [''], resources: ['configmaps'], resourceNames: [...oneShot], verbs: ['get', 'patch'] }] : []),
    // The initializer's SQL, when a ConfigMap of the user's holds it.
    ...(sqlConfigMap.length > 0 ? [{ apiGroups: [''], resources: ['configmaps'], resourceNames: sqlConfigMap, verbs: ['get'] }] : []),
    // Retention: the keys of the buckets it removes expired backups from; the initializer: the
    // passwords it sets and the certificate it reaches TiDB with; the SQL accounts: root's password
    // it logs in with and each user's password; the changefeeds: their sinks' credentials.
    ...(secrets.length > 0
      ? [{ apiGroups: [''], resources: ['secrets'], resourceNames: [...new Set(secrets)].sort(), verbs: ['get'] }]
      : []),
  ];
}

export function discoveryRole(cluster: ResolvedCluster, ops: ClusterOperations = NO_OPERATIONS): Role {
  return { apiVersion: `${RBAC_GROUP}/v1`, kind: 'Role', metadata: meta(cluster), rules: discoveryRules(cluster, ops) };
}

/**
 * Without a namespace the subject names none either: Kubernetes takes a RoleBinding's ServiceAccount
 * subject without one as being in the RoleBinding's own namespace, wherever the objects are applied.
 */
export function discoveryRoleBinding(cluster: ResolvedCluster): RoleBinding {
  const name = names.discovery(cluster.name);
  return {
    apiVersion: `${RBAC_GROUP}/v1`,
    kind: 'RoleBinding',
    metadata: meta(cluster),
    subjects: [{ kind: 'ServiceAccount', name, ...(cluster.namespace !== undefined && { namespace: cluster.namespace }) }],
    roleRef: { apiGroup: RBAC_GROUP, kind: 'Role', name },
  };
}

/**
 * What no namespaced Role can grant, rendered only for a cluster that asks for it: topology labels
 * need the Nodes' labels (`get` on nodes, `cluster.nodeAccess`); `spec.pvReclaimPolicy` needs the
 * PVs bound to the cluster's claims (`get` and `patch` on persistentvolumes, `cluster.patchesVolumes`;
 * PV names are made when a claim binds, so no `resourceNames` can narrow it, and no `list`: the
 * controller gets each PV by its claim's `spec.volumeName`).
 */
export function nodeReaderRole(cluster: ResolvedCluster): ClusterRole {
  return {
    apiVersion: `${RBAC_GROUP}/v1`,
    kind: 'ClusterRole',
    metadata: { name: names.nodeReader(cluster.namespace!, cluster.name), labels: selectorLabels(cluster.instance, 'discovery') },
    rules: [
      ...(cluster.nodeAccess ? [{ apiGroups: [''], resources: ['nodes'], verbs: ['get'] }] : []),
      ...(cluster.patchesVolumes ? [{ apiGroups: [''], resources: ['persistentvolumes'], verbs: ['get', 'patch'] }] : []),
    ],
  };
}

export function nodeReaderBinding(cluster: ResolvedCluster): ClusterRoleBinding {
  const name = names.nodeReader(cluster.namespace!, cluster.name);
  return {
    apiVersion: `${RBAC_GROUP}/v1`,
    kind: 'ClusterRoleBinding',
    metadata: { name, labels: selectorLabels(cluster.instance, 'discovery') },
    subjects: [{ kind: 'ServiceAccount', name: names.discovery(cluster.name), namespace: cluster.namespace! }],
    roleRef: { apiGroup: RBAC_GROUP, kind: 'ClusterRole', name },
  };
}

/** Selects the Deployment's pod template labels (user labels included), as tidb-operator's did. */
export function discoveryService(cluster: ResolvedCluster): Service {
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: meta(cluster),
    spec: {
      type: 'ClusterIP',
      ports: [
        { name: 'discovery', port: PORT.discovery, targetPort: PORT.discovery, protocol: 'TCP' },
        { name: 'metrics', port: PORT.discoveryMetrics, targetPort: PORT.discoveryMetrics, protocol: 'TCP' },
      ],
      selector: discoveryPodLabels(cluster),
      ...dualStack(cluster),
    },
  };
}

function discoveryPodLabels(cluster: ResolvedCluster) {
  return podLabels(cluster, { kind: 'discovery', pod: cluster.discovery.pod });
}

/** The `TIDB_GITOPS_CLUSTER` env var: what the controller needs to know that no object it reads says. */
export function controllerClusterInfo(cluster: ResolvedCluster, ops: ClusterOperations = NO_OPERATIONS): ControllerClusterInfo {
  const ref = cluster.joinCluster;
  const init = initializerInfo(cluster, ops.initializer);
  const sql = ops.sql;
  return {
    name: cluster.name,
    clusterDomain: cluster.clusterDomain,
    acrossK8s: cluster.acrossK8s,
    tls: cluster.tlsCluster,
    discoveryMtls: cluster.discoveryMtls,
    pdAddresses: [...cluster.pdAddresses],
    cluster: ref ? { name: ref.name, namespace: ref.namespace ?? '', clusterDomain: ref.clusterDomain } : null,
    components: COMPONENTS.filter((c) => cluster[c] !== undefined),
    ...(cluster.nodeAccess && { readsNodes: true as const }),
    ...(cluster.patchesVolumes && { patchesVolumes: true as const }),
    ...controllerBackupInfo(ops),
    ...(init && { initializer: init }),
    ...(sql && { sql }),
    ...(ops.changefeeds && { changefeeds: ops.changefeeds }),
  };
}

/** The controller's own certificates: its PD client one with tlsCluster, the one discovery serves with mTLS. */
export function discoverySecrets(cluster: ResolvedCluster): SecretMount[] {
  const secrets: SecretMount[] = [];
  if (cluster.tlsCluster) secrets.push(secretMount('cluster-client-tls', names.clusterClientSecret(cluster.name), TLS_DIR.clusterClient));
  if (cluster.discoveryMtls) secrets.push(secretMount('discovery-tls', names.discoverySecret(cluster.name), TLS_DIR.discovery));
  return secrets;
}

/**
 * With `automountServiceAccountToken: false` the controller still needs the API: the same token,
 * CA and namespace files Kubernetes would mount, projected into its container only (tidb-operator's
 * `kube-api-access` volume).
 */
export const KUBE_API_ACCESS_VOLUME: Volume = {
  name: 'kube-api-access',
  projected: {
    sources: [
      { serviceAccountToken: { path: 'token', expirationSeconds: 3607 } },
      { configMap: { name: 'kube-root-ca.crt', items: [{ key: 'ca.crt', path: 'ca.crt' }] } },
      { downwardAPI: { items: [{ path: 'namespace', fieldRef: { apiVersion: 'v1', fieldPath: 'metadata.namespace' } }] } },
    ],
  },
};
export const KUBE_API_ACCESS_MOUNT: VolumeMount = {
  name: 'kube-api-access',
  mountPath: '/var/run/secrets/kubernetes.io/serviceaccount',
  readOnly: true,
};

/** The root filesystem is read-only; the controller writes nothing but temporary files. */
const TMP_VOLUME: Volume = { name: 'tmp', emptyDir: {} };
const TMP_MOUNT: VolumeMount = { name: 'tmp', mountPath: '/tmp' };

/** Health checks are plain HTTP on the metrics port, also when discovery itself serves mTLS. */
function httpProbe(path: string, p: ResolvedDiscoveryProbe): Probe {
  return {
    httpGet: { path, port: 'metrics' },
    ...(p.initialDelaySeconds !== undefined && { initialDelaySeconds: p.initialDelaySeconds }),
    periodSeconds: p.periodSeconds,
    failureThreshold: p.failureThreshold,
  };
}

/**
 * One Pod (`Recreate`: never two controllers at once). `replicas: 1` is the renderer's; the controller
 * owns no field of this object.
 */
export function discoveryDeployment(cluster: ResolvedCluster, ops: ClusterOperations = NO_OPERATIONS): Deployment {
  const d = cluster.discovery;
  const selector = selectorLabels(cluster.instance, 'discovery');
  const secrets = discoverySecrets(cluster);
  const apiAccess = d.pod.automountServiceAccountToken === false;
  const env = mergeEnv(
    [
      fieldRefEnv(CONTROLLER_ENV.podNamespace, 'metadata.namespace'),
      fieldRefEnv(CONTROLLER_ENV.podName, 'metadata.name'),
      { name: CONTROLLER_ENV.timezone, value: cluster.timezone || 'UTC' },
      { name: CONTROLLER_ENV.clusterName, value: cluster.name },
      { name: CONTROLLER_ENV.cluster, value: encodeControllerClusterInfo(controllerClusterInfo(cluster, ops)) },
    ],
    mergeEnv(
      d.env,
      DISCOVERY_DEFAULTS.env.map((e) => ({ ...e })),
    ),
  );
  const container: Container = {
    name: 'discovery',
    image: d.image,
    imagePullPolicy: d.imagePullPolicy as Container['imagePullPolicy'],
    // The image puts the CLI on PATH.
    command: ['tidb-gitops', 'controller'],
    ports: [
      { name: 'discovery', containerPort: PORT.discovery, protocol: 'TCP' },
      { name: 'metrics', containerPort: PORT.discoveryMetrics, protocol: 'TCP' },
    ],
    env,
    ...(d.envFrom.length > 0 && { envFrom: d.envFrom }),
    readinessProbe: httpProbe(CONTROLLER_HTTP.ready, d.readinessProbe),
    livenessProbe: httpProbe(CONTROLLER_HTTP.live, d.livenessProbe),
    ...(hasResources(d) && { resources: d.resources }),
    securityContext: d.securityContext,
    volumeMounts: [TMP_MOUNT, ...secrets.map((s) => s.mount), ...(apiAccess ? [KUBE_API_ACCESS_MOUNT] : []), ...d.additionalVolumeMounts],
  };
  const podSpec = finishPodSpec(basePodSpec(cluster, d, { sysctlInit: false }), mergeContainers([container], d.additionalContainers), [
    TMP_VOLUME,
    ...secrets.map((s) => s.volume),
    ...(apiAccess ? [KUBE_API_ACCESS_VOLUME] : []),
    ...d.additionalVolumes,
  ]);
  const annotations = d.pod.annotations;
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: meta(cluster),
    spec: {
      replicas: 1,
      strategy: { type: 'Recreate' },
      selector: { matchLabels: selector },
      template: {
        metadata: { labels: discoveryPodLabels(cluster), ...(Object.keys(annotations).length > 0 && { annotations }) },
        spec: podSpec,
      },
    },
  };
}
