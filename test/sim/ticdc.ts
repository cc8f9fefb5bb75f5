/**
 * TiCDC captures for scenario tests of the controller: one process model per Pod, each serving TiCDC's
 * HTTP API on its own address (`<ip>:8301`; a scenario gives every Pod its own loopback IP and maps
 * `<pod>.<cluster>-ticdc-peer.<ns>.svc[.<domain>]` to it), over one shared cluster state (what etcd
 * holds: registered captures, the owner key, and the owner's table scheduler).
 *
 * What a capture process does, as tiflow does it (sources named beside each behaviour):
 * - It starts its HTTP server before the capture is initialised (tiflow cdc/server/server.go `Run`:
 *   `startStatusHTTP` before `s.run` (v8.5.x)); until `initMs` later the capture has no ID: the `/api/v1`
 *   routes answer 503 ErrServerIsNotReady (v6.2+) and the root `/status` 500.
 * - Then it registers (a new UUID on every start: cdc/capture/capture.go `reset` (v8.5.x)) and campaigns
 *   for ownership; with no owner, the capture that campaigned first wins after `electionMs`.
 * - The owner schedules the tables of one changefeed: spread over the captures, moved away from a capture
 *   being drained (`drainRate` per `tickMs`), re-added `rescheduleMs` after their capture stopped,
 *   evened out every `balanceMs` (CheckBalanceInterval, 1m by default).
 * - `captureStop` is SIGTERM: the capture turns `stopping`, resigns if it is the owner and exits at once
 *   (pkg/cmd/util/helper.go `InitSignalHandling`, capture.go `Drain` (v8.5.x) close their channel without
 *   waiting for tables to move); its tables are re-added elsewhere by the owner.
 *
 * The API per version (which routes exist, what they answer) is in the route table below. Requests to a
 * non-owner that TiCDC forwards to the owner are answered here by the owner's model directly, with the
 * owner's version; the requests log says which capture answered.
 *
 * The architecture played is tiflow's (pingcap/tiflow cdc/) by default: captures, an owner elected in
 * etcd, the v3 table scheduler. A capture started with `architecture: 'new'` plays TiCDC's new
 * architecture (pingcap/ticdc, tagged from v8.5.4, turned on by `newarch = true`, `--newarch` or
 * `TICDC_NEWARCH=true`: cmd/cdc/server/server.go `isNewArchEnabled`; the only one in v9.0.0-beta.1)
 * where its HTTP API differs: the v1 routes of api/v1/api.go `RegisterOpenAPIV1Routes` (v8.5.4+) over
 * api/v2 handlers, see `newArchDrain`, `health` and `apiV1`. Its coordinator is played by the same
 * owner model. `/metrics`, a route of every release, is served (see `metrics`); the real routes this
 * model does not serve are listed in `UNSIMULATED_PREFIXES` (and the ServeMux's list of v4.0-v5.1), so
 * that a request to one is answered 500 and recorded rather than taken for a 404.
 *
 * Records for tests: `stopsWithTables` (a capture stopped while it still held tables: the controller
 * should have drained it first), `stopsWhileOwner`, `ownerChanges`, `requests`, `unsimulated` (requests
 * to real TiCDC routes this model does not serve).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import * as http from 'node:http';
import { definedOnly, FaultInjector, pollUntil, Timers, type RequestMatch } from './pd-runtime';
import { goProcessFamilies, promhttpAnswer, type PromEscaping, type PromFamily } from './prom-text';
import { matchChangefeedRoute, servesChangefeedsV2, TicdcChangefeeds } from './ticdc-changefeeds';

// ---------------------------------------------------------------------------------------------
// Options, records

export interface TicdcSimOptions {
  /** The TidbCluster's name: captures advertise `<pod>.<cluster>-ticdc-peer.<ns>.svc[.<domain>]:<port>`. */
  cluster: string;
  namespace: string;
  /** `spec.clusterDomain`: appended to the advertised host (tidb-operator startscript/v2/ticdc_start_script.go). */
  clusterDomain?: string;
  /** TiCDC version of the captures (`captureStart` can override it per process). @default 'v8.5.0' */
  version?: string;
  /** Port every capture listens on and advertises (tidb-operator: `DefaultTiCDCPort`). @default 8301 */
  port?: number;
  /** Which TiCDC the captures run (`captureStart` can override it per process). @default 'tiflow' */
  architecture?: TicdcArchitecture;
  /** Tables the one changefeed replicates; 0 means no changefeed. @default 20 */
  tables?: number;
  /** From process start to the capture registered and ready (IsReady). @default 30 */
  initMs?: number;
  /** From "no owner" (with a candidate campaigning) to an owner elected. @default 20 */
  electionMs?: number;
  /** A capture whose owner resigned campaigns again after this (tiflow: a 1 s rate limiter). @default 100 */
  campaignRetryMs?: number;
  /** A new owner's changefeed scheduler is nil this long (drain counts +1, health is false). @default 30 */
  ownerInitMs?: number;
  /** The owner's scheduler sees a capture as uninitialised this long after it joined or the owner changed. @default 30 */
  captureInitMs?: number;
  /** Period of the owner's scheduling tick. @default 20 */
  tickMs?: number;
  /** Tables a drain moves per tick (tiflow: scheduler `max-task-concurrency`, default 10). @default 3 */
  drainRate?: number;
  /** A table whose capture stopped is re-added to another capture after this. @default 50 */
  rescheduleMs?: number;
  /** Period of table rebalancing over the captures (tiflow: `check-balance-interval`, 1m); 0 turns it off. @default 60000 */
  balanceMs?: number;
  /**
   * The server config's `security.client-user-required = true` (with `client-allowed-user` set, which
   * pkg/config/server.go `ValidateAndAdjust` requires). See `Features.drainAuth`. @default false
   */
  clientUserRequired?: boolean;
}

/** The defaults of `TicdcSimOptions`, in one place. */
export const TICDC_SIM_DEFAULTS = {
  version: 'v8.5.0',
  architecture: 'tiflow' as TicdcArchitecture,
  port: 8301,
  tables: 20,
  initMs: 30,
  electionMs: 20,
  campaignRetryMs: 100,
  ownerInitMs: 30,
  captureInitMs: 30,
  tickMs: 20,
  drainRate: 3,
  rescheduleMs: 50,
  balanceMs: 60_000,
} as const;

/** The options with their defaults applied. */
type TicdcConfig = TicdcSimOptions & { -readonly [K in keyof typeof TICDC_SIM_DEFAULTS]-?: NonNullable<TicdcSimOptions[K]> };

/** The timings a test may change while the simulator runs (`setTimings`). */
export type TicdcTimings = Partial<
  Pick<
    TicdcSimOptions,
    'initMs' | 'electionMs' | 'campaignRetryMs' | 'ownerInitMs' | 'captureInitMs' | 'drainRate' | 'rescheduleMs' | 'balanceMs'
  >
>;

/** tiflow's TiCDC (pingcap/tiflow `cdc/`), or the new architecture (pingcap/ticdc, `newarch`). */
export type TicdcArchitecture = 'tiflow' | 'new';

