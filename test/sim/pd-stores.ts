/**
 * TiKV and TiFlash stores as PD sees them, the region leaders PD schedules between TiKV stores, and
 * the evict-leader scheduler.
 *
 * Bootstrap: the raft cluster does not exist until the first TiKV store registers and bootstraps it
 * (tikv src/server/raft_server.rs `Node::start` → `check_or_prepare_bootstrap_cluster`); until then
 * the PD leader runs no RaftCluster and the store and scheduler APIs answer ErrNotBootstrapped.
 * TiFlash never bootstraps: it waits for TiKV to, asking PD every 3 s (pingcap/tiflash
 * dbms/src/Server/Server.cpp, v8.5.0, "Waiting for TiKV cluster to be bootstrapped").
 *
 * The model keeps only what rolling upgrades and scaling need: `totalLeaders` leaders live on Up TiKV
 * stores; a stopped store's leaders move at once (Raft elects new ones) and it turns Disconnected,
 * then Down; the evict-leader scheduler moves `evictRate` leaders per tick off each of its stores; a
 * balancer evens the leaders out over the Up TiKV stores not being evicted, `balanceRate` moves per
 * tick. Regions are a count derived from the number of TiKV stores, except on an Offline store, which
 * drains them at `evictRate` per tick (only while `maxReplicas` other stores are Up to take them) and
 * then turns Tombstone. TiFlash stores hold no leaders and, in this model, no regions. Nothing is
 * scheduled while PD has no leader.
 *
 * Store states: `state` is metapb.StoreState (Up, Offline, Tombstone) as PD's `state_name` shows it,
 * with Up split into Disconnected and Down by the time since the last heartbeat (tikv/pd
 * pkg/response/store.go `BuildStoreInfo`: Disconnected after 20 s (pkg/core/store.go
 * `storeDisconnectDuration`), Down after `max-store-down-time`, 30m by default). The simulator scales
 * time: a stopped store is Disconnected at once and Down after `storeDownMs`. `nodeState` is
 * metapb.NodeState: Preparing for a new store until the next round (then Serving), Removing while
 * Offline, Removed once Tombstone.
 *
 * A process keeps its store id in its data directory (the Pod's volume), as TiKV does: started on
 * that data it resumes its store; started on the data of a Tombstone store it exits ("store is
 * tombstone"); started without data it registers a new store, which PD refuses while a store that is
 * neither Tombstone nor physically destroyed holds the same address ("duplicated store address",
 * tikv/pd server/cluster/cluster.go `putStoreImpl`). An exited process stays in its container, which
 * restarts it every scheduling round (a crash loop) until it is stopped.
 *
 * TiFlash's own status (`/tiflash/store-status`, pingcap/tiflash dbms/src/Storages/KVStore/TMTContext.h
 * `StoreStatus`): Idle from the start, Ready once its KVStore is restored (`TMTContext::restore`, here
 * half of `tiflashStartMs` after the start), Running once its store serves and its regions are ready
 * (`setStatusRunning`, here another half of `tiflashStartMs` after it registered).
 */
import type { SimRecords, Timers } from './pd-runtime';

export type StoreState = 'Up' | 'Disconnected' | 'Down' | 'Offline' | 'Tombstone';
/** metapb.NodeState (pingcap/kvproto metapb.proto). */
export type NodeState = 'Preparing' | 'Serving' | 'Removing' | 'Removed';
export type Engine = 'tikv' | 'tiflash';
/** TiFlash's `TMTContext::StoreStatus` names (pingcap/tiflash dbms/src/Storages/KVStore/TMTContext.cpp `IntoStoreStatusName`). */
export type TiflashStatus = 'Idle' | 'Ready' | 'Running' | 'Stopping' | 'Terminated';

/**
 * - `stopped`: no container runs (never started, or stopped);
 * - `running`: the server runs (it serves its store once PD has a leader to register with);
 * - `failed`: the server exited (store is tombstone, duplicated store address) and its container
 *   keeps restarting it, every scheduling round, until it is stopped.
 */
export type TikvProcessState = 'stopped' | 'running' | 'failed';

export interface StoreLabel {
  key: string;
  value: string;
}

