import { ApiObject, Chart } from 'cdk8s';
import type { Construct } from 'constructs';
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
import { BUDGET_COMPONENTS } from '../tidbcluster/guard-rails';
import { BackupScheduleCronJob } from './backup-schedule';
import { BackupOperationConfigMap } from './backup-operation';
import { InitializerConfigMap } from './initializer';
import { MonitoringComponent } from './monitoring';
import { clusterMonitoring } from '../monitoring/read';
import { operationJobName } from '../backup/resolve';
import { NO_OPERATIONS, type ClusterOperations } from '../backup/link';
import { ApiRefusalError, apiProblems } from './api-check';
import { checkTidbCluster } from '../tidbcluster/check';
import type { ResolvedCluster } from '../tidbcluster/resolve';
import type { TidbCluster } from '../tidbcluster/types';
import type { ComponentKind } from '../tidbcluster/names';

export interface TidbClusterChartProps {
  /**
   * The TidbCluster to render (the same structure as its YAML). It is validated against the CRD and
   * this project's support rules; problems throw a SpecError listing every one of them.
   * Exactly one of `cluster` and `resolved` is given.
   * @default none
   */
  readonly cluster?: TidbCluster;
  /** An already validated and resolved cluster (what `loadTidbClusters` returns). @default none */
  readonly resolved?: ResolvedCluster;
  /** Namespace for a cluster whose metadata has none. @default none: objects carry no namespace */
  readonly namespace?: string;
  /**
   * Image of the discovery Deployment (the tidb-gitops controller) when `spec.discovery` names none.
   * Only with `cluster`: a `resolved` cluster has its image already (`loadTidbClusters` takes the option).
   * @default ghcr.io/tidb-gitops/tidb-gitops:<this release>
   */
  readonly controllerImage?: string;
  /**
   * The Kubernetes version to render for, `1.31` to `1.36` (newer versions render for 1.36). Only with
   * `cluster`: a `resolved` cluster was resolved for its version already.
   * @default 1.31, the oldest supported
   */
  readonly kubeVersion?: string;
  /**
   * The cluster's BackupSchedules, Backups and Restores, as `linkOperations` ties them to
   * it from the same input.
   * @default none
   */
  readonly operations?: ClusterOperations;
}

/**
 * All objects of one TidbCluster: the discovery Deployment running the companion controller (with its
 * Service and namespace-scoped RBAC), and per component (PD and its micro-services, TiKV, TiDB, TiFlash, TiCDC, Pump, TiProxy)
 * its ConfigMap, Services and StatefulSet, as tidb-operator v1 would create them, minus the fields the
 * controller owns.
 */
export class TidbClusterChart extends Chart {
  /** The cluster after defaults were applied. */
  readonly resolved: ResolvedCluster;

