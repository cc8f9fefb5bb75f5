/**
 * One pass over the cluster: read the records once, finish what a re-creation left, look at the
 * StatefulSets, Pods, claims and PD, plan every component, carry out at most one action for each,
 * then the work beside the plan (topology labels, health annotations, the status, old config
 * revisions). It knows nothing of HTTP, queues or leases: the manager calls it, and it says whether
 * an operation is under way.
 */
import { randomUUID } from 'node:crypto';
import { LABEL, names, type ComponentKind } from '../../tidbcluster/names';
import { rfc3339, type ActionDeps } from '../actions/context';
import { Executor } from '../actions/execute';
import { finishRecreates } from '../actions/statefulset';
import type { EventRecorder } from '../clients/events';
import type { ClientTls } from '../clients/http';
import type { KubeAccess } from '../clients/kube';
import type { PdClient } from '../clients/pd';
import type { ClusterInfo } from '../model/cluster';
import type { Pod } from '../model/objects';
import { settingsOf } from '../model/settings';
import { trackHealth } from '../plan/failover';
import { isMsService } from '../plan/pdms';
import { plan, type ComponentPlan } from '../plan/plan';
import { extraReplicas } from '../records/failover';
import { StatusRecords } from '../records/store';
import type { Logger } from '../runtime/log';
import type { Metrics } from '../runtime/metrics';
import { targetReplicas } from '../view/lookups';
import type { ComponentState, PdState, PlanOptions } from '../view/view';
import { ConfigCollector } from './configmaps';
import { publishHealth } from './health';
import { probe, readPd } from './observe';
import { statusDocument } from './status';
import { TopologyLabeler } from './topology';
import { VolumeSizesReader } from './volume-sizes';

export interface ReconcilerDeps {
  readonly cluster: ClusterInfo;
  readonly kube: KubeAccess;
  /** The PD the controller works with (the first of its PD URLs). */
  readonly pd: PdClient;
  /** The cluster client certificate, for PD and the servers' own APIs under cluster TLS. @default none */
  readonly tls?: ClientTls;
  readonly options: Omit<PlanOptions, 'newFailoverUid'> & {
    /** How long an unused config revision newer than the one in use is kept. @default 3600000 */
    readonly configGraceMs?: number;
  };
  readonly metrics: Metrics;
  readonly log: Logger;
  readonly event: EventRecorder;
  /** Whether this replica may still act: it leads and is not stopping. */
  readonly acting: () => boolean;
}

/** What a pass found: whether an operation is under way, and whether it acted. */
export interface PassResult {
  readonly busy: boolean;
  readonly acted: boolean;
}

/** Phases the component phase gauge has a series for. */
const PHASES = ['Normal', 'Upgrading', 'Scaling', 'Failover'];

export class Reconciler {
  private readonly records: StatusRecords;
  private readonly actionDeps: ActionDeps;
  private readonly executor: Executor;
  private readonly volumeSizes: VolumeSizesReader;
  private readonly configs: ConfigCollector;
  /** Copies Node topology labels onto stores and TiDB servers; only when the cluster may read Nodes. */
  private readonly topology?: TopologyLabeler;
  /** The last event of each component planned without an action, so that a standing refusal is reported once. */
  private readonly standingEvents = new Map<ComponentKind, string>();
  private acted = false;

  constructor(private readonly d: ReconcilerDeps) {
    this.records = new StatusRecords(d.kube, d.cluster.name);
    this.volumeSizes = new VolumeSizesReader(d.kube, d.cluster.name, d.log);
    this.configs = new ConfigCollector(d);
    this.actionDeps = {
      cluster: d.cluster,
      kube: d.kube,
      pd: d.pd,
      tls: d.tls,
      records: this.records,
      metrics: d.metrics,
      event: d.event,
      noteVolumeRefusal: (kind, message) => this.volumeSizes.refuse(kind, message),
    };
    this.executor = new Executor(this.actionDeps, d.log);
    if (d.cluster.readsNodes) {
      this.topology = new TopologyLabeler({
        cluster: d.cluster,
        pd: d.pd,
        tls: d.tls,
        nodeLabels: (name) => d.kube.nodeLabels(name),
        warn: (pod, reason, message) => d.event(pod, 'Warning', reason, message),
        info: (message, fields) => d.log.info(message, fields),
      });
    }
  }

  /** This replica has just become the leader: the records are read afresh on the next pass. */
  restart(): void {
    this.records.forget();
  }

