/**
 * The parts every component's spec is made of: Pod settings (taken at cluster level and per
 * component), the common component fields, Services, probes, volumes and resources.
 */
import type {
  Affinity,
  Container,
  EnvFromSource,
  EnvVar,
  LocalObjectReference,
  PodDNSConfig,
  PodSecurityContext,
  SecurityContext,
  Toleration,
  Volume,
  VolumeMount,
} from '../../imports/k8s';

export type Quantity = string | number;

export type ResourceList = Record<string, Quantity>;

/** A component's config: a TOML document as a string, or the same structure as a YAML mapping. */
export type ComponentConfig = string | Record<string, unknown>;

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
  /**
   * Seconds kubelet gives a deleted Pod to stop, its preStop hook included.
   * @default Kubernetes default (30); TiKV with drain hooks (the default): 600, for its region leaders to move away
   */
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

/** How many Pods the controller adds or removes at a time. */
export interface ScalePolicy {
  /** @default 1 */
  scaleInParallelism?: number;
  /** @default 1 */
  scaleOutParallelism?: number;
}
