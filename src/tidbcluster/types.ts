/**
 * The `TidbCluster` input (apiVersion `pingcap.com/v1alpha1`), as tidb-operator v1 users already write
 * it. Only the fields this project acts on are typed here; the CRD schema decides what else is valid,
 * and `support.ts` decides which valid fields are not supported yet.
 */
import type { DiscoverySpec } from './discovery';
import type { TiCDCSpec } from './ticdc';
import type { TiFlashSpec } from './tiflash';
import type { TiProxySpec } from './tiproxy';
import type { PumpSpec } from './pump';
import type {
  Affinity,
  Container,
  EnvFromSource,
  EnvVar,
  Lifecycle,
  LocalObjectReference,
  PodDNSConfig,
  PodSecurityContext,
  SecurityContext,
  Toleration,
  Volume,
  VolumeMount,
} from '../../imports/k8s';

export const API_VERSION = 'pingcap.com/v1alpha1';
export const KIND = 'TidbCluster';

export type Quantity = string | number;
export type ResourceList = Record<string, Quantity>;

/** A component's config: a TOML document as a string, or the same structure as a YAML mapping. */
export type ComponentConfig = string | Record<string, unknown>;

export interface TidbCluster {
  apiVersion: typeof API_VERSION;
  kind: typeof KIND;
  metadata: {
    name: string;
    /** @default the `--namespace` of `render`, else none (the objects take the namespace they are applied to) */
    namespace?: string;
    /** The `app.kubernetes.io/instance` label here renames the instance label of every object. @default {} */
    labels?: Record<string, string>;
    /** A few operator switches are read from here (see the README). @default {} */
    annotations?: Record<string, string>;
  };
  spec: TidbClusterSpec;
}

/** Settings every component takes, at cluster level (as defaults) and per component. */
export interface PodSettings {
  /** @default none */
  schedulerName?: string;
  /** Not merged: the component's affinity replaces the cluster's. @default none */
  affinity?: Affinity;
  /** @default none */
  priorityClassName?: string;
  /** Merged: cluster map, then component map (component wins). @default {} */
  nodeSelector?: Record<string, string>;
  /** Pod annotations; merged like nodeSelector. @default {} */
  annotations?: Record<string, string>;
  /** Pod labels; merged like nodeSelector; the four operator labels always win. @default {} */
  labels?: Record<string, string>;
  /** Component list if non-empty, else cluster list. @default [] */
  tolerations?: Toleration[];
  /** @default none */
  dnsConfig?: PodDNSConfig;
  /** @default ClusterFirstWithHostNet with hostNetwork, else ClusterFirst */
  dnsPolicy?: string;
  /** @default false */
  hostNetwork?: boolean;
  /** @default [] */
  imagePullSecrets?: LocalObjectReference[];
  /** @default none */
  podSecurityContext?: PodSecurityContext;
  /** @default [] */
  topologySpreadConstraints?: TopologySpreadConstraintSpec[];
  /** `RollingUpdate` or `OnDelete`; the partition stays the controller's. @default RollingUpdate */
  statefulSetUpdateStrategy?: 'RollingUpdate' | 'OnDelete';
  /** Only `OrderedReady` is honoured; anything else means `Parallel`. @default Parallel */
  podManagementPolicy?: string;
  /** `InPlace` keeps `<cluster>-<component>`; `RollingUpdate` appends a content hash. @default InPlace */
  configUpdateStrategy?: 'InPlace' | 'RollingUpdate';
  /** Image pull policy of the component (and of the helper image). @default IfNotPresent */
  imagePullPolicy?: 'Always' | 'Never' | 'IfNotPresent';
}

export interface TopologySpreadConstraintSpec {
  topologyKey: string;
  /** @default 1 */
  maxSkew?: number;
  /** @default none (Kubernetes counts it as 1) */
  minDomains?: number;
  /** @default none (Kubernetes takes Honor) */
  nodeAffinityPolicy?: string;
  /** Added to, and overriding, the default selector labels (name, managed-by, component, instance). @default {} */
  matchLabels?: Record<string, string>;
}