export interface TikvStore {
  /** Assigned from 1 when a process without data registers (its data then keeps the id). */
  id: number;
  pod: string;
  engine: Engine;
  /** TiKV: `<pod>.<cluster>-tikv-peer.<ns>.svc:20160`; TiFlash: `<pod>.<cluster>-tiflash-peer.<ns>.svc:3930`. */
  address: string;
  /** TiFlash's proxy address (port 20170); empty for TiKV, which uses `address`. */
  peerAddress: string;
  /** The status address: port 20180 (TiKV) or 20292 (TiFlash proxy). */
  statusAddress: string;
  /** The version the store reports: "8.5.0" for TiKV, "v8.5.0" for TiFlash. */
  version: string;
  state: StoreState;
  nodeState: NodeState;
  /** Taken offline with `?force`. */
  physicallyDestroyed: boolean;
  leaderCount: number;
  regionCount: number;
  /** Epoch milliseconds of the last heartbeat PD received. */
  lastHeartbeat: number;
  /** Epoch milliseconds of the store's last start. */
  startTime: number;
  /** In PD's order, TiFlash's `engine=tiflash` first. */
  labels: StoreLabel[];
}

export interface TikvStoresConfig {
  evictRate: number;
  balanceRate: number;
  totalLeaders: number;
  storeDownMs: number;
  maxReplicas: () => number;
  tiflashStartMs: number;
}

interface StoreRecord extends Omit<TikvStore, 'regionCount' | 'labels'> {
  labels: StoreLabel[];
  /** The process runs and heartbeats. */
  running: boolean;
  stoppedAt?: number;
  /** Regions still to move off an Offline store. */
  offlineRegions?: number;
}

interface StoreProcess {
  engine: Engine;
  address: string;
  version: string;
  /** The container runs: started, not stopped since (the server itself may have exited: `failure`). */
  running: boolean;
  /** The store this run serves, once it registered or resumed one. */
  storeId?: number;
  /** Why the server exited; the container restarts it every round. */
  failure?: string;
  startedAt: number;
  /** TiFlash: when its store started to serve in this run. */
  servingAt?: number;
  /** TiFlash: when it next asks PD whether the cluster is bootstrapped. */
  nextBootstrapCheck?: number;
}

/** Why `removeStore` refused, with PD's text and the status PD answers it with. */
export interface StoreRefusal {
  status: number;
  message: string;
}

/** The change the evict-leader scheduler went through. */
export type EvictChange = 'created' | 'added' | 'kept';

const EVICT = 'evict-leader-scheduler';
/** The wait between TiFlash's "is the cluster bootstrapped" checks (pingcap/tiflash Server.cpp `wait_seconds = 3`). */
export const TIFLASH_BOOTSTRAP_POLL_MS = 3000;

export class TikvStores {
  private readonly stores: StoreRecord[] = [];
  private readonly processes = new Map<string, StoreProcess>();
  /** The store id each pod's data directory holds (set when its process first registers; gone on wipe). */
  private readonly data = new Map<string, number>();
  /** Store ids in the evict-leader scheduler, in the order they were added; the scheduler exists while non-empty. */
  private readonly evicting = new Set<number>();
  /** Leaders whose regions found no Up store yet. */
  private unplaced: number;
  private nextId = 1;
  private raftBootstrapped = false;

  constructor(
    private readonly config: TikvStoresConfig,
    private readonly records: SimRecords,
    private readonly timers: Timers,
    private readonly pdHasLeader: () => boolean,
    /** Store ids whose eviction makes no progress; the owner may change it at any time. */
    readonly stuckEviction: Set<number>,
    /** The first TiKV store bootstrapped the raft cluster. */
    private readonly onBootstrap: () => void,
  ) {
    this.unplaced = config.totalLeaders;
  }

  /** TiKV bootstrapped the raft cluster: PD's RaftCluster runs (on the leader). */
  get bootstrapped(): boolean {
    return this.raftBootstrapped;
  }

  list(): TikvStore[] {
    return this.stores.map((s) => this.snapshot(s));
  }

  get(id: number): TikvStore | undefined {
    const s = this.byId(id);
    return s === undefined ? undefined : this.snapshot(s);
  }

  /**
   * The pod's current store: the one its running server serves, else the one its data belongs to,
   * else (wiped or never registered) the newest one registered from the pod's address.
   */
  forPod(pod: string): TikvStore | undefined {
    const proc = this.processes.get(pod);
    const id = proc?.storeId ?? this.data.get(pod);
    const s = id !== undefined ? this.byId(id) : proc === undefined ? undefined : this.latest(proc.address);
    return s === undefined ? undefined : this.snapshot(s);
  }

