/**
 * Pump (tidb-binlog) nodes for scenario tests of the controller: one process model per Pod, each serving
 * Pump's HTTP API on its own address (`<ip>:8250`; a scenario gives every Pod its own loopback IP and
 * maps the Pod's host names to it), over one shared registry (the `/tidb-binlog/v1/pumps/<nodeID>` keys
 * in PD's etcd).
 *
 * What a pump process does, as tidb-binlog does it (pump/server.go, pump/node.go, identical from v6.5 to
 * master; v4.0-v5.4 differ by line offsets only):
 * - Node ID: the `.node` file of the data directory if it exists, else `--node-id`, else
 *   `<hostname>:<listen port>` (the Pod name in Kubernetes), then saved to `.node`
 *   (pump/node.go `NewPumpNode`, `generateLocalNodeID` (v7.5.7:69-129, 292-320)). The data directory
 *   survives restarts until `pumpWipe`.
 * - `host` is the `-advertise-addr` the operator's start script passes: `<pod>.<cluster>-pump:8250`,
 *   `<pod>.<cluster>-pump.<ns>.svc:8250` across Kubernetes clusters, `.<ns>.svc.<domain>` with a cluster
 *   domain (tidb-operator startscript/v2/pump_start_script.go:56-62, v1 template.go:369 `FormatPumpZone`).
 * - Start: the HTTP server answers once the node registered `online` (`Start`: `registerNode(Online)`
 *   before `m.Serve()`, server.go:430-463); requests that arrive earlier wait. A heartbeat then refreshes
 *   `updateTS` and `maxCommitTS` every `heartbeatMs` (real: 2 s).
 * - `PUT /state/<id>/close` (or `pause`) turns the in-memory state `closing` (`pausing`) and starts
 *   `Close()`: the context is cancelled at once (this pump's own `/status` then answers ErrMsg
 *   "context canceled"), then `commitStatus` writes `offline` once it is safe (`waitSafeToOffline`: fake
 *   binlog, then every second until the drainers caught up; `offlineMs` here, held while
 *   `drainersLagging`), or `paused`; then the listener closes and the process exits 0.
 * - `/metrics` (any method, on net/http's default ServeMux beside the gorilla router, server.go:419-421):
 *   Pump's own registry in the Prometheus text format (see `metrics`).
 * - SIGTERM (`pumpStop`): cmd/pump/main.go calls the same `Close()`; with the in-memory state still
 *   `online`, `commitStatus` writes **paused** (server.go:877-900). SIGTERM during a close changes
 *   nothing (`Close` runs once): the pump keeps waiting; `pumpKill` is the SIGKILL after the grace period.
 *
 * Records for tests: `exits` (every process end, with the state it left in the registry),
 * `stopsWhileOnline` (a pump stopped or killed while the registry still said `online`: the controller
 * should have taken it offline first), `requests`, `unsimulated`.
 */
import * as http from 'node:http';
import { definedOnly, FaultInjector, pollUntil, type RequestMatch } from './pd-runtime';
import { goProcessFamilies, promhttpAnswer, type PromFamily } from './prom-text';

export interface PumpSimOptions {
  /** The TidbCluster's name: pumps advertise `<pod>.<cluster>-pump...:<port>`. */
  cluster: string;
  namespace: string;
  /** `spec.clusterDomain`: the advertised host becomes `<pod>.<cluster>-pump.<ns>.svc.<domain>`. */
  clusterDomain?: string;
  /** `spec.acrossK8s` without a cluster domain: the advertised host becomes `<pod>.<cluster>-pump.<ns>.svc`. */
  acrossK8s?: boolean;
  /** Port every pump listens on and advertises (tidb-operator: `DefaultPumpPort`). @default 8250 */
  port?: number;
  /** From process start to the node registered online and serving HTTP. @default 20 */
  registerMs?: number;
  /** Heartbeat period (pump `heartbeat-interval`, 2 s). @default 200 */
  heartbeatMs?: number;
  /** From `Close()` to `commitStatus` (background goroutines stopping). @default 20 */
  stopMs?: number;
  /** `waitSafeToOffline` with drainers caught up (real: about 1-2 s). @default 100 */
  offlineMs?: number;
  /** How often a closing pump checks the drainers again (real: every second). @default 50 */
  drainerCheckMs?: number;
  /** Start with the drainers behind: a closing pump waits until `drainersLagging` is cleared. @default false */
  drainersLagging?: boolean;
  /** Called when a pump process ends (exit code 0 after close/pause/SIGTERM, 137 for `pumpKill`). */
  onExit?: (pod: string, code: number) => void;
}

