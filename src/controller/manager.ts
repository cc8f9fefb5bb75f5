/**
 * The companion controller of one cluster: watches the cluster's StatefulSets and Pods, answers PD
 * discovery, and, while it holds the leader Lease, reconciles the fields it owns (replicas, partition)
 * step by step, writing what it sees to the `<cluster>-status` ConfigMap.
 */
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { randomUUID } from 'node:crypto';
import { ANNOTATION, COMPONENTS, CONTROLLER_HTTP, LABEL, names, PORT, selectorLabels, VOLUME_SIZES_KEY, type ComponentKind } from '../tidbcluster/names';
import { staleConfigMaps } from './plan/configmaps';
import { Discovery } from './discovery/discovery';
import { extraReplicas, failoverOf, NO_FAILOVER, trackHealth, type FailoverKind, type FailoverState } from './plan/failover';
import { captureAddressPrefix, captureVersion, drainCapture, gracefulUpgradeSupported, resignOwnerOf, takePumpOffline } from './clients/ticdc';
import { describe, KubeAccess } from './clients/kube';
import { LeaderElector, type ElectionTiming } from './runtime/leader';
import type { Logger } from './runtime/log';
import { Metrics } from './runtime/metrics';
import type { ClusterInfo, Pod } from './model/objects';
import { PdClient, PdError, transferMsPrimary, type ClientTls } from './clients/pd';
import { isMsService, type MsService } from './plan/pdms';
import { DEFER_DELETING_ANNOTATION, desiredReplicas, memberOfPod, RETIRED_ANNOTATION, TICDC_SHUTDOWN_BEGIN_ANNOTATION, TICDC_DRAINED_ANNOTATION, LOG_BACKUP_FLUSHED_ANNOTATION, type Action, type ComponentState, type EvictionRecord, type MsState, type PdState, type LeaderProbe, type ProbeResult, type Probes } from './view/view';
import { EVICT_END_ANNOTATION, plan, probesWanted, targetReplicas, type ComponentPlan } from './plan/plan';
import { buildStatus, evictionsOf, type ClusterStatus, lastOperationsOf, parseStatus, STATUS_KEY, type LastOperation } from './reconcile/status';
import { tiflashStatusUrl, tiflashStoreStatus } from './clients/tiflash';
import { ddlPauseOf, tidbUpgradeOp, type DdlPauseRecord } from './plan/upgrade-tidb';
import { flushLogBackup, tikvGrpcTarget, tikvLeaderCount, tikvMetricsUrl } from './clients/tikv';
import { WorkQueue } from './runtime/queue';
import { parseVolumeSizes, recreateKey, recreateRecord, recreateRecordsOf, type RecreateRecord, type VolumeSizes } from './plan/volumes';
import { settingsOf, type VolumeRefusal } from './view/view';
import { tidbStatusBase, TopologyLabeler } from './plan/topology';

export interface ControllerOptions {
  readonly cluster: ClusterInfo;
  /** This replica's name in the Lease (the Pod name). */
  readonly identity: string;
  readonly kubeconfig?: string;
  /** PD client URLs, first the one the controller uses for its own work. */
  readonly pdUrls: readonly string[];
  readonly pdTls?: ClientTls;
  /** Serve discovery over HTTPS and require client certificates signed by this CA. */
  readonly discoveryTls?: ClientTls;
  readonly host: string;
  readonly discoveryPort: number;
  readonly metricsPort: number;
  /** How often an idle cluster is looked at again. @default 30000 */
  readonly resyncMs: number;
  /**
   * How soon, at most, a cluster with an operation under way is looked at again. Right after an
   * action the controller looks again within 100 ms and backs off to this while nothing changes.
   * @default 2000
   */
  readonly busyRequeueMs: number;
  readonly election: ElectionTiming;
  /** Check that discovery callers come from their Pod's address. @default true */
  readonly checkSource: boolean;
  /** Add failover replicas for failed members, stores and Pods. @default true */
  readonly autoFailover: boolean;
  /** How long a PD member, store or TiDB Pod is unhealthy before failover, per component. @default 5m each */
  readonly failoverPeriodMs: Readonly<Partial<Record<ComponentKind, number>>>;
  /**
   * How long an unused hash-named ConfigMap newer than the one in use is kept (Git may be applying
   * it). @default 3600000
   */
  readonly configGraceMs?: number;
  readonly log: Logger;
}

/** The next pass after an action comes this soon. */
const FIRST_BUSY_DELAY_MS = 100;

const withoutKeys = <T>(o: Readonly<Record<string, T>>, keys: readonly string[]): Record<string, T> =>
  Object.fromEntries(Object.entries(o).filter(([k]) => !keys.includes(k)));

/** RFC 3339 with milliseconds (Go's RFC 3339 parser, the operator's, accepts the fraction). */
const rfc3339 = (ms: number): string => new Date(ms).toISOString();

/** How often, at most, the volume sizes ConfigMap is read (it has no watch: a resize is never urgent). */
const VOLUME_SIZES_EVERY_MS = 5_000;

/** Reasons of the refusals the health checks must show as failed (`tidb-gitops.io/refused`). */
const REFUSALS = new Set(['FailedScaleIn', 'VolumeShrinkRefused', 'VolumeResizeRefused']);

/** How long a failover's deletes are given to show in the caches before they are sent again. */
const FAILOVER_DELETE_PATIENCE_MS = 30_000;

/**
 * Both servers answer small GETs at once, so a client that sends slowly holds nothing for long: the
 * headers within 5 s, the whole request within 10 s, checked every second (Node checks every 30 s
 * unless told), headers at most 16 KiB (a longer path gets 431).
 */
const SERVER_LIMITS = { headersTimeout: 5_000, requestTimeout: 10_000, connectionsCheckingInterval: 1_000, maxHeaderSize: 16 * 1024 };

