/**
 * A PD cluster for scenario tests of the controller: one HTTP server that stands for the whole PD
 * client API (what the controller reaches at `--pd-url`), over a model of the PD members and TiKV
 * stores. The scenario harness plays the kubelet through the process hooks (`pdStart`, `tikvStop`,
 * `wipeData`...); tests read the model and the records of what went wrong (`stopsWhileLeader`,
 * `stopsWithLeaders`, `splitBrain`...), and inject faults (`down`, `failNext`).
 *
 * It runs inside the test process on real timers, with every delay in milliseconds. The parts:
 * `pd-members` (membership, quorum, leader), `pd-process` (PD pods: data, discovery, bootstrap or
 * join), `pd-stores` (stores, leaders, schedulers), `pd-http` (routes and JSON shapes).
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { handle, type ApiModel } from './pd-http';
import { PdMembers, type PdMember } from './pd-members';
import { PdProcesses, type PdPodState } from './pd-process';
import {
  SimRecords,
  Timers,
  type LeaderTransfer,
  type ProcessFailure,
  type RequestRecord,
  type SchedulerChange,
  type StopWhileLeader,
  type StopWithLeaders,
} from './pd-runtime';
import { TikvStores, type TikvProcessState, type TikvStore } from './pd-stores';

export type {
  LeaderTransfer,
  PdMember,
  PdPodState,
  ProcessFailure,
  RequestRecord,
  SchedulerChange,
  StopWhileLeader,
  StopWithLeaders,
  TikvProcessState,
  TikvStore,
};
export type { StoreState } from './pd-stores';

export interface PdSimOptions {
  /** The TidbCluster's name: default PD peer hosts and TiKV addresses derive from it. */
  cluster: string;
  namespace: string;
  /** Base URL of the discovery service (`http://127.0.0.1:<port>`); can also be set later on the sim. */
  discoveryUrl?: string;
  /** Time to elect a leader once there is none and a majority runs. @default 100 */
  electionMs?: number;
  /** Delay before a requested PD leader transfer takes effect. @default 30 */
  transferMs?: number;
  /** Period of the store scheduling rounds; 0 turns them off, and the test calls `tick()`. @default 20 */
  tickMs?: number;
  /** Leaders an evict-leader scheduler (or an Offline store) moves per round. @default 30 */
  evictRate?: number;
  /** Leader moves per round toward an even spread. @default 10 */
  balanceRate?: number;
  /** Region leaders in the cluster. @default 300 */
  totalLeaders?: number;
  /** Time from Disconnected to Down for a stopped store. @default 1000 */
  storeDownMs?: number;
  /** Delay between a PD pod's discovery attempts (and restarts after a failed join). @default 50 */
  discoveryRetryMs?: number;
  /** `--name` of joining members: the pod name, or the peer host (clusterDomain / acrossK8s). @default 'pod' */
  memberNames?: 'pod' | 'host';
  /** List evict-leader schedulers as PD v4+ does: one `evict-leader-scheduler` entry. @default false */
  mergedEvictScheduler?: boolean;
  /** `replication.max-replicas`. @default 3 */
  maxReplicas?: number;
  /** Stores whose leader eviction makes no progress. @default none */
  stuckEviction?: Iterable<number>;
}

/** The defaults of `PdSimOptions`, in one place. */
export const PD_SIM_DEFAULTS = {
  electionMs: 100,
  transferMs: 30,
  tickMs: 20,
  evictRate: 30,
  balanceRate: 10,
  totalLeaders: 300,
  storeDownMs: 1000,
  discoveryRetryMs: 50,
  memberNames: 'pod',
  mergedEvictScheduler: false,
  maxReplicas: 3,
} as const;

/**
 * Which requests an injected failure hits: a predicate, a RegExp tested on `"<METHOD> <path?query>"`,
 * or a string contained in that text (`'POST /pd/api/v1/schedulers'`, `'/stores'`).
 */
export type RequestMatch = string | RegExp | ((method: string, path: string) => boolean);

interface InjectedFailure {
  match: RequestMatch;
  status: number;
  message: string;
  remaining: number;
}

const WAIT_POLL_MS = 5;

