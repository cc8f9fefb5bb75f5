/**
 * A simulated Kubernetes API server for scenario tests. It speaks the REST protocol that
 * @kubernetes/client-node uses (GET/LIST/WATCH, create, replace, the four PATCH types, delete) over
 * plain HTTP on 127.0.0.1, and runs the two pieces of a cluster that StatefulSet-driven code depends
 * on: the StatefulSet controller (revisions, partitions, ordered or parallel Pod management) and a
 * kubelet that starts, readies and stops Pods on timers.
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
import { AvailabilityTracker, StatefulSetController } from './kube-controllers';
import { failureStatus, notFound, reasonFor } from './kube-errors';
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
  /** podIP given to every simulated Pod. @default '127.0.0.1' */
  podIP?: string;
  /**
   * How many change events the server keeps for watches that resume from a resourceVersion; a watch
   * from an older resourceVersion gets a 410 Expired ERROR event. @default 10000
   */
  watchHistory?: number;
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
  watch: boolean;
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

  private readonly store: ObjectStore;
  private readonly registry: Registry;
  private readonly watches: WatchHub;
  private readonly kubelet: Kubelet;
  private readonly statefulSets: StatefulSetController;
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

  private constructor(
    private readonly server: Server,
    opts: KubeSimOptions,
  ) {
    this.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const podIP = opts.podIP ?? '127.0.0.1';
    this.store = new ObjectStore(opts.watchHistory ?? 10000);
    this.watches = new WatchHub(this.store);
    this.kubelet = new Kubelet(
      {
        getPod: (ns, name) => this.store.get(PODS, ns, name),
        writeStatus: (pod, status) => this.registry.commit(PODS, pod, { ...pod, status }, { subresource: 'status' }),
        removePod: (pod) => this.registry.removeNow(PODS, pod.metadata.namespace!, pod.metadata.name),
        missingConfigMaps: (pod) => mountedConfigMaps(pod).filter((n) => !this.store.get(CONFIG_MAPS, pod.metadata.namespace!, n)),
        mountFailed: (pod, missing) => this.mountFailures.push({ pod: pod.metadata.name, configMaps: missing }),
        readinessGate: (pod) => this.guard('readinessGate', () => this.readinessGate(clone(pod))) === true,
        emit: (event, pod) => this.emit(event, pod),
      },
      { startMs: opts.podStartMs ?? 150, readyMs: opts.podReadyMs ?? 50, stopMs: opts.podStopMs ?? 100 },
    );
    this.registry = new Registry(this.store, podIP, {
      podCreated: (pod) => this.kubelet.admit(pod),
      podDeleting: (pod, immediate) => this.kubelet.terminate(pod, immediate),
    });
    this.statefulSets = new StatefulSetController(this.store, this.registry);
    this.availability = new AvailabilityTracker(this.store);
    this.store.onEvent((e) => {
      if (e.rt.kind === 'Pod' || e.rt.kind === 'StatefulSet') {
        this.availability.observe(e.object);
        this.scheduleSync();
      }
      if (e.type === 'DELETED') {
        for (const h of this.deletionHooks) if (h.kind === e.rt.kind) this.guard(`onDeleted(${h.kind})`, () => h.fn(clone(e.object)));
      }
      this.checkWaiters();
    });
    server.on('request', (req, res) => void this.onRequest(req, res));
    this.ticker = setInterval(() => this.tick(), TICK_MS);
    this.ticker.unref();
  }

  /**
   * A kubeconfig YAML text pointing at `url`: one cluster, no namespace, no credentials. It sets
   * `insecure-skip-tls-verify: true`, without which client-node 1.x refuses an `http:` server.
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

  /** Ends watch streams, stops timers, rejects pending `waitFor`s and closes the server. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
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
    return clone(this.registry.patch(rt, namespace, obj.metadata.name, 'application/apply-patch+yaml', JSON.stringify(obj), { fieldManager, force }).object);
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
    const record: RequestRecord = { time: Date.now(), method: req.method ?? 'GET', path: url.pathname, query, status: 0, watch: isWatch(query) };
    const contentType = req.headers['content-type'];
    if (contentType) record.contentType = contentType;
    if (query.fieldManager !== undefined) record.fieldManager = query.fieldManager;
    this.requests.push(record);
    let body: string;
    try {
      body = await readBody(req);
    } catch {
      res.destroy();
      return;
    }
    if (this.closed) {
      res.destroy();
      return;
    }
    const fault = this.takeFault(record);
    if (fault !== undefined) this.answerFault(res, record.path, fault);
    else serveApi({ store: this.store, registry: this.registry, watches: this.watches }, { method: record.method, path: record.path, query, contentType, body }, res);
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
      if (!this.closed) this.statefulSets.syncAll();
    });
  }

  private tick(): void {
    if (this.closed) return;
    this.statefulSets.syncAll();
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