/** The defaults of `PumpSimOptions`, in one place. */
export const PUMP_SIM_DEFAULTS = {
  port: 8250,
  registerMs: 20,
  heartbeatMs: 200,
  stopMs: 20,
  offlineMs: 100,
  drainerCheckMs: 50,
  drainersLagging: false,
} as const;

/** The options with their defaults applied. */
type PumpConfig = PumpSimOptions & { -readonly [K in keyof typeof PUMP_SIM_DEFAULTS]-?: NonNullable<PumpSimOptions[K]> };

/** A node's registry entry: `node.Status` (pkg/node/node.go:84-111), field order as Go writes it. */
export interface PumpNodeStatus {
  nodeId: string;
  host: string;
  /** online, pausing, paused, closing or offline (pkg/node/node.go:63-75). */
  state: string;
  isAlive: boolean;
  score: number;
  label: { labels: Record<string, string> } | null;
  /** TSOs: int64 in Go, beyond JavaScript's safe integers, so kept as bigint. */
  maxCommitTS: bigint;
  updateTS: bigint;
}

/**
 * What the pod's pump process is doing: `starting` (not registered yet, requests wait), `serving`,
 * `closing` (`Close()` running: after close/pause/SIGTERM), `stopped` (exited or never started).
 */
export type PumpProcessState = 'stopped' | 'starting' | 'serving' | 'closing';

export interface PumpExit {
  pod: string;
  nodeId: string;
  code: number;
  /** The node's registry state when the process ended. */
  state?: string;
  time: number;
}

export interface PumpStopWhileOnline {
  pod: string;
  nodeId: string;
  how: 'SIGTERM' | 'SIGKILL';
  time: number;
}

export interface PumpRequestRecord {
  pod: string;
  method: string;
  path: string;
  status: number;
  time: number;
}

export type { RequestMatch } from './pd-runtime';

interface Answer {
  status: number;
  headers: Record<string, string>;
  /** Text, or bytes (a gzipped `/metrics`). */
  body: string | Buffer;
}

interface PumpProc {
  pod: string;
  ip: string;
  nodeId: string;
  host: string;
  /** The in-memory `node.Status.State` that `ApplyAction` and `commitStatus` read. */
  state: string;
  phase: PumpProcessState;
  /** `s.ctx` is cancelled: `Close()` started. */
  closing: boolean;
  server: http.Server;
  /** Requests accepted before `m.Serve()`: answered once the node registered. */
  waiting: (() => void)[];
  timers: Set<NodeJS.Timeout>;
  heartbeat?: NodeJS.Timeout;
  exited: Promise<void>;
  markExited: () => void;
  /** Process start (epoch ms): `process_start_time_seconds`. */
  startMs: number;
}

/** The pod's persistent volume: the `.node` file. */
interface PumpData {
  nodeIdFile?: string;
}

export class PumpSim {
  static async start(options: PumpSimOptions): Promise<PumpSim> {
    return new PumpSim(options);
  }

  readonly exits: PumpExit[] = [];
  readonly stopsWhileOnline: PumpStopWhileOnline[] = [];
  readonly requests: PumpRequestRecord[] = [];
  /** `"<METHOD> <path>"` of requests to real Pump routes this model does not serve (answered 500). */
  readonly unsimulated: string[] = [];
  /** The drainers are behind: a closing pump does not go offline until this is false again. */
  drainersLagging: boolean;

