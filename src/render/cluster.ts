import { Construct } from 'constructs';
import { DiscoveryComponent } from './discovery';
import { PdComponent } from './pd';
import { PdmsComponent } from './pdms';
import { PumpComponent } from './pump';
import { TiCDCComponent } from './ticdc';
import { TidbComponent } from './tidb';
import { TiFlashComponent } from './tiflash';
import { TikvComponent } from './tikv';
import { TiProxyComponent } from './tiproxy';
import { VolumeSizesConfigMap } from './volume-sizes';
import { DisruptionBudgetComponent } from './disruption-budget';
import { NetworkPolicyComponent } from './network-policy';
import { BackupScheduleCronJob } from './backup-schedule';
import { BackupOperationConfigMap } from './backup-operation';
import { ChangefeedConfigMap } from './changefeed';
import { InitializerConfigMap } from './initializer';
import { MonitoringComponent } from './monitoring';
import { refuseAtSynthesis } from './checked';
import { BUDGET_COMPONENTS } from '../tidbcluster/guard-rails';
import { clusterMonitoring } from '../monitoring/read';
import { operationJobName } from '../backup/resolve';
import { NO_OPERATIONS, type ClusterOperations } from '../backup/link';
import { checkTidbCluster } from '../tidbcluster/check';
import type { ResolvedCluster } from '../tidbcluster/resolve';
import type { TidbClusterManifest } from '../tidbcluster/types';
import type { ComponentKind } from '../tidbcluster/names';

export interface TidbClusterProps {
  /**
   * The TidbCluster to render (the same structure as its YAML). It is validated against the CRD and
   * this project's support rules; problems throw a SpecError listing every one of them.
   * Exactly one of `cluster` and `resolved` is given.
   * @default none
   */
  readonly cluster?: TidbClusterManifest;
  /** An already validated and resolved cluster (what `loadTidbClusters` and `loadClusterInputs` give). @default none */
  readonly resolved?: ResolvedCluster;
  /** Namespace for a cluster whose metadata has none. Only with `cluster`. @default none: objects carry no namespace */
  readonly namespace?: string;
  /**
   * Image of the discovery Deployment (the tidb-gitops controller) when `spec.discovery` names none.
   * Only with `cluster`: a `resolved` cluster has its image already (`loadTidbClusters` takes the option).
   * @default ghcr.io/tidb-gitops/tidb-gitops:<this release>
   */
  readonly controllerImage?: string;
  /**
   * The Kubernetes version to render for, `1.31` to `1.37` (newer versions render for 1.37). Only with
   * `cluster`: a `resolved` cluster was resolved for its version already.
   * @default 1.31, the oldest supported
   */
  readonly kubeVersion?: string;
  /**
   * The API versions the target cluster serves, comma-separated (`kubectl api-versions`). Monitoring
   * objects whose Prometheus Operator CRDs are not listed are left out. Only with `cluster`.
   * @default not known: PodMonitors are rendered, for a later Argo CD sync wave
   */
  readonly apiVersions?: string;
  /**
   * The cluster's BackupSchedules, Backups, Restores, TidbInitializer and TidbMonitor, as
   * `linkOperations` (or `loadClusterInputs`) ties them to it.
   * @default none
   */
  readonly operations?: ClusterOperations;
}

/**
 * All objects of one TidbCluster, in any scope (a Chart of one's own, beside other constructs): the
 * discovery Deployment running the companion controller (with its Service and namespace-scoped RBAC),
 * and per component (PD and its micro-services, TiKV, TiDB, TiFlash, TiCDC, Pump, TiProxy) its
 * ConfigMap, Services and StatefulSet, as tidb-operator v1 would create them, minus the fields the
 * controller owns; then its disruption budgets, network policies, backups, initializer and monitoring.
 *
 * Each component is a property, with handles to its objects (`tidb.service`, `tikv.statefulSet`, ...)
 * for labels, annotations and JSON patches. At synthesis every object under this construct, patched or
 * added, is checked against the API server's rules, as `tidb-gitops render` checks its output.
 */
export class TidbCluster extends Construct {
  /** The cluster after defaults were applied. */
  readonly resolved: ResolvedCluster;
  /** The companion controller's Deployment, Service and RBAC. */
  readonly discovery: DiscoveryComponent;
  /** PD. @default none, without `spec.pd` */
  readonly pd?: PdComponent;
  /** PD's TSO micro-service. @default none, without one in `spec.pdms` */
  readonly tso?: PdmsComponent;
  /** PD's scheduling micro-service. @default none, without one in `spec.pdms` */
  readonly scheduling?: PdmsComponent;
  /** TiProxy. @default none, without `spec.tiproxy` */
  readonly tiproxy?: TiProxyComponent;
  /** TiFlash. @default none, without `spec.tiflash` */
  readonly tiflash?: TiFlashComponent;
  /** TiKV. @default none, without `spec.tikv` */
  readonly tikv?: TikvComponent;
  /** Pump. @default none, without `spec.pump` */
  readonly pump?: PumpComponent;
  /** TiDB. @default none, without `spec.tidb` */
  readonly tidb?: TidbComponent;
  /** TiCDC. @default none, without `spec.ticdc` */
  readonly ticdc?: TiCDCComponent;
  /** The `<cluster>-volume-sizes` ConfigMap the controller resizes claims from. */
  readonly volumeSizes: VolumeSizesConfigMap;

