/**
 * A simulated Kubernetes API server for scenario tests. It speaks the REST protocol that
 * the controller's client uses (GET/LIST/WATCH, create, replace, the four PATCH types, delete) over
 * plain HTTP on 127.0.0.1, and runs the pieces of a cluster that StatefulSet-driven code depends on:
 * the StatefulSet controller (revisions, partitions, ordered or parallel Pod management), the
 * pvc-protection controller (with the admission plugin that puts its finalizer on every claim, a claim
 * stays while a Pod uses it) and a kubelet that starts, readies and stops Pods on timers. `restart()`
 * takes the API server down and brings it back as a real restart does.
 *
 * It runs inside the test process. Tests reach its state directly (`get`, `list`, `apply`, hooks,
 * `waitFor`); a process under test reaches it through `kubeconfig()`.
 *
 * ```ts
 * const sim = await KubeSim.start({ podStartMs: 20 });
 * sim.apply(statefulSetManifest);
 * await sim.waitFor(() => sim.get('StatefulSet', 'ns', 'db')?.status?.readyReplicas === 3, 2000, 'db ready');
 * await sim.close();
 * ```
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { forbiddenStatus, requestAttributes } from './kube-authz';
import { AvailabilityTracker, PvcProtectionController, StatefulSetController } from './kube-controllers';
import { failureStatus, notFound, reasonFor } from './kube-errors';
import { EventRecorder } from './kube-events';
import { isWatch, parseRoute, sendJson, serveApi } from './kube-http';
import { Kubelet, type PodEvent } from './kube-kubelet';
import { Registry } from './kube-registry';
import { RESOURCE_TYPES, type ResourceType, typeByApiVersionKind, typeKey, typesByKind } from './kube-resources';
import { ObjectStore } from './kube-store';
import { clone } from './kube-util';
import { WatchHub } from './kube-watch';

/** Timings and addresses of a simulated cluster. */
export interface KubeSimOptions {
  /** Time from a Pod's creation to its containers running (then `podStarted` fires). @default 150 */
  podStartMs?: number;
  /** Time from running to Ready, once the readiness gate passes. @default 50 */
  podReadyMs?: number;
  /** Time a deleted Pod spends terminating before it disappears (`podStopped` fires when termination begins). @default 100 */
  podStopMs?: number;
  /**
   * The node's address (every Pod's hostIP) and, unless `uniquePodIPs`, the podIP every Pod gets when it
   * starts. @default '127.0.0.1'
   */
  podIP?: string;
  /**
   * Give each Pod its own loopback address when it starts, as a CNI plugin does:
   * `127.<20 + JEST_WORKER_ID % 200>.<x>.<y>` from a counter shared by the simulators of one process
   * (so parallel Jest workers and simulators never hand out the same address). Off: every Pod gets
   * `podIP`. @default false
   */
  uniquePodIPs?: boolean;
  /**
   * How many change events the server keeps for watches that resume from a resourceVersion; a watch
   * from an older resourceVersion gets a 410 Expired ERROR event. @default 10000
   */
  watchHistory?: number;
  /**
   * The Kubernetes minor whose StatefulSet defaults and update validation the server applies
   * (`kube-statefulset.ts` says where each differs). @default 37, the release the real-API suites run
   */
  kubeMinor?: number;
}

/** One HTTP request the server answered. */
export interface RequestRecord {
  /** When the request arrived (epoch milliseconds). */
  time: number;
  method: string;
  /** URL path, without the query. */
  path: string;
  query: Record<string, string>;
  /** HTTP status answered (200 for a watch, whose events follow). */
  status: number;
  /** The request's Content-Type header, if any. */
  contentType?: string;
  /** The `fieldManager` query parameter, if any. */
  fieldManager?: string;
  /** The request's Authorization header, if any. */
  authorization?: string;
  watch: boolean;
}

/** Options of `KubeSim.restart`. */
export interface RestartOptions {
  /** How long the server answers nothing: connections are reset, open watches cut. @default 1000 */
  downMs?: number;
  /** How long it then answers every request 403 Forbidden, before its RBAC caches fill. @default 2000 */
  forbiddenMs?: number;
  /**
   * The user the 403 answers name. The simulator authenticates nobody: by default
   * `system:serviceaccount:<namespace of the request, or default>:unknown`.
   */
  user?: string;
}