/** A capture process stopped while the owner still scheduled tables on it. */
export interface StopWithTables {
  pod: string;
  captureId: string;
  tables: number;
  time: number;
}

/** A capture process stopped while it was the owner. */
export interface StopWhileOwner {
  pod: string;
  captureId: string;
  time: number;
}

/** An owner elected (`from` the previous owner's pod, if any). */
export interface OwnerChange {
  from?: string;
  to: string;
  reason: 'election';
  time: number;
}

/** One request a capture answered (status 0: the connection was dropped without an answer). */
export interface CdcRequestRecord {
  pod: string;
  method: string;
  path: string;
  status: number;
  /** The pod whose capture answered when the request was forwarded to the owner. */
  answeredBy?: string;
  time: number;
}

/** What a test sees of a capture process. */
export interface CaptureView {
  pod: string;
  ip: string;
  /** Set once the capture registered (a new one every start). */
  id?: string;
  address: string;
  version: string;
  architecture: TicdcArchitecture;
  /** `starting`: listening, not yet registered; `running`: registered; `stopped`: exited. */
  state: 'starting' | 'running' | 'stopped';
  isOwner: boolean;
  /** 0 alive, 1 stopping (model.Liveness). */
  liveness: number;
  tables: number;
}

export type { RequestMatch } from './pd-runtime';

// ---------------------------------------------------------------------------------------------
// Versions

type Version = readonly [number, number, number];

/** `v8.5.0`, `8.5.0-nightly`...; `latest`, `nightly`, `master` are newer than any release. */
export function parseTicdcVersion(text: string): Version {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(text.trim());
  if (m) return [Number(m[1]), Number(m[2]), Number(m[3])];
  if (/^(latest|nightly|master)$/i.test(text.trim())) return [99, 0, 0];
  throw new Error(`TicdcSim: cannot parse TiCDC version ${JSON.stringify(text)}`);
}

const atLeast = (v: Version, major: number, minor: number, patch: number): boolean =>
  v[0] !== major ? v[0] > major : v[1] !== minor ? v[1] > minor : v[2] >= patch;

/** What a TiCDC version serves; each gate names the first tag that has it. */
interface Features {
  /** gin router with `/api/v1/status`, `/captures`, `/owner/resign` (v5.2.0 cdc/http_router.go); before: net/http ServeMux (v5.1.5 cdc/http_status.go:44-59). */
  gin: boolean;
  /** `Capture.Info()` returns ErrCaptureNotInitialized before `reset` (v6.1.1 cdc/capture/capture.go); before, it dereferences nil and the handler panics. */
  infoError: boolean;
  /** `PUT /api/v1/captures/drain`, `CheckServerReadyMiddleware`, `liveness` (v6.2.0 cdc/api/v1/api.go). */
  drainApi: boolean;
  /** `cluster_id` in `/api/v1/status`; `/api/v1/health` forwards to the owner and asks IsHealthy (v6.3.0 cdc/model/http_model.go, api.go Health). */
  v63: boolean;
  /** `cluster_id` in `/api/v1/captures` (v6.4.0 cdc/model/http_model.go `Capture`). */
  captureClusterId: boolean;
  /**
   * Drain while not all captures are initialised answers count 1 (v7.5.2+, v8.1.0+:
   * cdc/scheduler/internal/v3/coordinator.go `DrainCapture` "return count 1 to let client retry"); before,
   * ErrSchedulerRequestFailed "not all captures initialized", which the API answers with 503.
   */
  drainUninitialisedCountsOne: boolean;
  /** The new architecture (pingcap/ticdc): its own v1 routes over api/v2 handlers. */
  newArch: boolean;
  /**
   * The new architecture's drain moves something: `co.DrainNode` (api/v1/api.go `drainCapture` and
   * coordinator/controller_drain.go, v8.5.7 and master). In v8.5.4-v8.5.6, v9.0.0-beta.1 and
   * v26.3.1-v26.3.4 the handler answers from a counter and moves nothing.
   */
  newArchDrain: boolean;
  /**
   * The drain route runs `authenticateMiddleware` (pingcap/ticdc api/v1/api.go at v8.5.7 and master;
   * not at v8.5.4-v8.5.6, v8.5.7-release.1, v8.5.7-20260728-c8d4d68, v9.0.0-beta.1, v26.3.1-v26.3.4):
   * with `security.client-user-required` a request without basic auth answers 401
   * (api/middleware/authenticate_middleware.go `verify`: ErrCredentialNotFound).
   */
  drainAuth: boolean;
}

/** A tag with a suffix after x.y.z: `v8.5.7-release.1` (a pre-release cut), `v8.5.7-20260728-c8d4d68` (a hotfix). */
const SUFFIXED = /^v?\d+\.\d+\.\d+-/;

/**
 * Releases of the new architecture whose drain API drains (see `Features.newArchDrain`). A tag with
 * a suffix is not its release: in pingcap/ticdc `v8.5.7-release.1` (an ancestor of v8.5.7) and the
 * hotfix `v8.5.7-20260728-c8d4d68` (not descended from v8.5.7) still have the counter handler
 * (api/v1/api.go `drainCapture`: `drainCaptureCounter`), and no coordinator/controller_drain.go.
 */
export function newArchDrains(v: Version, text = ''): boolean {
  const from = (major: number, minor: number, patch: number): boolean =>
    atLeast(v, major, minor, patch) && !(SUFFIXED.test(text.trim()) && v[0] === major && v[1] === minor && v[2] === patch);
  return (v[0] === 8 && v[1] === 5 && from(8, 5, 7)) || from(26, 3, 5);
}

function features(v: Version, architecture: TicdcArchitecture, text = ''): Features {
  const newArchDrain = architecture === 'new' && newArchDrains(v, text);
  return {
    newArch: architecture === 'new',
    newArchDrain,
    drainAuth: newArchDrain,
    gin: atLeast(v, 5, 2, 0),
    infoError: atLeast(v, 6, 1, 1),
    drainApi: atLeast(v, 6, 2, 0),
    v63: atLeast(v, 6, 3, 0),
    captureClusterId: atLeast(v, 6, 4, 0),
    drainUninitialisedCountsOne: (atLeast(v, 7, 5, 2) && !atLeast(v, 7, 6, 0)) || atLeast(v, 8, 1, 0),
  };
}

// ---------------------------------------------------------------------------------------------
// JSON and answers as Go writes them

interface Answer {
  status: number;
  headers: Record<string, string>;
  /** Text, or bytes (a gzipped `/metrics`). */
  body: string | Buffer;
}

/** The connection is closed without an answer (net/http recovering a handler panic). */
type Reply = Answer | 'drop';

