/**
 * A PD cluster for scenario tests of the controller, playing PD v8.5.x (`version`, default v8.5.0):
 * a model of the PD members, TiKV and TiFlash stores and the evict-leader scheduler, reached over
 * real HTTP the way a client in the Kubernetes cluster reaches PD:
 * - `url` stands for the PD Service (`<cluster>-pd:2379`): each request goes to one running member,
 *   picked at random as kube-proxy would, and that member answers as PD does (a follower forwards
 *   to the leader, see `pd-http`). While no member runs the Service has no endpoint: connections are
 *   cut at once.
 * - a member started with an IP (`pdStart(pod, host, ip)`) also listens on `ip:clientPort` while its
 *   process runs, so a client can ask that member itself (`/pd/api/v2/ready`, `/pd/api/v1/ping`), and
 *   its discovery requests leave from that IP.
 * - a TiFlash started with an IP serves `GET /tiflash/store-status` on `ip:20292` (its proxy's status port).
 * - `GET /metrics`, on the Service and a member's own listener, is the member's embedded etcd's
 *   Prometheus endpoint (see pd-http `metrics`); the leader's `pd_cluster_status` is collected every
 *   `metricsCollectMs`.
 * - `url`'s port also speaks gRPC, for PD's embedded etcd (`etcd`, `pd-etcd`): PD serves etcd's
 *   client API on its client port beside the HTTP API, and so does the Service here, telling a
 *   connection's HTTP/2 preface from HTTP/1.1 as PD's cmux does (tikv/pd server/server.go).
 * - with `microservices`, PD runs as the micro-services' API server (`pd-server services api`):
 *   `/pd/api/v2/ms/*` answer from `ms`, the registry the TSO and scheduling servers (pdms.ts) write,
 *   and the leader allocates the TSO default keyspace group once TiKV bootstrapped the cluster.
 *
 * The scenario harness plays the kubelet through the process hooks (`pdStart`, `tikvStop`,
 * `wipeData`, `tiflashStart`...); tests read the model and the records of what went wrong
 * (`stopsWhileLeader`, `stopsWithLeaders`, `splitBrain`...), and inject faults (`down`, `failNext`).
 *
 * It runs inside the test process on real timers, with model delays in milliseconds (PD's own
 * timeouts, such as the redirector's 3 s wait for a leader, are kept as PD has them). The parts:
 * `pd-members` (membership, quorum, leader, region loading), `pd-process` (PD pods: data, discovery,
 * bootstrap or join), `pd-stores` (stores, leaders, schedulers, TiFlash status), `pd-http` (the
 * redirector, routes and bodies), `pd-wire` (Go's JSON and text formats).
 *
 * Ids: member and cluster ids are random uint64 values, as in PD; the accessors give them as decimal
 * strings (`members()[i].memberId`, `clusterId()`), exact. Store ids are small numbers from 1.
 */
import * as http from 'node:http';
import type { Http2Server, ServerHttp2Session } from 'node:http2';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import { EtcdStore, etcdGrpcServer } from './pd-etcd';
import { collectClusterStatus, parsePdVersion, serve, type ApiModel, type PdVersion, type Reply } from './pd-http';
import { PdMembers, type Member } from './pd-members';
import { PdProcesses, type PdPodState } from './pd-process';
import {
  definedOnly,
  FaultInjector,
  pollUntil,
  SimRecords,
  Timers,
  type LeaderTransfer,
  type RequestMatch,
  type ProcessFailure,
  type RequestRecord,
  type SchedulerChange,
  type StopWhileLeader,
  type StopWithLeaders,
} from './pd-runtime';
import { TikvStores, type TiflashStatus, type TikvProcessState, type TikvStore } from './pd-stores';
import { MsRegistry } from './pdms';
import { renderJson, RENDER_JSON_TYPE } from './pd-wire';

export type {
  LeaderTransfer,
  PdPodState,
  PdVersion,
  ProcessFailure,
  RequestRecord,
  SchedulerChange,
  StopWhileLeader,
  StopWithLeaders,
  TiflashStatus,
  TikvProcessState,
  TikvStore,
};
export type { NodeState, StoreLabel, StoreState } from './pd-stores';