export class Controller {
  readonly metrics = new Metrics();
  private readonly kube: KubeAccess;
  private readonly pd: PdClient;
  private readonly queue = new WorkQueue();
  private readonly elector: LeaderElector;
  private readonly discovery: Discovery;
  private readonly servers: (http.Server | https.Server)[] = [];
  private readonly log: Logger;
  private lastStatus?: string;
  private lastOps = new Map<ComponentKind, LastOperation>();
  private failover: FailoverState = NO_FAILOVER;
  /** The evict-leader schedulers this controller added (persisted in the status before PD is asked). */
  private evictions: Record<string, EvictionRecord> = {};
  /** The DDL pause asked of TiDB for a TiDB upgrade, kept in the status as `smoothUpgrade`. */
  private ddlPause?: DdlPauseRecord;
  /** The last event of each component planned without an action, so that a standing refusal is reported once. */
  private readonly standingEvents = new Map<ComponentKind, string>();
  /** Pod uid -> when this process deleted that failed PD member with its Pod and claims. */
  private readonly failoverDeletes = new Map<string, number>();
  private restored = false;
  /** When a leader transfer away from a Pod was last asked for, so PD is not asked on every pass. */
  private readonly transfers = new Map<string, number>();
  private stopping = false;
  private worker?: Promise<void>;
  private readonly key: string;
  /** Delay before the next pass while an operation is under way: short after an action, growing while waiting. */
  private busyDelay = FIRST_BUSY_DELAY_MS;
  private actedThisPass = false;
  /** StatefulSet specs and revisions at the last config collection; a change means a new look. */
  private configFingerprint?: string;
  private configRecheckAt?: number;
  /** StatefulSets being re-created for larger volumes, by component (kept in the status ConfigMap). */
  private recreates = new Map<string, RecreateRecord>();
  /** The status document last written (or found at start), kept when only the records change. */
  private statusDoc?: string;
  /** Copies Node topology labels onto stores and TiDB servers; only when the cluster may read Nodes. */
  private readonly topology?: TopologyLabeler;
  /** Claims the API server refused to grow, by component. */
  private volumeRefusals: Record<string, VolumeRefusal> = {};
  private volumeSizes: { read: number; sizes: VolumeSizes } = { read: -Infinity, sizes: {} };

  constructor(private readonly opts: ControllerOptions) {
    const c = opts.cluster;
    this.log = opts.log.with({ cluster: `${c.namespace}/${c.name}` });
    this.key = `${c.namespace}/${c.name}`;
    this.kube = new KubeAccess(c.namespace, c.name, this.log, opts.kubeconfig);
    const clients = opts.pdUrls.map((u) => new PdClient(u, opts.pdTls));
    for (const client of clients) client.onRequest = (outcome) => this.metrics.inc('tidb_gitops_pd_requests_total', { outcome });
    this.pd = clients[0];
    this.kube.onRequest = (verb, code) => this.metrics.inc('tidb_gitops_kube_requests_total', { verb: verb.split(' ')[0], code: String(code) });
    this.elector = new LeaderElector(this.kube, names.lease(c.name), opts.identity, opts.election, this.log, (leading) => {
      this.metrics.set('tidb_gitops_leader', {}, leading ? 1 : 0);
      if (leading) {
        this.restored = false;
        this.queue.add(this.key);
      } else if (!this.stopping) {
        // Another replica may act now: stop at once, and start afresh as a candidate.
        this.log.error('leadership lost; exiting so that a fresh process campaigns again');
        void this.stop().then(() => process.exit(1));
      }
    });
    this.discovery = new Discovery({
      cluster: c,
      pods: () => this.kube.pods(),
      pdReplicas: () => {
        const sts = this.kube.statefulSets().find((s) => s.metadata.name === names.statefulSet(c.name, 'pd'));
        return sts && desiredReplicas(sts);
      },
      pdStatefulSet: () => {
        const sts = this.kube.statefulSets().find((s) => s.metadata.name === names.statefulSet(c.name, 'pd'));
        return sts && { uid: sts.metadata.uid, replicas: sts.spec?.replicas };
      },
      pdClients: clients,
      checkSource: opts.checkSource,
      note: (kind, message, pod) => {
        this.log.info(message, { discovery: kind, pod });
        if (kind !== 'join') void this.event(pod, kind === 'bootstrap' ? 'Normal' : 'Warning', kind === 'bootstrap' ? 'PDBootstrap' : 'PDStaleMember', message);
      },
    });
    if (c.readsNodes) {
      this.topology = new TopologyLabeler({
        cluster: c,
        pd: this.pd,
        tls: opts.pdTls,
        nodeLabels: (name) => this.kube.nodeLabels(name),
        warn: (pod, reason, message) => this.event(pod, 'Warning', reason, message),
        info: (message, fields) => this.log.info(message, fields),
      });
    }
    this.declareMetrics();
  }

  private declareMetrics(): void {
    const m = this.metrics;
    m.declare('tidb_gitops_leader', 'gauge', '1 while this replica holds the leader Lease.');
    m.declare('tidb_gitops_reconciles_total', 'counter', 'Reconcile passes, by result (idle, busy, error).');
    m.declare('tidb_gitops_reconcile_seconds_total', 'counter', 'Time spent in reconcile passes.');
    m.declare('tidb_gitops_actions_total', 'counter', 'Actions taken, by component and action.');
    m.declare('tidb_gitops_action_errors_total', 'counter', 'Actions that failed, by component and action.');
    m.declare('tidb_gitops_discovery_requests_total', 'counter', 'Discovery requests, by path and HTTP status.');
    m.declare('tidb_gitops_pd_requests_total', 'counter', 'PD API requests, by outcome (HTTP status or error).');
    m.declare('tidb_gitops_kube_requests_total', 'counter', 'Kubernetes API requests made by the controller (informers excluded), by verb and code.');
    m.declare('tidb_gitops_component_phase', 'gauge', '1 for the phase each component is in.');
    m.declare('tidb_gitops_failures_recorded_total', 'counter', 'Failure records made (failed PD members, Down stores, unready TiDB Pods), by component.');
    m.declare('tidb_gitops_failover_replicas', 'gauge', 'Replicas running beyond the desired count because of failover, by component.');
    m.declare('tidb_gitops_failover_replicas_added_total', 'counter', 'Replicas added because of failover, by component.');
    m.declare('tidb_gitops_configmaps_deleted_total', 'counter', 'Old config revisions (hash-named ConfigMaps) deleted once no Pod or revision used them, by component.');
    m.declare('process_resident_memory_bytes', 'gauge', 'Resident memory size in bytes.');
  }

  /** Ports actually bound (useful when 0 was asked for). */
  readonly ports = { discovery: 0, metrics: 0 };