export class PdSim {
  /** Starts the API server on a free local port. */
  static async start(options: PdSimOptions): Promise<PdSim> {
    const sim = new PdSim(options);
    await new Promise<void>((resolve, reject) => {
      sim.server.once('error', reject);
      sim.server.listen(0, '127.0.0.1', () => resolve());
    });
    const { port } = sim.server.address() as AddressInfo;
    sim.baseUrl = `http://127.0.0.1:${port}`;
    if (sim.tickMs > 0) sim.timers.every(sim.tickMs, () => sim.tick());
    return sim;
  }

  /** Base URL of the discovery service the PD pods ask; read at every attempt. */
  discoveryUrl?: string;
  /** Store ids whose eviction makes no progress; add and delete at will (or use `setEvictionStuck`). */
  readonly stuckEviction: Set<number>;

  readonly stopsWhileLeader: StopWhileLeader[];
  readonly stopsWithLeaders: StopWithLeaders[];
  readonly splitBrain: string[];
  readonly transfers: LeaderTransfer[];
  readonly schedulerLog: SchedulerChange[];
  readonly requests: RequestRecord[];
  /** Failed joins, pd-server exits after member removal, unusable discovery answers. */
  readonly processFailures: ProcessFailure[];

  private baseUrl = '';
  private isDown = false;
  private closed = false;
  private readonly failures: InjectedFailure[] = [];
  private readonly tickMs: number;
  private readonly timers = new Timers();
  private readonly records = new SimRecords();
  private readonly model: ApiModel;
  private readonly server: http.Server;

  private constructor(private readonly options: PdSimOptions) {
    const o = { ...PD_SIM_DEFAULTS, ...definedOnly(options) };
    this.tickMs = o.tickMs;
    this.discoveryUrl = options.discoveryUrl;
    this.stuckEviction = new Set(options.stuckEviction ?? []);
    const members = new PdMembers({ electionMs: o.electionMs, transferMs: o.transferMs }, this.timers, this.records);
    const processes = new PdProcesses(
      { discoveryRetryMs: o.discoveryRetryMs, memberNames: o.memberNames, discoveryUrl: () => this.discoveryUrl },
      members,
      this.timers,
      this.records,
    );
    const stores = new TikvStores(
      { evictRate: o.evictRate, balanceRate: o.balanceRate, totalLeaders: o.totalLeaders, storeDownMs: o.storeDownMs, maxReplicas: o.maxReplicas },
      this.records,
      () => members.leader !== undefined,
      this.stuckEviction,
    );
    const replication = { 'max-replicas': o.maxReplicas, 'location-labels': '', 'enable-placement-rules': 'true' };
    this.model = { members, processes, stores, replication, mergedEvictScheduler: o.mergedEvictScheduler };

    ({
      stopsWhileLeader: this.stopsWhileLeader,
      stopsWithLeaders: this.stopsWithLeaders,
      splitBrain: this.splitBrain,
      transfers: this.transfers,
      schedulerLog: this.schedulerLog,
      requests: this.requests,
      processFailures: this.processFailures,
    } = this.records);

    this.server = http.createServer((req, res) => this.serve(req, res));
    // While down, connections are cut as they arrive: clients see a reset, as with an unreachable PD.
    this.server.on('connection', (socket) => {
      if (this.isDown) socket.destroy();
    });
  }

  /** The API's base URL, `http://127.0.0.1:<port>` (what the controller gets as `--pd-url`). */
  get url(): string {
    return this.baseUrl;
  }

  /** While true, every connection is cut without an answer. */
  get down(): boolean {
    return this.isDown;
  }

  set down(value: boolean) {
    this.isDown = value;
    if (value) this.server.closeAllConnections();
  }

  /** Answers the next `times` requests that match with `status` and a PD-style error body. */
  failNext(match: RequestMatch, status: number, times = 1, message = 'injected failure'): void {
    this.failures.push({ match, status, message, remaining: times });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.timers.close();
    this.model.processes.close();
    const closed = new Promise<void>((resolve) => this.server.close(() => resolve()));
    this.server.closeAllConnections();
    await closed;
  }

  // ---- model accessors (snapshots: changing them changes nothing) ----

  members(): PdMember[] {
    return this.model.members.list().map((m) => ({ ...m }));
  }

  leader(): string | undefined {
    return this.model.members.leader?.name;
  }

  clusterId(): number | undefined {
    return this.model.members.clusterId;
  }

  /** What the pod's PD process is doing. */
  pdState(podName: string): PdPodState {
    return this.model.processes.state(podName);
  }

  stores(): TikvStore[] {
    return this.model.stores.list();
  }