/** A PD member as the accessors give it. */
export interface PdMember {
  /** `--name` of the member: the pod name, or the pod's peer host when names must be global. */
  name: string;
  /** The etcd member id, a uint64 (almost always above 2^53), as a decimal string. */
  memberId: string;
  peerUrl: string;
  clientUrl: string;
  running: boolean;
  /** The member's data directory exists (false after `wipeData`). */
  hasData: boolean;
  /** The pod that runs the member. */
  pod: string;
}

export interface PdSimOptions {
  /** The TidbCluster's name: default PD peer hosts and store addresses derive from it. */
  cluster: string;
  namespace: string;
  /** The PD version played: v8.5.0 ... v8.5.7 (see `PdVersion` for what differs). @default 'v8.5.0' */
  version?: string;
  /** Base URL of the discovery service (`http://127.0.0.1:<port>`); can also be set later on the sim. */
  discoveryUrl?: string;
  /** Time to elect a leader once there is none and a majority runs. @default 100 */
  electionMs?: number;
  /** Time for etcd's leadership to move on a requested PD leader transfer. @default 30 */
  transferMs?: number;
  /** Time a member takes to load its regions once it follows a leader, or leads a bootstrapped cluster (`/pd/api/v2/ready`). @default 300 */
  regionLoadMs?: number;
  /** `pd-server.use-region-storage`: false keeps every follower's `/pd/api/v2/ready` at 500 until it leads. @default true */
  useRegionStorage?: boolean;
  /** The port of each member's own listener (`pdStart` with an IP). @default 2379 */
  clientPort?: number;
  /** Period of the store scheduling rounds; 0 turns them off, and the test calls `tick()`. @default 20 */
  tickMs?: number;
  /** Leaders the evict-leader scheduler (or an Offline store) moves per round. @default 30 */
  evictRate?: number;
  /** Leader moves per round toward an even spread. @default 10 */
  balanceRate?: number;
  /** Region leaders in the cluster. @default 300 */
  totalLeaders?: number;
  /**
   * Time from Disconnected to Down for a stopped store: PD's `max-store-down-time` (30m by default),
   * scaled; Disconnected itself (20 s without heartbeat in PD) comes at once. @default 1000
   */
  storeDownMs?: number;
  /** Delay between a PD pod's discovery attempts (and restarts after a failed join). @default 50 */
  discoveryRetryMs?: number;
  /** `--name` of joining members: the pod name, or the peer host (clusterDomain / acrossK8s). @default 'pod' */
  memberNames?: 'pod' | 'host';
  /** `replication.max-replicas`. @default 3 */
  maxReplicas?: number;
  /** `replication.location-labels`, as PD's config file sets them at bootstrap. @default [] */
  locationLabels?: string[];
  /** Stores whose leader eviction makes no progress. @default none */
  stuckEviction?: Iterable<number>;
  /** TiFlash's time from start to Ready, and from registering its store to Running, is half of this each. @default 200 */
  tiflashStartMs?: number;
  /**
   * PD runs in API mode (`pd-server services api`, the operator's `spec.pd.mode: ms`): it serves
   * `/pd/api/v2/ms/*` from the micro-services' registry; otherwise those answer 404 "not support micro
   * service". @default false
   */
  microservices?: boolean;
  /** Period of the leader's TSO keyspace-group allocation (PD: `allocNodesToKeyspaceGroupsInterval`, 1 s). @default 100 */
  keyspaceGroupAllocMs?: number;
  /**
   * The interval of `GET /pd/api/v2/ms/primary`'s 25 looks for a primary (server/server.go
   * `retryIntervalGetServicePrimary`, 100 ms: 2.5 s in all), scaled 1/10 like the micro-services'
   * leases (pdms.ts: 3 s / 5 s, 300 / 500 ms here), so that the wait stays shorter than a lease, as in
   * reality. @default 10
   */
  msPrimaryRetryMs?: number;
  /**
   * Period of the leader's metrics collection (`pd_cluster_status` in `/metrics`): PD's
   * `metricsCollectionJobInterval`, 10 s (tikv/pd server/cluster/cluster.go). 0 turns it off, and the
   * test calls `collectMetrics()`. @default 10000
   */
  metricsCollectMs?: number;
}

/** The defaults of `PdSimOptions`, in one place. */
export const PD_SIM_DEFAULTS = {
  version: 'v8.5.0',
  electionMs: 100,
  transferMs: 30,
  regionLoadMs: 300,
  useRegionStorage: true,
  clientPort: 2379,
  tickMs: 20,
  evictRate: 30,
  balanceRate: 10,
  totalLeaders: 300,
  storeDownMs: 1000,
  discoveryRetryMs: 50,
  memberNames: 'pod',
  maxReplicas: 3,
  tiflashStartMs: 200,
  microservices: false,
  keyspaceGroupAllocMs: 100,
  msPrimaryRetryMs: 10,
  metricsCollectMs: 10_000,
} as const;