  async start(): Promise<void> {
    const { opts } = this;
    this.ports.metrics = await this.listen(http.createServer(SERVER_LIMITS, (req, res) => this.serveMetrics(req, res)), opts.metricsPort);
    const discoveryHandler = (req: http.IncomingMessage, res: http.ServerResponse) => void this.serveDiscovery(req, res);
    const discoveryServer = opts.discoveryTls
      ? https.createServer({ ...SERVER_LIMITS, ...opts.discoveryTls, requestCert: true, rejectUnauthorized: true }, discoveryHandler)
      : http.createServer(SERVER_LIMITS, discoveryHandler);
    this.ports.discovery = await this.listen(discoveryServer, opts.discoveryPort);
    await this.kube.startInformers(() => this.queue.add(this.key));
    this.elector.start();
    this.worker = this.work();
    this.log.info('controller started', { identity: opts.identity, discoveryPort: this.ports.discovery, metricsPort: this.ports.metrics, pd: this.pd.baseUrl });
  }

  private listen(server: http.Server | https.Server, port: number): Promise<number> {
    this.servers.push(server);
    server.maxHeadersCount = 50;
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, this.opts.host, () => resolve((server.address() as AddressInfo).port));
    });
  }

  /** Stops acting, hands back the Lease, closes the servers. */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.queue.shutDown();
    await this.worker?.catch(() => {});
    await this.elector.stop();
    await this.kube.stop();
    await Promise.all(this.servers.map((s) => new Promise((r) => s.close(() => r(undefined)))));
    for (const s of this.servers) (s as http.Server).closeAllConnections?.();
    this.log.info('controller stopped');
  }

  private async work(): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      const started = process.hrtime.bigint();
      try {
        const busy = await this.reconcile();
        this.queue.forget(key);
        this.metrics.inc('tidb_gitops_reconciles_total', { result: busy === undefined ? 'skipped' : busy ? 'busy' : 'idle' });
        if (busy !== undefined) this.queue.addAfter(key, busy ? this.nextBusyDelay() : this.opts.resyncMs);
      } catch (err) {
        this.metrics.inc('tidb_gitops_reconciles_total', { result: 'error' });
        this.log.error('reconcile failed', { error: describe(err) });
        this.queue.addRateLimited(key);
      } finally {
        this.metrics.inc('tidb_gitops_reconcile_seconds_total', {}, Number(process.hrtime.bigint() - started) / 1e9);
        this.queue.done(key);
      }
    }
  }

  private nextBusyDelay(): number {
    this.busyDelay = this.actedThisPass ? FIRST_BUSY_DELAY_MS : Math.min(this.busyDelay * 2, this.opts.busyRequeueMs);
    return Math.min(this.busyDelay, this.opts.busyRequeueMs);
  }

  /** One pass; returns whether an operation is under way, or undefined when nothing could be done. */
  private async reconcile(): Promise<boolean | undefined> {
    if (!this.elector.isLeader || !this.kube.synced() || this.stopping) return undefined;
    const c = this.opts.cluster;
    const statusName = names.status(c.name);
    if (!this.restored) {
      const data = await this.kube.getConfigMapData(statusName);
      const doc = parseStatus(data?.[STATUS_KEY]);
      this.lastOps = lastOperationsOf(doc);
      this.failover = failoverOf(doc);
      this.evictions = evictionsOf(doc);
      this.ddlPause = ddlPauseOf(doc);
      this.recreates = recreateRecordsOf(data);
      this.statusDoc = data?.[STATUS_KEY];
      this.restored = true;
    }
    if (await this.finishRecreates()) return true;
    const volumeSizes = await this.readVolumeSizes();
    const allPods = this.kube.pods();
    const components: ComponentState[] = [];
    for (const kind of c.components) {
      const sts = this.kube.statefulSets().find((s) => s.metadata.name === names.statefulSet(c.name, kind));
      if (!sts) continue;
      const pods = allPods.filter((p) => p.metadata.labels?.[LABEL.component] === kind);
      components.push({ kind, sts, pods });
    }
    const storeKinds = components.filter((x) => x.kind === 'tikv' || x.kind === 'tiflash');
    const msServices = components.map((x) => x.kind).filter(isMsService);
    const needsPd = storeKinds.length > 0 || msServices.length > 0 || components.some((x) => x.kind === 'pd');
    // Tombstones and max-replicas matter only while a store component has more replicas than it should.
    const scalingIn = storeKinds.some((x) => (x.sts.spec?.replicas ?? 1) > (targetReplicas({ failover: this.failover }, x) ?? Infinity));
    const pd = needsPd ? await this.readPd(storeKinds.length > 0, scalingIn, msServices) : undefined;
    const probes = await this.probe(components, pd);
    const now = Date.now();
    const options = { autoFailover: this.opts.autoFailover, failoverPeriodMs: this.opts.failoverPeriodMs, resyncMs: this.opts.resyncMs, newFailoverUid: randomUUID() };
    const base = { cluster: c, components, pd, now, volumes: this.kube.volumes(), options, probes, evictions: this.evictions, volumeSizes, volumeRefusals: this.volumeRefusals, ddlPause: this.ddlPause };
    this.failover = { ...this.failover, unhealthySince: trackHealth(this.failover.unhealthySince, { ...base, failover: this.failover }) };
    const plans = plan({ ...base, failover: this.failover });

    let busy = false;
    this.actedThisPass = false;
    for (const p of plans) {
      busy ||= p.busy;
      for (const phase of ['Normal', 'Upgrading', 'Scaling', 'Failover']) {
        this.metrics.set('tidb_gitops_component_phase', { component: p.kind, phase }, p.phase === phase ? 1 : 0);
      }
      this.metrics.set('tidb_gitops_failover_replicas', { component: p.kind }, extraReplicas(p.kind, this.failover));
      if (!p.action) {
        // A refusal or warning without an action is reported once, not on every pass.
        if (p.event && this.standingEvents.get(p.kind) !== p.event.message) {
          await this.event(p.event.pod ?? names.statefulSet(c.name, p.kind), p.event.type, p.event.reason, p.event.message, p.event.pod === undefined);
        }
        this.standingEvents.set(p.kind, p.event?.message ?? '');
        continue;
      }
      this.standingEvents.delete(p.kind);
      if (!this.elector.isLeader || this.stopping) return undefined;
      const done = await this.execute(p, p.action, allPods, now, () => this.writeStatus(components, plans, pd));
      this.actedThisPass ||= done;
      if (done && p.event) {
        await this.event(p.event.pod ?? names.statefulSet(c.name, p.kind), p.event.type, p.event.reason, p.event.message, p.event.pod === undefined);
      }
      if (done && (p.action.type !== 'apply' || p.event)) {
        this.lastOps.set(p.kind, { action: p.event?.reason ?? p.action.type, reason: p.reason, pod: p.event?.pod, time: rfc3339(now) });
      }
      if (done && p.action.type === 'apply' && p.phase === 'Failover' && p.action.replicas > this.replicasBefore(components, p.kind)) {
        this.metrics.inc('tidb_gitops_failover_replicas_added_total', { component: p.kind });
      }
    }
    if (this.topology && this.elector.isLeader && !this.stopping) {
      const settings = (kind: ComponentKind) => {
        const sts = components.find((x) => x.kind === kind)?.sts;
        return sts ? settingsOf(sts) : {};
      };
      const storeLabels = settings('tikv').storeLabels;
      const serverLabels = settings('tidb').serverLabels;
      await this.topology.pass({
        pods: allPods,
        stores: pd && !('error' in pd) && pd.storesError === undefined && pd.bootstrapped !== false ? pd.stores : undefined,
        storeLabels: Array.isArray(storeLabels) ? storeLabels.filter((k): k is string => typeof k === 'string') : [],
        serverLabels: typeof serverLabels === 'object' && serverLabels !== null && !Array.isArray(serverLabels) ? (serverLabels as Record<string, string>) : {},
        now,
      });
    }
    await this.publishHealth(components, plans);
    await this.writeStatus(components, plans, pd);
    if (!busy) await this.collectConfigs(now);
    this.metrics.set('process_resident_memory_bytes', {}, process.memoryUsage().rss);
    return busy;
  }

  /**
   * Tells the Argo CD and Flux health checks what only the controller knows, on the StatefulSet itself:
   * the failover replicas it added (so they are not read as a pending scale-in) and a refusal to
   * scale in (so a refused scale-in is not healthy). Written only when they change.
   */
  private async publishHealth(components: readonly ComponentState[], plans: readonly ComponentPlan[]): Promise<void> {
    for (const p of plans) {
      const sts = components.find((x) => x.kind === p.kind)?.sts;
      if (!sts || this.stopping || !this.elector.isLeader) continue;
      const extra = extraReplicas(p.kind, this.failover);
      const want: Record<string, string | null> = {
        [ANNOTATION.failoverReplicas]: extra > 0 ? String(extra) : null,
        [ANNOTATION.refused]: p.event && REFUSALS.has(p.event.reason) ? p.reason : null,
      };
      const have = sts.metadata.annotations ?? {};
      const patch = Object.fromEntries(Object.entries(want).filter(([k, v]) => (have[k] ?? null) !== v));
      if (Object.keys(patch).length === 0) continue;
      try {
        await this.kube.annotateStatefulSet(sts.metadata.name!, patch);
      } catch (e) {
        this.log.with({ component: p.kind }).warn(`cannot annotate the StatefulSet for the health checks: ${(e as Error).message}`);
      }
    }
  }

  /**
   * Deletes the config revisions nothing needs any more (see configmaps.ts). It lists ConfigMaps only
   * when a StatefulSet's spec or revisions moved since the last look, or when a kept one's grace
   * period ends, so an idle cluster costs no requests.
   */
  private async collectConfigs(now: number): Promise<void> {
    const statefulSets = this.kube.statefulSets();
    const fingerprint = JSON.stringify(
      statefulSets.map((s) => [s.metadata.name, s.metadata.generation, s.status?.observedGeneration, s.status?.currentRevision, s.status?.updateRevision]).sort(),
    );
    if (fingerprint === this.configFingerprint && !(this.configRecheckAt !== undefined && now >= this.configRecheckAt)) return;
    const result = staleConfigMaps({
      cluster: this.opts.cluster,
      statefulSets,
      pods: this.kube.pods(),
      configMaps: await this.kube.listConfigMaps(),
      now,
      graceMs: this.opts.configGraceMs,
    });
    for (const cm of result.stale) {
      const name = cm.metadata.name!;
      if (!this.elector.isLeader || this.stopping) return;
      if (!(await this.kube.deleteConfigMap(name, cm.metadata.uid, cm.metadata.resourceVersion))) continue;
      const kind = cm.metadata.labels?.[LABEL.component] ?? '';
      this.log.info('deleted an old config revision', { configMap: name, component: kind });
      this.metrics.inc('tidb_gitops_configmaps_deleted_total', { component: kind });
      const sts = COMPONENTS.includes(kind as ComponentKind) ? names.statefulSet(this.opts.cluster.name, kind as ComponentKind) : undefined;
      if (sts && statefulSets.some((s) => s.metadata.name === sts)) {
        await this.event(sts, 'Normal', 'ConfigMapDeleted', `Deleted ConfigMap ${name}: no Pod, StatefulSet revision or current spec uses it`, true);
      }
    }
    // A rollout under way is looked at again when it ends, which changes the fingerprint; a revision
    // kept for its grace period, on the first idle pass after the period.
    this.configFingerprint = fingerprint;
    this.configRecheckAt = result.recheckAt;
  }

  private replicasBefore(components: readonly ComponentState[], kind: ComponentKind): number {
    return components.find((x) => x.kind === kind)?.sts.spec?.replicas ?? 1;
  }

  /** Writes the status ConfigMap when its content changed. */
  private async writeStatus(components: readonly ComponentState[], plans: readonly ComponentPlan[], pd: PdState | { error: string } | undefined): Promise<void> {
    const c = this.opts.cluster;
    const status: ClusterStatus = buildStatus(c.name, components, plans, pd, this.lastOps, this.failover, this.evictions);
    const doc = { ...status, ...(this.ddlPause && { smoothUpgrade: this.ddlPause }), ...(this.topology && { topology: this.topology.current() }) };
    await this.persistStatus(JSON.stringify(doc, null, 2));
  }

  /** Writes the status document and the re-creation records, when either changed. */
  private async persistStatus(status: string): Promise<void> {
    const c = this.opts.cluster;
    this.statusDoc = status;
    const records = Object.fromEntries([...this.recreates].map(([kind, r]) => [recreateKey(kind), JSON.stringify(r)]));
    const content = JSON.stringify([status, records]);
    if (content === this.lastStatus) return;
    await this.kube.applyConfigMap(names.status(c.name), selectorLabels(c.name, 'discovery'), { [STATUS_KEY]: status, ...records });
    this.lastStatus = content;
  }

  /** PD's view (`readPdCore`), with its micro-services' registry when the cluster runs them. */
  private async readPd(stores: boolean, scalingIn: boolean, msServices: readonly MsService[]): Promise<PdState | { error: string }> {
    const [pd, ms] = await Promise.all([this.readPdCore(stores, scalingIn), msServices.length > 0 ? this.readMs(msServices) : undefined]);
    return 'error' in pd || ms === undefined ? pd : { ...pd, ms };
  }

  /** PD's registry of its micro-services: each one's servers and primary, or why they could not be read. */
  private async readMs(services: readonly MsService[]): Promise<NonNullable<PdState['ms']>> {
    const out: Partial<Record<MsService, MsState>> = {};
    await Promise.all(
      services.map(async (service) => {
        out[service] = await Promise.all([this.pd.msMembers(service), this.pd.msPrimary(service)])
          .then(([members, primary]) => ({ members, primary }))
          .catch((e: Error) => ({ error: e.message }));
      }),
    );
    return out;
  }

  /**
   * PD's view. Members, health and leader answer as soon as PD runs; stores and schedulers only once
   * TiKV has bootstrapped the cluster (until then PD answers 500 ErrNotBootstrapped, which means no
   * stores yet), so the two are read and judged apart: PD upgrades and failover need not wait on TiKV.
   */
  private async readPdCore(stores: boolean, scalingIn: boolean): Promise<PdState | { error: string }> {
    const storesPart = stores
      ? Promise.all([
          this.pd.stores(),
          this.pd.evictingStores(),
          scalingIn ? this.pd.tombstones() : Promise.resolve(undefined),
          scalingIn ? this.pd.maxReplicas() : Promise.resolve(undefined),
        ])
      : Promise.resolve([[], new Set<number>(), undefined, undefined] as const);
    const [membersPart, storesRead] = await Promise.allSettled([Promise.all([this.pd.health(), this.pd.leader()]), storesPart]);
    if (membersPart.status === 'rejected') return { error: (membersPart.reason as Error).message };
    const [members, leader] = membersPart.value;
    if (storesRead.status === 'fulfilled') {
      const [storeList, evicting, tombstones, maxReplicas] = storesRead.value;
      return { members, leader, stores: storeList, evicting, tombstones, maxReplicas };
    }
    const err = storesRead.reason as Error;
    if (err instanceof PdError && err.notBootstrapped) return { members, leader, stores: [], evicting: new Set(), tombstones: [], bootstrapped: false };
    return { members, leader, stores: [], evicting: new Set(), storesError: err.message };
  }

  /**
   * Asks the servers the planner will ask about (see `probesWanted`): each upgraded PD member's
   * `/pd/api/v2/ready` at its own client URL, each upgraded TiFlash's `/tiflash/store-status`.
   */
  private async probe(components: readonly ComponentState[], pd: PdState | { error: string } | undefined): Promise<Probes> {
    const wanted = probesWanted(components);
    if (wanted.pdReady.length === 0 && wanted.tiflashStatus.length === 0 && wanted.tikvLeaders.length === 0) return {};
    const c = this.opts.cluster;
    const members = pd && !('error' in pd) ? pd.members : [];
    const pdReady: Record<string, ProbeResult> = {};
    const tiflashStatus: Record<string, ProbeResult> = {};
    const tikvLeaders: Record<string, LeaderProbe> = {};
    await Promise.all([
      ...wanted.pdReady.map(async (pod) => {
        const url = memberOfPod(members, pod)?.clientUrls[0];
        if (!url) return;
        pdReady[pod] = await this.pd
          .forMember(url)
          .ready()
          .then((ok) => ({ ok, detail: ok ? 'ready' : 'regions not loaded yet (HTTP 500)' }))
          .catch((e: Error) => ({ ok: false, detail: e.message }));
      }),
      ...wanted.tiflashStatus.map(async (pod) => {
        tiflashStatus[pod] = await tiflashStoreStatus(tiflashStatusUrl(c, pod), this.opts.pdTls);
      }),
      ...wanted.tikvLeaders.map(async (pod) => {
        tikvLeaders[pod] = await tikvLeaderCount(tikvMetricsUrl(c, pod), this.opts.pdTls)
          .then((count) => ({ count, detail: `${count} leaders` }))
          .catch((e: Error) => ({ detail: e.message }));
      }),
    ]);
    return { pdReady, tiflashStatus, tikvLeaders };
  }

  /**
   * Carries out one action; false when it failed (logged, retried on the next pass) or is still
   * under way. `persist` writes the status, where failure records must be before anything acts on them.
   */
  private async execute(p: ComponentPlan, action: Action, pods: readonly Pod[], now: number, persist: () => Promise<void>): Promise<boolean> {
    const c = this.opts.cluster;
    const log = this.log.with({ component: p.kind, action: action.type });
    try {
      switch (action.type) {
        case 'apply':
          await this.kube.applyStatefulSet(names.statefulSet(c.name, p.kind), action.replicas, action.partition);
          log.info(p.reason, { replicas: action.replicas, partition: action.partition });
          break;
        case 'transfer-primary': {
          // The old primary's lease is revoked at once and the new one is elected soon after: one
          // request per Pod in 5 s, or a slow election would be asked again.
          const key = `${action.service}/${action.pod}`;
          const last = this.transfers.get(key);
          if (last !== undefined && now - last < 5000) return false;
          this.transfers.set(key, now);
          try {
            await transferMsPrimary(action.primary, action.service, action.to, this.opts.pdTls);
          } catch (e) {
            // Refused (not unreachable): the server knows which members may lead, so let it choose.
            if (!(e instanceof PdError) || e.status === undefined || action.to === '') throw e;
            log.warn(`the ${action.service} primary refused ${action.to} (${e.message}); letting it choose another server`);
            await transferMsPrimary(action.primary, action.service, '', this.opts.pdTls);
          }
          log.info(p.reason, { from: action.pod, to: action.to || '(any)' });
          break;
        }
        case 'transfer-leader': {
          const last = this.transfers.get(action.pod);
          if (last !== undefined && now - last < 5000) return false;
          await this.pd.transferLeader(action.to);
          this.transfers.set(action.pod, now);
          log.info(p.reason, { from: action.from, to: action.to });
          break;
        }
        case 'evict-begin': {
          // The record comes first: a crash after PD added the scheduler must not leave it unowned.
          if (action.record) await this.setEvictions({ ...this.evictions, [String(action.storeId)]: action.record }, persist);
          await this.pd.addEvictLeader(action.storeId);
          // When PD took the scheduler, not when the pass began: evictLeaderTimeout counts from here. A
          // fresh eviction (no scheduler, none recorded) replaces a begin time an earlier one left.
          const pod = pods.find((x) => x.metadata.name === action.pod);
          if (action.annotation && (action.record || !pod?.metadata.annotations?.[action.annotation])) await this.kube.annotatePod(action.pod, { [action.annotation]: rfc3339(Date.now()) });
          log.info(p.reason, { pod: action.pod, store: action.storeId });
          break;
        }
        case 'evict-end': {
          if (action.remove) {
            await this.pd.removeEvictLeader(action.storeId);
            await this.setEvictions(withoutKeys(this.evictions, [String(action.storeId)]), persist);
          }
          const pod = pods.find((x) => x.metadata.name === action.pod);
          if (!pod?.metadata.annotations?.[EVICT_END_ANNOTATION]) await this.kube.annotatePod(action.pod, { [EVICT_END_ANNOTATION]: rfc3339(now) });
          log.info(p.reason, { pod: action.pod, store: action.storeId });
          break;
        }
        case 'evict-cleanup':
          for (const id of action.storeIds) await this.pd.removeEvictLeader(id);
          await this.setEvictions(withoutKeys(this.evictions, action.storeIds.map(String)), persist);
          log.info(p.reason, { stores: action.storeIds });
          break;
        case 'resize-volumes':
          for (const v of action.volumes) {
            try {
              await this.kube.resizeVolume(v.name, v.uid, v.size);
            } catch (e) {
              // The API server's word is final until Git or the cluster changes: no expansion in the
              // claim's StorageClass, a claim not bound, a quota. Shown as a refusal, not retried.
              const code = (e as { code?: number }).code;
              if (code !== 403 && code !== 422) throw e;
              const sizes = JSON.stringify(this.volumeSizes.sizes[p.kind]);
              const message = `the API server refused to grow ${v.name} to ${v.size}: ${(e as Error).message.replace(/^resize pvc \S+: /, '')}`;
              this.volumeRefusals = { ...this.volumeRefusals, [p.kind]: { message, sizes } };
              throw e;
            }
          }
          log.info(p.reason, { volumes: action.volumes.map((v) => `${v.name}=${v.size}`) });
          break;
        case 'recreate': {
          const name = names.statefulSet(c.name, p.kind);
          const live = await this.kube.readStatefulSet(name);
          const cached = this.kube.statefulSets().find((s) => s.metadata.name === name);
          if (!live || live.metadata?.uid !== cached?.metadata.uid || live.metadata?.deletionTimestamp) return false;
          // The record first: a controller that dies after the delete creates the StatefulSet from it.
          const record = recreateRecord(live, action.sizes);
          await this.setRecreate(p.kind, record, persist);
          await this.kube.deleteStatefulSetOrphan(name, record.uid);
          log.info(p.reason, { statefulSet: name, sizes: action.sizes });
          break;
        }
        case 'delete-volumes':
          for (const v of action.volumes) await this.kube.deleteIfSame('pvc', v.name, v.uid);
          log.info(p.reason, { volumes: action.volumes.map((v) => v.name) });
          break;
        case 'mark-volumes':
          for (const v of action.volumes) await this.kube.annotateVolume(v, { [DEFER_DELETING_ANNOTATION]: rfc3339(now) });
          log.info(p.reason, { volumes: action.volumes });
          break;
        case 'delete-member':
          await this.pd.deleteMemberByName(action.member);
          log.info(p.reason, { member: action.member });
          break;
        case 'delete-store':
          await this.pd.deleteStore(action.storeId);
          log.info(p.reason, { store: action.storeId });
          break;
        case 'retire':
          if (!(await this.retire(action, pods, now, log))) return false;
          break;
        case 'drain-capture':
          if (!(await this.drainForUpgrade(action, pods, now, log))) return false;
          break;
        case 'flush-log-backup': {
          const outcome = await flushLogBackup(tikvGrpcTarget(c, action.pod), this.opts.pdTls);
          if (!outcome.ok) {
            log.warn(`${p.reason}: ${outcome.detail}; restarting it anyway`, { pod: action.pod, store: action.storeId });
            await this.event(action.pod, 'Warning', 'FailedLogBackupFlush', `log backup did not flush on store ${action.storeId}: ${outcome.detail}; restarting ${action.pod} anyway`);
          } else {
            log.info(`${p.reason}: ${outcome.detail}`, { pod: action.pod, store: action.storeId, tasks: outcome.tasks });
          }
          await this.kube.annotatePod(action.pod, { [LOG_BACKUP_FLUSHED_ANNOTATION]: action.revision });
          break;
        }
        case 'ddl-pause': {
          // Recorded first: a controller that dies once TiDB paused DDL must find the record to resume it.
          const since = this.ddlPause?.since ?? rfc3339(now);
          await this.setDdlPause({ source: action.source, target: action.target, state: 'starting', since }, persist);
          await tidbUpgradeOp(tidbStatusBase(c, action.pod), 'start', this.opts.pdTls);
          await this.setDdlPause({ source: action.source, target: action.target, state: 'paused', since }, persist);
          log.info(p.reason, { pod: action.pod });
          break;
        }
        case 'ddl-resume':
          await tidbUpgradeOp(tidbStatusBase(c, action.pod), 'finish', this.opts.pdTls);
          await this.setDdlPause(undefined, persist);
          log.info(p.reason, { pod: action.pod, stale: action.stale });
          break;
        case 'delete-pod':
          await this.kube.deleteIfSame('pod', action.pod, action.uid);
          log.info(p.reason, { pod: action.pod, store: action.storeId });
          break;
        case 'clear-marks':
          for (const m of action.marks) await this.kube.annotatePod(m.pod, Object.fromEntries(m.keys.map((k) => [k, null])));
          log.info(p.reason, { pods: action.marks.map((m) => m.pod) });
          break;
        case 'failover-set':
          await this.setFailover(p.kind, action.failover, persist);
          log.info(p.reason, { records: Object.keys(action.failover?.records ?? {}) });
          break;
        case 'failover-delete': {
          // Claims before their Pod (see failover.ts); the planner marks the record once all are gone.
          const r = action.record;
          // The next pass may come before the caches show the deletes: wait for them rather than
          // deleting, and announcing, the same member again. After a while, try again.
          const issued = r.podUid === undefined ? undefined : this.failoverDeletes.get(r.podUid);
          if (issued !== undefined && now - issued < FAILOVER_DELETE_PATIENCE_MS) return false;
          for (const [uid, at] of this.failoverDeletes) if (now - at >= FAILOVER_DELETE_PATIENCE_MS) this.failoverDeletes.delete(uid);
          if (r.podUid !== undefined) this.failoverDeletes.set(r.podUid, now);
          if (r.memberId) await this.pd.deleteMemberById(r.memberId);
          for (const v of r.volumes ?? []) await this.kube.deleteIfSame('pvc', v.name, v.uid);
          await this.kube.deleteIfSame('pod', r.pod, r.podUid);
          log.warn(p.reason, { member: action.key, pod: r.pod, volumes: (r.volumes ?? []).map((v) => v.name) });
          break;
        }
      }
      this.metrics.inc('tidb_gitops_actions_total', { component: p.kind, action: action.type });
      return true;
    } catch (err) {
      this.metrics.inc('tidb_gitops_action_errors_total', { component: p.kind, action: action.type });
      log.warn('action failed; it is tried again on the next pass', { error: describe(err) });
      return false;
    }
  }

  /** Replaces a component's failure records and stores them; on a failed write the old records stay. */
  private async setFailover(kind: ComponentKind, next: FailoverState['components'][FailoverKind], persist: () => Promise<void>): Promise<void> {
    const previous = this.failover;
    const before = Object.keys(previous.components[kind as FailoverKind]?.records ?? {}).length;
    const components = { ...previous.components };
    if (next) components[kind as FailoverKind] = next;
    else delete components[kind as FailoverKind];
    this.failover = { ...previous, components };
    await this.persistOrUndo(persist, () => (this.failover = previous));
    const added = Object.keys(next?.records ?? {}).length - before;
    if (added > 0) this.metrics.inc('tidb_gitops_failures_recorded_total', { component: kind }, added);
  }

  /** Adds (or, undefined, removes) a re-creation record and stores it; on a failed write the old records stay. */
  private async setRecreate(kind: string, record: RecreateRecord | undefined, persist: () => Promise<void>): Promise<void> {
    const previous = this.recreates;
    const next = new Map(previous);
    if (record) next.set(kind, record);
    else next.delete(kind);
    this.recreates = next;
    await this.persistOrUndo(persist, () => (this.recreates = previous));
  }

  /**
   * Writes the status after an in-memory change to a record it keeps (read back when the controller
   * starts); when the write fails, `undo` puts the old value back, so memory never claims what the
   * cluster does not hold.
   */
  private async persistOrUndo(persist: () => Promise<void>, undo: () => void): Promise<void> {
    try {
      await persist();
    } catch (err) {
      undo();
      throw err;
    }
  }

  /** Replaces the eviction records and stores them. */
  private async setEvictions(next: Record<string, EvictionRecord>, persist: () => Promise<void>): Promise<void> {
    const previous = this.evictions;
    this.evictions = next;
    await this.persistOrUndo(persist, () => (this.evictions = previous));
  }

  /** Replaces (or, undefined, removes) the DDL pause record and stores it. */
  private async setDdlPause(next: DdlPauseRecord | undefined, persist: () => Promise<void>): Promise<void> {
    const previous = this.ddlPause;
    this.ddlPause = next;
    await this.persistOrUndo(persist, () => (this.ddlPause = previous));
  }

  /**
   * Carries on with the StatefulSets being re-created: deletes (Pods orphaned) one whose record was
   * written but whose delete did not happen, creates one that is gone, and forgets the record once a
   * new StatefulSet of that name exists. True while one is still on its way.
   */
  private async finishRecreates(): Promise<boolean> {
    if (this.recreates.size === 0) return false;
    const persist = () => this.persistStatus(this.statusDoc ?? '{}');
    let pending = false;
    for (const [kind, record] of this.recreates) {
      const name = record.object.metadata.name as string;
      const log = this.log.with({ component: kind, statefulSet: name });
      const live = await this.kube.readStatefulSet(name);
      if (live && live.metadata?.uid !== record.uid) {
        await this.setRecreate(kind, undefined, persist);
        log.info('the StatefulSet is re-created with its new volume claim templates');
        continue;
      }
      pending = true;
      if (live && !live.metadata?.deletionTimestamp) {
        await this.kube.deleteStatefulSetOrphan(name, record.uid);
        continue;
      }
      if (live) continue; // The garbage collector is orphaning its Pods and revisions.
      const uid = await this.kube.createStatefulSet(record.object);
      if (uid) {
        await this.kube.setManagedFields(name, uid, record.managedFields).catch((e: Error) => log.warn(`cannot give the field owners back: ${e.message}`));
        await this.event(name, 'Normal', 'VolumeTemplatesUpdated', `${name}: created again with its new volume claim templates; its Pods are adopted, none restarted`, true);
        log.info('StatefulSet created again; its Pods are adopted');
      }
    }
    return pending;
  }

  /** The sizes in the volume sizes ConfigMap, read at most every few seconds; {} when it is missing or bad. */
  private async readVolumeSizes(): Promise<VolumeSizes> {
    const now = Date.now();
    if (now - this.volumeSizes.read < VOLUME_SIZES_EVERY_MS) return this.volumeSizes.sizes;
    const name = names.volumeSizes(this.opts.cluster.name);
    let sizes: VolumeSizes = {};
    try {
      sizes = parseVolumeSizes((await this.kube.getConfigMapData(name))?.[VOLUME_SIZES_KEY]);
    } catch (e) {
      this.log.warn(`ConfigMap ${name}: ${VOLUME_SIZES_KEY}: ${(e as Error).message}; volumes are left as they are`);
    }
    // A refusal stands for the sizes it refused; new sizes from Git are tried again.
    this.volumeRefusals = Object.fromEntries(Object.entries(this.volumeRefusals).filter(([k, r]) => r.sizes === JSON.stringify(sizes[k])));
    this.volumeSizes = { read: now, sizes };
    return sizes;
  }

  /**
   * One step of retiring a TiCDC capture or Pump node; true when it is done and the Pod is marked
   * so. A step still under way is not a failure: false, and the next pass asks again.
   */
  private async retire(action: Extract<Action, { type: 'retire' }>, pods: readonly Pod[], now: number, log: Logger): Promise<boolean> {
    const c = this.opts.cluster;
    const podName = action.pod;
    const scheme = c.tls ? 'https' : 'http';
    let outcome: { done: boolean; detail: string };
    if (action.how === 'ticdc') {
      const pod = pods.find((x) => x.metadata.name === podName);
      if (!pod?.metadata.annotations?.[TICDC_SHUTDOWN_BEGIN_ANNOTATION]) await this.kube.annotatePod(podName, { [TICDC_SHUTDOWN_BEGIN_ANNOTATION]: rfc3339(now) });
      const host = captureAddressPrefix(c, podName);
      outcome = await drainCapture(`${scheme}://${host}:${PORT.ticdc}`, { tls: this.opts.pdTls, captureAddress: host });
    } else {
      const peer = names.peerService(c.name, 'pump');
      const advertised = `${podName}.${peer}${names.pumpAdvertiseZone(c.namespace, c.clusterDomain, c.acrossK8s)}:${PORT.pump}`;
      const base = (name: string) => `${scheme}://${name}.${peer}.${c.namespace}.svc${c.clusterDomain ? `.${c.clusterDomain}` : ''}:${PORT.pump}`;
      const peers = pods.map((x) => x.metadata.name!).filter((n) => n !== podName && n.startsWith(`${names.statefulSet(c.name, 'pump')}-`));
      outcome = await takePumpOffline(base(podName), [podName, ...peers].map(base), advertised, { tls: this.opts.pdTls, unregisteredIsDone: action.unregisteredIsDone });
    }
    log.info(outcome.detail, { pod: podName, done: outcome.done });
    if (!outcome.done) return false;
    await this.kube.annotatePod(podName, { [RETIRED_ANNOTATION]: rfc3339(now) });
    return true;
  }

  /**
   * One step of draining a TiCDC capture before its Pod restarts in an upgrade (see the `drain-capture`
   * action): the begin time on the Pod first, then the version check, the drain, and the resign of the
   * next Pod's ownership; the Pod is annotated once all are done.
   */
  private async drainForUpgrade(action: Extract<Action, { type: 'drain-capture' }>, pods: readonly Pod[], now: number, log: Logger): Promise<boolean> {
    const c = this.opts.cluster;
    const scheme = c.tls ? 'https' : 'http';
    const pod = pods.find((x) => x.metadata.name === action.pod);
    if (!pod?.metadata.annotations?.[TICDC_SHUTDOWN_BEGIN_ANNOTATION]) await this.kube.annotatePod(action.pod, { [TICDC_SHUTDOWN_BEGIN_ANNOTATION]: rfc3339(now) });
    const host = captureAddressPrefix(c, action.pod);
    const base = `${scheme}://${host}:${PORT.ticdc}`;
    const opts = { tls: this.opts.pdTls };
    const running = await captureVersion(base, opts);
    if (!gracefulUpgradeSupported(running, action.targetVersion)) {
      log.info(`the capture of ${action.pod} runs ${running ?? 'a version without /api/v1/status'} and cannot hand its tables over to ${action.targetVersion}; restarting it without a drain`, { pod: action.pod });
    } else {
      const drained = await drainCapture(base, { ...opts, captureAddress: host });
      log.info(drained.detail, { pod: action.pod, done: drained.done });
      if (!drained.done) return false;
      if (action.next) {
        const nextHost = captureAddressPrefix(c, action.next);
        const moved = await resignOwnerOf(`${scheme}://${nextHost}:${PORT.ticdc}`, nextHost, opts);
        log.info(moved.detail, { pod: action.next, done: moved.done });
        if (!moved.done) return false;
      }
    }
    await this.kube.annotatePod(action.pod, { [TICDC_DRAINED_ANNOTATION]: rfc3339(now) });
    return true;
  }

  private async event(name: string, type: 'Normal' | 'Warning', reason: string, message: string, onStatefulSet = false): Promise<void> {
    const target = onStatefulSet
      ? { kind: 'StatefulSet' as const, name, uid: this.kube.statefulSets().find((s) => s.metadata.name === name)?.metadata.uid }
      : { kind: 'Pod' as const, name, uid: this.kube.pods().find((p) => p.metadata.name === name)?.metadata.uid };
    await this.kube.event(target, type, reason, message, Date.now());
  }

  private serveMetrics(req: http.IncomingMessage, res: http.ServerResponse): void {
    const path = (req.url ?? '/').split('?')[0];
    const send = (status: number, body: string, type = 'text/plain; charset=utf-8') => {
      res.writeHead(status, { 'content-type': type });
      res.end(body);
    };
    if (path === '/metrics') {
      this.metrics.set('process_resident_memory_bytes', {}, process.memoryUsage().rss);
      return send(200, this.metrics.render(), 'text/plain; version=0.0.4; charset=utf-8');
    }
    if (path === CONTROLLER_HTTP.live) return this.stopping ? send(503, 'stopping\n') : send(200, 'ok\n');
    if (path === CONTROLLER_HTTP.ready) {
      if (this.stopping) return send(503, 'stopping\n');
      if (!this.kube.synced()) return send(503, 'caches not synced\n');
      if (!this.elector.isLeader) return send(503, 'not the leader\n');
      return send(200, 'ok\n');
    }
    send(404, 'not found\n');
  }

  private async serveDiscovery(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0];
    let status: number;
    let body: string;
    if (!this.elector.isLeader || !this.kube.synced()) {
      [status, body] = [503, 'this replica is not serving discovery (not the leader, or caches not synced)\n'];
    } else {
      try {
        ({ status, body } = await this.discovery.handle(req.method ?? 'GET', req.url ?? '/', req.socket.remoteAddress));
      } catch (err) {
        [status, body] = [500, `${(err as Error).message}\n`];
      }
    }
    // Label values from a fixed set: a series per path anyone can send would grow without bound.
    const route = path.split('/')[1];
    this.metrics.inc('tidb_gitops_discovery_requests_total', { path: route === 'new' || route === 'verify' ? route : 'other', code: String(status) });
    const shown = path.length > 200 ? `${path.slice(0, 200)}...` : path;
    if (status >= 400) this.log.info('discovery request refused', { path: shown, status, reason: body.trim().slice(0, 500), remote: req.socket.remoteAddress });
    else this.log.info('discovery answered', { path: shown, answer: body });
    res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
    res.end(body);
  }
}