  constructor(scope: Construct, id: string, props: TidbClusterProps) {
    // Checked before the construct joins its scope: a SpecError caught by the caller leaves nothing
    // behind for `app.synth()` to write.
    const c = resolveClusterProps(props, 'TidbCluster');
    super(scope, id);
    this.resolved = c;
    refuseAtSynthesis(this, c.kubeMinor);
    const ops = props.operations ?? NO_OPERATIONS;
    // Always: even without PD, the controller sets the StatefulSets' replicas and partitions.
    this.discovery = new DiscoveryComponent(this, 'discovery', { cluster: c, operations: ops });
    // PD's micro-services first, in the operator's order.
    if (c.tso) this.tso = new PdmsComponent(this, 'tso', { cluster: c, pdms: c.tso });
    if (c.scheduling) this.scheduling = new PdmsComponent(this, 'scheduling', { cluster: c, pdms: c.scheduling });
    if (c.pd) this.pd = new PdComponent(this, 'pd', { cluster: c });
    if (c.tiproxy) this.tiproxy = new TiProxyComponent(this, 'tiproxy', { cluster: c });
    if (c.tiflash) this.tiflash = new TiFlashComponent(this, 'tiflash', { cluster: c });
    if (c.tikv) this.tikv = new TikvComponent(this, 'tikv', { cluster: c });
    if (c.pump) this.pump = new PumpComponent(this, 'pump', { cluster: c });
    if (c.tidb) this.tidb = new TidbComponent(this, 'tidb', { cluster: c });
    if (c.ticdc) this.ticdc = new TiCDCComponent(this, 'ticdc', { cluster: c });
    for (const [kind, budget] of Object.entries(c.disruptionBudgets)) {
      new DisruptionBudgetComponent(this, `${kind}-budget`, { cluster: c, kind: kind as ComponentKind, budget: budget! });
    }
    if (c.networkPolicy) {
      new NetworkPolicyComponent(this, 'discovery-policy', { cluster: c, kind: 'discovery' });
      for (const kind of renderedComponents(c)) new NetworkPolicyComponent(this, `${kind}-policy`, { cluster: c, kind });
    }
    // Last: it reads the volume claim templates of the StatefulSets above.
    this.volumeSizes = new VolumeSizesConfigMap(this, 'volume-sizes', { cluster: c });
    for (const schedule of ops.schedules) new BackupScheduleCronJob(this, `schedule-${schedule.name}`, { cluster: c, schedule });
    for (const operation of [...ops.backups, ...ops.restores])
      new BackupOperationConfigMap(this, operationJobName(operation), { cluster: c, operation });
    for (const feed of ops.changefeeds?.feeds ?? []) new ChangefeedConfigMap(this, `changefeed-${feed.document}`, { cluster: c, feed });
    if (ops.initializer || c.createPassword)
      new InitializerConfigMap(this, 'initializer', { cluster: c, ...(ops.initializer && { initializer: ops.initializer }) });
    const monitoring = clusterMonitoring(c, ops.monitor);
    if (monitoring) new MonitoringComponent(this, 'monitoring', { cluster: c, monitoring });
  }
}

/** The components the cluster renders as StatefulSets. */
const renderedComponents = (c: ResolvedCluster): ComponentKind[] =>
  BUDGET_COMPONENTS.filter((k) => c[k as keyof ResolvedCluster] !== undefined);

/** The cluster the props name, resolved; `who` names the construct in errors of use. */
export function resolveClusterProps(props: TidbClusterProps, who: string): ResolvedCluster {
  if ((props.cluster === undefined) === (props.resolved === undefined)) {
    throw new Error(`${who}: give exactly one of \`cluster\` and \`resolved\``);
  }
  for (const option of ['namespace', 'controllerImage', 'kubeVersion', 'apiVersions'] as const) {
    if (props.resolved && props[option] !== undefined) {
      throw new Error(`${who}: \`${option}\` applies when resolving; pass it to loadTidbClusters or checkTidbCluster instead`);
    }
  }
  return (
    props.resolved ??
    checkTidbCluster(props.cluster, {
      namespace: props.namespace,
      controllerImage: props.controllerImage,
      kubeVersion: props.kubeVersion,
      apiVersions: props.apiVersions,
    })
  );
}
