/**
 * The `TidbMonitor` input (apiVersion `pingcap.com/v1alpha1`) as tidb-operator v1 users write it, and
 * what tidb-gitops makes of it. The operator runs a Prometheus and a Grafana of its own for it;
 * tidb-gitops renders, for each cluster it names, what a Prometheus Operator and a Grafana sidecar
 * already running pick up: PodMonitors, and PingCAP's alert rules and dashboards for the cluster's
 * version. The CRD schema decides what is valid; `read.ts` what maps and what is refused.
 */
import type { ApiAvailability } from '../tidbcluster/api-versions';
import type { LocalObjectReference, PodSecurityContext, ResourceRequirements, SecurityContext, Toleration } from '../../imports/k8s';

export const MONITOR_KIND = 'TidbMonitor';

/** PingCAP's image of alert rules and dashboards, one tag per TiDB release. */
export const INITIALIZER_IMAGE = 'pingcap/tidb-monitor-initializer';

/** The image fields of each container of the operator's monitor Pod (`MonitorContainer`). */
export interface MonitorContainer {
  /** @default none */
  baseImage?: string;
  /** @default none */
  version?: string;
  /** @default the spec's imagePullPolicy */
  imagePullPolicy?: string;
  /** @default none */
  requests?: Record<string, string | number>;
  /** @default none */
  limits?: Record<string, string | number>;
  /** @default none */
  securityContext?: SecurityContext;
  [field: string]: unknown;
}

export interface TidbMonitor {
  apiVersion: string;
  kind: typeof MONITOR_KIND;
  metadata: {
    name: string;
    /** @default the `--namespace` of `render` */
    namespace?: string;
    [field: string]: unknown;
  };
  spec: TidbMonitorSpec;
}

/** A TidbCluster a TidbMonitor names. */
export interface MonitoredCluster {
  name: string;
  /** @default the TidbMonitor's namespace */
  namespace?: string;
  /** Accepted and not used (the operator does not use it for scraping either). @default none */
  clusterDomain?: string;
}

export interface TidbMonitorSpec {
  /** The monitored TidbClusters. @default none (refused: name at least one) */
  clusters?: MonitoredCluster[];
  /** The image of the rules and dashboards (`baseImage:version`). */
  initializer: MonitorContainer & {
    /** The operator's init.sh variables: refused. @default none */
    envs?: Record<string, string>;
  };
  prometheus: MonitorContainer;
  reloader: MonitorContainer;
  /** Present: the dashboards are rendered. @default none (no dashboards) */
  grafana?: MonitorContainer;
  /** @default none */
  prometheusReloader?: MonitorContainer;
  /** true: the alert rules are rendered (a PrometheusRule). @default false */
  enableAlertRules?: boolean;
  /** @default IfNotPresent */
  imagePullPolicy?: string;
  /** @default none */
  imagePullSecrets?: LocalObjectReference[];
  /** @default none */
  nodeSelector?: Record<string, string>;
  /** @default none */
  tolerations?: Toleration[];
  /** @default none */
  podSecurityContext?: PodSecurityContext;
  /** @default none */
  annotations?: Record<string, string>;
  /** @default none */
  labels?: Record<string, string>;
  [field: string]: unknown;
}

/** A cluster a TidbMonitor names, read. */
export interface ResolvedMonitoredCluster {
  readonly name: string;
  /** @default none (the monitor had no namespace either) */
  readonly namespace?: string;
}

/** A TidbMonitor, read. */
export interface ResolvedMonitor {
  readonly kind: typeof MONITOR_KIND;
  readonly name: string;
  /** @default none */
  readonly namespace?: string;
  /** The clusters it names; a namespace left out is the monitor's. */
  readonly clusters: readonly ResolvedMonitoredCluster[];
  /** The initializer's image, `baseImage:version`. */
  readonly image: string;
  /** How the rules and dashboards are fetched. */
  readonly fetch: MonitoringFetch;
  /** Whether the alert rules are rendered (`enableAlertRules`). */
  readonly rules: boolean;
  /** Whether the dashboards are rendered (`grafana` present). */
  readonly dashboards: boolean;
}

/** The Pod that fetches the rules and dashboards: its pull policy, resources and scheduling. */
export interface MonitoringFetch {
  /** @default IfNotPresent */
  readonly imagePullPolicy?: string;
  /** @default none */
  readonly resources?: ResourceRequirements;
  /** @default the restricted profile (non-root, no privilege escalation, read-only root filesystem) */
  readonly securityContext?: SecurityContext;
  /** @default none */
  readonly imagePullSecrets?: readonly LocalObjectReference[];
  /** @default none */
  readonly nodeSelector?: Readonly<Record<string, string>>;
  /** @default none */
  readonly tolerations?: readonly Toleration[];
  /** @default none */
  readonly podSecurityContext?: PodSecurityContext;
  /** @default none */
  readonly annotations?: Readonly<Record<string, string>>;
  /** @default none */
  readonly labels?: Readonly<Record<string, string>>;
}

/** A cluster's monitoring, as rendered. */
export interface ClusterMonitoring {
  /** What turned it on: `TidbMonitor "basic"` or the annotation. */
  readonly source: string;
  /** The image whose rules and dashboards are published. */
  readonly image: string;
  readonly fetch: MonitoringFetch;
  /** Whether the alert rules are published: asked for, and the target not known to lack the PrometheusRule kind. */
  readonly rules: boolean;
  readonly dashboards: boolean;
  /** Put on every monitoring object (`tidb-gitops.io/monitoring-labels`). @default {} */
  readonly labels: Readonly<Record<string, string>>;
  /**
   * Whether the target serves the PodMonitor kind: 'missing' leaves the PodMonitors out; 'unknown'
   * renders them for a later Argo CD sync wave (`crds.ts`).
   */
  readonly podMonitors: ApiAvailability;
  /** What was left out for a CRD the target does not serve, for the warning; empty when nothing was. */
  readonly leftOut: readonly string[];
}