  constructor(scope: Construct, id: string, props: TidbClusterChartProps) {
    // Checked before the chart joins its scope: a SpecError caught by the caller leaves nothing behind
    // for `app.synth()` to write.
    const resolved = resolveProps(props);
    super(scope, id, { disableResourceNameHashes: true });
    this.resolved = resolved;
    const c = resolved;
    const ops = props.operations ?? NO_OPERATIONS;
    // Always: even without PD, the controller sets the StatefulSets' replicas and partitions.
    new DiscoveryComponent(this, 'discovery', { cluster: c, operations: ops });
    // PD's micro-services first, in the operator's order.
    if (c.tso) new PdmsComponent(this, 'tso', { cluster: c, pdms: c.tso });
    if (c.scheduling) new PdmsComponent(this, 'scheduling', { cluster: c, pdms: c.scheduling });
    if (c.pd) new PdComponent(this, 'pd', { cluster: c });
    if (c.tiproxy) new TiProxyComponent(this, 'tiproxy', { cluster: c });
    if (c.tiflash) new TiFlashComponent(this, 'tiflash', { cluster: c });
    if (c.tikv) new TikvComponent(this, 'tikv', { cluster: c });
    if (c.pump) new PumpComponent(this, 'pump', { cluster: c });
    if (c.tidb) new TidbComponent(this, 'tidb', { cluster: c });
    if (c.ticdc) new TiCDCComponent(this, 'ticdc', { cluster: c });
    for (const [kind, budget] of Object.entries(c.disruptionBudgets)) {
      new DisruptionBudgetComponent(this, `${kind}-budget`, { cluster: c, kind: kind as ComponentKind, budget: budget! });
    }
    if (c.networkPolicy) {
      new NetworkPolicyComponent(this, 'discovery-policy', { cluster: c, kind: 'discovery' });
      for (const kind of renderedComponents(c)) new NetworkPolicyComponent(this, `${kind}-policy`, { cluster: c, kind });
    }
    // Last: it reads the volume claim templates of the StatefulSets above.
    new VolumeSizesConfigMap(this, 'volume-sizes', { cluster: c });
    for (const schedule of ops.schedules) new BackupScheduleCronJob(this, `schedule-${schedule.name}`, { cluster: c, schedule });
    for (const operation of [...ops.backups, ...ops.restores]) new BackupOperationConfigMap(this, operationJobName(operation), { cluster: c, operation });
    if (ops.initializer || c.createPassword) new InitializerConfigMap(this, 'initializer', { cluster: c, ...(ops.initializer && { initializer: ops.initializer }) });
    const monitoring = clusterMonitoring(c, ops.monitor);
    if (monitoring) new MonitoringComponent(this, 'monitoring', { cluster: c, monitoring });
    // `app.synth()` validates every construct before it writes a file: refusing here keeps a chart the
    // API server would refuse from leaving the other charts' files half-written.
    // (Chart.toJson would run this validation again, so the objects are taken one by one.)
    this.node.addValidation({
      validate: () => this.refuseApiProblems(this.ownObjects()),
    });
  }

  /**
   * The chart's objects, as `app.synth()` writes them. Throws {@link ApiRefusalError} listing every
   * problem when the API server would refuse one of them.
   */
  override toJson(): any[] {
    const objects = super.toJson();
    this.refuseApiProblems(objects);
    return objects;
  }

  /**
   * What `toJson` gives, for a chart that nothing was added to after construction (the CLI's): its
   * objects in construct order, each serialised once, checked once. cdk8s's synthesis would build a
   * dependency graph (there are no dependencies, so its order is the construct order), run the
   * validation above (serialising every object and checking them), then serialise and check again.
   */
  objectsAsBuilt(): any[] {
    const objects = this.ownObjects();
    this.refuseApiProblems(objects);
    return objects;
  }

  /** The chart's own objects (not a nested chart's), serialised, in construct order. */
  private ownObjects(): any[] {
    return this.node.findAll().flatMap((c) => (c instanceof ApiObject && Chart.of(c) === this ? [c.toJson()] : []));
  }

  private refuseApiProblems(objects: readonly any[]): string[] {
    const problems = apiProblems(objects, this.resolved.kubeMinor);
    if (problems.length > 0) throw new ApiRefusalError(problems);
    return [];
  }
}

/** The components the cluster renders as StatefulSets. */
const renderedComponents = (c: ResolvedCluster): ComponentKind[] => BUDGET_COMPONENTS.filter((k) => c[k as keyof ResolvedCluster] !== undefined);

function resolveProps(props: TidbClusterChartProps): ResolvedCluster {
  if ((props.cluster === undefined) === (props.resolved === undefined)) {
    throw new Error('TidbClusterChart: give exactly one of `cluster` and `resolved`');
  }
  for (const option of ['controllerImage', 'kubeVersion'] as const) {
    if (props.resolved && props[option] !== undefined) {
      throw new Error(`TidbClusterChart: \`${option}\` applies when resolving; pass it to loadTidbClusters or checkTidbCluster instead`);
    }
  }
  return props.resolved ?? checkTidbCluster(props.cluster, { namespace: props.namespace, controllerImage: props.controllerImage, kubeVersion: props.kubeVersion });
}