  private readonly o: PumpConfig;
  private readonly registry = new Map<string, PumpNodeStatus>();
  private readonly procs = new Map<string, PumpProc>();
  private readonly data = new Map<string, PumpData>();
  private readonly faults = new FaultInjector();
  private logical = 0;
  private closed = false;

  private constructor(options: PumpSimOptions) {
    this.o = { ...PUMP_SIM_DEFAULTS, ...definedOnly(options), cluster: options.cluster, namespace: options.namespace };
    this.drainersLagging = this.o.drainersLagging;
  }

  // ---- addresses ----

  /** The `-advertise-addr` of the operator's start script, which becomes the node's `host`. */
  advertiseAddress(pod: string): string {
    const base = `${pod}.${this.o.cluster}-pump`;
    const zone = this.o.clusterDomain
      ? `.${this.o.namespace}.svc.${this.o.clusterDomain}`
      : this.o.acrossK8s
        ? `.${this.o.namespace}.svc`
        : '';
    return `${base}${zone}:${this.o.port}`;
  }

  get port(): number {
    return this.o.port;
  }

  // ---- process hooks ----

  /**
   * The Pod's pump starts and listens on `ip:port` (resolves once it listens). It registers online
   * `registerMs` later. `nodeId` plays `--node-id`, which only counts when the data has no `.node` file.
   */
  async pumpStart(pod: string, ip: string, opts: { nodeId?: string } = {}): Promise<void> {
    if (this.closed) throw new Error('PumpSim is closed');
    const current = this.procs.get(pod);
    if (current !== undefined && current.phase !== 'stopped')
      throw new Error(`pumpStart: ${pod} is already ${current.phase}; call pumpStop first`);
    const data = this.data.get(pod) ?? {};
    this.data.set(pod, data);
    // pump/node.go NewPumpNode: `.node` file, else --node-id (not saved), else hostname:port (saved).
    let nodeId = data.nodeIdFile;
    if (nodeId === undefined) {
      if (opts.nodeId !== undefined) {
        nodeId = opts.nodeId.trim();
      } else {
        nodeId = `${pod}:${this.o.port}`;
        data.nodeIdFile = nodeId;
      }
    }
    let markExited = () => {};
    const exited = new Promise<void>((resolve) => (markExited = resolve));
    const proc: PumpProc = {
      pod,
      ip,
      nodeId,
      host: this.advertiseAddress(pod),
      // The previous state in etcd, or offline for a new node (NewPumpNode).
      state: this.registry.get(nodeId)?.state ?? 'offline',
      phase: 'starting',
      closing: false,
      server: http.createServer((req, res) => this.serve(proc, req, res)),
      waiting: [],
      timers: new Set(),
      exited,
      markExited,
      startMs: Date.now(),
    };
    await new Promise<void>((resolve, reject) => {
      proc.server.once('error', reject);
      proc.server.listen(this.o.port, ip, () => {
        proc.server.off('error', reject);
        resolve();
      });
    });
    this.procs.set(pod, proc);
    this.after(proc, this.o.registerMs, () => this.registerOnline(proc));
  }

  /**
   * SIGTERM: `Close()` as cmd/pump/main.go does. An online pump ends `paused` (recorded in
   * `stopsWhileOnline`); a closing one goes on closing. Resolves when the process has exited.
   */
  async pumpStop(pod: string): Promise<void> {
    const proc = this.procs.get(pod);
    if (proc === undefined || proc.phase === 'stopped') return;
    if (!proc.closing && this.registry.get(proc.nodeId)?.state === 'online') {
      this.stopsWhileOnline.push({ pod, nodeId: proc.nodeId, how: 'SIGTERM', time: Date.now() });
    }
    this.beginClose(proc);
    await proc.exited;
  }