  /** What the pod's process is doing. */
  processState(pod: string): TikvProcessState {
    const proc = this.processes.get(pod);
    if (proc === undefined || !proc.running) return 'stopped';
    return proc.failure === undefined ? 'running' : 'failed';
  }

  /** TiFlash's store status while its server runs; undefined while it does not. */
  tiflashStatus(pod: string, now = Date.now()): TiflashStatus | undefined {
    const proc = this.processes.get(pod);
    if (proc === undefined || proc.engine !== 'tiflash' || !proc.running || proc.failure !== undefined) return undefined;
    const half = this.config.tiflashStartMs / 2;
    if (now < proc.startedAt + half) return 'Idle';
    if (proc.servingAt === undefined || now < Math.max(proc.servingAt, proc.startedAt + half) + half) return 'Ready';
    return 'Running';
  }

  /** The store id in the pod's data directory, if it has one. */
  dataStoreId(pod: string): number | undefined {
    return this.data.get(pod);
  }

  /**
   * The pod's volume is lost: its next start (or, if its server exited, its next restart) has no
   * data and registers a new store. A server that runs keeps serving its store until it stops.
   */
  wipe(pod: string): void {
    this.data.delete(pod);
  }

  /** Store ids in the evict-leader scheduler (empty: no scheduler). */
  evictSchedulers(): number[] {
    return [...this.evicting];
  }

  start(pod: string, address: string, engine: Engine, version: string): void {
    if (this.processes.get(pod)?.running) throw new Error(`${engine}Start: pod ${pod} is already started; call ${engine}Stop first`);
    this.processes.set(pod, { engine, address, version, running: true, startedAt: Date.now() });
    // TiFlash registers once its KVStore is restored, asking until then (connect says when).
    if (engine === 'tiflash') this.tiflashAsk(pod);
    else if (this.pdHasLeader()) this.connect(pod);
  }

  stop(pod: string): void {
    const proc = this.processes.get(pod);
    if (proc === undefined || !proc.running) return;
    proc.running = false;
    proc.failure = undefined;
    proc.servingAt = undefined;
    proc.nextBootstrapCheck = undefined;
    const s = proc.storeId === undefined ? undefined : this.byId(proc.storeId);
    proc.storeId = undefined;
    if (s === undefined || !s.running) return;
    s.running = false;
    s.stoppedAt = Date.now();
    if (s.state === 'Up') s.state = 'Disconnected';
    if (s.leaderCount === 0) return;
    this.records.stopsWithLeaders.push({ pod, storeId: s.id, leaderCount: s.leaderCount, time: Date.now() });
    const orphans = s.leaderCount;
    s.leaderCount = 0;
    this.place(orphans);
  }

  /**
   * `DELETE /store/{id}[?force]`: tikv/pd server/cluster/cluster.go `RemoveStore` and
   * `checkReplicaBeforeOfflineStore` (v8.5.7), with server/api/store.go `responseStoreErr`'s statuses.
   */
  removeStore(id: number, physicallyDestroyed: boolean): StoreRefusal | undefined {
    const s = this.byId(id);
    if (s === undefined) return { status: 404, message: `[PD:core:ErrStoreNotFound]store ${id} not found` };
    if (s.nodeState === 'Removing' && s.physicallyDestroyed === physicallyDestroyed) return undefined;
    if (s.nodeState === 'Removed') return { status: 410, message: `[PD:core:ErrStoreRemoved]store ${id} has been removed` };
    if (s.physicallyDestroyed) return { status: 400, message: `[PD:core:ErrStoreDestroyed]store ${id} has been physically destroyed` };
    if ((s.nodeState === 'Preparing' || s.nodeState === 'Serving') && !physicallyDestroyed) {
      // getUpStores: IsUp() = Preparing or Serving, so Disconnected and Down stores count, and so do
      // TiFlash stores in v8.5 (only TiKV ones in later versions).
      const up = this.stores.filter((x) => x.nodeState === 'Preparing' || x.nodeState === 'Serving').map((x) => x.id);
      const expect = up.length - 1;
      const need = this.config.maxReplicas();
      if (expect < need) {
        return {
          status: 400,
          message: `[PD:core:ErrStoresNotEnough]can not remove store ${id} since the number of up stores would be ${expect} while need ${need}`,
        };
      }
      const remaining = up.filter((x) => x !== id);
      if (this.evicting.size >= expect && remaining.every((x) => this.evicting.has(x))) {
        return {
          status: 400,
          message: `[PD:core:ErrNoStoreForRegionLeader]can not remove store ${id} since there are no extra up store to store the leader`,
        };
      }
    }
    if (s.state !== 'Offline') s.offlineRegions = this.regionCount(s);
    s.state = 'Offline';
    s.nodeState = 'Removing';
    s.physicallyDestroyed = physicallyDestroyed;
    return undefined;
  }