/** TiFlash proxy's status port (tidb-operator `DefaultTiFlashProxyStatusPort`). */
export const TIFLASH_PROXY_STATUS_PORT = 20292;

export type { RequestMatch } from './pd-runtime';

/** A server on `ip:port` that stands for one process's listener. */
interface Listener {
  server: http.Server;
  ip: string;
  closed: boolean;
}

export class PdSim {
  /** Starts the Service's server on a free local port. */
  static async start(options: PdSimOptions): Promise<PdSim> {
    const sim = new PdSim(options);
    await new Promise<void>((resolve, reject) => {
      sim.front.once('error', reject);
      sim.front.listen(0, '127.0.0.1', () => resolve());
    });
    await new Promise<void>((resolve) => sim.etcdServer.listen(0, '127.0.0.1', () => resolve()));
    const { port } = sim.front.address() as AddressInfo;
    sim.baseUrl = `http://127.0.0.1:${port}`;
    if (sim.tickMs > 0) sim.timers.every(sim.tickMs, () => sim.tick());
    if (sim.metricsCollectMs > 0) sim.timers.every(sim.metricsCollectMs, () => sim.collectMetrics());
    sim.timers.every(sim.keyspaceGroupAllocMs, () => sim.keyspaceGroupTick());
    return sim;
  }

  /** Base URL of the discovery service the PD pods ask; read at every attempt. */
  discoveryUrl?: string;
  /** Store ids whose eviction makes no progress; add and delete at will (or use `setEvictionStuck`). */
  readonly stuckEviction: Set<number>;
  /** The PD version played. */
  readonly version: PdVersion;

  readonly stopsWhileLeader: StopWhileLeader[];
  readonly stopsWithLeaders: StopWithLeaders[];
  readonly splitBrain: string[];
  readonly transfers: LeaderTransfer[];
  /** Every change of the evict-leader scheduler, with who asked (`by`). */
  readonly schedulerLog: SchedulerChange[];
  readonly requests: RequestRecord[];
  /** Failed joins, pd-server exits after member removal, unusable discovery answers, store processes that exited, listeners that could not bind. */
  readonly processFailures: ProcessFailure[];

  private baseUrl = '';
  private isDown = false;
  private closed = false;
  private readonly faults = new FaultInjector();
  private readonly tickMs: number;
  private readonly clientPort: number;
  private readonly keyspaceGroupAllocMs: number;
  private readonly metricsCollectMs: number;
  private readonly timers = new Timers();
  private readonly records = new SimRecords();
  private readonly model: ApiModel;
  private readonly server: http.Server;
  /** PD's embedded etcd: its keys, and its gRPC KV service on the client port (test/sim/pd-etcd.ts). */
  readonly etcd = new EtcdStore();
  private readonly etcdServer: Http2Server;
  private readonly etcdSessions = new Set<ServerHttp2Session>();
  /** The Service's port: HTTP/1.1 for the API, HTTP/2 (gRPC) for etcd, told apart by the HTTP/2 preface, as PD's cmux does. */
  private readonly front: net.Server;
  /** Each PD pod's own listener, while its pd-server runs. */
  private readonly memberListeners = new Map<string, Listener>();
  /** The IP each PD pod was started with. */
  private readonly podIps = new Map<string, string>();
  /** Each TiFlash pod's status listener, while its container runs. */
  private readonly tiflashListeners = new Map<string, Listener>();