  /** SIGKILL: the process ends at once and writes nothing; the registry keeps its last state. */
  async pumpKill(pod: string): Promise<void> {
    const proc = this.procs.get(pod);
    if (proc === undefined || proc.phase === 'stopped') return;
    if (this.registry.get(proc.nodeId)?.state === 'online') {
      this.stopsWhileOnline.push({ pod, nodeId: proc.nodeId, how: 'SIGKILL', time: Date.now() });
    }
    await this.exit(proc, 137);
  }

  /** The pod's volume is lost: the next start forms its node ID again. The registry entry stays. */
  pumpWipe(pod: string): void {
    this.data.delete(pod);
  }

  /** Adds or replaces a registry entry by hand (a stale node, another cluster's pump...). */
  addNode(status: Partial<PumpNodeStatus> & { nodeId: string; host: string; state: string }): void {
    this.registry.set(status.nodeId, {
      isAlive: false,
      score: 0,
      label: null,
      maxCommitTS: this.tso(),
      updateTS: this.tso(),
      ...status,
    });
  }

  /** Answers the next `times` matching requests with `status` and `message`; status 0 drops the connection. */
  failNext(match: RequestMatch, status: number, times = 1, message = 'injected failure'): void {
    this.faults.add(match, status, times, message);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const running = [...this.procs.values()].filter((p) => p.phase !== 'stopped');
    await Promise.all(running.map((p) => this.halt(p)));
    for (const p of running) p.markExited();
  }

  // ---- accessors (snapshots) ----

  /** The registry, sorted by node ID. */
  nodes(): PumpNodeStatus[] {
    return [...this.registry.values()].map((n) => ({ ...n })).sort((a, b) => (a.nodeId < b.nodeId ? -1 : a.nodeId > b.nodeId ? 1 : 0));
  }

  /** The node ID of the pod's current or last pump process, else the one in its data. */
  nodeIdOf(pod: string): string | undefined {
    return this.procs.get(pod)?.nodeId ?? this.data.get(pod)?.nodeIdFile;
  }

  /** The registry state of the pod's node. */
  stateOf(pod: string): string | undefined {
    const id = this.nodeIdOf(pod);
    return id === undefined ? undefined : this.registry.get(id)?.state;
  }

  processState(pod: string): PumpProcessState {
    return this.procs.get(pod)?.phase ?? 'stopped';
  }

  /** Resolves once `pred` holds; rejects after `timeoutMs` with `message` and the model's state. */
  waitFor(pred: () => boolean, timeoutMs = 3000, message = 'condition'): Promise<void> {
    return pollUntil(pred, timeoutMs, message, () => this.describe());
  }

  /** The model in a few lines, for failure messages. */
  describe(): string {
    const procs = [...this.procs.values()].map(
      (p) =>
        `  pod ${p.pod} ${p.ip}:${this.o.port} ${p.phase}${p.closing ? ' (Close() running)' : ''} node=${p.nodeId} in-memory=${p.state}`,
    );
    const nodes = this.nodes().map((n) => `  node ${n.nodeId} host=${n.host} ${n.state}`);
    return [`Pump ${this.o.cluster}/${this.o.namespace}${this.drainersLagging ? ' (drainers lagging)' : ''}`, ...procs, ...nodes].join(
      '\n',
    );
  }

  // ---- process model ----

  /** A TSO as PD hands them out: physical milliseconds << 18 | logical. */
  private tso(): bigint {
    this.logical = (this.logical + 1) % (1 << 18);
    return (BigInt(Date.now()) << 18n) | BigInt(this.logical);
  }

  private after(proc: PumpProc, ms: number, fn: () => void): void {
    const timer = setTimeout(() => {
      proc.timers.delete(timer);
      if (!this.closed && proc.phase !== 'stopped') fn();
    }, ms);
    timer.unref();
    proc.timers.add(timer);
  }