  /**
   * `POST /store/{id}/label[?force]`: replaces the labels with `force`, else merges them in (a key
   * matched without case, an empty value deletes it): tikv/pd server/cluster/cluster.go
   * `UpdateStoreLabels` → `putStoreImpl`, pkg/core/store.go `MergeLabels`. False if the store is unknown.
   */
  setLabels(id: number, labels: StoreLabel[], force: boolean): boolean {
    const s = this.byId(id);
    if (s === undefined) return false;
    let merged: StoreLabel[];
    if (force) merged = labels.map((l) => ({ ...l }));
    else {
      merged = s.labels.map((l) => ({ ...l }));
      for (const l of labels) {
        const found = merged.find((x) => x.key.toLowerCase() === l.key.toLowerCase());
        if (found !== undefined) found.value = l.value;
        else merged.push({ ...l });
      }
      merged = merged.filter((l) => l.value !== '');
    }
    s.labels = merged;
    return true;
  }

  hasStore(id: number): boolean {
    return this.byId(id) !== undefined;
  }

  /**
   * Adds a store to the evict-leader scheduler, creating it if absent; the store must exist (any
   * state: PauseLeaderTransfer only looks the id up, tikv/pd pkg/core/store.go). `by` says who asked.
   */
  addEvictLeader(id: number, by: string): EvictChange {
    const created = this.evicting.size === 0;
    if (this.evicting.has(id)) return 'kept';
    this.evicting.add(id);
    this.records.schedulerLog.push({ op: 'add', storeId: id, scheduler: EVICT, by, time: Date.now() });
    return created ? 'created' : 'added';
  }

  /** Takes a store out of the evict-leader scheduler; removing the last one removes the scheduler. */
  removeEvictLeader(id: number, by: string): 'removed' | 'last' | 'absent' {
    if (!this.evicting.delete(id)) return 'absent';
    this.records.schedulerLog.push({ op: 'remove', storeId: id, scheduler: EVICT, by, time: Date.now() });
    return this.evicting.size === 0 ? 'last' : 'removed';
  }

  /** Removes the whole evict-leader scheduler; false if it did not exist. */
  deleteEvictScheduler(by: string): boolean {
    if (this.evicting.size === 0) return false;
    for (const id of [...this.evicting]) this.removeEvictLeader(id, by);
    return true;
  }

  /** One scheduling round. */
  tick(): void {
    if (!this.pdHasLeader()) return;
    const now = Date.now();
    for (const pod of this.processes.keys()) this.connect(pod);
    for (const s of this.stores) {
      if (s.running) s.lastHeartbeat = now;
      else if (s.state === 'Disconnected' && now - (s.stoppedAt ?? now) >= this.config.storeDownMs) s.state = 'Down';
      // checkStores: a Preparing store is ready to serve (tikv/pd server/cluster/cluster.go `checkStore`).
      if (s.nodeState === 'Preparing' && s.running) s.nodeState = 'Serving';
    }
    if (this.unplaced > 0) {
      const n = this.unplaced;
      this.unplaced = 0;
      this.place(n);
    }
    this.evict();
    this.drainOffline();
    this.balance();
  }

  /**
   * A running process (or the restart of one that exited) meets PD: with data it resumes its store
   * (Up again unless Offline) or exits if that store is Tombstone; without data it registers a new
   * store, unless a store that is neither Tombstone nor physically destroyed has its address.
   */
  /**
   * TiFlash asks PD to register its store; while no PD leader answers, it asks again every 3 s, as it
   * does while the cluster is not bootstrapped (the same loop in pingcap/tiflash Server.cpp).
   */
  private tiflashAsk(pod: string): void {
    if (!this.processes.get(pod)?.running) return;
    if (this.pdHasLeader()) this.connect(pod);
    else this.timers.after(TIFLASH_BOOTSTRAP_POLL_MS, () => this.tiflashAsk(pod));
  }