  private constructor(private readonly options: PdSimOptions) {
    const o = { ...PD_SIM_DEFAULTS, ...definedOnly(options) };
    this.version = parsePdVersion(o.version);
    this.tickMs = o.tickMs;
    this.clientPort = o.clientPort;
    this.keyspaceGroupAllocMs = o.keyspaceGroupAllocMs;
    this.metricsCollectMs = o.metricsCollectMs;
    this.discoveryUrl = options.discoveryUrl;
    this.stuckEviction = new Set(options.stuckEviction ?? []);
    const members = new PdMembers(
      { electionMs: o.electionMs, transferMs: o.transferMs, regionLoadMs: o.regionLoadMs, useRegionStorage: o.useRegionStorage },
      this.timers,
      this.records,
    );
    const processes = new PdProcesses(
      {
        discoveryRetryMs: o.discoveryRetryMs,
        memberNames: o.memberNames,
        discoveryUrl: () => this.discoveryUrl,
        onServing: (pod, member, graceful) => this.memberServing(pod, member, graceful === true),
      },
      members,
      this.timers,
      this.records,
    );
    const stores = new TikvStores(
      {
        evictRate: o.evictRate,
        balanceRate: o.balanceRate,
        totalLeaders: o.totalLeaders,
        storeDownMs: o.storeDownMs,
        maxReplicas: () => this.model.replication.maxReplicas,
        tiflashStartMs: o.tiflashStartMs,
      },
      this.records,
      this.timers,
      () => members.leader !== undefined,
      this.stuckEviction,
      () => members.raftBootstrapped(),
    );
    this.model = {
      version: this.version,
      members,
      processes,
      stores,
      replication: {
        maxReplicas: o.maxReplicas,
        locationLabels: [...(o.locationLabels ?? [])],
        strictlyMatchLabel: false,
        enablePlacementRules: true,
        enablePlacementRulesCache: false,
        isolationLevel: '',
      },
      removedSchedulers: new Set(),
      evictBatch: 3,
      maxStoreDownTime: '30m0s',
      microservices: o.microservices,
      useRegionStorage: o.useRegionStorage,
      ms: new MsRegistry(),
      msPrimaryRetryMs: o.msPrimaryRetryMs,
      metrics: new Map(),
    };

    ({
      stopsWhileLeader: this.stopsWhileLeader,
      stopsWithLeaders: this.stopsWithLeaders,
      splitBrain: this.splitBrain,
      transfers: this.transfers,
      schedulerLog: this.schedulerLog,
      requests: this.requests,
      processFailures: this.processFailures,
    } = this.records);

    this.server = http.createServer((req, res) => this.answer(req, res, 'service', () => this.pickMember()));
    // While down, or while no member runs (the Service has no endpoint), connections are cut as they arrive.
    this.server.on('connection', (socket) => {
      if (this.isDown || this.pickMember() === undefined) socket.destroy();
    });
    this.etcdServer = etcdGrpcServer(this.etcd);
    this.etcdServer.on('session', (session) => {
      this.etcdSessions.add(session);
      session.once('close', () => this.etcdSessions.delete(session));
    });
    this.front = net.createServer((socket) => {
      if (this.isDown || this.pickMember() === undefined) {
        socket.destroy();
        return;
      }
      socket.once('data', (chunk: Buffer) => {
        socket.pause();
        if (chunk.subarray(0, 3).toString() !== 'PRI') {
          socket.unshift(chunk);
          this.server.emit('connection', socket);
          socket.resume();
          return;
        }
        // Node's HTTP/2 session reads the socket's handle itself, past anything put back: the gRPC
        // connection goes through to the etcd server's own loopback port instead.
        const upstream = net.connect((this.etcdServer.address() as AddressInfo).port, '127.0.0.1', () => {
          upstream.write(chunk);
          socket.pipe(upstream).pipe(socket);
          socket.resume();
        });
        const close = () => {
          socket.destroy();
          upstream.destroy();
        };
        upstream.on('error', close).on('close', close);
        socket.on('error', close).on('close', close);
      });
    });
  }

  /** The Service's base URL, `http://127.0.0.1:<port>` (what the controller gets as `--pd-url`). */
  get url(): string {
    return this.baseUrl;
  }

  /** PD runs in API mode (`services api`); a change takes effect on the next request, as a restart of every member in that mode would. */
  get microservices(): boolean {
    return this.model.microservices;
  }

  set microservices(value: boolean) {
    this.model.microservices = value;
  }

  /** The micro-services' keys in PD's etcd: the TSO and scheduling servers (pdms.ts) register there, `/pd/api/v2/ms/*` reads them. */
  get ms(): MsRegistry {
    return this.model.ms;
  }

  /** While true, every connection to PD (the Service and the members' listeners) is cut without an answer. */
  get down(): boolean {
    return this.isDown;
  }

  set down(value: boolean) {
    this.isDown = value;
    if (value) {
      this.server.closeAllConnections();
      for (const session of this.etcdSessions) session.destroy();
      for (const l of this.memberListeners.values()) l.server.closeAllConnections();
    }
  }