  /** `registerNode(ctx, state, updateTS)` → `RefreshStatus` (server.go:326-330, node.go:147-163): a fresh `node.NewStatus`. */
  private writeStatus(proc: PumpProc, state: string): void {
    const ts = this.tso();
    this.registry.set(proc.nodeId, {
      nodeId: proc.nodeId,
      host: proc.host,
      state,
      isAlive: false,
      score: 0,
      label: null,
      maxCommitTS: ts - 1n,
      updateTS: ts,
    });
  }

  private registerOnline(proc: PumpProc): void {
    if (proc.phase !== 'starting' || proc.closing) return;
    this.writeStatus(proc, 'online');
    proc.state = 'online';
    proc.phase = 'serving';
    for (const answer of proc.waiting.splice(0)) answer();
    const beat = setInterval(() => {
      if (proc.closing || proc.phase === 'stopped' || this.closed) return;
      // node.go Heartbeat: UpdateNode with the in-memory status, updateTS and maxCommitTS refreshed.
      const entry = this.registry.get(proc.nodeId);
      const ts = this.tso();
      if (entry !== undefined) this.registry.set(proc.nodeId, { ...entry, state: proc.state, maxCommitTS: ts - 1n, updateTS: ts });
    }, this.o.heartbeatMs);
    beat.unref();
    proc.heartbeat = beat;
  }

  /** `Server.Close()` (server.go:903-945): once; cancels the context, then `commitStatus`. */
  private beginClose(proc: PumpProc): void {
    if (proc.closing) return;
    proc.closing = true;
    proc.phase = 'closing';
    if (proc.heartbeat !== undefined) clearInterval(proc.heartbeat);
    this.after(proc, this.o.stopMs, () => this.commitStatus(proc));
  }

  /** `commitStatus` (server.go:877-900) reads the in-memory state now, so a close accepted meanwhile counts. */
  private commitStatus(proc: PumpProc): void {
    const state = proc.state;
    if (state === 'online' || state === 'pausing') {
      this.writeStatus(proc, 'paused');
      void this.exit(proc, 0);
    } else if (state === 'closing') {
      this.after(proc, this.o.offlineMs, () => this.waitForDrainers(proc));
    } else {
      // "there must be something wrong": the state is written back as it is.
      this.writeStatus(proc, state);
      void this.exit(proc, 0);
    }
  }

  /** `waitSafeToOffline`: loops until the drainers caught up, without a timeout (server.go:834-874). */
  private waitForDrainers(proc: PumpProc): void {
    if (this.drainersLagging) {
      this.after(proc, this.o.drainerCheckMs, () => this.waitForDrainers(proc));
      return;
    }
    this.writeStatus(proc, 'offline');
    void this.exit(proc, 0);
  }

  /** The process ends: the gRPC stop closes the shared listener (cmux), then main returns. */
  private async exit(proc: PumpProc, code: number): Promise<void> {
    if (proc.phase === 'stopped') return;
    await this.halt(proc);
    this.exits.push({ pod: proc.pod, nodeId: proc.nodeId, code, state: this.registry.get(proc.nodeId)?.state, time: Date.now() });
    proc.markExited();
    this.o.onExit?.(proc.pod, code);
  }

  private async halt(proc: PumpProc): Promise<void> {
    proc.phase = 'stopped';
    proc.closing = true;
    for (const t of proc.timers) clearTimeout(t);
    proc.timers.clear();
    if (proc.heartbeat !== undefined) clearInterval(proc.heartbeat);
    proc.waiting.splice(0);
    await new Promise<void>((resolve) => {
      if (!proc.server.listening) {
        resolve();
        return;
      }
      proc.server.close(() => resolve());
      proc.server.closeAllConnections();
    });
  }

  // ---- HTTP ----