export interface TidbClusterSpec extends PodSettings {
  /** Image tag of every component that sets none (not of discovery, the controller). @default none (images untagged) */
  version?: string;
  /** `TZ` of PD, TiKV and TiDB; also of the controller, which takes `UTC` when it is empty. @default "" */
  timezone?: string;
  /** Image for log tailers and init containers. @default {} */
  helper?: {
    /** @default the deprecated spec.tidb.slowLogTailer.image, else busybox:1.26.2 */
    image?: string;
    /** @default spec.imagePullPolicy */
    imagePullPolicy?: string;
  };
  /** Pod service account of every component that sets none. @default none */
  serviceAccount?: string;
  /** Adds TiKV's `--advertise-status-addr`. @default false */
  enableDynamicConfiguration?: boolean;
  /** Kubernetes cluster domain appended to Pod FQDNs and PD member names. @default "" */
  clusterDomain?: string;
  /** @default v1 */
  startScriptVersion?: 'v1' | 'v2' | string;
  /** v2 start-script switches: WaitForDnsNameIpMatch, PreferPDAddressesOverDiscovery, NoWaitDNS. @default [] */
  startScriptV2FeatureFlags?: string[];
  /** Listen on `[::]` and ask for dual-stack Services. @default false */
  preferIPv6?: boolean;
  /** Deprecated PD Service type: `[{name: pd, type: NodePort}]`. @default [] */
  services?: {
    name: string;
    /** @default ClusterIP */
    type?: string;
  }[];
  /** Stops all controller stepping. @default false */
  paused?: boolean;
  /** For the controller: reclaim policy of bound PVs. @default Retain */
  pvReclaimPolicy?: 'Retain' | 'Delete' | 'Recycle';
  /** For the controller: delete deferred PVCs once their Pod is gone. @default false */
  enablePVReclaim?: boolean;
  /** The Deployment `<cluster>-discovery` running the companion controller (always rendered). @default {} */
  discovery?: DiscoverySpec;
  /** TLS between components, certificates from `<cluster>-<component>-cluster-secret`. @default off */
  tlsCluster?: TLSClusterSpec;
  /**
   * The cluster spans several Kubernetes clusters: PD members are named by FQDN and TiKV, TiDB and the
   * others ask discovery (`/verify`) for PD endpoints. @default false
   */
  acrossK8s?: boolean;
  /** Heterogeneous cluster: join the PD of this other TidbCluster (used when `spec.pd` is not set). @default none */
  cluster?: TidbClusterRef;
  /**
   * PD client URLs of an existing cluster to join (`http(s)://host:port`). Handed out by discovery,
   * or used directly by v2 scripts with the `PreferPDAddressesOverDiscovery` flag. @default []
   */
  pdAddresses?: string[];
  /** @default none (no PD; the cluster then joins `spec.cluster`'s PD) */
  pd?: PDSpec;
  /** PD micro-services, with `spec.pd.mode: ms`: at most one `tso` and one `scheduling`. @default none */
  pdms?: PDMSSpec[];
  /** @default none (no TiKV) */
  tikv?: TiKVSpec;
  /** @default none (no TiDB) */
  tidb?: TiDBSpec;
  /** @default none (no TiFlash) */
  tiflash?: TiFlashSpec;
  /** @default none (no TiCDC) */
  ticdc?: TiCDCSpec;
  /** @default none (no Pump) */
  pump?: PumpSpec;
  /** @default none (no TiProxy) */
  tiproxy?: TiProxySpec;
}

export interface TLSClusterSpec {
  /** @default false */
  enabled?: boolean;
  /** Scripts call discovery over HTTPS with client certificates (only with `enabled`). @default false */
  enableDiscoveryMTLS?: boolean;
}

export interface TidbClusterRef {
  name: string;
  /** @default this cluster's namespace */
  namespace?: string;
  /** @default "" */
  clusterDomain?: string;
}

