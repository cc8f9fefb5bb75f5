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
    namespace?: string;
    labels?: Record<string, string>;
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
  minDomains?: number;
  nodeAffinityPolicy?: string;
  /** Overrides of the default selector labels (component, instance). */
  matchLabels?: Record<string, string>;
}

export interface TidbClusterSpec extends PodSettings {
  /** Image tag of every component that sets none (not of discovery, the controller). @default none (images untagged) */
  version?: string;
  /** `TZ` of PD, TiKV and TiDB; also of the controller, which takes `UTC` when it is empty. @default "" */
  timezone?: string;
  /** Image for log tailers and init containers. */
  helper?: { /** @default busybox:1.26.2 */ image?: string; /** @default spec.imagePullPolicy */ imagePullPolicy?: string };
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
  services?: { name: string; type?: string }[];
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
  pd?: PDSpec;
  tikv?: TiKVSpec;
  tidb?: TiDBSpec;
  tiflash?: TiFlashSpec;
  ticdc?: TiCDCSpec;
  pump?: PumpSpec;
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
  /** Deprecated full image, used only when baseImage is empty. */
  image?: string;
  /** CPU/memory requests; `storage` sizes the data volume. @default {} */
  requests?: ResourceList;
  /** CPU/memory limits (`storage` is TiKV's capacity). @default {} */
  limits?: ResourceList;
  config?: ComponentConfig;
  /** Appended after the operator-set env; reserved names cannot be overridden. @default [] */
  env?: EnvVar[];
  envFrom?: EnvFromSource[];
  initContainers?: Container[];
  /** Appended after the component's containers; one with the same name is merged into it. @default [] */
  additionalContainers?: Container[];
  additionalVolumes?: Volume[];
  additionalVolumeMounts?: VolumeMount[];
  /** @default Kubernetes default (30) */
  terminationGracePeriodSeconds?: number;
  /** Main container security context. */
  securityContext?: SecurityContext;
  readinessProbe?: ProbeSpec;
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
  annotations?: Record<string, string>;
  /** Merged under the operator labels. */
  labels?: Record<string, string>;
  loadBalancerIP?: string;
  clusterIP?: string;
  /** @default client (PD), mysql-client (TiDB) */
  portName?: string;
  loadBalancerSourceRanges?: string[];
  loadBalancerClass?: string;
}

export interface PDSpec extends ComponentSpec {
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
}

export interface LogTailerSpec {
  requests?: ResourceList;
  limits?: ResourceList;
  securityContext?: SecurityContext;
  image?: string;
  imagePullPolicy?: string;
  /**
   * Run the tailers as native sidecars: init containers with `restartPolicy: Always`, which start
   * before the server and stop after it. @default false
   */
  useSidecar?: boolean;
  /** With useSidecar: seconds a tailer waits after SIGTERM, to print the server's last lines. @default 0 */
  sleepTimeSeconds?: number;
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
  logTailer?: LogTailerSpec;
  /** For the controller. @default 1500m */
  evictLeaderTimeout?: string;
  /** For the controller. @default 400s */
  waitLeaderTransferBackTimeout?: string;
  /** For the controller. @default false */
  recoverFailover?: boolean;
  failover?: { recoverByUID?: string };
  storeLabels?: string[];
  scalePolicy?: { scaleInParallelism?: number; scaleOutParallelism?: number };
  spareVolReplaceReplicas?: number;
  /** Mounts `<cluster>-cluster-client-secret` at `/var/lib/cluster-client-tls`; only with TLS. @default false */
  mountClusterClientSecret?: boolean;
}

export interface TiDBServiceSpec extends ServiceSpec {
  /** @default 4000 */
  port?: number;
  externalTrafficPolicy?: string;
  /** Adds the status port 10080. @default true */
  exposeStatus?: boolean;
  mysqlNodePort?: number;
  statusNodePort?: number;
  additionalPorts?: { name?: string; port: number; targetPort?: number | string; protocol?: string; nodePort?: number; appProtocol?: string }[];
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
  slowLogTailer?: LogTailerSpec;
  /** Mounts `<cluster>-tidb-auth-token-jwks-secret` and sets `security.auth-token-jwks`. @default false */
  tokenBasedAuthEnabled?: boolean;
  /** ConfigMap with key `bootstrap-sql` run at bootstrap. @default none */
  bootstrapSQLConfigMapName?: string;
  /** @default [] */
  plugins?: string[];
  /** Extra tidb-server arguments (v1 start script only). @default [] */
  arguments?: string[];
  lifecycle?: Lifecycle;
  customizedStartupProbe?: {
    image: string;
    binaryName: string;
    args?: string[];
    timeoutSeconds?: number;
    periodSeconds?: number;
    failureThreshold?: number;
  };
  serverLabels?: Record<string, string>;
  scalePolicy?: { scaleInParallelism?: number; scaleOutParallelism?: number };
  /** TLS for MySQL clients. @default off */
  tlsClient?: TiDBTLSClient;
}