  private serve(proc: PumpProc, req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const answer = () => {
        const method = req.method ?? 'GET';
        const url = req.url ?? '/';
        const record: PumpRequestRecord = { pod: proc.pod, method, path: url, status: 0, time: Date.now() };
        this.requests.push(record);
        const injected = this.faults.take(method, url, proc.pod);
        if (proc.phase === 'stopped' || injected?.status === 0) {
          req.socket.destroy();
          return;
        }
        let a: Answer;
        if (injected !== undefined) {
          a = { status: injected.status, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: `${injected.message}\n` };
        } else {
          try {
            a = this.route(proc, method, url, req.headers);
          } catch (err) {
            a = { status: 500, headers: { 'content-type': 'text/plain' }, body: `pump simulator error: ${(err as Error).message}` };
          }
        }
        record.status = a.status;
        res.writeHead(a.status, a.headers);
        res.end(a.body);
      };
      // Connections are accepted before `m.Serve()`, but answered only once the node registered.
      if (proc.phase === 'starting') proc.waiting.push(answer);
      else answer();
    });
  }

  /**
   * gorilla/mux routes with `.Methods(...)` (server.go:414-418): a known path with another method is a 405
   * with an empty body, an unknown path net/http's 404. `/metrics` (served) and `/debug/pprof/` (not
   * modelled) are on the default ServeMux. Path variables are matched on the decoded path.
   */
  private route(proc: PumpProc, method: string, url: string, headers: http.IncomingHttpHeaders = {}): Answer {
    let path: string;
    try {
      path = decodeURIComponent(new URL(url, 'http://pump').pathname);
    } catch {
      path = new URL(url, 'http://pump').pathname;
    }
    const state = /^\/state\/([^/]+)\/([^/]+)$/.exec(path);
    if (path === '/metrics') return this.metrics(proc, headers);
    if (path === '/status') return method === 'GET' ? this.status(proc) : METHOD_NOT_ALLOWED;
    if (state !== null) return method === 'PUT' ? this.applyAction(proc, state[1], state[2]) : METHOD_NOT_ALLOWED;
    const known: [RegExp, string][] = [
      [/^\/drainers$/, 'GET'],
      [/^\/debug\/binlog\/[^/]+$/, 'GET'],
      [/^\/debug\/gc\/trigger$/, 'POST'],
    ];
    const k = known.find(([re]) => re.test(path));
    if (k !== undefined && k[1] !== method) return METHOD_NOT_ALLOWED;
    if (k !== undefined || path.startsWith('/debug/pprof/')) {
      this.unsimulated.push(`${method} ${path}`);
      return { status: 500, headers: { 'content-type': 'text/plain' }, body: `pump simulator: ${method} ${path} is not simulated` };
    }
    return NOT_FOUND;
  }

  /**
   * `/metrics`: `prometheus.DefaultGatherer = registry; http.Handle("/metrics", promhttp.Handler())`
   * (server.go:420-421): pump/metrics.go's own registry, which has the process and Go collectors
   * (`go_goroutines`, `go_threads`, `process_start_time_seconds`) but not promhttp's own families (those
   * go to the untouched `DefaultRegisterer`). Gzipped for a client that accepts it; prometheus/common
   * v0.37.0 (v6.5) to v0.39.0 (v7.5 to master) writes no `escaping` term. Modelled families:
   * - `binlog_pump_storage_max_commit_ts` (pump/storage/metrics.go, set by storage.go at open and at
   *   every write): the physical part (ms) of the storage's max commit TS, the one the node reports
   *   in its registry entry (`maxCommitTS`, refreshed at every heartbeat here).
   * - `binlog_pump_loss_binlog_count` (pump/metrics.go), 0: no binlog is lost here.
   */
  private metrics(proc: PumpProc, headers: http.IncomingHttpHeaders): Answer {
    const entry = this.registry.get(proc.nodeId);
    const families: PromFamily[] = [
      ...goProcessFamilies(proc.startMs, 120, 16),
      { name: 'binlog_pump_loss_binlog_count', help: 'Total loss binlog count', type: 'counter', samples: [{ value: 0 }] },
      {
        name: 'binlog_pump_storage_max_commit_ts',
        help: 'max commit ts of storage',
        type: 'gauge',
        // oracle.ExtractPhysical: the TSO's milliseconds (ts >> 18).
        samples: [{ value: entry === undefined ? 0 : Number(entry.maxCommitTS >> 18n) }],
      },
    ];
    return promhttpAnswer(families, 'none', headers['accept-encoding']);
  }

  /**
   * `GET /status` (server.go:678-680, 739-766; pump/status.go:28-41): every node in the registry, and a
   * fresh TSO; always HTTP 200, `json.NewEncoder(w).Encode` (compact, a trailing newline, no Content-Type
   * set so Go sniffs text/plain). Once `Close()` began, `s.ctx` is cancelled and the etcd read fails.
   */
  private status(proc: PumpProc): Answer {
    if (proc.closing) return statusAnswer(`{"status":null,"CommitTS":0,"Checkpoint":{},"ErrMsg":"context canceled"}\n`);
    const ids = [...this.registry.keys()].sort();
    // Go sorts map keys; pb.Pos has only omitempty fields that are never set, hence `{}`.
    const map = `{${ids.map((id) => `${goString(id)}:${nodeJson(this.registry.get(id) as PumpNodeStatus)}`).join(',')}}`;
    return statusAnswer(`{"status":${map},"CommitTS":${this.tso()},"Checkpoint":{},"ErrMsg":""}\n`);
  }

  /**
   * `PUT /state/{nodeID}/{action}` (server.go `ApplyAction` 775-820): always HTTP 200 with `util.Response`
   * (pkg/util/http.go:31-63) rendered by unrolled/render with IndentJSON; code 200 success, 3 error.
   * The checks run in this order: node ID, in-memory state, action.
   */
  private applyAction(proc: PumpProc, nodeId: string, action: string): Answer {
    if (nodeId !== proc.nodeId) return response(`invalide nodeID ${nodeId}, this pump's nodeID is ${proc.nodeId}`, 3);
    if (proc.state !== 'online') return response(`this pump's state is ${proc.state}, apply ${action} failed!`, 3);
    if (action === 'pause') proc.state = 'pausing';
    else if (action === 'close') proc.state = 'closing';
    else return response(`invalide action ${action}`, 3);
    this.beginClose(proc);
    return response(`apply action ${action} success!`, 200);
  }
}

