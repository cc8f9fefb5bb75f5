/**
 * The companion controller of one cluster: watches the cluster's StatefulSets and Pods, answers PD
 * discovery, and, while it holds the leader Lease, reconciles the fields it owns (replicas, partition)
 * step by step, writing what it sees to the `<cluster>-status` ConfigMap.
 */
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import { CONTROLLER_HTTP, LABEL, names, selectorLabels, type ComponentKind } from '../spec/names';
import { Discovery } from './discovery';
import { describe, KubeAccess } from './kube';
import { LeaderElector, type ElectionTiming } from './leader';
import type { Logger } from './log';
import { Metrics } from './metrics';
import type { ClusterInfo, Pod } from './model';
import { PdClient } from './pd-client';
import { desiredReplicas, EVICT_BEGIN_ANNOTATION, EVICT_END_ANNOTATION, plan, type Action, type ComponentPlan, type ComponentState, type PdState } from './plan';
import { buildStatus, lastOperationsOf, STATUS_KEY, type LastOperation } from './status';
import { WorkQueue } from './queue';

export interface ControllerOptions {
  readonly cluster: ClusterInfo;
  /** This replica's name in the Lease (the Pod name). */
  readonly identity: string;
  readonly kubeconfig?: string;
  /** PD client URLs, first the one the controller uses for its own work. */
  readonly pdUrls: readonly string[];
  readonly pdTls?: { ca: Buffer; cert: Buffer; key: Buffer };
  /** Serve discovery over HTTPS and require client certificates signed by this CA. */
  readonly discoveryTls?: { ca: Buffer; cert: Buffer; key: Buffer };
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
  readonly log: Logger;
}

/** RFC 3339 with milliseconds (Go's RFC 3339 parser, the operator's, accepts the fraction). */
const FIRST_BUSY_DELAY_MS = 100;