/** `spec.tidb.tlsClient`: TLS for MySQL clients. */
export interface TiDBTLSClient {
  /** Mounts `<cluster>-tidb-server-secret` and sets TiDB's `security.ssl-*`. @default false */
  enabled?: boolean;
  /** No `security.ssl-ca`: clients are not asked for certificates. @default false */
  disableClientAuthn?: boolean;
  /** Internal SQL clients (PD dashboard, TiProxy) do not verify TiDB's certificate. @default false */
  skipInternalClientCA?: boolean;
}

export interface StorageVolume {
  /** The PVC template is named `<component>-<name>`. */
  name: string;
  /** @default the component's storageClassName */
  storageClassName?: string;
  /** VolumeAttributesClass of the claim (Kubernetes 1.34, or 1.31 with its feature gate). @default the component's */
  volumeAttributesClassName?: string;
  storageSize: Quantity;
  /** Mounted into the main container when set. @default not mounted */
  mountPath?: string;
}

export interface ProbeSpec {
  /** `tcp` or `command` (TiDB only). @default tcp */
  type?: 'tcp' | 'command';
  /** @default 10 */
  initialDelaySeconds?: number;
  /** @default Kubernetes default (10) */
  periodSeconds?: number;
}

export interface ComponentSpec extends PodSettings {
  /** Number of Pods; the controller writes it to `spec.replicas`. */
  replicas: number;
  /** @default pingcap/<component> */
  baseImage?: string;
  /** Image tag. @default spec.version */
  version?: string;
  /** Deprecated full image, used only when baseImage is empty. @default none */
  image?: string;
  /** CPU/memory requests; `storage` sizes the data volume. @default {} */
  requests?: ResourceList;
  /** CPU/memory limits (`storage` is TiKV's capacity). @default {} */
  limits?: ResourceList;
  /** The component's own config file; the renderer adds the settings it owns. @default {} */
  config?: ComponentConfig;
  /** Appended after the operator-set env; reserved names cannot be overridden. @default [] */
  env?: EnvVar[];
  /** @default [] */
  envFrom?: EnvFromSource[];
  /** Run before the component's own init containers. @default [] */
  initContainers?: Container[];
  /** Appended after the component's containers; one with the same name is merged into it. @default [] */
  additionalContainers?: Container[];
  /** @default [] */
  additionalVolumes?: Volume[];
  /** Mounted into the main container. @default [] */
  additionalVolumeMounts?: VolumeMount[];
  /** @default Kubernetes default (30) */
  terminationGracePeriodSeconds?: number;
  /** Main container security context. @default none */
  securityContext?: SecurityContext;
  /** @default none, except TiDB's TCP probe on port 4000 after 10 seconds */
  readinessProbe?: ProbeSpec;
  /** @default none (Kubernetes mounts the token) */
  automountServiceAccountToken?: boolean;
  /** @default spec.serviceAccount */
  serviceAccount?: string;
  /** @default the cluster's default StorageClass */
  storageClassName?: string;
  /**
   * VolumeAttributesClass of the data claims (Kubernetes 1.34, or 1.31 to 1.33 with the
   * VolumeAttributesClass feature gate). @default none
   */
  volumeAttributesClassName?: string;
  /** Extra PVCs (`<component>-<name>`). @default [] */
  storageVolumes?: StorageVolume[];
  /** For the controller. @default 3 */
  maxFailoverCount?: number;
}

export interface ServiceSpec {
  /** @default ClusterIP */
  type?: string;
  /** @default {} */
  annotations?: Record<string, string>;
  /** Merged under the operator labels. @default {} */
  labels?: Record<string, string>;
  /** @default none */
  loadBalancerIP?: string;
  /** @default none (Kubernetes allocates one) */
  clusterIP?: string;
  /** @default client (PD), mysql-client (TiDB) */
  portName?: string;
  /** @default [] */
  loadBalancerSourceRanges?: string[];
  /** @default none */
  loadBalancerClass?: string;
}