  /** Answers the next `times` requests that match with `status` and a PD-style error body (a JSON string). */
  failNext(match: RequestMatch, status: number, times = 1, message = 'injected failure'): void {
    this.faults.add(match, status, times, message);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.timers.close();
    this.model.processes.close();
    const listeners = [...this.memberListeners.values(), ...this.tiflashListeners.values()];
    this.memberListeners.clear();
    this.tiflashListeners.clear();
    for (const session of this.etcdSessions) session.destroy();
    const front = new Promise<void>((resolve) => this.front.close(() => resolve()));
    const etcd = new Promise<void>((resolve) => this.etcdServer.close(() => resolve()));
    await Promise.all([front, etcd, closeServer(this.server), ...listeners.map((l) => closeListener(l))]);
  }

  // ---- model accessors (snapshots: changing them changes nothing) ----

  members(): PdMember[] {
    return this.model.members.list().map((m) => ({
      name: m.name,
      memberId: m.memberId.toString(),
      peerUrl: m.peerUrl,
      clientUrl: m.clientUrl,
      running: m.running,
      hasData: m.hasData,
      pod: m.pod,
    }));
  }

  leader(): string | undefined {
    return this.model.members.leader?.name;
  }

  /** The cluster id as a decimal string; undefined until the first PD member started. */
  clusterId(): string | undefined {
    return this.model.members.clusterId?.toString();
  }

  /** TiKV bootstrapped the raft cluster (the store APIs answer). */
  tikvBootstrapped(): boolean {
    return this.model.stores.bootstrapped;
  }

  /** What the pod's PD process is doing. */
  pdState(podName: string): PdPodState {
    return this.model.processes.state(podName);
  }

  /** Whether the pod's PD member has loaded its regions (what `/pd/api/v2/ready` reports). */
  pdRegionsLoaded(podName: string): boolean {
    const m = this.model.processes.servingMember(podName);
    return m !== undefined && this.model.members.regionsLoaded(m);
  }

  stores(): TikvStore[] {
    return this.model.stores.list();
  }

  /**
   * The pod's current store, if its TiKV (or TiFlash) ever registered: the store its server serves,
   * else the one its data belongs to, else the newest one registered at its address.
   */
  store(podName: string): TikvStore | undefined {
    return this.model.stores.forPod(podName);
  }

  /** What the pod's TiKV process is doing: `stopped`, `running`, or `failed` (tikv-server exited). */
  tikvState(podName: string): TikvProcessState {
    return this.model.stores.processState(podName);
  }

  /** What the pod's TiFlash process is doing: `stopped`, `running`, or `failed`. */
  tiflashState(podName: string): TikvProcessState {
    return this.model.stores.processState(podName);
  }

  /** TiFlash's `/tiflash/store-status` (Idle, Ready, Running) while it runs; undefined otherwise. */
  tiflashStoreStatus(podName: string): TiflashStatus | undefined {
    return this.model.stores.tiflashStatus(podName);
  }

  /** The store id kept in the pod's data directory, if it has data. */
  tikvDataStoreId(podName: string): number | undefined {
    return this.model.stores.dataStoreId(podName);
  }

  /** Store ids in the evict-leader scheduler (in the order they were added). */
  evictSchedulers(): number[] {
    return this.model.stores.evictSchedulers();
  }

  /** `<pod>.<cluster>-pd-peer.<ns>.svc`, the host the PD start script registers with discovery. */
  pdPeerHost(podName: string): string {
    return `${podName}.${this.options.cluster}-pd-peer.${this.options.namespace}.svc`;
  }

  /** `<pod>.<cluster>-tikv-peer.<ns>.svc:20160`, the address a TiKV store registers. */
  tikvAddress(podName: string): string {
    return `${podName}.${this.options.cluster}-tikv-peer.${this.options.namespace}.svc:20160`;
  }

  /** `<pod>.<cluster>-tiflash-peer.<ns>.svc:3930`, the address a TiFlash store registers. */
  tiflashAddress(podName: string): string {
    return `${podName}.${this.options.cluster}-tiflash-peer.${this.options.namespace}.svc:3930`;
  }

  // ---- process hooks (the scenario harness calls them as containers start and stop) ----