/** One restart of the API server, times in epoch milliseconds, each set when it happened. */
export interface RestartRecord {
  /** The server stopped answering. */
  downAt: number;
  /** It answered again, 403 Forbidden to every request. */
  upAt?: number;
  /** It served normally again. */
  authorizedAt?: number;
}

/** Any Kubernetes object. */
export type KubeObject = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; [k: string]: any };
  [k: string]: any;
};

/**
 * Lifecycle hook names, in the order they happen to one Pod; while it runs, `podUnready` and
 * `podReady` may alternate (the readiness gate failed, then passed again).
 */
export type PodHookEvent = 'podCreated' | 'podStarted' | 'podReady' | 'podUnready' | 'podStopped' | 'podGone';

/** How often the controllers resync, readiness gates are polled and `waitFor` predicates are checked. */
const TICK_MS = 20;

const PODS = typeByApiVersionKind('v1', 'Pod')!;
const CONFIG_MAPS = typeByApiVersionKind('v1', 'ConfigMap')!;

/** The last unique Pod address handed out in this process (see `nextPodIP`). */
let podIPCounter = 0;

/**
 * The next loopback address for a Pod: `127.<20 + JEST_WORKER_ID % 200>.<x>.<y>`, each Jest worker its
 * own /16 of 127/8 (all of which Linux routes to `lo`), skipping `.0` and `.255` last octets.
 */
function nextPodIP(): string {
  const block = 20 + ((Number(process.env.JEST_WORKER_ID) || 0) % 200);
  for (;;) {
    podIPCounter = (podIPCounter % 65535) + 1;
    const [x, y] = [podIPCounter >> 8, podIPCounter & 255];
    if (y !== 0 && y !== 255) return `127.${block}.${x}.${y}`;
  }
}

/** The ConfigMaps a Pod needs to start: every non-optional one its volumes name. */
function mountedConfigMaps(pod: KubeObject): string[] {
  const out: string[] = [];
  for (const v of pod.spec?.volumes ?? []) {
    if (v.configMap?.name && !v.configMap.optional) out.push(v.configMap.name);
    for (const src of v.projected?.sources ?? []) if (src.configMap?.name && !src.configMap.optional) out.push(src.configMap.name);
  }
  return out;
}

interface Fault {
  match: (r: { method: string; path: string; query: Record<string, string> }) => boolean;
  status: number;
  remaining: number;
}

interface Waiter {
  pred: () => boolean;
  message: string;
  timer: NodeJS.Timeout;
  resolve: () => void;
  reject: (e: unknown) => void;
}