const METHOD_NOT_ALLOWED: Answer = { status: 405, headers: {}, body: '' };

/** net/http `http.NotFound`, gorilla/mux's default NotFoundHandler. */
const NOT_FOUND: Answer = {
  status: 404,
  headers: { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' },
  body: '404 page not found\n',
};

const statusAnswer = (body: string): Answer => ({ status: 200, headers: { 'content-type': 'text/plain; charset=utf-8' }, body });

/** unrolled/render JSON with IndentJSON: two spaces and a trailing newline, `application/json; charset=UTF-8`. */
function response(message: string, code: number): Answer {
  return {
    status: 200,
    headers: { 'content-type': 'application/json; charset=UTF-8' },
    body: `${goJsonIndent({ message, code, data: null })}\n`,
  };
}

/** encoding/json string: HTML-safe escaping as Go's default. */
function goString(s: string): string {
  return escapeHtml(JSON.stringify(s));
}

function escapeHtml(json: string): string {
  return json.replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

function goJsonIndent(value: unknown): string {
  return escapeHtml(JSON.stringify(value, null, 2));
}

/** One `node.Status`, compact, int64 TSOs written exactly. */
function nodeJson(n: PumpNodeStatus): string {
  const label = n.label === null ? 'null' : escapeHtml(JSON.stringify({ labels: sortedObject(n.label.labels) }));
  return (
    `{"nodeId":${goString(n.nodeId)},"host":${goString(n.host)},"state":${goString(n.state)},"isAlive":${n.isAlive},` +
    `"score":${n.score},"label":${label},"maxCommitTS":${n.maxCommitTS},"updateTS":${n.updateTS}}`
  );
}

function sortedObject(o: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(o).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}