  private connect(pod: string): void {
    const proc = this.processes.get(pod);
    if (proc === undefined || !proc.running) return;
    if (proc.storeId !== undefined && this.byId(proc.storeId)?.running) return;
    const now = Date.now();
    if (proc.engine === 'tiflash') {
      const restored = proc.startedAt + this.config.tiflashStartMs / 2;
      if (now < restored) {
        // Still restoring its KVStore: ask again once it is. Timers may fire a little before
        // Date.now() says their time has come, so the time left decides, not the timer.
        this.timers.after(restored - now, () => this.tiflashAsk(pod));
        return;
      }
      if (!this.raftBootstrapped || (proc.nextBootstrapCheck !== undefined && now < proc.nextBootstrapCheck)) {
        if (proc.nextBootstrapCheck === undefined || now >= proc.nextBootstrapCheck) {
          proc.nextBootstrapCheck = now + TIFLASH_BOOTSTRAP_POLL_MS;
          this.timers.after(TIFLASH_BOOTSTRAP_POLL_MS, () => {
            proc.nextBootstrapCheck = undefined;
            this.tiflashAsk(pod);
          });
        }
        return;
      }
    }
    const dataId = this.data.get(pod);
    let s: StoreRecord | undefined;
    if (dataId !== undefined) {
      s = this.byId(dataId);
      if (s === undefined) throw new Error(`${proc.engine} ${pod}: its data names store ${dataId}, which PD never had`);
      if (s.state === 'Tombstone') return this.exit(pod, proc, `store ${s.id} is tombstone`);
      if (s.address !== proc.address) {
        // A store started on its data at a new address updates its store's address.
        Object.assign(s, addresses(proc.engine, proc.address));
      }
      if (s.state !== 'Offline') s.state = 'Up';
    } else {
      const holder = this.stores.find((x) => x.address === proc.address && x.state !== 'Tombstone' && !x.physicallyDestroyed);
      if (holder !== undefined)
        return this.exit(pod, proc, `duplicated store address: ${proc.address}, already registered by store ${holder.id}`);
      s = {
        id: this.nextId++,
        pod,
        engine: proc.engine,
        ...addresses(proc.engine, proc.address),
        version: proc.version,
        state: 'Up',
        nodeState: 'Preparing',
        physicallyDestroyed: false,
        leaderCount: 0,
        lastHeartbeat: now,
        startTime: now,
        labels: proc.engine === 'tiflash' ? [{ key: 'engine', value: 'tiflash' }] : [],
        running: true,
      };
      this.stores.push(s);
      this.data.set(pod, s.id);
      if (!this.raftBootstrapped) {
        this.raftBootstrapped = true;
        this.onBootstrap();
      }
    }
    proc.storeId = s.id;
    proc.failure = undefined;
    if (proc.engine === 'tiflash') proc.servingAt = now;
    Object.assign(s, { pod, running: true, stoppedAt: undefined, lastHeartbeat: now, startTime: now, version: proc.version });
    if (this.unplaced > 0) {
      const n = this.unplaced;
      this.unplaced = 0;
      this.place(n);
    }
  }

  private evict(): void {
    for (const id of this.evicting) {
      const s = this.byId(id);
      if (s === undefined || s.leaderCount === 0 || this.stuckEviction.has(id)) continue;
      const targets = this.receivers().filter((t) => t.id !== id);
      if (targets.length === 0) continue;
      const n = Math.min(this.config.evictRate, s.leaderCount);
      s.leaderCount -= n;
      spread(n, targets);
    }
  }

  private drainOffline(): void {
    for (const s of this.stores.filter((x) => x.state === 'Offline')) {
      const targets = this.receivers();
      if (s.leaderCount > 0 && targets.length > 0) {
        const n = Math.min(this.config.evictRate, s.leaderCount);
        s.leaderCount -= n;
        spread(n, targets);
      }
      const up = this.stores.filter((x) => x.state === 'Up' && x.running && x.engine === s.engine).length;
      if (s.engine === 'tiflash' || up >= this.config.maxReplicas())
        s.offlineRegions = Math.max(0, (s.offlineRegions ?? 0) - this.config.evictRate);
      if (s.offlineRegions === 0 && s.leaderCount === 0) this.tombstone(s);
    }
  }