  /**
   * A PD container started: runs its member again, or goes through discovery when it has no data.
   * With `ip`, discovery requests leave from that address, and while pd-server runs the member
   * answers on `ip:clientPort` too.
   */
  pdStart(podName: string, peerHost = this.pdPeerHost(podName), ip?: string): void {
    if (ip === undefined) this.podIps.delete(podName);
    else this.podIps.set(podName, ip);
    // A new process: its start time (the start script `exec`s pd-server, which keeps it), no scrapes yet.
    // (A container restart after a failed join, which PdProcesses plays within, keeps this time here.)
    const now = Date.now();
    this.model.metrics.set(podName, { startMs: now, serverStart: Math.floor(now / 1000), scrapes: 0, clusterStatus: new Map() });
    this.model.processes.start(podName, peerHost, ip);
  }

  /** A PD container stopped; stopping the leader is recorded in `stopsWhileLeader`. */
  pdStop(podName: string): void {
    this.model.processes.stop(podName);
  }

  /**
   * The pod's next join dies after etcd's `MemberAdd` and before its etcd starts: PD keeps a member
   * with its peer URL and no name (pd-members.ts `addUnstarted`), and the container restarts.
   */
  pdDiesAfterMemberAdd(podName: string): void {
    this.model.processes.diesAfterMemberAdd.add(podName);
  }

  /** The PD pod's volume is gone: its next start goes through discovery. (`tikvWipe` for TiKV pods.) */
  wipeData(podName: string): void {
    this.model.processes.wipe(podName);
  }

  /**
   * A TiKV container started; once PD has a leader its tikv-server meets PD with its data:
   * - data of a store that is not Tombstone: resumes that store (Up again, or still Offline);
   * - data of a Tombstone store: exits ("store is tombstone"): `processFailures` gets a line, the store
   *   stays Tombstone, and the container keeps restarting it (every round) until `tikvStop`, or until
   *   `tikvWipe` takes the data away;
   * - no data (first start, or wiped): registers a new store, which it remembers in its data; PD refuses
   *   it ("duplicated store address") while a store that is not Tombstone has the same address. The
   *   first store of the cluster bootstraps the raft cluster.
   * `version` is what the store reports (TiKV's, without "v"): by default the PD version's.
   */
  tikvStart(podName: string, address = this.tikvAddress(podName), version = this.version.text.replace(/^v/, '')): void {
    this.model.stores.start(podName, address, 'tikv', version);
  }

  /**
   * The TiKV pod's volume is lost: the next start registers a new store. A tikv-server that runs keeps
   * serving its store until it stops.
   */
  tikvWipe(podName: string): void {
    this.model.stores.wipe(podName);
  }

  /** A TiKV container stopped (its data stays); leaders it still held are recorded in `stopsWithLeaders`, then moved. */
  tikvStop(podName: string): void {
    this.model.stores.stop(podName);
  }

  /**
   * A TiFlash container started. Its store (label `engine=tiflash`) registers like a TiKV one, but
   * only once TiKV bootstrapped the cluster (TiFlash asks every 3 s until then). With `ip`, its
   * proxy answers `GET /tiflash/store-status` on `ip:20292` while the container runs.
   */
  tiflashStart(podName: string, address = this.tiflashAddress(podName), ip?: string): void {
    this.model.stores.start(podName, address, 'tiflash', this.version.text);
    if (ip !== undefined) this.openTiflashListener(podName, ip);
  }

  /** A TiFlash container stopped (its data stays). */
  tiflashStop(podName: string): void {
    this.model.stores.stop(podName);
    const l = this.tiflashListeners.get(podName);
    this.tiflashListeners.delete(podName);
    if (l !== undefined) void closeListener(l);
  }

  /** The TiFlash pod's volume is lost: the next start registers a new store. */
  tiflashWipe(podName: string): void {
    this.model.stores.wipe(podName);
  }

  setEvictionStuck(storeId: number, stuck = true): void {
    if (stuck) this.stuckEviction.add(storeId);
    else this.stuckEviction.delete(storeId);
  }

  /**
   * An administrator adds a store to the evict-leader scheduler with pd-ctl (`scheduler add
   * evict-leader-scheduler <id>`); `schedulerLog` records it `by: 'pd-ctl'`.
   */
  addEvictLeaderScheduler(storeId: number): void {
    if (!this.model.stores.bootstrapped) throw new Error('addEvictLeaderScheduler: TiKV has not bootstrapped the cluster yet');
    if (!this.model.stores.hasStore(storeId))
      throw new Error(`addEvictLeaderScheduler: [PD:core:ErrStoreNotFound]store ${storeId} not found`);
    this.model.stores.addEvictLeader(storeId, 'pd-ctl');
  }