export interface PDSpec extends ComponentSpec {
  /** The client Service `<cluster>-pd`. @default {} (type ClusterIP) */
  service?: ServiceSpec;
  /** Data dir below `/var/lib/pd`. @default "" */
  dataSubDir?: string;
  /** DNS wait of the start script, in seconds. @default 30 */
  startTimeout?: number;
  /** v2 IP-match wait before checking DNS, in seconds. @default 0 */
  initWaitTime?: number;
  /** `v1` makes the v1 script wait with dig instead of nslookup. @default "" */
  startUpScriptVersion?: '' | 'v1';
  /** Sets `dashboard.internal-proxy`. @default unset */
  enableDashboardInternalProxy?: boolean;
  /** For the controller. @default 1 */
  spareVolReplaceReplicas?: number;
  /** Mounts `<cluster>-cluster-client-secret` at `/var/lib/cluster-client-tls`; only with TLS. @default false */
  mountClusterClientSecret?: boolean;
  /** Client certificate PD's dashboard uses towards TiDB with `tidb.tlsClient`. @default <cluster>-tidb-client-secret */
  tlsClientSecretName?: string;
  /**
   * `ms`: PD runs as the API server of PD micro-services (`pd-server services api`), with TSO and
   * scheduling in their own servers (`spec.pdms`). Needs `spec.pdms`. @default "" (PD serves everything)
   */
  mode?: '' | 'ms';
}

/** A PD micro-service (`spec.pdms[]`): TSO or scheduling, in StatefulSet `<cluster>-<name>`. */
export interface PDMSSpec extends ComponentSpec {
  /** Which micro-service. */
  name: 'tso' | 'scheduling';
  /** @default pingcap/pd */
  baseImage?: string;
  /** The client Service `<cluster>-<name>`. @default {} (type ClusterIP) */
  service?: ServiceSpec;
  /** Mounts `<cluster>-cluster-client-secret` at `/var/lib/cluster-client-tls`; only with TLS. @default false */
  mountClusterClientSecret?: boolean;
  /** Accepted only empty: the micro-services' start script is always v2. @default "" */
  startUpScriptVersion?: '';
}

/** A container's resources, as Kubernetes' ResourceRequirements. */
export interface ResourcesSpec {
  /** @default {} */
  requests?: ResourceList;
  /** @default {} */
  limits?: ResourceList;
  /** Dynamic resource claims. @default [] */
  claims?: unknown[];
}

/** A log tailer sidecar; its image is `spec.helper.image`. Its `claims` are taken only by TiFlash's tailers. */
export interface LogTailerSpec extends ResourcesSpec {
  /** @default none */
  securityContext?: SecurityContext;
  /**
   * Run the tailers as native sidecars: init containers with `restartPolicy: Always`, which start
   * before the server and stop after it. @default false
   */
  useSidecar?: boolean;
  /** With useSidecar: seconds a tailer waits after SIGTERM, to print the server's last lines. @default 0 */
  sleepTimeSeconds?: number;
}

/** TiDB's slow log tailer, which also takes the helper image the deprecated way. */
export interface SlowLogTailerSpec extends LogTailerSpec {
  /** Deprecated: set `spec.helper.image`. Used for every helper container when that is not set. @default spec.helper.image */
  image?: string;
  /** Deprecated: set `spec.helper.imagePullPolicy`. @default spec.helper.imagePullPolicy */
  imagePullPolicy?: string;
}

export interface TiKVSpec extends ComponentSpec {
  /** Main container `privileged` when no securityContext is given. @default false */
  privileged?: boolean;
  /** Data dir below `/var/lib/tikv`. @default "" */
  dataSubDir?: string;
  /** Adds the named `status` container port 20180. @default false */
  enableNamedStatusPort?: boolean;
  /** Tail RocksDB's info log in a `rocksdblog` sidecar. @default false */
  separateRocksDBLog?: boolean;
  /** Tail Raft's info log in a `raftlog` sidecar. @default false */
  separateRaftLog?: boolean;
  /** Storage volume or additional mount holding the RocksDB log. @default the data volume */
  rocksDBLogVolumeName?: string;
  /** Storage volume or additional mount holding the Raft log. @default the data volume */
  raftLogVolumeName?: string;
  /** The RocksDB and Raft log tailers. @default {} */
  logTailer?: LogTailerSpec;
  /** For the controller. @default 1500m */
  evictLeaderTimeout?: string;
  /** For the controller. @default 400s */
  waitLeaderTransferBackTimeout?: string;
  /** For the controller. @default false */
  recoverFailover?: boolean;
  /** @default {} */
  failover?: {
    /** For the controller: remove the failover Pods created for this failure. @default none */
    recoverByUID?: string;
  };
  /**
   * More Node label keys the controller copies onto TiKV stores, beside PD's location-labels; setting
   * any renders the ClusterRole that reads Nodes. @default []
   */
  storeLabels?: string[];
  /** For the controller. @default {} */
  scalePolicy?: ScalePolicy;
  /** For the controller: spare replicas while a volume is replaced. @default 1 */
  spareVolReplaceReplicas?: number;
  /** Mounts `<cluster>-cluster-client-secret` at `/var/lib/cluster-client-tls`; only with TLS. @default false */
  mountClusterClientSecret?: boolean;
}