  /**
   * The pod's current store, if its TiKV ever registered: the store its tikv-server serves, else the
   * one its data belongs to, else the newest one registered at its address.
   */
  store(podName: string): TikvStore | undefined {
    return this.model.stores.forPod(podName);
  }

  /** What the pod's TiKV process is doing: `stopped`, `running`, or `failed` (tikv-server exited). */
  tikvState(podName: string): TikvProcessState {
    return this.model.stores.processState(podName);
  }

  /** The store id kept in the TiKV pod's data directory, if it has data. */
  tikvDataStoreId(podName: string): number | undefined {
    return this.model.stores.dataStoreId(podName);
  }

  /** Store ids with an evict-leader scheduler. */
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

  // ---- process hooks (the scenario harness calls them as containers start and stop) ----

  /** A PD container started: runs its member again, or goes through discovery when it has no data. */
  pdStart(podName: string, peerHost = this.pdPeerHost(podName)): void {
    this.model.processes.start(podName, peerHost);
  }

  /** A PD container stopped; stopping the leader is recorded in `stopsWhileLeader`. */
  pdStop(podName: string): void {
    this.model.processes.stop(podName);
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
   *   it ("duplicated store address") while a store that is not Tombstone has the same address.
   */
  tikvStart(podName: string, address = this.tikvAddress(podName)): void {
    this.model.stores.start(podName, address);
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

  setEvictionStuck(storeId: number, stuck = true): void {
    if (stuck) this.stuckEviction.add(storeId);
    else this.stuckEviction.delete(storeId);
  }

  /** One scheduling round now (heartbeats, Down detection, eviction, draining, balancing). */
  tick(): void {
    this.model.stores.tick();
  }

  /** Resolves once `pred` holds; rejects after `timeoutMs` with `message` and the model's state. */
  async waitFor(pred: () => boolean, timeoutMs = 3000, message = 'condition'): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (!pred()) {
      if (Date.now() >= deadline) throw new Error(`waitFor: ${message} not reached within ${timeoutMs}ms\n${this.describe()}`);
      await new Promise((resolve) => setTimeout(resolve, WAIT_POLL_MS));
    }
  }

  /** The model in a few lines, for failure messages. */
  describe(): string {
    const members = this.model.members.list().map(
      (m) => `  member ${m.name} id=${m.memberId} ${m.running ? 'running' : 'stopped'}${m.hasData ? '' : ' no-data'} pod=${m.pod}:${this.pdState(m.pod)}`,
    );
    const stores = this.stores().map(
      (s) => `  store ${s.id} ${s.pod}${this.store(s.pod)?.id === s.id ? `:${this.tikvState(s.pod)}` : ''} ${s.state} leaders=${s.leaderCount} regions=${s.regionCount}`,
    );
    return [
      `PD cluster ${this.clusterId() ?? '(not bootstrapped)'}, leader ${this.leader() ?? '(none)'}`,
      ...members,
      ...stores,
      `  evict-leader schedulers: [${this.evictSchedulers().join(', ')}]`,
    ].join('\n');
  }

  private serve(req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      if (this.isDown) {
        req.socket.destroy();
        return;
      }
      const method = req.method ?? 'GET';
      const path = req.url ?? '/';
      let status: number;
      let body: unknown;
      const injected = this.takeFailure(method, path);
      if (injected !== undefined) {
        ({ status, message: body } = injected);
      } else {
        try {
          ({ status, body } = handle(this.model, method, path, Buffer.concat(chunks).toString('utf8')));
        } catch (err) {
          ({ status, body } = { status: 500, body: `simulator error: ${(err as Error).message}` });
        }
      }
      this.records.requests.push({ method, path, status, time: Date.now() });
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    });
  }

  private takeFailure(method: string, path: string): InjectedFailure | undefined {
    const text = `${method} ${path}`;
    const found = this.failures.find(
      (f) =>
        f.remaining > 0 &&
        (typeof f.match === 'function' ? f.match(method, path) : typeof f.match === 'string' ? text.includes(f.match) : f.match.test(text)),
    );
    if (found !== undefined) found.remaining--;
    return found;
  }
}

/** Options without their undefined entries, so that spreading them keeps the defaults. */
function definedOnly<T extends object>(o: T): Partial<T> {
  return Object.fromEntries(Object.entries(o).filter(([, v]) => v !== undefined)) as Partial<T>;
}