  /** One pass; undefined when nothing could be done (not leading, caches not synced, stopping). */
  async reconcile(): Promise<PassResult | undefined> {
    const { cluster: c, kube } = this.d;
    if (!this.d.acting() || !kube.synced()) return undefined;
    this.records.composeWith(undefined);
    await this.records.restore();
    if (await finishRecreates(this.actionDeps, this.d.log)) return { busy: true, acted: this.acted };
    const volumeSizes = await this.volumeSizes.read();
    const allPods = kube.pods();
    const components: ComponentState[] = [];
    for (const kind of c.components) {
      const sts = kube.statefulSets().find((s) => s.metadata.name === names.statefulSet(c.name, kind));
      if (!sts) continue;
      const pods = allPods.filter((p) => p.metadata.labels?.[LABEL.component] === kind);
      components.push({ kind, sts, pods });
    }
    const records = this.records;
    const storeKinds = components.filter((x) => x.kind === 'tikv' || x.kind === 'tiflash');
    const msServices = components.map((x) => x.kind).filter(isMsService);
    const needsPd = storeKinds.length > 0 || msServices.length > 0 || components.some((x) => x.kind === 'pd');
    // Tombstones and max-replicas matter only while a store component has more replicas than it should.
    const scalingIn = storeKinds.some((x) => (x.sts.spec?.replicas ?? 1) > (targetReplicas({ failover: records.failover }, x) ?? Infinity));
    const pd = needsPd ? await readPd(this.d.pd, storeKinds.length > 0, scalingIn, msServices) : undefined;
    const probes = await probe(this.d, components, pd);
    const now = Date.now();
    const { autoFailover, failoverPeriodMs, resyncMs } = this.d.options;
    const options: PlanOptions = { autoFailover, failoverPeriodMs, resyncMs, newFailoverUid: randomUUID() };
    const base = {
      cluster: c,
      components,
      pd,
      now,
      volumes: kube.volumes(),
      options,
      probes,
      evictions: records.evictions,
      volumeSizes,
      volumeRefusals: this.volumeSizes.refusals,
      ddlPause: records.ddlPause,
    };
    records.setUnhealthySince(trackHealth(records.failover.unhealthySince, { ...base, failover: records.failover }));
    const plans = plan({ ...base, failover: records.failover });
    records.composeWith(() => this.status(components, plans, pd));

    let busy = false;
    this.acted = false;
    for (const p of plans) {
      busy ||= p.busy;
      for (const phase of PHASES) this.d.metrics.set('tidb_gitops_component_phase', { component: p.kind, phase }, p.phase === phase ? 1 : 0);
      this.d.metrics.set('tidb_gitops_failover_replicas', { component: p.kind }, extraReplicas(p.kind, records.failover));
      if (!p.action) {
        // A refusal or warning without an action is reported once, not on every pass.
        if (p.event && this.standingEvents.get(p.kind) !== p.event.message) await this.planEvent(p);
        this.standingEvents.set(p.kind, p.event?.message ?? '');
        continue;
      }
      this.standingEvents.delete(p.kind);
      if (!this.d.acting()) return undefined;
      const done = await this.executor.execute(p, p.action, allPods, now);
      this.acted ||= done;
      if (done && p.event) await this.planEvent(p);
      if (done && (p.action.type !== 'apply' || p.event)) {
        records.setLastOperation(p.kind, { action: p.event?.reason ?? p.action.type, reason: p.reason, pod: p.event?.pod, time: rfc3339(now) });
      }
      if (done && p.action.type === 'apply' && p.phase === 'Failover' && p.action.replicas > (components.find((x) => x.kind === p.kind)?.sts.spec?.replicas ?? 1)) {
        this.d.metrics.inc('tidb_gitops_failover_replicas_added_total', { component: p.kind });
      }
    }
    if (this.topology && this.d.acting()) await this.labelTopology(components, allPods, pd, now);
    await publishHealth(this.d, components, plans, records.failover);
    await records.write(this.status(components, plans, pd));
    if (!busy) await this.configs.collect(now);
    this.d.metrics.set('process_resident_memory_bytes', {}, process.memoryUsage().rss);
    return { busy, acted: this.acted };
  }

  /** The plan's event, on its Pod or, when it names none, on the component's StatefulSet. */
  private planEvent(p: ComponentPlan): Promise<void> {
    const e = p.event!;
    return this.d.event(e.pod ?? names.statefulSet(this.d.cluster.name, p.kind), e.type, e.reason, e.message, e.pod === undefined);
  }

  /** Topology labels from the Nodes onto stores and TiDB servers, with the settings Git gives TiKV and TiDB. */
  private async labelTopology(components: readonly ComponentState[], pods: readonly Pod[], pd: PdState | { error: string } | undefined, now: number): Promise<void> {
    const settings = (kind: ComponentKind) => {
      const sts = components.find((x) => x.kind === kind)?.sts;
      return sts ? settingsOf(sts) : {};
    };
    const storeLabels = settings('tikv').storeLabels;
    const serverLabels = settings('tidb').serverLabels;
    await this.topology!.pass({
      pods,
      stores: pd && !('error' in pd) && pd.storesError === undefined && pd.bootstrapped !== false ? pd.stores : undefined,
      storeLabels: Array.isArray(storeLabels) ? storeLabels.filter((k): k is string => typeof k === 'string') : [],
      serverLabels: typeof serverLabels === 'object' && serverLabels !== null && !Array.isArray(serverLabels) ? (serverLabels as Record<string, string>) : {},
      now,
    });
  }

  /** The status document of this pass. */
  private status(components: readonly ComponentState[], plans: readonly ComponentPlan[], pd: PdState | { error: string } | undefined): string {
    return statusDocument(this.d.cluster.name, components, plans, pd, this.records, this.topology?.current());
  }
}