  /** One scheduling round now (heartbeats, Down detection, eviction, draining, balancing). */
  tick(): void {
    this.model.stores.tick();
  }

  /** One run of the leader's metrics collection now (`pd_cluster_status`, see `metricsCollectMs`). */
  collectMetrics(): void {
    collectClusterStatus(this.model);
  }

  /**
   * The leader's keyspace-group job in API mode (pkg/keyspace/tso_keyspace_group.go): it runs from the
   * RaftCluster's start (server/cluster/cluster.go `Start`: `keyspaceGroupManager.Bootstrap`), i.e. once
   * TiKV bootstrapped the cluster, while there is a leader.
   */
  keyspaceGroupTick(): void {
    if (!this.model.microservices || this.model.members.leader === undefined || !this.model.stores.bootstrapped) return;
    this.model.ms.allocTick();
  }

  /** Resolves once `pred` holds; rejects after `timeoutMs` with `message` and the model's state. */
  waitFor(pred: () => boolean, timeoutMs = 3000, message = 'condition'): Promise<void> {
    return pollUntil(pred, timeoutMs, message, () => this.describe());
  }

  /** The model in a few lines, for failure messages. */
  describe(): string {
    const members = this.model.members
      .list()
      .map(
        (m) =>
          `  member ${m.name} id=${m.memberId} ${m.running ? 'running' : 'stopped'}${m.hasData ? '' : ' no-data'} pod=${m.pod}:${this.pdState(m.pod)}`,
      );
    const stores = this.stores().map(
      (s) =>
        `  store ${s.id} ${s.engine} ${s.pod}${this.store(s.pod)?.id === s.id ? `:${this.tikvState(s.pod)}` : ''} ${s.state} leaders=${s.leaderCount} regions=${s.regionCount}`,
    );
    return [
      `PD ${this.version.text} cluster ${this.clusterId() ?? '(no member started)'}, leader ${this.leader() ?? '(none)'}, TiKV ${this.tikvBootstrapped() ? 'bootstrapped' : 'not bootstrapped'}`,
      ...members,
      ...stores,
      `  evict-leader-scheduler: [${this.evictSchedulers().join(', ')}]`,
      ...(this.model.microservices
        ? [
            `  API mode: tso primary ${this.model.ms.primary('tso') ?? '(none)'}, scheduling primary ${this.model.ms.primary('scheduling') ?? '(none)'}`,
          ]
        : []),
    ].join('\n');
  }

  // ---- HTTP ----

  /** A member for a request to the Service: any running one, as kube-proxy picks an endpoint. */
  private pickMember(): Member | undefined {
    const running = this.model.members.list().filter((m) => m.running);
    return running.length === 0 ? undefined : running[Math.floor(Math.random() * running.length)];
  }

