/**
 * The companion controller of one cluster, wired: the Kubernetes informers, the work queue, the
 * leader Lease, the HTTP servers (PD discovery, metrics and health), and the reconciler that, while
 * this replica holds the Lease, reconciles the fields the controller owns step by step.
 */
import { names, type ComponentKind } from '../tidbcluster/names';
import { eventRecorder } from './clients/events';
import type { ClientTls } from './clients/http';
import { KubeAccess } from './clients/kube';
import { describe } from './clients/kube-errors';
import { PdClient } from './clients/pd';
import { Discovery } from './discovery/discovery';
import { StoppedWithLeadersLog } from './records/stopped-with-leaders';
import { discoveryHandler } from './discovery/serve';
import type { ClusterInfo } from './model/cluster';
import { desiredReplicas } from './model/settings';
import { Reconciler } from './reconcile/reconciler';
import { createServer, healthHandler, Servers } from './runtime/http-server';
import { LeaderElector, type ElectionTiming } from './runtime/leader';
import type { Logger } from './runtime/log';
import { Metrics } from './runtime/metrics';
import { WorkQueue } from './runtime/queue';

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
  /** How long an operation may wait on one reason before it is reported stuck (`--stuck-after`). @default 30000 */
  readonly stuckAfterMs?: number;
  readonly log: Logger;
}

/** The next pass after an action comes this soon. */
const FIRST_BUSY_DELAY_MS = 100;

export class Manager {
  readonly metrics = new Metrics();
  /** Ports actually bound (useful when 0 was asked for). */
  readonly ports = { discovery: 0, metrics: 0 };
  private readonly kube: KubeAccess;
  private readonly pd: PdClient;
  private readonly queue = new WorkQueue();
  private readonly elector: LeaderElector;
  private readonly discovery: Discovery;
  private readonly reconciler: Reconciler;
  private readonly servers = new Servers();
  private readonly log: Logger;
  private readonly key: string;
  private stopping = false;
  private worker?: Promise<void>;
  /** Delay before the next pass while an operation is under way: short after an action, growing while waiting. */
  private busyDelay = FIRST_BUSY_DELAY_MS;

  constructor(private readonly opts: ControllerOptions) {
    const c = opts.cluster;
    this.log = opts.log.with({ cluster: `${c.namespace}/${c.name}` });
    this.key = `${c.namespace}/${c.name}`;
    this.kube = new KubeAccess(c.namespace, c.name, this.log, opts.kubeconfig);
    const clients = opts.pdUrls.map((u) => new PdClient(u, opts.pdTls));
    for (const client of clients) client.onRequest = (outcome) => this.metrics.inc('tidb_gitops_pd_requests_total', { outcome });
    this.pd = clients[0];
    this.kube.onRequest = (verb, code) =>
      this.metrics.inc('tidb_gitops_kube_requests_total', { verb: verb.split(' ')[0], code: String(code) });
    const event = eventRecorder(this.kube);
    this.elector = new LeaderElector(this.kube, names.lease(c.name), opts.identity, opts.election, this.log, (leading) => {
      this.metrics.set('tidb_gitops_leader', {}, leading ? 1 : 0);
      if (leading) {
        this.reconciler.becameLeader();
        this.queue.add(this.key);
      } else if (!this.stopping) {
        // Another replica may act now: stop at once, and start afresh as a candidate.
        this.log.error('leadership lost; exiting so that a fresh process campaigns again');
        void this.stop().then(() => process.exit(1));
      }
    });
    const pdStatefulSet = () => this.kube.statefulSets().find((s) => s.metadata.name === names.statefulSet(c.name, 'pd'));
    const stoppedWithLeaders = new StoppedWithLeadersLog();
    this.discovery = new Discovery({
      cluster: c,
      pods: () => this.kube.pods(),
      pdReplicas: () => {
        const sts = pdStatefulSet();
        return sts && desiredReplicas(sts);
      },
      pdStatefulSet: () => {
        const sts = pdStatefulSet();
        return sts && { uid: sts.metadata.uid, replicas: sts.spec?.replicas };
      },
      pdClients: clients,
      checkSource: opts.checkSource,
      tls: opts.pdTls,
      note: (kind, message, pod) => {
        this.log.info(message, { discovery: kind, pod });
        if (kind !== 'join')
          void event(pod, kind === 'bootstrap' ? 'Normal' : 'Warning', kind === 'bootstrap' ? 'PDBootstrap' : 'PDStaleMember', message);
      },
      stoppedWithLeaders: (entry) => {
        stoppedWithLeaders.add(entry);
        this.log.warn(entry.message, { pod: entry.pod, store: entry.store, leaders: entry.leaders });
        void event(entry.pod, 'Warning', 'StoppedWithLeaders', entry.message);
        // The status document lists it on the next pass.
        this.queue.add(this.key);
      },
    });
    this.reconciler = new Reconciler({
      cluster: c,
      kube: this.kube,
      pd: this.pd,
      tls: opts.pdTls,
      options: {
        autoFailover: opts.autoFailover,
        failoverPeriodMs: opts.failoverPeriodMs,
        resyncMs: opts.resyncMs,
        configGraceMs: opts.configGraceMs,
        stuckAfterMs: opts.stuckAfterMs,
      },
      metrics: this.metrics,
      log: this.log,
      event,
      acting: () => this.elector.isLeader && !this.stopping,
      stoppedWithLeaders: () => stoppedWithLeaders.list(),
    });
    declareMetrics(this.metrics);
  }