/** encoding/json: `<`, `>`, `&`, U+2028, U+2029 escaped (HTML-safe, the default); `indent` as MarshalIndent. */
function goJson(value: unknown, indent?: string): string {
  return JSON.stringify(value, null, indent).replace(/[<>&\u2028\u2029]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
}

/** gin `c.IndentedJSON`: MarshalIndent with four spaces. */
const indentedJson = (status: number, value: unknown): Answer => ({
  status,
  headers: { 'content-type': 'application/json; charset=utf-8' },
  body: goJson(value, '    '),
});

/** gin `c.JSON`: compact. */
const compactJson = (status: number, value: unknown): Answer => ({
  status,
  headers: { 'content-type': 'application/json; charset=utf-8' },
  body: goJson(value),
});

/** gin `c.Status(code)` with nothing written. */
const emptyAnswer = (status: number): Answer => ({ status, headers: {}, body: '' });

/**
 * `model.HTTPError` (cdc/model/http_model.go:49-61 (v8.5.x)): `error_msg` is `err.Error()`, which
 * pingcap/errors formats `[<RFC code>]<message>`; `error_code` is the RFC code, "" for other errors.
 */
const httpError = (status: number, code: string, message: string): Answer =>
  indentedJson(status, { error_msg: code === '' ? message : `[${code}]${message}`, error_code: code });

/** gin's 404 (gin.go `serveError` with `default404Body`, MIMEPlain). */
const GIN_404: Answer = { status: 404, headers: { 'content-type': 'text/plain' }, body: '404 page not found' };

/** net/http `http.NotFound` (the ServeMux of TiCDC before v5.2). */
const MUX_404: Answer = {
  status: 404,
  headers: { 'content-type': 'text/plain; charset=utf-8', 'x-content-type-options': 'nosniff' },
  body: '404 page not found\n',
};

const ERR_NOT_READY = (): Answer => httpError(503, 'CDC:ErrServerIsNotReady', 'cdc server is not ready');
const ERR_NOT_INITIALISED_TEXT = '[CDC:ErrCaptureNotInitialized]capture has not been initialized yet';
/** etcd `concurrency.ErrElectionNoLeader`, from GetOwnerID when no owner key exists (pkg/etcd/etcd.go:585-595 (v8.5.x)). */
const ERR_NO_LEADER = (): Answer => httpError(500, '', 'election: no leader');

// ---------------------------------------------------------------------------------------------
// The model

interface CaptureProc {
  pod: string;
  ip: string;
  versionText: string;
  architecture: TicdcArchitecture;
  features: Features;
  address: string;
  id?: string;
  pid: number;
  gitHash: string;
  state: 'starting' | 'running' | 'stopped';
  liveness: 0 | 1;
  server: http.Server;
  initTimer?: NodeJS.Timeout;
  /** Process start (epoch ms): `process_start_time_seconds`. */
  startMs: number;
  /** New architecture before v8.5.7: the drain handler's call counter (`drainCaptureCounter`, a package variable). */
  drainCalls: number;
  /** Time this process owned the cluster in earlier terms (ms); the current term runs from `ownerSince`. */
  ownedMs: number;
  ownerSince?: number;
}

const CLUSTER_ID = 'default';

export class TicdcSim {
  static async start(options: TicdcSimOptions): Promise<TicdcSim> {
    const sim = new TicdcSim(options);
    sim.timers.every(sim.o.tickMs, () => sim.tick());
    return sim;
  }

  readonly stopsWithTables: StopWithTables[] = [];
  readonly stopsWhileOwner: StopWhileOwner[] = [];
  readonly ownerChanges: OwnerChange[] = [];
  readonly requests: CdcRequestRecord[] = [];
  /** `"<METHOD> <path> (<version>)"` of requests to real TiCDC routes this model does not serve (answered 500). */
  readonly unsimulated: string[] = [];
  /** The owner's `IsHealthy` answers false (`/api/v1/health` 500 ErrClusterIsUnhealthy, v6.3+). */
  unhealthy = false;
  /** The changefeeds and their `/api/v2/changefeeds` routes (ticdc-changefeeds.ts), answered by the owner. */
  readonly feeds = new TicdcChangefeeds();

  private readonly o: TicdcConfig;
  private readonly timers = new Timers();
  private readonly faults = new FaultInjector();
  private readonly procs = new Map<string, CaptureProc>();
  /** Registered captures (their etcd keys), in registration order. */
  private registered: CaptureProc[] = [];
  /** Captures campaigning for ownership, first come first elected (etcd election order). */
  private campaign: CaptureProc[] = [];
  private ownerProc?: CaptureProc;
  private lastOwnerPod?: string;
  private electionTimer?: NodeJS.Timeout;
  private riggedWinner?: string;
  /** The owner's changefeed scheduler exists from then on (it is nil before). */
  private schedulerReadyAt = 0;
  /** When the owner's scheduler sees each capture (by id) as initialised. */
  private readonly captureReadyAt = new Map<string, number>();
  private drainTargetId?: string;
  /** Captures whose new-architecture drain completed (`isCompletedDrainTarget`). */
  private readonly drainedIds = new Set<string>();
  /** Capture id holding each table (its Primary), undefined while the table is not replicating. */
  private readonly primaries: (string | undefined)[];
  private readonly orphanedAt: number[];
  private lastBalance = Date.now();
  private nextPid = 1000;
  private closed = false;

  private constructor(options: TicdcSimOptions) {
    this.o = { ...TICDC_SIM_DEFAULTS, ...definedOnly(options), cluster: options.cluster, namespace: options.namespace };
    parseTicdcVersion(this.o.version);
    this.primaries = new Array<string | undefined>(this.o.tables).fill(undefined);
    this.orphanedAt = new Array<number>(this.o.tables).fill(0);
  }

  // ---- addresses ----

  /**
   * `<pod>.<cluster>-ticdc-peer.<ns>.svc[.<domain>]:<port>`, the `--advertise-addr` the operator's start
   * script passes (tidb-operator startscript/v2/ticdc_start_script.go:56-62, v1 render_script.go:144-151).
   */
  advertiseAddress(pod: string): string {
    const host = `${pod}.${this.o.cluster}-ticdc-peer.${this.o.namespace}.svc`;
    return `${this.o.clusterDomain ? `${host}.${this.o.clusterDomain}` : host}:${this.o.port}`;
  }

  /**
   * How tidb-operator recognises the Pod's capture: `<pod>.<cluster>-ticdc-peer.<ns>[.svc.<domain>]`
   * (pkg/controller/ticdc_control.go `getCaptureAdvertiseAddressPrefix`, L282-298).
   */
  addressPrefix(pod: string): string {
    const prefix = `${pod}.${this.o.cluster}-ticdc-peer.${this.o.namespace}`;
    return this.o.clusterDomain ? `${prefix}.svc.${this.o.clusterDomain}` : prefix;
  }

  get port(): number {
    return this.o.port;
  }

  // ---- process hooks ----

  /**
   * The Pod's cdc server starts and listens on `ip:port` (resolves once it listens; rejects when it
   * cannot). It registers `initMs` later. `version` overrides the simulator's (a rolling upgrade).
   */
  async captureStart(pod: string, ip: string, opts: { version?: string; architecture?: TicdcArchitecture } = {}): Promise<void> {
    if (this.closed) throw new Error('TicdcSim is closed');
    const current = this.procs.get(pod);
    if (current !== undefined && current.state !== 'stopped')
      throw new Error(`captureStart: ${pod} is already ${current.state}; call captureStop first`);
    const versionText = opts.version ?? this.o.version;
    const architecture = opts.architecture ?? this.o.architecture;
    const proc: CaptureProc = {
      pod,
      ip,
      versionText,
      architecture,
      features: features(parseTicdcVersion(versionText), architecture, versionText),
      address: this.advertiseAddress(pod),
      pid: this.nextPid++,
      gitHash: randomBytes(20).toString('hex'),
      state: 'starting',
      liveness: 0,
      server: http.createServer((req, res) => this.serve(proc, req, res)),
      startMs: Date.now(),
      drainCalls: 0,
      ownedMs: 0,
    };
    await new Promise<void>((resolve, reject) => {
      proc.server.once('error', reject);
      proc.server.listen(this.o.port, ip, () => {
        proc.server.off('error', reject);
        resolve();
      });
    });
    this.procs.set(pod, proc);
    proc.initTimer = this.timers.after(this.o.initMs, () => this.register(proc));
  }

  /**
   * SIGTERM: the capture turns stopping, resigns if it is the owner, and exits at once; its etcd key
   * goes, its listener closes. Tables it still held are recorded in `stopsWithTables` and re-added to
   * other captures by the owner.
   */
  async captureStop(pod: string): Promise<void> {
    const proc = this.procs.get(pod);
    if (proc === undefined || proc.state === 'stopped') return;
    this.timers.cancel(proc.initTimer);
    if (proc.state === 'running') {
      const id = proc.id as string;
      const now = Date.now();
      proc.liveness = 1;
      if (this.ownerProc === proc) {
        this.stopsWhileOwner.push({ pod, captureId: id, time: now });
        this.loseOwner();
      }
      const held = this.tableCount(id);
      if (held > 0) this.stopsWithTables.push({ pod, captureId: id, tables: held, time: now });
      this.primaries.forEach((p, i) => {
        if (p === id) {
          this.primaries[i] = undefined;
          this.orphanedAt[i] = now;
        }
      });
      this.registered = this.registered.filter((c) => c !== proc);
      this.campaign = this.campaign.filter((c) => c !== proc);
      this.captureReadyAt.delete(id);
    }
    proc.state = 'stopped';
    await closeServer(proc.server);
    this.maybeElect();
  }

  /** Changes timings from now on (e.g. a longer `captureInitMs` for the next capture that joins). */
  setTimings(timings: TicdcTimings): void {
    Object.assign(this.o, definedOnly(timings));
  }

  /** The next election picks this pod's capture when it campaigns (TiCDC may re-elect the resigned owner). */
  rigNextElection(pod: string): void {
    this.riggedWinner = pod;
  }

  /** Answers the next `times` matching requests with `status` and a TiCDC error body; status 0 drops the connection. */
  failNext(match: RequestMatch, status: number, times = 1, message = 'injected failure'): void {
    this.faults.add(match, status, times, message);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.timers.close();
    await Promise.all([...this.procs.values()].filter((p) => p.state !== 'stopped').map((p) => closeServer(p.server)));
    for (const p of this.procs.values()) p.state = 'stopped';
  }

  // ---- accessors (snapshots) ----

  captures(): CaptureView[] {
    return [...this.procs.values()].map((p) => ({
      pod: p.pod,
      ip: p.ip,
      id: p.id,
      address: p.address,
      version: p.versionText,
      architecture: p.architecture,
      state: p.state,
      isOwner: this.ownerProc === p,
      liveness: p.liveness,
      tables: p.state === 'running' ? this.tableCount(p.id as string) : 0,
    }));
  }

  /** The owner's pod. */
  owner(): string | undefined {
    return this.ownerProc?.pod;
  }

  /** Tables the pod's running capture holds. */
  tablesOf(pod: string): number {
    const p = this.procs.get(pod);
    return p !== undefined && p.state === 'running' ? this.tableCount(p.id as string) : 0;
  }

  /** Tables not replicating (their capture stopped and the owner has not re-added them yet). */
  orphanTables(): number {
    return this.primaries.filter((p) => p === undefined).length;
  }

  /** The pod the owner is draining. */
  drainTarget(): string | undefined {
    return this.registered.find((c) => c.id === this.drainTargetId)?.pod;
  }

  /** Resolves once `pred` holds; rejects after `timeoutMs` with `message` and the model's state. */
  waitFor(pred: () => boolean, timeoutMs = 3000, message = 'condition'): Promise<void> {
    return pollUntil(pred, timeoutMs, message, () => this.describe());
  }

  /** The model in a few lines, for failure messages. */
  describe(): string {
    const lines = this.captures().map(
      (c) =>
        `  ${c.pod} ${c.ip}:${this.o.port} ${c.version} ${c.state}${c.id ? ` id=${c.id}` : ''}${c.isOwner ? ' OWNER' : ''}${c.liveness ? ' stopping' : ''} tables=${c.tables}`,
    );
    return [
      `TiCDC ${this.o.cluster}/${this.o.namespace}: owner ${this.owner() ?? '(none)'}, drain target ${this.drainTarget() ?? '(none)'}, ${this.orphanTables()} of ${this.o.tables} tables not replicating`,
      ...lines,
      `  stopsWithTables=${this.stopsWithTables.length} stopsWhileOwner=${this.stopsWhileOwner.length}`,
    ].join('\n');
  }

  // ---- cluster state ----

  private tableCount(id: string): number {
    return this.primaries.filter((p) => p === id).length;
  }

  /** `reset` + `register`: a new capture ID, the etcd key, ready, campaigning. */
  private register(proc: CaptureProc): void {
    proc.initTimer = undefined;
    if (proc.state !== 'starting') return;
    proc.id = randomUUID();
    proc.state = 'running';
    this.registered.push(proc);
    this.campaign.push(proc);
    if (this.ownerProc !== undefined) this.captureReadyAt.set(proc.id, Date.now() + this.o.captureInitMs);
    this.maybeElect();
  }

  /** With no owner and a capture campaigning, one is elected `electionMs` later. */
  private maybeElect(): void {
    if (this.closed || this.ownerProc !== undefined || this.electionTimer !== undefined || this.campaign.length === 0) return;
    this.electionTimer = this.timers.after(this.o.electionMs, () => {
      this.electionTimer = undefined;
      if (this.ownerProc !== undefined) return;
      const candidates = this.campaign.filter((c) => c.state === 'running' && c.liveness === 0);
      const rigged = this.riggedWinner === undefined ? undefined : this.procs.get(this.riggedWinner);
      let winner = candidates[0];
      if (rigged !== undefined && rigged.state === 'running' && rigged.liveness === 0) {
        if (!candidates.includes(rigged)) {
          // The rigged capture is not campaigning yet (it resigned a moment ago): wait for it.
          this.maybeElectLater();
          return;
        }
        winner = rigged;
      }
      this.riggedWinner = undefined;
      if (winner !== undefined) this.becomeOwner(winner);
    });
  }

  private maybeElectLater(): void {
    this.timers.after(this.o.electionMs, () => this.maybeElect());
  }

  /** A new owner: fresh scheduler state (tiflow cdc/owner/owner.go: a new owner builds its changefeeds' schedulers; capture.go `campaignOwner` (v8.5.x)). */
  private becomeOwner(proc: CaptureProc): void {
    const now = Date.now();
    this.ownerProc = proc;
    proc.ownerSince = now;
    this.campaign = this.campaign.filter((c) => c !== proc);
    this.ownerChanges.push({ from: this.lastOwnerPod, to: proc.pod, reason: 'election', time: now });
    this.lastOwnerPod = proc.pod;
    this.schedulerReadyAt = now + this.o.ownerInitMs;
    this.captureReadyAt.clear();
    for (const c of this.registered) this.captureReadyAt.set(c.id as string, now + this.o.captureInitMs);
    this.drainTargetId = undefined;
    this.lastBalance = now;
  }

  /** The owner key is gone (resign or exit); the drain state lived in the old owner and is lost. */
  private loseOwner(): void {
    const old = this.ownerProc;
    if (old?.ownerSince !== undefined) {
      old.ownedMs += Date.now() - old.ownerSince;
      old.ownerSince = undefined;
    }
    this.ownerProc = undefined;
    this.drainTargetId = undefined;
    this.maybeElect();
  }

  /**
   * Owner resigns (`o.AsyncStop()`); its capture campaigns again after `campaignRetryMs`
   * (cdc/capture/capture.go `campaignOwner`: rate-limited loop, then `campaign` (v8.5.x)).
   */
  private resign(): void {
    const old = this.ownerProc;
    if (old === undefined) return;
    this.loseOwner();
    this.timers.after(this.o.campaignRetryMs, () => {
      if (old.state === 'running' && old.liveness === 0 && !this.campaign.includes(old) && this.ownerProc !== old) {
        this.campaign.push(old);
        this.maybeElect();
      }
    });
  }

  private schedulerReady(now: number): boolean {
    return this.ownerProc !== undefined && now >= this.schedulerReadyAt;
  }

  /** `CaptureManager.CheckAllCaptureInitialized` (cdc/scheduler/internal/v3/member/capture_manager.go:160-174 (v8.5.x)). */
  private allCapturesInitialised(now: number): boolean {
    return this.registered.length > 0 && this.registered.every((c) => (this.captureReadyAt.get(c.id as string) ?? Infinity) <= now);
  }

  /** Captures that may receive tables, with their loads. */
  private loads(except?: string): Map<string, number> {
    const loads = new Map<string, number>();
    for (const c of this.registered) if (c.liveness === 0 && c.id !== except) loads.set(c.id as string, 0);
    for (const p of this.primaries) if (p !== undefined && loads.has(p)) loads.set(p, (loads.get(p) as number) + 1);
    return loads;
  }

  private static leastLoaded(loads: Map<string, number>): string | undefined {
    let best: string | undefined;
    for (const [id, n] of loads) if (best === undefined || n < (loads.get(best) as number)) best = id;
    return best;
  }

  /** One owner tick: re-add orphan tables, drain (scheduler_drain_capture.go), balance. */
  private tick(): void {
    const now = Date.now();
    if (!this.schedulerReady(now) || !this.allCapturesInitialised(now)) return;
    // Basic scheduler: tables with no capture are added to the least loaded one.
    let pending = false;
    for (let i = 0; i < this.primaries.length; i++) {
      if (this.primaries[i] !== undefined) continue;
      if (now - this.orphanedAt[i] < this.o.rescheduleMs) {
        pending = true;
        continue;
      }
      const loads = this.loads(this.drainTargetId);
      const dest = TicdcSim.leastLoaded(loads);
      if (dest === undefined) {
        pending = true;
        continue;
      }
      this.primaries[i] = dest;
    }
    // Drain: only when every table replicates; finishes when the target holds none or is gone.
    if (this.drainTargetId !== undefined) {
      const target = this.drainTargetId;
      if (!this.registered.some((c) => c.id === target)) {
        this.drainTargetId = undefined;
      } else if (!pending) {
        const loads = this.loads(target);
        const victims = this.primaries.flatMap((p, i) => (p === target ? [i] : [])).slice(0, this.o.drainRate);
        if (victims.length === 0 || loads.size === 0) this.drainTargetId = undefined;
        for (const i of victims) {
          const dest = TicdcSim.leastLoaded(loads) as string;
          this.primaries[i] = dest;
          loads.set(dest, (loads.get(dest) as number) + 1);
        }
      }
      return;
    }
    // Balance every balanceMs: even out the table counts.
    if (this.o.balanceMs > 0 && !pending && now - this.lastBalance >= this.o.balanceMs) {
      this.lastBalance = now;
      const loads = this.loads();
      for (;;) {
        const ids = [...loads.keys()];
        if (ids.length < 2) break;
        const max = ids.reduce((a, b) => ((loads.get(b) as number) > (loads.get(a) as number) ? b : a));
        const min = TicdcSim.leastLoaded(loads) as string;
        if ((loads.get(max) as number) - (loads.get(min) as number) <= 1) break;
        const i = this.primaries.indexOf(max);
        this.primaries[i] = min;
        loads.set(max, (loads.get(max) as number) - 1);
        loads.set(min, (loads.get(min) as number) + 1);
      }
    }
  }

  // ---- HTTP ----

  private serve(proc: CaptureProc, req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const method = req.method ?? 'GET';
      const url = req.url ?? '/';
      const record: CdcRequestRecord = { pod: proc.pod, method, path: url, status: 0, time: Date.now() };
      let reply: Reply;
      const injected = this.faults.take(method, url, proc.pod);
      if (injected !== undefined) {
        reply = injected.status === 0 ? 'drop' : httpError(injected.status, '', injected.message);
      } else if (proc.state === 'stopped') {
        reply = 'drop';
      } else {
        try {
          reply = this.route(proc, method, url, Buffer.concat(chunks).toString('utf8'), record, req.headers);
        } catch (err) {
          reply = { status: 500, headers: { 'content-type': 'text/plain' }, body: `ticdc simulator error: ${(err as Error).message}` };
        }
      }
      if (reply === 'drop') {
        this.requests.push(record);
        req.socket.destroy();
        return;
      }
      record.status = reply.status;
      this.requests.push(record);
      res.writeHead(reply.status, reply.headers);
      res.end(reply.body);
    });
  }

  /** One request to `proc`, through the router of its version. */
  private route(
    proc: CaptureProc,
    method: string,
    url: string,
    body: string,
    record: CdcRequestRecord,
    headers: http.IncomingHttpHeaders = {},
  ): Reply {
    const path = new URL(url, 'http://cdc').pathname;
    if (!proc.features.gin) return path === '/metrics' ? this.metrics(proc, headers) : this.serveMux(proc, path, method);
    const routes = this.ginRoutes(proc, headers);
    // `/api/v2/changefeeds...`: the v2 group's ready check as the v1 one's, then forwarded to the owner.
    const cf = servesChangefeedsV2(proc.versionText, proc.architecture) ? matchChangefeedRoute(method, path) : undefined;
    if (cf !== undefined)
      return this.apiV1(proc, () =>
        this.forwardToOwner(proc, record, (o) => this.feeds.handle(cf, { ...o, version: o.versionText }, method, url, body)),
      );
    const found = routes.find((r) => r.method === method && r.path === path);
    if (found !== undefined) return found.handle(body, record);
    // gin: RedirectTrailingSlash is on (gin.New), HandleMethodNotAllowed off, so another method is a 404.
    const toggled = path.length > 1 && path.endsWith('/') ? path.slice(0, -1) : `${path}/`;
    if (routes.some((r) => r.method === method && r.path === toggled)) return redirect(method, url.replace(path, toggled));
    if (UNSIMULATED_PREFIXES.some((p) => path.startsWith(p))) return this.unsimulatedRoute(proc, method, path);
    return GIN_404;
  }

  /**
   * TiCDC's gin routes that this model serves, per version: cdc/http.go `RegisterRoutes`, cdc/api/v1/api.go
   * `RegisterOpenAPIRoutes` (v6.2+), cdc/api/open.go (v6.0-v6.1), cdc/http_router.go (v5.2-v5.4).
   */
  private ginRoutes(
    proc: CaptureProc,
    headers: http.IncomingHttpHeaders = {},
  ): { method: string; path: string; handle: (body: string, record: CdcRequestRecord) => Reply }[] {
    const f = proc.features;
    const routes = [
      { method: 'GET', path: '/status', handle: () => this.rootStatus(proc) },
      { method: 'GET', path: '/api/v1/status', handle: () => this.apiV1(proc, () => this.serverStatus(proc)) },
      // Health asks etcd for the owner, not Info(): it answers before the capture is initialised (pre-v6.2).
      {
        method: 'GET',
        path: '/api/v1/health',
        handle: (_b: string, r: CdcRequestRecord) => this.apiV1(proc, () => this.health(proc, r), false),
      },
      {
        method: 'GET',
        path: '/api/v1/captures',
        handle: (_b: string, r: CdcRequestRecord) =>
          this.apiV1(proc, () => this.forwardToOwner(proc, r, (owner) => this.listCaptures(owner))),
      },
      {
        method: 'POST',
        path: '/api/v1/owner/resign',
        handle: (_b: string, r: CdcRequestRecord) =>
          this.apiV1(proc, () => this.forwardToOwner(proc, r, (owner) => this.resignOwner(owner))),
      },
    ];
    if (f.drainApi) {
      routes.push({
        method: 'PUT',
        path: '/api/v1/captures/drain',
        handle: (b: string, r: CdcRequestRecord) =>
          this.apiV1(proc, () =>
            this.forwardToOwner(
              proc,
              r,
              (owner) =>
                this.drainAuthRefusal(owner, headers) ??
                (owner.features.newArch ? this.newArchDrain(owner, b) : this.drainCapture(owner, b)),
            ),
          ),
      });
    }
    // cdc/http.go `RegisterRoutes` (v6.0+; cdc/http_status.go `startStatusHTTP` in v5.2-v5.4): `router.Any("/metrics", gin.WrapH(promhttp.Handler()))`.
    for (const method of GIN_ANY_METHODS) routes.push({ method, path: '/metrics', handle: () => this.metrics(proc, headers) });
    return routes;
  }

  /**
   * `/metrics` (any method; every release, before the capture is initialised too): promhttp.Handler()
   * after `prometheus.DefaultGatherer = registry`, TiCDC's own registry (cdc/server/metrics.go; cdc/metrics.go
   * before v6.2), which has the process and Go collectors (`go_goroutines`, `go_threads`,
   * `process_start_time_seconds`) but not promhttp's own families (registered in the untouched
   * `DefaultRegisterer`). Gzipped for a client that accepts it. The content type's `escaping` term
   * follows tiflow's go.mod: prometheus/common below v0.47.0 up to v8.0 (none), v0.52.2 to v0.57.0 in
   * v8.1.0-v8.5.5 (`values`), v0.61.0 in v9.0.0-beta.1 and v0.65.0 from v8.5.6 and on master
   * (`underscores`). Modelled family:
   * - `ticdc_owner_ownership_counter` (cdc/owner/metrics.go; cdc/metrics_owner.go from v4.0.11): the
   *   seconds this process has been owner, added at every owner tick (cdc/owner/owner.go
   *   `updateMetrics`, every `owner-flush-interval`, 50 ms), counted here to the millisecond.
   */
  private metrics(proc: CaptureProc, headers: http.IncomingHttpHeaders): Answer {
    const v = parseTicdcVersion(proc.versionText);
    const families: PromFamily[] = goProcessFamilies(proc.startMs, 900, 40);
    if (atLeast(v, 4, 0, 11)) {
      const ms = proc.ownedMs + (proc.ownerSince === undefined ? 0 : Date.now() - proc.ownerSince);
      families.push({
        name: 'ticdc_owner_ownership_counter',
        help: 'The counter of ownership increases every 5 seconds on a owner capture',
        type: 'counter',
        samples: [{ value: ms / 1000 }],
      });
    }
    const escaping: PromEscaping = !atLeast(v, 8, 1, 0)
      ? 'none'
      : (v[0] === 8 && v[1] === 5 && v[2] >= 6) || atLeast(v, 9, 0, 0)
        ? 'underscores'
        : 'values';
    return promhttpAnswer(families, escaping, headers['accept-encoding']);
  }

  /** net/http ServeMux of TiCDC v4.0-v5.1 (cdc/http_status.go:44-59 (v5.1.5)): any method reaches a handler. */
  private serveMux(proc: CaptureProc, path: string, method: string): Reply {
    if (path === '/status') {
      // cdc/http_status.go handleStatus (v5.1.5:121-133): the capture may not exist yet (id "").
      const running = proc.state === 'running';
      return rootStatusAnswer({
        version: proc.versionText,
        git_hash: proc.gitHash,
        id: running ? proc.id : '',
        pid: proc.pid,
        is_owner: running && this.ownerProc === proc,
      });
    }
    // cdc/http_api_handler.go handleHealth (v5.1.5:59-61): always 200, no body.
    if (path === '/api/v1/health') return emptyAnswer(200);
    const legacy = ['/api/v1/changefeeds', '/capture/owner/', '/debug/', '/admin/log'];
    if (legacy.some((p) => path === p || path.startsWith(p))) return this.unsimulatedRoute(proc, method, path);
    return MUX_404;
  }

  private unsimulatedRoute(proc: CaptureProc, method: string, path: string): Answer {
    this.unsimulated.push(`${method} ${path} (${proc.versionText})`);
    return { status: 500, headers: { 'content-type': 'text/plain' }, body: `ticdc simulator: ${method} ${path} is not simulated` };
  }

  /**
   * The `/api/v1` group: from v6.2 `CheckServerReadyMiddleware` answers 503 until the capture is ready
   * (cdc/api/middleware/middleware.go:104-115 (v8.5.x)). Before v6.2 there is no such check and handlers
   * meet the uninitialised capture themselves (see `notInitialised`).
   */
  private apiV1(proc: CaptureProc, handler: () => Reply, needsInfo = true): Reply {
    // The new architecture has no ready check: `SelfInfo` fails until `reset` (server/server.go
    // `SelfInfo` (v8.5.7:393-399)), in the handler or in `ForwardToCoordinator`, answered 500.
    if (proc.state !== 'running' && proc.features.newArch)
      return httpError(500, 'CDC:ErrCaptureNotInitialized', 'capture has not been initialized yet');
    if (proc.state !== 'running') {
      if (proc.features.drainApi) return ERR_NOT_READY();
      if (needsInfo) return this.notInitialised(proc);
    }
    return handler();
  }

  /**
   * A pre-v6.2 handler calling `Info()` before `reset`: v6.1.1+ gets ErrCaptureNotInitialized (500 via
   * the error middleware); before, `*c.info` is a nil dereference and, with no gin.Recovery, net/http
   * drops the connection (cdc/capture/capture.go `Info` (v5.4.3:358-362, v6.1.0:318-322)).
   */
  private notInitialised(proc: CaptureProc): Reply {
    return proc.features.infoError ? httpError(500, 'CDC:ErrCaptureNotInitialized', 'capture has not been initialized yet') : 'drop';
  }

  /**
   * Root `GET /status` (cdc/api/status/status.go `handleStatus` (v8.5.x:70-88); v5.4.3 cdc/http_status.go:128-140):
   * no ready check; before `reset`, `Info()` fails (500, plain text) or, before v6.1.1, panics.
   */
  private rootStatus(proc: CaptureProc): Reply {
    if (proc.state !== 'running') {
      if (!proc.features.infoError) return 'drop';
      return { status: 500, headers: { 'content-type': 'text/plain; charset=utf-8' }, body: ERR_NOT_INITIALISED_TEXT };
    }
    return rootStatusAnswer({
      version: proc.versionText,
      git_hash: proc.gitHash,
      id: proc.id,
      pid: proc.pid,
      is_owner: this.ownerProc === proc,
    });
  }

  /**
   * `GET /api/v1/status` (api.go `ServerStatus` (v8.5.x:851-867)), answered locally: `model.ServerStatus`
   * (http_model.go:97-105): `liveness` from v6.2, `cluster_id` from v6.3.
   */
  private serverStatus(proc: CaptureProc): Reply {
    const f = proc.features;
    return indentedJson(200, {
      version: proc.versionText,
      git_hash: proc.gitHash,
      id: proc.id,
      ...(f.v63 ? { cluster_id: CLUSTER_ID } : {}),
      pid: proc.pid,
      is_owner: this.ownerProc === proc,
      ...(f.drainApi ? { liveness: proc.liveness } : {}),
    });
  }

  /**
   * `GET /api/v1/health`: v5.2-v6.2 200 when an owner exists (`GetOwnerCaptureInfo`, api.go v6.2.0:873-881);
   * v6.3+ forwarded to the owner, whose `isHealthy` (cdc/owner/owner.go:773-806 (v8.5.x)) is false while its
   * changefeed scheduler is not initialised or with 3+ versions among the captures
   * (pkg/version/check.go `CheckTiCDCVersion`): 500 ErrClusterIsUnhealthy.
   */
  private health(proc: CaptureProc, record: CdcRequestRecord): Reply {
    // New architecture: forwarded to the coordinator, whose own liveness decides (api/v2/health.go
    // `ServerHealth` (v8.5.4-v8.5.7, v26.3.x)): 200 `{}`, else 500 ErrClusterIsUnhealthy.
    if (proc.features.newArch) {
      return this.forwardToOwner(proc, record, (owner) =>
        owner.liveness === 0 ? compactJson(200, {}) : httpError(500, 'CDC:ErrClusterIsUnhealthy', 'TiCDC cluster is unhealthy'),
      );
    }
    if (!proc.features.v63) return this.ownerProc === undefined ? ERR_NO_LEADER() : emptyAnswer(200);
    return this.forwardToOwner(proc, record, () => {
      const versions = new Set(this.registered.map((c) => c.versionText));
      const healthy = !this.unhealthy && this.schedulerReady(Date.now()) && versions.size < 3;
      return healthy ? emptyAnswer(200) : httpError(500, 'CDC:ErrClusterIsUnhealthy', 'TiCDC cluster is unhealthy');
    });
  }

  private tablesConfigured(): number {
    return this.primaries.length;
  }

  /**
   * The owner answers; any other capture forwards the request to the owner's advertised address and
   * copies its answer (cdc/api/util.go `ForwardToOwner` (v8.5.x); v6.1.7 cdc/api/open.go:878; v5.4.3
   * cdc/capture/http_handler.go:768). No owner key: 500 "election: no leader".
   */
  private forwardToOwner(proc: CaptureProc, record: CdcRequestRecord, handler: (owner: CaptureProc) => Reply): Reply {
    const owner = this.ownerProc;
    if (owner === proc) return handler(owner);
    if (owner === undefined) return ERR_NO_LEADER();
    record.answeredBy = owner.pod;
    return handler(owner);
  }

  /**
   * `GET /api/v1/captures` on the owner (api.go `ListCapture` (v8.5.x:743-771)): every registered capture,
   * `is_owner` for the owner, `cluster_id` from v6.4 (the owner's version decides the shape).
   */
  private listCaptures(owner: CaptureProc): Reply {
    return indentedJson(
      200,
      this.registered.map((c) => ({
        id: c.id,
        is_owner: c === owner,
        address: c.address,
        ...(owner.features.captureClusterId ? { cluster_id: CLUSTER_ID } : {}),
      })),
    );
  }

  /**
   * `POST /api/v1/owner/resign` on the owner (api.go `ResignController` (v8.5.x:620-627)): 202, empty
   * body. The new architecture stops its coordinator and answers `{}` with 202 to a v1 call (api/v2/
   * coordinator.go `ResignOwner`, helper.go `getStatus` (v8.5.4+)).
   */
  private resignOwner(owner: CaptureProc): Reply {
    this.resign();
    return owner.features.newArch ? compactJson(202, {}) : emptyAnswer(202);
  }

  /**
   * `authenticateMiddleware` before the drain handler, on the coordinator the request was forwarded to
   * (pingcap/ticdc api/v1/api.go v8.5.7: `captureGroup.Use(coordinatorMiddleware)`, then
   * `PUT("/drain", authenticateMiddleware, ...)`; api/middleware/authenticate_middleware.go): with
   * `security.client-user-required`, no basic auth is 401 `ErrCredentialNotFound` as IndentedJSON. A
   * request with credentials is checked against `client-allowed-user` and by logging in to TiDB, which
   * this model does not do: it is let through.
   */
  private drainAuthRefusal(owner: CaptureProc, headers: http.IncomingHttpHeaders): Reply | undefined {
    if (!owner.features.drainAuth || this.o.clientUserRequired !== true) return undefined;
    if (/^basic\s+\S+/i.test(headers.authorization ?? '')) return undefined;
    return httpError(
      401,
      'CDC:ErrCredentialNotFound',
      'credential not found: please specify the user and password via authorization header',
    );
  }

  /**
   * `PUT /api/v1/captures/drain` in the new architecture, on the coordinator (the captures group is
   * forwarded to it: api/v1/api.go `RegisterOpenAPIV1Routes`). Without `newArchDrain` (v8.5.4-v8.5.6,
   * v9.0.0-beta.1, v26.3.1-v26.3.4: api/v1/api.go `drainCapture`) a per-process counter answers 10 on
   * every tenth call and 0 otherwise; nothing moves. With it (v8.5.7: api/v1/api.go `drainCapture`,
   * coordinator/controller_drain.go `DrainNode`): the coordinator itself cannot be drained (400); an
   * unknown target is 0 once drained, else 400 ErrCaptureNotExist; another drain still active, or
   * the coordinator not bootstrapped, answers 1; a peer without the drain protocol (a release
   * without it) answers 0, "fall back to legacy hard restart"; otherwise the tables left on the target.
   */
  private newArchDrain(owner: CaptureProc, rawBody: string): Reply {
    const parsed = bindDrainRequest(rawBody);
    if (typeof parsed !== 'string') return parsed;
    const target = parsed;
    if (!owner.features.newArchDrain) {
      owner.drainCalls += 1;
      return compactJson(202, { current_table_count: owner.drainCalls % 10 === 0 ? 10 : 0 });
    }
    if (!this.registered.some((c) => c.id === target)) {
      if (this.drainedIds.has(target)) return compactJson(202, { current_table_count: 0 });
      return httpError(400, 'CDC:ErrCaptureNotExist', `capture not exists, ${target}`);
    }
    if (target === owner.id) return httpError(400, 'CDC:ErrSchedulerRequestFailed', 'scheduler request failed, cannot drain the owner');
    if (this.drainTargetId !== undefined && this.drainTargetId !== target) return compactJson(202, { current_table_count: 1 });
    if (!this.schedulerReady(Date.now())) return compactJson(202, { current_table_count: 1 });
    if (this.registered.some((c) => !c.features.newArchDrain)) return compactJson(202, { current_table_count: 0 });
    const left = this.tableCount(target);
    if (left === 0) {
      this.drainedIds.add(target);
      if (this.drainTargetId === target) this.drainTargetId = undefined;
      return compactJson(202, { current_table_count: 0 });
    }
    this.drainTargetId = target;
    return compactJson(202, { current_table_count: left });
  }

  /**
   * `PUT /api/v1/captures/drain` on the owner (api.go `DrainCapture` (v8.5.x:782-840)), then the owner's
   * `handleDrainCaptures` (cdc/owner/owner.go:529-600) and the v3 scheduler's `DrainCapture`
   * (coordinator.go:184-249): the count of tables on the target *before* any moves; the first call
   * starts the drain, later calls report what is left.
   */
  private drainCapture(owner: CaptureProc, rawBody: string): Reply {
    const parsed = bindDrainRequest(rawBody);
    if (typeof parsed !== 'string') return parsed;
    const target = parsed;
    if (this.registered.length <= 1) {
      return httpError(400, 'CDC:ErrSchedulerRequestFailed', 'scheduler request failed, only one capture alive');
    }
    if (!this.registered.some((c) => c.id === target)) return httpError(400, 'CDC:ErrCaptureNotExist', `capture not exists, ${target}`);
    if (target === owner.id) return httpError(400, 'CDC:ErrSchedulerRequestFailed', 'scheduler request failed, cannot drain the owner');

    const now = Date.now();
    let total = 0;
    if (this.tablesConfigured() > 0) {
      if (!this.schedulerReady(now)) {
        // owner.go: a changefeed without scheduler counts 1, "to prevent a changefeed being considered drained".
        total = 1;
      } else if (!this.allCapturesInitialised(now)) {
        if (!owner.features.drainUninitialisedCountsOne) {
          // c.AbortWithError(503, err) writes 503 first; ErrorHandleMiddleware then writes the HTTPError body
          // with IndentedJSON, whose Content-Type comes after the header was sent: Go sniffs text/plain.
          const a = httpError(503, 'CDC:ErrSchedulerRequestFailed', 'not all captures initialized');
          return { ...a, headers: { 'content-type': 'text/plain; charset=utf-8' } };
        }
        total = 1;
      } else {
        total = this.tableCount(target);
        if (total > 0 && this.registered.length > 1 && this.drainTargetId === undefined) this.drainTargetId = target;
      }
    }
    return compactJson(202, { current_table_count: total });
  }
}

