/**
 * The `TidbCluster` input (apiVersion `pingcap.com/v1alpha1`), as tidb-operator v1 users already write
 * it. Only the fields this project acts on are typed here; the CRD schema decides what else is valid,
 * and `support.ts` decides which valid fields are not supported yet.
 */
import type { Lifecycle, SecurityContext } from '../../imports/k8s';
import type { DiscoverySpec } from './spec-discovery';
import type {
  ComponentConfig,
  ComponentSpec,
  LogTailerSpec,
  PodSettings,
  ProbeSpec,
  ResourcesSpec,
  ScalePolicy,
  ServiceSpec,
  SlowLogTailerSpec,
} from './spec-parts';

export type * from './spec-parts';
export type * from './spec-discovery';

export const API_VERSION = 'pingcap.com/v1alpha1';
export const KIND = 'TidbCluster';

/** A TidbCluster document (`pingcap.com/v1alpha1`) as written in YAML, the input the constructs render. */
export interface TidbClusterManifest {
  apiVersion: typeof API_VERSION;
  kind: typeof KIND;
  metadata: {
    name: string;
    /** @default the `--namespace` of `render`, else none (the objects take the namespace they are applied to) */
    namespace?: string;
    /** The `app.kubernetes.io/instance` label here renames the instance label of every object. @default {} */
    labels?: Record<string, string>;
    /** A few operator switches are read from here (see docs/reference.md). @default {} */
    annotations?: Record<string, string>;
  };
  spec: TidbClusterSpec;
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
  /**
   * The reclaim policy the controller sets on the PVs bound to the cluster's claims, with
   * `tidb-gitops.io/pv-reclaim-policy: "true"`; `Retain` or `Delete`. @default Retain
   */
  pvReclaimPolicy?: 'Retain' | 'Delete';
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
  /**
   * `createPassword: true`: the controller sets root's password, once and only while root has none,
   * from the Secret `<cluster>-init` (key `root`), which it reads and never writes. @default off
   */
  initializer?: {
    /** @default false */
    createPassword?: boolean;
  };
}

/** `spec.tiflash.config`: the two TiFlash config files, each a TOML document or the same as a mapping. */
export type TiFlashConfigSpec = {
  /** TiFlash's own config (`config_templ.toml`). @default {} */
  config?: ComponentConfig;
  /** The TiFlash proxy's config (`proxy_templ.toml`). @default {} */
  proxy?: ComponentConfig;
};

/** One data volume `data<i>`, mounted at `/data<i>`. */
export interface TiFlashStorageClaim {
  /** Only `requests.storage` (required) is read: it sizes the PVC; `claims` is refused. @default {} */
  resources?: ResourcesSpec;
  /** @default the cluster's default StorageClass; `""` asks for no class */
  storageClassName?: string;
  /** VolumeAttributesClass of the claim (Kubernetes 1.34, or 1.31 with its feature gate). @default none */
  volumeAttributesClassName?: string;
}

export interface TiFlashSpec extends Omit<ComponentSpec, 'config' | 'storageClassName' | 'storageVolumes' | 'readinessProbe'> {
  /** Data volumes `data0`, `data1`, ...; at least one. TiFlash keeps its metadata and logs on `data0`. */
  storageClaims: TiFlashStorageClaim[];
  /** @default {} */
  config?: TiFlashConfigSpec;
  /** Main container `privileged` when no securityContext is given. @default false */
  privileged?: boolean;
  /** Resources and security context of the `init` container (init mode). @default none */
  initializer?: ResourcesSpec & {
    /** @default none */
    securityContext?: SecurityContext;
  };
  /** Resources and security context of the serverlog / errorlog / clusterlog sidecars. @default {} */
  logTailer?: LogTailerSpec;
  /** For the controller. @default false */
  recoverFailover?: boolean;
  /** For the controller. @default {} */
  failover?: {
    /** Remove the failover Pods created for this failure. @default none */
    recoverByUID?: string;
  };
  /** For the controller. @default {} */
  scalePolicy?: ScalePolicy;
  /** Only the "off" values are accepted. @default {} */
  suspendAction?: {
    /** @default false */
    suspendStatefulSet?: boolean;
  };
}

export interface TiCDCSpec extends ComponentSpec {
  /**
   * TiCDC's config. As a TOML string every key is kept; `tz`, `gc-ttl`, `log-level` and `log-file`
   * become the `TZ` env and command-line flags, and any other key makes a ConfigMap (`ticdc.toml`).
   * As a mapping only `timezone`, `gcTTL`, `logLevel` and `logFile` are read (tidb-operator's typed
   * struct); other keys are an error, since the operator would drop them.
   * @default none (no ConfigMap)
   */
  config?: ComponentConfig;
  /** Secrets with client certificates for sinks, each mounted at `/var/lib/sink-tls/<name>`. @default [] */
  tlsClientSecretNames?: string[];
  /**
   * How long the controller waits for a capture to drain (and hand over ownership) before it
   * restarts or removes the Pod anyway; a Go duration. Read by the controller only.
   * @default 10m
   */
  gracefulShutdownTimeout?: string;
}

export interface PumpSpec extends ComponentSpec {
  /**
   * Pump's config (`pump.toml`), a TOML string or a mapping; every key is kept. `log-level` is also
   * passed as `-L`. With `tlsCluster`, `security.ssl-ca/-cert/-key` are set to the mounted certificate.
   * @default {} (an empty pump.toml)
   */
  config?: ComponentConfig;
  /** Sets `TZ` to `spec.timezone` in the pump container (for Helm-made clusters). @default false */
  setTimeZone?: boolean;
}

/** TiProxy takes the common component fields except `maxFailoverCount` (it has no failover). */
export interface TiProxySpec extends Omit<ComponentSpec, 'maxFailoverCount' | 'readinessProbe' | 'configUpdateStrategy'> {
  /**
   * Only `InPlace` is accepted: the operator always updates TiProxy's ConfigMap in place, whatever
   * this field or the cluster's says.
   * @default InPlace
   */
  configUpdateStrategy?: 'InPlace';
  /** Accepted only when it suspends nothing (`{}` or `suspendStatefulSet: false`). @default {} */
  suspendAction?: {
    /** @default false */
    suspendStatefulSet?: boolean;
  };
  /**
   * With `spec.tidb.tlsClient`, TiProxy connects to TiDB over TLS even when the TidbCluster carries the
   * `tidb.tidb.pingcap.com/skip-tls-when-connect-tidb` annotation (legacy `certLayout` mounts the
   * client certificate then too).
   * @default false
   */
  sslEnableTiDB?: boolean;
  /**
   * Secret with the client certificate TiProxy presents to TiDB (legacy `certLayout` only).
   * @default <cluster>-tidb-client-secret
   */
  tlsClientSecretName?: string;
  /**
   * How certificates are mounted and configured: `""` (legacy) or `v1` (TiProxy's own cluster
   * certificate `<cluster>-tiproxy-cluster-secret` serves its HTTP API and talks to PD).
   * @default ""
   */
  certLayout?: string;
  /**
   * Server labels the controller sets through TiProxy's API (TiProxy 1.1.0 or newer), merged with the
   * node's topology labels; `zone` is managed. Not part of any rendered object.
   * @default {}
   */
  serverLabels?: Record<string, string>;
  /**
   * Readiness probe, only when `type` is given: `tcp` checks the SQL port 6000, `command` curls
   * `/api/debug/health` on the API port 3080.
   * @default none (no probe, also when `type` is unset)
   */
  readinessProbe?: ProbeSpec & {
    /** @default 10 */
    periodSeconds?: number;
  };
}