  async start(): Promise<void> {
    const { opts } = this;
    const health = healthHandler({
      metrics: this.metrics,
      stopping: () => this.stopping,
      notReady: () => (!this.kube.synced() ? 'caches not synced' : !this.elector.isLeader ? 'not the leader' : undefined),
    });
    this.ports.metrics = await this.servers.listen(createServer(health), opts.metricsPort, opts.host);
    const discovery = discoveryHandler({
      discovery: this.discovery,
      serving: () => this.elector.isLeader && this.kube.synced(),
      metrics: this.metrics,
      log: this.log,
    });
    this.ports.discovery = await this.servers.listen(createServer(discovery, opts.discoveryTls), opts.discoveryPort, opts.host);
    await this.kube.startInformers(() => this.queue.add(this.key));
    this.elector.start();
    this.worker = this.work();
    this.log.info('controller started', {
      identity: opts.identity,
      discoveryPort: this.ports.discovery,
      metricsPort: this.ports.metrics,
      pd: this.pd.baseUrl,
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
    await this.servers.close();
    this.log.info('controller stopped');
  }

  /** The worker: one pass per key taken from the queue, requeued by what the pass found. */
  private async work(): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      const started = process.hrtime.bigint();
      try {
        const pass = await this.reconciler.reconcile();
        this.queue.forget(key);
        this.metrics.inc('tidb_gitops_reconciles_total', { result: pass === undefined ? 'skipped' : pass.busy ? 'busy' : 'idle' });
        if (pass !== undefined) this.queue.addAfter(key, pass.busy ? this.nextBusyDelay(pass.acted) : this.opts.resyncMs);
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

  private nextBusyDelay(acted: boolean): number {
    this.busyDelay = acted ? FIRST_BUSY_DELAY_MS : Math.min(this.busyDelay * 2, this.opts.busyRequeueMs);
    return Math.min(this.busyDelay, this.opts.busyRequeueMs);
  }
}

function declareMetrics(m: Metrics): void {
  m.declare('tidb_gitops_leader', 'gauge', '1 while this replica holds the leader Lease.');
  m.declare('tidb_gitops_reconciles_total', 'counter', 'Reconcile passes, by result (idle, busy, error).');
  m.declare('tidb_gitops_reconcile_seconds_total', 'counter', 'Time spent in reconcile passes.');
  m.declare('tidb_gitops_actions_total', 'counter', 'Actions taken, by component and action.');
  m.declare('tidb_gitops_action_errors_total', 'counter', 'Actions that failed, by component and action.');
  m.declare('tidb_gitops_discovery_requests_total', 'counter', 'Discovery requests, by path and HTTP status.');
  m.declare('tidb_gitops_pd_requests_total', 'counter', 'PD API requests, by outcome (HTTP status or error).');
  m.declare(
    'tidb_gitops_kube_requests_total',
    'counter',
    'Kubernetes API requests made by the controller (informers excluded), by verb and code.',
  );
  m.declare('tidb_gitops_component_phase', 'gauge', '1 for the phase each component is in.');
  m.declare(
    'tidb_gitops_failures_recorded_total',
    'counter',
    'Failure records made (failed PD members, Down stores, unready TiDB Pods), by component.',
  );
  m.declare('tidb_gitops_failover_replicas', 'gauge', 'Replicas running beyond the desired count because of failover, by component.');
  m.declare('tidb_gitops_failover_replicas_added_total', 'counter', 'Replicas added because of failover, by component.');
  m.declare(
    'tidb_gitops_configmaps_deleted_total',
    'counter',
    'Old config revisions (hash-named ConfigMaps) deleted once no Pod or revision used them, by component.',
  );
  m.declare('process_resident_memory_bytes', 'gauge', 'Resident memory size in bytes.');
}