/** Real gin routes this model does not serve: answered 500 and listed in `unsimulated`, never a silent 404. */
const UNSIMULATED_PREFIXES = [
  '/api/v1/changefeeds',
  '/api/v1/processors',
  '/api/v1/log',
  '/api/v2/', // but the changefeed routes of ticdc-changefeeds.ts
  '/capture/owner/',
  '/debug/',
  '/admin/log',
  '/swagger/',
  '/config',
];

/** gin's `Any` (gin routergroup.go `anyMethods`). */
const GIN_ANY_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'HEAD', 'OPTIONS', 'DELETE', 'CONNECT', 'TRACE'];

/** `api.WriteData`: MarshalIndent with one space, `application/json` (cdc/api/util.go (v8.5.x)). */
function rootStatusAnswer(st: { version: string; git_hash: string; id?: string; pid: number; is_owner: boolean }): Answer {
  return {
    status: 200,
    headers: { 'content-type': 'application/json' },
    body: goJson({ version: st.version, git_hash: st.git_hash, id: st.id ?? '', pid: st.pid, is_owner: st.is_owner }, ' '),
  };
}

/** gin's trailing-slash redirect: 301 for GET, 307 otherwise, via net/http `http.Redirect`. */
function redirect(method: string, location: string): Answer {
  if (method !== 'GET') return { status: 307, headers: { location }, body: '' };
  const escaped = location.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&#34;').replace(/'/g, '&#39;');
  return {
    status: 301,
    headers: { location, 'content-type': 'text/html; charset=utf-8' },
    body: `<a href="${escaped}">Moved Permanently</a>.\n\n`,
  };
}