  /** A Tombstone store's process refuses to keep running: the server exits. */
  private tombstone(s: StoreRecord): void {
    s.state = 'Tombstone';
    s.nodeState = 'Removed';
    s.running = false;
    s.offlineRegions = undefined;
    const proc = this.processes.get(s.pod);
    if (proc !== undefined && proc.running && proc.storeId === s.id) this.exit(s.pod, proc, `store ${s.id} is tombstone`);
  }

  /** The server exits; recorded once per reason while its container keeps restarting it. */
  private exit(pod: string, proc: StoreProcess, reason: string): void {
    proc.storeId = undefined;
    proc.servingAt = undefined;
    if (proc.failure === reason) return;
    proc.failure = reason;
    this.records.processFailure(pod, `${proc.engine === 'tiflash' ? 'tiflash' : 'tikv-server'} exited: ${reason}`);
  }

  private balance(): void {
    const eligible = this.receivers();
    for (let i = 0; i < this.config.balanceRate && eligible.length > 1; i++) {
      const most = eligible.reduce((a, b) => (b.leaderCount > a.leaderCount ? b : a));
      const least = eligible.reduce((a, b) => (b.leaderCount < a.leaderCount ? b : a));
      if (most.leaderCount - least.leaderCount <= 1) return;
      most.leaderCount--;
      least.leaderCount++;
    }
  }

  /** Leaders that lost their store go to Up TiKV stores, without a scheduler if possible. */
  private place(n: number): void {
    const up = this.stores.filter((s) => s.engine === 'tikv' && s.state === 'Up' && s.running);
    const free = this.receivers();
    const targets = free.length > 0 ? free : up;
    if (targets.length === 0) this.unplaced += n;
    else spread(n, targets);
  }

  /** Stores that may take leaders: Up TiKV stores without an evict-leader scheduler (it pauses transfers in). */
  private receivers(): StoreRecord[] {
    return this.stores.filter((s) => s.engine === 'tikv' && s.state === 'Up' && s.running && !this.evicting.has(s.id));
  }

  private regionCount(s: StoreRecord): number {
    if (s.engine === 'tiflash') return s.state === 'Offline' ? (s.offlineRegions ?? 0) : 0;
    if (s.state === 'Tombstone') return 0;
    if (s.state === 'Offline') return s.offlineRegions ?? 0;
    const active = this.stores.filter((x) => x.engine === 'tikv' && x.state !== 'Offline' && x.state !== 'Tombstone').length;
    return Math.round((this.config.totalLeaders * Math.min(this.config.maxReplicas(), active)) / active);
  }

  private byId(id: number): StoreRecord | undefined {
    return this.stores.find((s) => s.id === id);
  }

  private latest(address: string): StoreRecord | undefined {
    return this.stores.filter((s) => s.address === address).pop();
  }

  private snapshot(s: StoreRecord): TikvStore {
    return {
      id: s.id,
      pod: s.pod,
      engine: s.engine,
      address: s.address,
      peerAddress: s.peerAddress,
      statusAddress: s.statusAddress,
      version: s.version,
      state: s.state,
      nodeState: s.nodeState,
      physicallyDestroyed: s.physicallyDestroyed,
      leaderCount: s.leaderCount,
      regionCount: this.regionCount(s),
      lastHeartbeat: s.lastHeartbeat,
      startTime: s.startTime,
      labels: s.labels.map((l) => ({ ...l })),
    };
  }
}

/**
 * The addresses a store registers. TiKV: `address` (20160) with status port 20180. TiFlash: `address`
 * is the engine address (3930), `peer_address` the proxy's (20170), the status address the proxy's (20292).
 */
function addresses(engine: Engine, address: string): { address: string; peerAddress: string; statusAddress: string } {
  if (engine === 'tikv') return { address, peerAddress: '', statusAddress: address.replace(/:\d+$/, ':20180') };
  return { address, peerAddress: address.replace(/:\d+$/, ':20170'), statusAddress: address.replace(/:\d+$/, ':20292') };
}

/** Hands out `n` leaders one at a time to the target holding the fewest. */
function spread(n: number, targets: StoreRecord[]): void {
  for (let i = 0; i < n; i++) {
    const least = targets.reduce((a, b) => (b.leaderCount < a.leaderCount ? b : a));
    least.leaderCount++;
  }
}