/** A simulated Kubernetes API server with a StatefulSet controller and a kubelet. */
export class KubeSim {
  /** Starts a server on a free port of 127.0.0.1. */
  static async start(opts: KubeSimOptions = {}): Promise<KubeSim> {
    const server = createServer();
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        server.off('error', reject);
        resolve();
      });
    });
    return new KubeSim(server, opts);
  }

  /** `http://127.0.0.1:<port>` */
  readonly url: string;
  /** Every HTTP request served, in order of arrival (watch requests too). */
  readonly requests: RequestRecord[] = [];
  /**
   * Readiness gate, polled every 20 ms for every running Pod, as a readiness probe: a started Pod becomes
   * Ready only when this returns true, and a Ready Pod turns not Ready again (`podUnready`) when it
   * returns false. Terminating Pods are not asked. @default () => true
   */
  readinessGate: (pod: KubeObject) => boolean = () => true;
  /** Pods that could not start because a ConfigMap they mount did not exist, each time it happened. */
  readonly mountFailures: { pod: string; configMaps: string[] }[] = [];
  /** Every `restart()`, in order, with the times its outage began and ended. */
  readonly restarts: RestartRecord[] = [];

  private readonly store: ObjectStore;
  private readonly registry: Registry;
  private readonly watches: WatchHub;
  private readonly kubelet: Kubelet;
  private readonly statefulSets: StatefulSetController;
  private readonly pvcProtection: PvcProtectionController;
  private readonly availability: AvailabilityTracker;
  private readonly hooks = new Map<PodHookEvent, Array<(pod: KubeObject) => void>>();
  private readonly deletionHooks: Array<{ kind: string; fn: (obj: KubeObject) => void }> = [];
  private readonly faults: Fault[] = [];
  private readonly waiters = new Set<Waiter>();
  /** The first error a hook or the readiness gate threw; fails every `waitFor` from then on. */
  private hookError?: Error;
  private readonly ticker: NodeJS.Timeout;
  private syncQueued = false;
  private closed = false;
  /** During a restart: `down` (nothing answers) or `forbidden` (every request 403), with its user. */
  private outage?: { phase: 'down' | 'forbidden'; user?: string };
  /** Ends the wait of a restart in progress at once (on close). */
  private outageWake?: () => void;

  private constructor(
    private readonly server: Server,
    opts: KubeSimOptions,
  ) {
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const hostIP = opts.podIP ?? '127.0.0.1';
    this.store = new ObjectStore(opts.watchHistory ?? 10000);
    this.watches = new WatchHub(this.store);
    this.kubelet = new Kubelet(
      {
        getPod: (ns, name) => this.store.get(PODS, ns, name),
        writeStatus: (pod, status) => this.registry.commit(PODS, pod, { ...pod, status }, { subresource: 'status' }),
        removePod: (pod) => void this.registry.finishDeletion(PODS, pod.metadata.namespace!, pod.metadata.name),
        podIP: () => (opts.uniquePodIPs ? nextPodIP() : hostIP),
        missingConfigMaps: (pod) => mountedConfigMaps(pod).filter((n) => !this.store.get(CONFIG_MAPS, pod.metadata.namespace!, n)),
        mountFailed: (pod, missing) => this.mountFailures.push({ pod: pod.metadata.name, configMaps: missing }),
        readinessGate: (pod) => this.guard('readinessGate', () => this.readinessGate(clone(pod))) === true,
        emit: (event, pod) => this.emit(event, pod),
      },
      { startMs: opts.podStartMs ?? 150, readyMs: opts.podReadyMs ?? 50, stopMs: opts.podStopMs ?? 100 },
    );
    this.registry = new Registry(
      this.store,
      hostIP,
      {
        podCreated: (pod) => this.kubelet.admit(pod),
        podDeleting: (pod, immediate) => this.kubelet.terminate(pod, immediate),
      },
      Date.now,
      opts.kubeMinor,
    );
    this.statefulSets = new StatefulSetController(
      this.store,
      this.registry,
      new EventRecorder(this.store, this.registry, 'statefulset-controller'),
    );
    this.pvcProtection = new PvcProtectionController(this.store, this.registry);
    this.availability = new AvailabilityTracker(this.store);
    this.store.onEvent((e) => {
      if (e.rt.kind === 'Pod' || e.rt.kind === 'StatefulSet') this.availability.observe(e.object);
      if (e.rt.kind === 'Pod' || e.rt.kind === 'StatefulSet' || e.rt.kind === 'PersistentVolumeClaim') this.scheduleSync();
      if (e.type === 'DELETED') {
        for (const h of this.deletionHooks) if (h.kind === e.rt.kind) this.guard(`onDeleted(${h.kind})`, () => h.fn(clone(e.object)));
        // A Pod is gone when its object is, wherever that happens (the kubelet, or a finalizer's removal).
        if (e.rt === PODS) this.emit('podGone', e.object);
      }
      this.checkWaiters();
    });
    server.on('request', (req, res) => void this.onRequest(req, res));
    // While the server is down, a connection that reaches the port is reset at once.
    server.on('connection', (socket) => {
      if (this.outage?.phase === 'down') socket.resetAndDestroy();
    });
    this.ticker = setInterval(() => this.tick(), TICK_MS);
    this.ticker.unref();
  }

  /**
   * A kubeconfig YAML text pointing at `url`: one cluster, no namespace, no credentials. It sets
   * `insecure-skip-tls-verify: true`, as kubectl and client libraries want for a server without TLS.
   */
  kubeconfig(): string {
    return [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: sim',
      '  cluster:',
      `    server: ${this.url}`,
      '    insecure-skip-tls-verify: true',
      'users:',
      '- name: sim',
      '  user: {}',
      'contexts:',
      '- name: sim',
      '  context:',
      '    cluster: sim',
      '    user: sim',
      'current-context: sim',
      'preferences: {}',
      '',
    ].join('\n');
  }

  /**
   * Ends every open watch stream, as the API server does when a watch's timeout passes or it shuts down
   * (`apiserver/pkg/endpoints/handlers/watch.go` `serveWatch` returns and the chunked response ends).
   */
  endWatches(): void {
    this.watches.closeAll();
  }

  /** Ends watch streams, stops timers, rejects pending `waitFor`s and closes the server. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.outageWake?.();
    clearInterval(this.ticker);
    this.kubelet.stop();
    this.watches.closeAll();
    for (const w of [...this.waiters]) this.settle(w, new Error(`${w.message} (the simulator was closed)`));
    await new Promise<void>((resolve) => {
      this.server.close(() => resolve());
      this.server.closeAllConnections();
    });
  }

  /**
   * Creates or updates an object as `kubectl apply` (client-side) would for a rendered manifest:
   * creates it if absent; otherwise sets every field the manifest gives and drops fields an earlier
   * `apply` gave that this manifest no longer does, keeping fields nobody applied (notably a
   * StatefulSet's `spec.replicas` and `spec.updateStrategy.rollingUpdate.partition` set by a
   * controller). Bumps resourceVersion if anything changed, and generation if the spec did. Throws on
   * invalid objects (e.g. a change to an immutable StatefulSet field). A namespace-less manifest goes
   * to `default`. Not an HTTP request: it does not appear in `requests`.
   */
  apply(obj: KubeObject): KubeObject {
    return clone(this.registry.applyManifest(obj));
  }

  /**
   * Server-side apply of a manifest by a field manager (as Flux, or Argo CD with ServerSideApply=true,
   * send it): the manager then owns exactly the manifest's fields; `force` takes over fields other
   * managers own. Throws the API error (409 on conflicts without force). Not recorded in `requests`.
   */
  serverSideApply(obj: KubeObject, fieldManager: string, force = true): KubeObject {
    const rt = typeByApiVersionKind(obj.apiVersion, obj.kind);
    if (!rt) throw new Error(`cannot apply ${obj.apiVersion} ${obj.kind}: not a served type`);
    const namespace = obj.metadata.namespace ?? 'default';
    return clone(
      this.registry.patch(rt, namespace, obj.metadata.name, 'application/apply-patch+yaml', JSON.stringify(obj), { fieldManager, force })
        .object,
    );
  }

  /** The fields each field manager owns on an object (what `metadata.managedFields` says). */
  fieldOwners(kind: string, namespace: string, name: string): Record<string, string[]> {
    const rt = this.typesOf(kind)[0];
    return this.registry.fields.of(`${typeKey(rt)}/${namespace}/${name}`);
  }

  /** A copy of the object, or undefined. `kind` as in manifests: 'StatefulSet', 'Pod', 'Lease'... */
  get(kind: string, namespace: string, name: string): KubeObject | undefined {
    for (const rt of this.typesOf(kind)) {
      const obj = this.store.get(rt, namespace, name);
      if (obj) return clone(obj);
    }
    return undefined;
  }

  /** Copies of every object of a kind (of one namespace if given), ordered by namespace and name. */
  list(kind: string, namespace?: string): KubeObject[] {
    return this.typesOf(kind).flatMap((rt) => this.store.list(rt, namespace).map((o) => clone(o)));
  }

  /** Deletes an object as a user would (Pods terminate through podStopMs; dependents are collected). Throws if missing. */
  delete(kind: string, namespace: string, name: string): void {
    const types = this.typesOf(kind);
    const rt = types.find((t) => this.store.get(t, namespace, name)) ?? types[0];
    if (!this.store.get(rt, namespace, name)) throw notFound(rt.group, rt.resource, name);
    this.registry.delete(rt, namespace, name);
  }

  /**
   * Fault injection: the next `times` requests for which `match` returns true are answered with
   * `status` and a Kubernetes Status body instead of being served (429 also carries `Retry-After: 0`).
   */
  fail(match: (r: { method: string; path: string; query: Record<string, string> }) => boolean, status: number, times: number): void {
    this.faults.push({ match, status, remaining: times });
  }

  /**
   * Lifecycle hooks, in the order they happen for one Pod: created (object exists, not running) ->
   * started (containers run) -> ready -> stopped (termination began; the Pod is no longer Ready) ->
   * gone (object removed). A Pod deleted early skips the steps it never reached. While the Pod runs,
   * unready (its readiness gate failed: Ready and ContainersReady turned False) and ready again may
   * follow each other any number of times; a Pod that turns unready and then terminates gets no
   * second ready. Hooks run synchronously with the change and get a copy of the Pod; an error thrown
   * by a hook fails every later `waitFor`.
   */
  on(event: PodHookEvent, fn: (pod: KubeObject) => void): void {
    const list = this.hooks.get(event) ?? [];
    list.push(fn);
    this.hooks.set(event, list);
  }

  /**
   * Calls `fn` whenever an object of `kind` ('PersistentVolumeClaim', 'ConfigMap', 'Pod'...) is
   * actually removed from the store: by an API DELETE, by `delete`, by garbage collection of
   * dependents, or, for Pods, at the end of their termination (not when it begins). `fn` runs
   * synchronously with the removal and gets a copy of the object's last state; an error it throws fails
   * every later `waitFor`. Throws for a kind the simulator does not serve.
   */
  onDeleted(kind: string, fn: (obj: KubeObject) => void): void {
    this.typesOf(kind);
    this.deletionHooks.push({ kind, fn });
  }

  /** The Pod's `status.podIP`, or undefined while it has none (not started yet) or does not exist. */
  podIPOf(namespace: string, name: string): string | undefined {
    return this.store.get(PODS, namespace, name)?.status?.podIP;
  }

  /**
   * Restarts the API server, as when kube-apiserver is redeployed or crashes and comes back. For
   * `downMs` it answers nothing: open connections are cut (watches end without a final event, requests
   * in flight get no answer) and new connections are reset. Then for `forbiddenMs` it answers every HTTP
   * request 403 Forbidden with the Status a real server sends when RBAC denies (see `forbiddenStatus`):
   * a restarted kube-apiserver serves before its RBAC authorizer's informers have synced, and denies
   * until they have. Then it serves normally. The store survives, as etcd does: objects and
   * resourceVersions are kept, so clients re-list or resume their watches from where they were.
   *
   * The simulated kube-controller-manager (StatefulSet and pvc-protection controllers) makes no progress
   * during the outage, as it would not reach the server either; the kubelet goes on running containers
   * and its status writes land at once (a simplification: a real kubelet retries them afterwards).
   * Direct calls (`get`, `apply`, `delete`...) are not HTTP and keep working. Each restart is recorded
   * in `restarts`. Resolves when the server serves normally again. Throws if a restart is under way.
   */
  async restart(opts: RestartOptions = {}): Promise<void> {
    if (this.closed) throw new Error('the simulator was closed');
    if (this.outage) throw new Error('the API server is already restarting');
    const record: RestartRecord = { downAt: Date.now() };
    this.restarts.push(record);
    this.outage = { phase: 'down', user: opts.user };
    this.server.closeAllConnections();
    await this.outagePause(opts.downMs ?? 1000);
    if (this.closed) return;
    this.outage = { phase: 'forbidden', user: opts.user };
    record.upAt = Date.now();
    await this.outagePause(opts.forbiddenMs ?? 2000);
    if (this.closed) return;
    this.outage = undefined;
    record.authorizedAt = Date.now();
    this.scheduleSync();
  }

  /** Waits `ms`, or less if the simulator closes meanwhile. */
  private outagePause(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      const timer = setTimeout(wake, ms);
      function wake(): void {
        clearTimeout(timer);
        resolve();
      }
      this.outageWake = wake;
    });
  }

  /**
   * The largest number of Pods of one StatefulSet that were at the same time not Ready or missing
   * (ordinal < spec.replicas), measured after the StatefulSet first had all its Pods Ready; per
   * StatefulSet name. 0 for a set never seen.
   */
  maxUnavailable(stsName: string): number {
    return this.availability.max(stsName);
  }

  /**
   * Resolves when `pred()` is true (checked at once, after every state change and every 20 ms);
   * rejects after `timeoutMs` with `message`, or at once if `pred` or a lifecycle hook throws.
   */
  waitFor(pred: () => boolean, timeoutMs: number, message: string): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      if (this.closed) return reject(new Error(`${message} (the simulator was closed)`));
      const w: Waiter = { pred, message, resolve, reject, timer: setTimeout(() => this.settle(w, new Error(message)), timeoutMs) };
      this.waiters.add(w);
      this.checkWaiter(w);
    });
  }

  private typesOf(kind: string): ResourceType[] {
    const types = typesByKind(kind);
    if (types.length === 0) {
      throw new Error(`unknown kind "${kind}"; the simulator serves ${[...new Set(RESOURCE_TYPES.map((t) => t.kind))].join(', ')}`);
    }
    return types;
  }

  private async onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? '/', this.url);
    const query: Record<string, string> = {};
    for (const [k, v] of url.searchParams) query[k] = v;
    const record: RequestRecord = {
      time: Date.now(),
      method: req.method ?? 'GET',
      path: url.pathname,
      query,
      status: 0,
      watch: isWatch(query),
    };
    const contentType = req.headers['content-type'];
    if (contentType) record.contentType = contentType;
    if (query.fieldManager !== undefined) record.fieldManager = query.fieldManager;
    if (req.headers.authorization !== undefined) record.authorization = req.headers.authorization;
    this.requests.push(record);
    let body: string;
    try {
      body = await readBody(req);
    } catch {
      res.destroy();
      return;
    }
    if (this.closed || this.outage?.phase === 'down') {
      res.destroy();
      return;
    }
    if (this.outage?.phase === 'forbidden') {
      this.answerForbidden(res, record, this.outage.user);
      record.status = res.statusCode;
      return;
    }
    const fault = this.takeFault(record);
    if (fault !== undefined) this.answerFault(res, record.path, fault);
    else
      serveApi(
        { store: this.store, registry: this.registry, watches: this.watches },
        { method: record.method, path: record.path, query, contentType, body },
        res,
      );
    record.status = res.statusCode;
  }

  private takeFault(r: RequestRecord): number | undefined {
    for (const f of this.faults) {
      if (f.remaining <= 0) continue;
      let hit = false;
      try {
        hit = f.match({ method: r.method, path: r.path, query: { ...r.query } });
      } catch {
        hit = false;
      }
      if (hit) {
        f.remaining--;
        return f.status;
      }
    }
    return undefined;
  }

  private answerFault(res: ServerResponse, path: string, status: number): void {
    const route = parseRoute(path);
    const about = route?.type === 'resource' ? route : undefined;
    const details = about ? { name: about.name, group: about.rt.group, kind: about.rt.resource } : undefined;
    const message =
      status === 409 && about?.name
        ? `Operation cannot be fulfilled on ${about.rt.resource} "${about.name}": the object has been modified; please apply your changes to the latest version and try again`
        : `injected fault: ${reasonFor(status)}`;
    sendJson(res, status, failureStatus(status, message, reasonFor(status), details), status === 429 ? { 'Retry-After': '0' } : {});
  }

  /** The 403 of a server whose RBAC caches are still empty (during a restart). */
  private answerForbidden(res: ServerResponse, r: RequestRecord, user: string | undefined): void {
    const attrs = requestAttributes(r.method, r.path, r.query);
    const who = user ?? `system:serviceaccount:${attrs.namespace || 'default'}:unknown`;
    sendJson(res, 403, forbiddenStatus(who, attrs), { 'X-Content-Type-Options': 'nosniff' });
  }

  private emit(event: PodEvent, pod: KubeObject): void {
    for (const fn of this.hooks.get(event) ?? []) this.guard(event, () => fn(clone(pod)));
  }

  /** Runs user code; remembers the first error it throws (so `waitFor` can report it). */
  private guard<T>(what: string, fn: () => T): T | undefined {
    try {
      return fn();
    } catch (e) {
      this.hookError ??= new Error(`${what} threw: ${e instanceof Error ? e.message : String(e)}`, { cause: e });
      return undefined;
    }
  }

  private scheduleSync(): void {
    if (this.syncQueued || this.closed) return;
    this.syncQueued = true;
    setImmediate(() => {
      this.syncQueued = false;
      if (!this.closed) this.syncControllers();
    });
  }

  /** One pass of kube-controller-manager's controllers; none while the API server is restarting. */
  private syncControllers(): void {
    if (this.outage) return;
    this.statefulSets.syncAll();
    this.pvcProtection.syncAll();
  }

  private tick(): void {
    if (this.closed) return;
    this.syncControllers();
    this.kubelet.tick();
    this.checkWaiters();
  }

  private checkWaiters(): void {
    for (const w of [...this.waiters]) this.checkWaiter(w);
  }

  private checkWaiter(w: Waiter): void {
    if (!this.waiters.has(w)) return;
    if (this.hookError) return this.settle(w, this.hookError);
    try {
      if (w.pred()) this.settle(w);
    } catch (e) {
      this.settle(w, e);
    }
  }

  private settle(w: Waiter, error?: unknown): void {
    if (!this.waiters.delete(w)) return;
    clearTimeout(w.timer);
    if (error === undefined) w.resolve();
    else w.reject(error);
  }
}

/** The whole request body as UTF-8 text. */
function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}