/**
 * `c.ShouldBindJSON(&model.DrainCaptureRequest{})`: a body that does not decode is ErrAPIInvalidParam
 * wrapping encoding/json's error (400). The cause text follows Go for an empty body (`EOF`) and wrong
 * types; for malformed JSON it is JavaScript's parser message, not Go's.
 */
function bindDrainRequest(raw: string): string | Answer {
  const invalid = (cause: string) => httpError(400, 'CDC:ErrAPIInvalidParam', `invalid api parameter: ${cause}`);
  if (raw.trim() === '') return invalid('EOF');
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch (e) {
    return invalid((e as Error).message);
  }
  if (v === null) return '';
  if (typeof v !== 'object' || Array.isArray(v)) {
    const kind = Array.isArray(v) ? 'array' : typeof v === 'string' ? 'string' : typeof v === 'boolean' ? 'bool' : 'number';
    return invalid(`json: cannot unmarshal ${kind} into Go value of type model.DrainCaptureRequest`);
  }
  const id = (v as Record<string, unknown>).capture_id;
  if (id === undefined || id === null) return '';
  if (typeof id !== 'string') {
    const kind = Array.isArray(id) ? 'array' : typeof id === 'object' ? 'object' : typeof id === 'boolean' ? 'bool' : 'number';
    return invalid(`json: cannot unmarshal ${kind} into Go struct field DrainCaptureRequest.capture_id of type string`);
  }
  return id;
}

// ---------------------------------------------------------------------------------------------
// Runtime helpers

function closeServer(server: http.Server): Promise<void> {
  return new Promise<void>((resolve) => {
    if (!server.listening) {
      resolve();
      return;
    }
    server.close(() => resolve());
    server.closeAllConnections();
  });
}