  private answer(req: http.IncomingMessage, res: http.ServerResponse, via: 'service' | 'member', memberOf: () => Member | undefined): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const member = memberOf();
        if (this.isDown || member === undefined) {
          req.socket.destroy();
          return;
        }
        const method = req.method ?? 'GET';
        const path = req.url ?? '/';
        let reply: Reply;
        const injected = this.faults.take(method, path);
        if (injected !== undefined) {
          reply = { status: injected.status, headers: { 'content-type': RENDER_JSON_TYPE }, body: renderJson(injected.message) };
        } else {
          try {
            reply = await serve(this.model, member, {
              method,
              url: path,
              body: Buffer.concat(chunks).toString('utf8'),
              headers: req.headers,
            });
          } catch (err) {
            reply = {
              status: 500,
              headers: { 'content-type': RENDER_JSON_TYPE },
              body: renderJson(`simulator error: ${(err as Error).message}`),
            };
          }
        }
        // The process was stopped (or the network went down) while the request was in it: no answer.
        // A pd-server that exits because this very request removed its member has the answer
        // already: the member removal is committed before the leader answers, and the process
        // exits after that (etcd stops the removed member once it applies the change).
        const exitedAfterRemoval = this.model.processes.state(member.pod) === 'crashed';
        if (this.closed || this.isDown || (!member.running && !exitedAfterRemoval)) {
          req.socket.destroy();
          return;
        }
        this.records.requests.push({ method, path, status: reply.status, time: Date.now(), member: member.name, via });
        res.writeHead(reply.status, reply.headers);
        res.end(reply.body);
      })();
    });
  }

  /** pd-server of a pod started or stopped serving: its own listener follows, when the pod has an IP. */
  private memberServing(pod: string, member: Member | undefined, graceful = false): void {
    const metrics = this.model.metrics.get(pod);
    // server/server.go `startServer`: `pd_server_info`'s value.
    if (member !== undefined && metrics !== undefined) metrics.serverStart = Math.floor(Date.now() / 1000);
    const existing = this.memberListeners.get(pod);
    if (member === undefined) {
      this.memberListeners.delete(pod);
      if (existing !== undefined) void closeListener(existing, graceful);
      return;
    }
    const ip = this.podIps.get(pod);
    if (ip === undefined || existing !== undefined || this.closed) return;
    const server = http.createServer((req, res) => this.answer(req, res, 'member', () => this.model.processes.servingMember(pod)));
    server.on('connection', (socket) => {
      if (this.isDown || this.model.processes.servingMember(pod) === undefined) socket.destroy();
    });
    const listener: Listener = { server, ip, closed: false };
    this.memberListeners.set(pod, listener);
    this.listen(listener, pod, this.clientPort);
  }

  private openTiflashListener(pod: string, ip: string): void {
    const existing = this.tiflashListeners.get(pod);
    if (existing !== undefined || this.closed) return;
    const server = http.createServer((req, res) => this.answerTiflash(pod, req, res));
    server.on('connection', (socket) => {
      if (this.model.stores.tiflashStatus(pod) === undefined) socket.destroy();
    });
    const listener: Listener = { server, ip, closed: false };
    this.tiflashListeners.set(pod, listener);
    this.listen(listener, pod, TIFLASH_PROXY_STATUS_PORT);
  }

  /**
   * The TiFlash proxy's status server (pingcap/tidb-engine-ext proxy_components/proxy_server/src/
   * status_server/mod.rs, the proxy of TiFlash v8.5.0): `GET /tiflash/store-status` goes to TiFlash
   * (`HandleHttpRequestStoreStatus`, dbms/src/Storages/KVStore/FFI/ProxyFFIStatusService.cpp) and is
   * answered 200 with the bare status name, no newline, no content type. Other paths: 404
   * "path not found, <the request, Rust Debug-formatted>".
   */
  private answerTiflash(pod: string, req: http.IncomingMessage, res: http.ServerResponse): void {
    req.resume();
    req.on('end', () => {
      const status = this.model.stores.tiflashStatus(pod);
      if (status === undefined) {
        req.socket.destroy();
        return;
      }
      const path = new URL(req.url ?? '/', 'http://tiflash').pathname;
      let code = 200;
      let body: string = status;
      if (req.method !== 'GET' || path !== '/tiflash/store-status') {
        code = 404;
        const headers: string[] = [];
        for (let i = 0; i < req.rawHeaders.length; i += 2)
          headers.push(`${JSON.stringify(req.rawHeaders[i].toLowerCase())}: ${JSON.stringify(req.rawHeaders[i + 1])}`);
        body = `path not found, Request { method: ${req.method}, uri: ${req.url}, version: HTTP/${req.httpVersion}, headers: {${headers.join(', ')}}, body: Body(Empty) }`;
      }
      this.records.requests.push({
        method: req.method ?? 'GET',
        path: req.url ?? '/',
        status: code,
        time: Date.now(),
        member: pod,
        via: 'tiflash',
      });
      res.writeHead(code);
      res.end(body);
    });
  }

  private listen(listener: Listener, pod: string, port: number): void {
    listener.server.once('error', (err) => {
      this.records.processFailure(pod, `listen ${listener.ip}:${port}: ${err.message}`);
    });
    listener.server.listen(port, listener.ip, () => {
      if (listener.closed) void closeServer(listener.server);
    });
  }
}

/** Stops a listener: at once (connections cut), or `graceful`ly (answers being written still go out). */
function closeListener(l: Listener, graceful = false): Promise<void> {
  if (l.closed) return Promise.resolve();
  l.closed = true;
  return l.server.listening ? closeServer(l.server, graceful) : Promise.resolve();
}

function closeServer(server: http.Server, graceful = false): Promise<void> {
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  if (graceful) server.closeIdleConnections();
  else server.closeAllConnections();
  return closed;
}