export interface TiDBServiceSpec extends ServiceSpec {
  /** @default 4000 */
  port?: number;
  /** @default none (Kubernetes takes Cluster) */
  externalTrafficPolicy?: string;
  /** Adds the status port 10080. @default true */
  exposeStatus?: boolean;
  /** @default none (Kubernetes allocates one) */
  mysqlNodePort?: number;
  /** @default none (Kubernetes allocates one) */
  statusNodePort?: number;
  /** Appended to the Service's ports as given. @default [] */
  additionalPorts?: TiDBServicePort[];
}

/** An extra port of the TiDB client Service (a Kubernetes ServicePort). */
export interface TiDBServicePort {
  /** @default none */
  name?: string;
  port: number;
  /** @default the port */
  targetPort?: number | string;
  /** @default TCP */
  protocol?: string;
  /** @default none (Kubernetes allocates one for NodePort and LoadBalancer) */
  nodePort?: number;
  /** @default none */
  appProtocol?: string;
}

/** How many Pods the controller adds or removes at a time. */
export interface ScalePolicy {
  /** @default 1 */
  scaleInParallelism?: number;
  /** @default 1 */
  scaleOutParallelism?: number;
}

export interface TiDBSpec extends ComponentSpec {
  /** Creates the client Service `<cluster>-tidb`. @default none */
  service?: TiDBServiceSpec;
  /** @default true when spec.pump is set, else false */
  binlogEnabled?: boolean;
  /** Tail the slow log in a `slowlog` sidecar. @default true */
  separateSlowLog?: boolean;
  /** Storage volume or additional mount holding the slow log. @default an emptyDir `slowlog` */
  slowLogVolumeName?: string;
  /** The slow log tailer. @default {} */
  slowLogTailer?: SlowLogTailerSpec;
  /** Mounts `<cluster>-tidb-auth-token-jwks-secret` and sets `security.auth-token-jwks`. @default false */
  tokenBasedAuthEnabled?: boolean;
  /** ConfigMap with key `bootstrap-sql` run at bootstrap. @default none */
  bootstrapSQLConfigMapName?: string;
  /** @default [] */
  plugins?: string[];
  /** Extra tidb-server arguments (v1 start script only). @default [] */
  arguments?: string[];
  /** Lifecycle hooks of the tidb container. @default none */
  lifecycle?: Lifecycle;
  /** A startup probe binary copied from `image` by an init container. @default none */
  customizedStartupProbe?: {
    image: string;
    binaryName: string;
    /** @default [] */
    args?: string[];
    /** Values below 1 are left out. @default Kubernetes default (1) */
    timeoutSeconds?: number;
    /** Values below 1 are left out. @default Kubernetes default (10) */
    periodSeconds?: number;
    /** Values below 1 are left out. @default Kubernetes default (3) */
    failureThreshold?: number;
  };
  /**
   * Labels of the TiDB server, set by the controller together with its Node's location labels (only
   * when PD's location-labels name a zone, as tidb-operator does). @default {}
   */
  serverLabels?: Record<string, string>;
  /** For the controller. @default {} */
  scalePolicy?: ScalePolicy;
  /** TLS for MySQL clients. @default off */
  tlsClient?: TiDBTLSClient;
}
