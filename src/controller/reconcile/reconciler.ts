/**
 * One pass over the cluster: read the records once, finish what a re-creation left, look at the
 * StatefulSets, Pods, claims and PD, plan every component, carry out at most one action for each,
 * then the work beside the plan (the side tasks, in one list: see side-task.ts), health annotations,
 * the status, and old config revisions. It knows nothing of HTTP, queues or leases: the manager
 * calls it, and it says whether an operation is under way.
 */
import { names, type ComponentKind } from '../../tidbcluster/names';
import { rfc3339, type ActionDeps } from '../actions/context';
import { Executor } from '../actions/execute';
import { finishRecreates } from '../actions/statefulset';
import type { EventRecorder } from '../clients/events';
import type { ClientTls } from '../clients/http';
import { type KubeAccess } from '../clients/kube';
import { KubeError } from '../clients/kube-errors';
import { SERVING_CONDITION } from '../../tidbcluster/serving';
import { servingChanges } from '../plan/serving';
import type { PdClient } from '../clients/pd';
import type { ClusterInfo } from '../model/cluster';
import { trackHealth } from '../plan/failover';
import { plan, type ComponentPlan } from '../plan/plan';
import { trackWaits, type StuckReport, type WaitMark } from '../plan/stuck';
import { extraReplicas } from '../records/failover';
import { StatusRecords } from '../records/store';
import type { StoppedWithLeaders } from '../records/stopped-with-leaders';
import type { Logger } from '../runtime/log';
import type { Metrics } from '../runtime/metrics';
import type { PlanOptions } from '../view/view';
import { BackupRunRecorder } from './backup-runs';
import { OneShotRunner } from './one-shot-runs';
import { InitializerRunner } from './initializer';
import { ChangefeedsKeeper } from './changefeeds';
import { ResourceGroupsKeeper } from './resource-groups';
import { OnlineConfigApplier } from './online-config';
import { SqlAccountsKeeper } from './sql-accounts';
import { LogBackupReader } from './log-backups';
import { LogTaskRunner } from './log-tasks';
import { clusterNotReady } from '../plan/one-shot-runs';
import type { SidePass, SideTask } from './side-task';
import { ConfigCollector } from './configmaps';
import { publishHealth } from './health';
import { observe, type PassView } from './observe';
import { statusDocument } from './status';
import { TopologyLabeler } from './topology';
import { ReclaimPolicySetter } from './reclaim-policy';
import { RECLAIM_POLICY_COMPONENTS } from '../plan/reclaim-policy';
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
    /** How long an operation may wait on one reason before it is reported stuck. @default 30000 */
    readonly stuckAfterMs?: number;
  };
  readonly metrics: Metrics;
  readonly log: Logger;
  readonly event: EventRecorder;
  /** Whether this replica may still act: it leads and is not stopping. */
  readonly acting: () => boolean;
  /** The Pods discovery let stop with region leaders, for the status. @default none */
  readonly stoppedWithLeaders?: () => readonly StoppedWithLeaders[];
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
  /** Reads the log backup tasks, for the status and the side tasks after it. */
  private readonly logBackups: LogBackupReader;
  /** The work beside the plan, in the order each pass does it. */
  private readonly sideTasks: readonly SideTask[];
  /** Copies Node topology labels onto stores and TiDB servers; only when the cluster may read Nodes. */
  private readonly topology?: TopologyLabeler;
  /** Keeps the SQL accounts Git declares. */
  private readonly sqlAccounts: SqlAccountsKeeper;
  /** Keeps the resource groups Git declares. */
  private readonly resourceGroups: ResourceGroupsKeeper;
  /** Keeps the TiCDC changefeeds Git declares. */
  private readonly changefeeds: ChangefeedsKeeper;
  /** Applies PD's and TiKV's online-changeable InPlace config to their running servers. */
  private readonly onlineConfig: OnlineConfigApplier;
  /** Sets `spec.pvReclaimPolicy` on the PVs of the cluster's claims; only when the cluster may patch PVs. */
  private readonly reclaimPolicy?: ReclaimPolicySetter;
  /** The last event of each component planned without an action, so that a standing refusal is reported once. */
  private readonly standingEvents = new Map<ComponentKind, string>();
  /** Each component's current wait, and the ones waiting too long (`plan/stuck.ts`). */
  private waits: ReadonlyMap<ComponentKind, WaitMark> = new Map();
  private stuck: ReadonlyMap<ComponentKind, StuckReport> = new Map();
  private acted = false;

  constructor(private readonly d: ReconcilerDeps) {
    this.records = new StatusRecords(d.kube, d.cluster.name);
    this.volumeSizes = new VolumeSizesReader(d.kube, d.cluster.name, d.log);
    this.configs = new ConfigCollector(d);
    const logTasks = new LogTaskRunner(d, this.records, { invalidate: () => this.logBackups.invalidate() });
    this.logBackups = new LogBackupReader(d, () => logTasks.active);
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
    if (d.cluster.patchesVolumes) {
      const on = d.cluster.components.find((c) => RECLAIM_POLICY_COMPONENTS.includes(c)) ?? d.cluster.components[0] ?? 'pd';
      this.reclaimPolicy = new ReclaimPolicySetter({
        namespace: d.kube.namespace,
        cluster: d.cluster.name,
        persistentVolume: (name) => d.kube.persistentVolume(name),
        patchReclaimPolicy: (name, policy) => d.kube.patchReclaimPolicy(name, policy),
        claims: () => d.kube.volumes(),
        warn: (reason, message) => d.event(names.statefulSet(d.cluster.name, on), 'Warning', reason, message, true),
        info: (message, fields) => d.log.info(message, fields),
      });
    }
    this.sqlAccounts = new SqlAccountsKeeper(d, this.records);
    this.resourceGroups = new ResourceGroupsKeeper(d, this.records);
    this.changefeeds = new ChangefeedsKeeper(d, this.records);
    this.onlineConfig = new OnlineConfigApplier(d, this.records);
    // The log backups before the schedules' runs: retention by maxReservedTime keeps the window up to
    // their checkpoints.
    this.sideTasks = [
      ...(this.topology ? [this.topology] : []),
      ...(this.reclaimPolicy ? [this.reclaimPolicy] : []),
      this.onlineConfig,
      this.logBackups,
      new BackupRunRecorder(d, this.records),
      new OneShotRunner(d, this.records),
      new InitializerRunner(d, this.records),
      // The groups before the accounts: a user's RESOURCE GROUP must exist first.
      this.resourceGroups,
      this.sqlAccounts,
      this.changefeeds,
      logTasks,
    ];
  }

  /** This replica has just become the leader: the records are read afresh on the next pass. */
  becameLeader(): void {
    this.records.forget();
  }

  /** One pass; undefined when nothing could be done (not leading, caches not synced, stopping). */
  async reconcile(): Promise<PassResult | undefined> {
    if (!this.d.acting() || !this.d.kube.synced()) return undefined;
    const records = this.records;
    records.composeWith(undefined);
    await records.restore();
    if (await finishRecreates(this.actionDeps, this.d.log)) return { busy: true, acted: this.acted };
    const view = await observe(this.d, records, this.volumeSizes);
    records.setUnhealthySince(trackHealth(records.failover.unhealthySince, { ...view, failover: records.failover }));
    const plans = plan({ ...view, failover: records.failover });
    await this.noteWaits(view, plans);
    records.composeWith(() => this.status(view, plans));
    // A Pod not serving yet is looked at again soon, as during an operation: its store or server may
    // come up between two kube events, and the budget counts it only once its condition is True.
    const notServing = this.d.acting() ? await this.markServing(view) : false;
    const busy = await this.act(view, plans);
    if (busy === undefined) return undefined;
    const side: SidePass = {
      view,
      notReady: clusterNotReady(view.components, plans, view.pd),
      tidbPods: view.components.find((c) => c.kind === 'tidb')?.pods ?? [],
      logBackups: () => this.logBackups.current(),
    };
    for (const task of this.sideTasks) if (task.readsOnly || this.d.acting()) await task.run(side);
    await publishHealth(this.d, view.components, plans, records.failover);
    await records.write(this.status(view, plans));
    if (!busy) await this.configs.collect(view.now);
    this.d.metrics.set('process_resident_memory_bytes', {}, process.memoryUsage().rss);
    return { busy: busy || notServing, acted: this.acted };
  }

  /**
   * Carries out each plan's action, at most one per component, and announces it; a refusal without
   * an action is announced once. Whether an operation is under way; undefined once this replica
   * may act no more.
   */
  private async act(view: PassView, plans: readonly ComponentPlan[]): Promise<boolean | undefined> {
    let busy = false;
    this.acted = false;
    for (const p of plans) {
      busy ||= p.busy;
      for (const phase of PHASES)
        this.d.metrics.set('tidb_gitops_component_phase', { component: p.kind, phase }, p.phase === phase ? 1 : 0);
      this.d.metrics.set('tidb_gitops_failover_replicas', { component: p.kind }, extraReplicas(p.kind, this.records.failover));
      if (!p.action) {
        if (p.event && this.standingEvents.get(p.kind) !== p.event.message) await this.planEvent(p);
        this.standingEvents.set(p.kind, p.event?.message ?? '');
        continue;
      }
      this.standingEvents.delete(p.kind);
      if (!this.d.acting()) return undefined;
      const done = await this.executor.execute(p, p.action, view.allPods, view.now);
      this.acted ||= done;
      if (!done) continue;
      if (p.event) await this.planEvent(p);
      if (p.action.type !== 'apply' || p.event) {
        this.records.setLastOperation(p.kind, {
          action: p.event?.reason ?? p.action.type,
          reason: p.reason,
          pod: p.event?.pod,
          time: rfc3339(view.now),
        });
      }
      const before = view.components.find((x) => x.kind === p.kind)?.sts.spec?.replicas ?? 1;
      if (p.action.type === 'apply' && p.phase === 'Failover' && p.action.replicas > before) {
        this.d.metrics.inc('tidb_gitops_failover_replicas_added_total', { component: p.kind });
      }
    }
    return busy;
  }

  /**
   * The readiness gate's condition on each gated Pod, as the servers say (`plan/serving.ts`). A Pod
   * replaced meanwhile (the UID precondition fails) or gone is left to the next pass. Whether a gated
   * Pod runs without serving.
   */
  private async markServing(view: PassView): Promise<boolean> {
    const { changes, notServing } = servingChanges(view);
    for (const change of changes) {
      try {
        await this.d.kube.patchPodCondition(
          change.pod,
          change.uid,
          { type: SERVING_CONDITION, status: change.status, reason: change.reason, message: change.message },
          view.now,
        );
        this.d.log.info(`${change.pod}: ${SERVING_CONDITION} ${change.status}: ${change.message}`, { pod: change.pod });
      } catch (err) {
        if (err instanceof KubeError && (err.code === 404 || err.code === 409)) continue;
        this.d.log.warn(`cannot set ${SERVING_CONDITION} on ${change.pod}: ${(err as Error).message}`, { pod: change.pod });
      }
    }
    return notServing;
  }

  /** Keeps each component's wait; one that lasts too long is reported once, as a Warning event. */
  private async noteWaits(view: PassView, plans: readonly ComponentPlan[]): Promise<void> {
    const t = trackWaits(this.waits, plans, view.components, view.now, this.d.options.stuckAfterMs);
    this.waits = t.marks;
    this.stuck = t.stuck;
    for (const s of t.report) {
      const seconds = Math.round((view.now - s.since) / 1000);
      const message = `${s.kind} ${s.phase.toLowerCase()} has not moved for ${seconds}s: ${s.reason}. ${s.hint}`;
      this.d.log.warn(message, { component: s.kind });
      await this.d.event(names.statefulSet(this.d.cluster.name, s.kind), 'Warning', 'OperationStuck', message, true);
    }
  }

  /** The plan's event, on its Pod or, when it names none, on the component's StatefulSet. */
  private planEvent(p: ComponentPlan): Promise<void> {
    const e = p.event!;
    return this.d.event(e.pod ?? names.statefulSet(this.d.cluster.name, p.kind), e.type, e.reason, e.message, e.pod === undefined);
  }

  /** The status document of this pass. */
  private status(view: PassView, plans: readonly ComponentPlan[]): string {
    return statusDocument(
      this.d.cluster.name,
      view.components,
      plans,
      view.pd,
      this.records,
      this.topology?.current(),
      this.logBackups.current(),
      this.stuck,
      this.reclaimPolicy?.current(),
      this.d.stoppedWithLeaders?.(),
      this.sqlAccounts.current(),
      this.resourceGroups.current(),
      this.changefeeds.current(),
      this.onlineConfig.current(),
    );
  }
}