/** RFC 3339 with milliseconds (Go's RFC 3339 parser, the operator's, accepts the fraction). */
const rfc3339 = (ms: number): string => new Date(ms).toISOString();

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
  private restored = false;
  /** When a leader transfer away from a Pod was last asked for, so PD is not asked on every pass. */
  private readonly transfers = new Map<string, number>();
  private stopping = false;
  private worker?: Promise<void>;
  private readonly key: string;
  /** Delay before the next pass while an operation is under way: short after an action, growing while waiting. */
  private busyDelay = FIRST_BUSY_DELAY_MS;
  private actedThisPass = false;

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
      pdClients: clients,
      checkSource: opts.checkSource,
      note: (kind, message, pod) => {
        this.log.info(message, { discovery: kind, pod });
        if (kind !== 'join') void this.event(pod, kind === 'bootstrap' ? 'Normal' : 'Warning', kind === 'bootstrap' ? 'PDBootstrap' : 'PDStaleMember', message);
      },
    });
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
    m.declare('process_resident_memory_bytes', 'gauge', 'Resident memory size in bytes.');
  }

  /** Ports actually bound (useful when 0 was asked for). */
  readonly ports = { discovery: 0, metrics: 0 };

  async start(): Promise<void> {
    const { opts } = this;
    this.ports.metrics = await this.listen(http.createServer((req, res) => this.serveMetrics(req, res)), opts.metricsPort);
    const discoveryHandler = (req: http.IncomingMessage, res: http.ServerResponse) => void this.serveDiscovery(req, res);
    const discoveryServer = opts.discoveryTls
      ? https.createServer({ ...opts.discoveryTls, requestCert: true, rejectUnauthorized: true }, discoveryHandler)
      : http.createServer(discoveryHandler);
    this.ports.discovery = await this.listen(discoveryServer, opts.discoveryPort);
    await this.kube.startInformers(() => this.queue.add(this.key));
    this.elector.start();
    this.worker = this.work();
    this.log.info('controller started', { identity: opts.identity, discoveryPort: this.ports.discovery, metricsPort: this.ports.metrics, pd: this.pd.baseUrl });
  }

  private listen(server: http.Server | https.Server, port: number): Promise<number> {
    this.servers.push(server);
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
      this.lastOps = lastOperationsOf((await this.kube.getConfigMapData(statusName))?.[STATUS_KEY]);
      this.restored = true;
    }
    const allPods = this.kube.pods();
    const components: ComponentState[] = [];
    for (const kind of c.components) {
      const sts = this.kube.statefulSets().find((s) => s.metadata.name === names.statefulSet(c.name, kind));
      if (!sts) continue;
      const pods = allPods.filter((p) => p.metadata.labels?.[LABEL.component] === kind);
      components.push({ kind, sts, pods });
    }
    const needsPd = components.some((x) => x.kind === 'pd' || x.kind === 'tikv' || x.kind === 'tiflash');
    const pd = needsPd ? await this.readPd(components.some((x) => x.kind === 'tikv' || x.kind === 'tiflash')) : undefined;
    const now = Date.now();
    const plans = plan({ cluster: c, components, pd, now });

    let busy = false;
    this.actedThisPass = false;
    for (const p of plans) {
      busy ||= p.busy;
      for (const phase of ['Normal', 'Upgrading', 'Scaling']) {
        this.metrics.set('tidb_gitops_component_phase', { component: p.kind, phase }, p.phase === phase ? 1 : 0);
      }
      if (!p.action) continue;
      if (!this.elector.isLeader || this.stopping) return undefined;
      const done = await this.execute(p, p.action, allPods, now);
      this.actedThisPass ||= done;
      if (done && p.event) {
        await this.event(p.event.pod ?? names.statefulSet(c.name, p.kind), p.event.type, p.event.reason, p.event.message, p.event.pod === undefined);
      }
      if (done && (p.action.type !== 'apply' || p.event)) {
        this.lastOps.set(p.kind, { action: p.event?.reason ?? p.action.type, reason: p.reason, pod: p.event?.pod, time: rfc3339(now) });
      }
    }
    const status = JSON.stringify(buildStatus(c.name, components, plans, pd, this.lastOps), null, 2);
    if (status !== this.lastStatus) {
      await this.kube.applyConfigMap(statusName, selectorLabels(c.name, 'discovery'), { [STATUS_KEY]: status });
      this.lastStatus = status;
    }
    this.metrics.set('process_resident_memory_bytes', {}, process.memoryUsage().rss);
    return busy;
  }

  private async readPd(stores: boolean): Promise<PdState | { error: string }> {
    try {
      const [members, leader, storeList, evicting] = await Promise.all([
        this.pd.health(),
        this.pd.leader(),
        stores ? this.pd.stores() : Promise.resolve([]),
        stores ? this.pd.evictingStores() : Promise.resolve(new Set<number>()),
      ]);
      return { members, leader, stores: storeList, evicting };
    } catch (err) {
      return { error: (err as Error).message };
    }
  }

  /** Carries out one action; false when it failed (logged, retried on the next pass). */
  private async execute(p: ComponentPlan, action: Action, pods: readonly Pod[], now: number): Promise<boolean> {
    const c = this.opts.cluster;
    const log = this.log.with({ component: p.kind, action: action.type });
    try {
      switch (action.type) {
        case 'apply':
          await this.kube.applyStatefulSet(names.statefulSet(c.name, p.kind), action.replicas, action.partition);
          log.info(p.reason, { replicas: action.replicas, partition: action.partition });
          break;
        case 'transfer-leader': {
          const last = this.transfers.get(action.pod);
          if (last !== undefined && now - last < 5000) return false;
          await this.pd.transferLeader(action.to);
          this.transfers.set(action.pod, now);
          log.info(p.reason, { from: action.from, to: action.to });
          break;
        }
        case 'evict-begin': {
          await this.pd.addEvictLeader(action.storeId);
          const pod = pods.find((x) => x.metadata.name === action.pod);
          if (!pod?.metadata.annotations?.[EVICT_BEGIN_ANNOTATION]) await this.kube.annotatePod(action.pod, { [EVICT_BEGIN_ANNOTATION]: rfc3339(now) });
          log.info(p.reason, { pod: action.pod, store: action.storeId });
          break;
        }
        case 'evict-end': {
          await this.pd.removeEvictLeader(action.storeId);
          const pod = pods.find((x) => x.metadata.name === action.pod);
          if (!pod?.metadata.annotations?.[EVICT_END_ANNOTATION]) await this.kube.annotatePod(action.pod, { [EVICT_END_ANNOTATION]: rfc3339(now) });
          log.info(p.reason, { pod: action.pod, store: action.storeId });
          break;
        }
        case 'evict-cleanup':
          for (const id of action.storeIds) await this.pd.removeEvictLeader(id);
          log.info(p.reason, { stores: action.storeIds });
          break;
      }
      this.metrics.inc('tidb_gitops_actions_total', { component: p.kind, action: action.type });
      return true;
    } catch (err) {
      this.metrics.inc('tidb_gitops_action_errors_total', { component: p.kind, action: action.type });
      log.warn('action failed; it is tried again on the next pass', { error: describe(err) });
      return false;
    }
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
    this.metrics.inc('tidb_gitops_discovery_requests_total', { path: path.split('/')[1] ?? '', code: String(status) });
    if (status >= 400) this.log.info('discovery request refused', { path, status, reason: body.trim(), remote: req.socket.remoteAddress });
    else this.log.info('discovery answered', { path, answer: body });
    res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8' });
    res.end(body);
  }
}
