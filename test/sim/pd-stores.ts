/**
 * TiKV stores as PD sees them, and the region leaders PD schedules between them.
 *
 * The model keeps only what a rolling upgrade needs: `totalLeaders` leaders live on Up stores; a
 * stopped store's leaders move at once (Raft elects new ones) and it turns Disconnected, then Down;
 * an evict-leader scheduler moves `evictRate` leaders per tick off its store; a balancer evens the
 * leaders out over the Up stores without a scheduler, `balanceRate` moves per tick. Regions are a
 * count derived from the number of stores, except on an Offline store, which drains them at
 * `evictRate` per tick (only while `maxReplicas` other stores are Up to take them) and then turns
 * Tombstone. Nothing is scheduled while PD has no leader.
 *
 * A TiKV process keeps its store id in its data directory (the Pod's volume), as TiKV does: started on
 * that data it resumes its store; started on the data of a Tombstone store it exits ("store is
 * tombstone"); started without data it registers a new store, which PD refuses while a store that is
 * not Tombstone holds the same address ("duplicated store address"). An exited process stays in its
 * container, which restarts it every scheduling round (a crash loop) until it is stopped.
 */
import type { SimRecords } from './pd-runtime';

export type StoreState = 'Up' | 'Disconnected' | 'Down' | 'Offline' | 'Tombstone';

/**
 * - `stopped`: no container runs (never started, or `tikvStop`);
 * - `running`: tikv-server runs (it serves its store once PD has a leader to register with);
 * - `failed`: tikv-server exited (store is tombstone, duplicated store address) and its container
 *   keeps restarting it, every scheduling round, until `tikvStop`.
 */
export type TikvProcessState = 'stopped' | 'running' | 'failed';

export interface TikvStore {
  /** Assigned from 1 when a TiKV without data registers (its data then keeps the id). */
  id: number;
  pod: string;
  /** `<pod>.<cluster>-tikv-peer.<ns>.svc:20160` */
  address: string;
  /** The address with the status port, 20180. */
  statusAddress: string;
  state: StoreState;
  leaderCount: number;
  regionCount: number;
  /** Epoch milliseconds of the last heartbeat PD received. */
  lastHeartbeat: number;
  /** Epoch milliseconds of the store's last start. */
  startTime: number;
  labels: Record<string, string>;
}

export interface TikvStoresConfig {
  evictRate: number;
  balanceRate: number;
  totalLeaders: number;
  storeDownMs: number;
  maxReplicas: number;
}

interface StoreRecord extends Omit<TikvStore, 'regionCount'> {
  /** The TiKV process runs and heartbeats. */
  running: boolean;
  stoppedAt?: number;
  /** Regions still to move off an Offline store. */
  offlineRegions?: number;
}

interface TikvProcess {
  address: string;
  /** The container runs: started, not stopped since (tikv-server itself may have exited: `failure`). */
  running: boolean;
  /** The store this run of tikv-server serves, once it registered or resumed one. */
  storeId?: number;
  /** Why tikv-server exited; the container restarts it every round. */
  failure?: string;
}

/** Why `addEvictScheduler` or `delete` refused, in PD's words where PD has them. */
export type StoreRefusal = 'store not found' | 'scheduler existed' | 'store has been removed';

export class TikvStores {
  private readonly stores: StoreRecord[] = [];
  private readonly processes = new Map<string, TikvProcess>();
  /** The store id each pod's data directory holds (set when its TiKV first registers; gone on wipe). */
  private readonly data = new Map<string, number>();
  /** Store ids with an evict-leader scheduler, in the order they were added. */
  private readonly evicting = new Set<number>();
  /** Leaders whose regions found no Up store yet. */
  private unplaced: number;
  private nextId = 1;

  constructor(
    private readonly config: TikvStoresConfig,
    private readonly records: SimRecords,
    private readonly pdHasLeader: () => boolean,
    /** Store ids whose eviction makes no progress; the owner may change it at any time. */
    readonly stuckEviction: Set<number>,
  ) {
    this.unplaced = config.totalLeaders;
  }

  list(): TikvStore[] {
    return this.stores.map((s) => this.snapshot(s));
  }

  get(id: number): TikvStore | undefined {
    const s = this.byId(id);
    return s === undefined ? undefined : this.snapshot(s);
  }

  /**
   * The pod's current store: the one its running tikv-server serves, else the one its data belongs to,
   * else (wiped or never registered) the newest one registered from the pod's address.
   */
  forPod(pod: string): TikvStore | undefined {
    const proc = this.processes.get(pod);
    const id = proc?.storeId ?? this.data.get(pod);
    const s = id !== undefined ? this.byId(id) : proc === undefined ? undefined : this.latest(proc.address);
    return s === undefined ? undefined : this.snapshot(s);
  }

  /** What the pod's TiKV process is doing. */
  processState(pod: string): TikvProcessState {
    const proc = this.processes.get(pod);
    if (proc === undefined || !proc.running) return 'stopped';
    return proc.failure === undefined ? 'running' : 'failed';
  }

  /** The store id in the pod's data directory, if it has one. */
  dataStoreId(pod: string): number | undefined {
    return this.data.get(pod);
  }

  /**
   * The pod's volume is lost: its next start (or, if its tikv-server exited, its next restart) has no
   * data and registers a new store. A tikv-server that runs keeps serving its store until it stops.
   */
  wipe(pod: string): void {
    this.data.delete(pod);
  }

  evictSchedulers(): number[] {
    return [...this.evicting];
  }

  start(pod: string, address: string): void {
    if (this.processes.get(pod)?.running) throw new Error(`tikvStart: pod ${pod} is already started; call tikvStop first`);
    this.processes.set(pod, { address, running: true });
    if (this.pdHasLeader()) this.connect(pod);
  }

  stop(pod: string): void {
    const proc = this.processes.get(pod);
    if (proc === undefined || !proc.running) return;
    proc.running = false;
    proc.failure = undefined;
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

  /** `DELETE /store/{id}`: the store goes Offline and drains; returns why PD refuses, if it does. */
  delete(id: number): StoreRefusal | undefined {
    const s = this.byId(id);
    if (s === undefined) return 'store not found';
    if (s.state === 'Tombstone') return 'store has been removed';
    if (s.state !== 'Offline') {
      s.offlineRegions = this.regionCount(s);
      s.state = 'Offline';
    }
    return undefined;
  }

  setLabels(id: number, labels: Record<string, string>): boolean {
    const s = this.byId(id);
    if (s === undefined) return false;
    Object.assign(s.labels, labels);
    return true;
  }

  addEvictScheduler(id: number): StoreRefusal | undefined {
    const s = this.byId(id);
    if (s === undefined || s.state === 'Tombstone') return 'store not found';
    if (this.evicting.has(id)) return 'scheduler existed';
    this.evicting.add(id);
    this.records.schedulerLog.push({ op: 'add', storeId: id, time: Date.now() });
    return undefined;
  }

  removeEvictScheduler(id: number): boolean {
    if (!this.evicting.delete(id)) return false;
    this.records.schedulerLog.push({ op: 'remove', storeId: id, time: Date.now() });
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
   * A running TiKV (or the restart of one that exited) meets PD: with data it resumes its store (Up
   * again unless Offline) or exits if that store is Tombstone; without data it registers a new store,
   * unless a store that is not Tombstone has its address.
   */
  private connect(pod: string): void {
    const proc = this.processes.get(pod);
    if (proc === undefined || !proc.running) return;
    if (proc.storeId !== undefined && this.byId(proc.storeId)?.running) return;
    const now = Date.now();
    const dataId = this.data.get(pod);
    let s: StoreRecord | undefined;
    if (dataId !== undefined) {
      s = this.byId(dataId);
      if (s === undefined) throw new Error(`tikv ${pod}: its data names store ${dataId}, which PD never had`);
      if (s.state === 'Tombstone') return this.exit(pod, proc, `store ${s.id} is tombstone`);
      if (s.address !== proc.address) {
        // TiKV started on its data at a new address updates its store's address.
        s.address = proc.address;
        s.statusAddress = proc.address.replace(/:\d+$/, ':20180');
      }
      if (s.state !== 'Offline') s.state = 'Up';
    } else {
      const holder = this.stores.find((x) => x.address === proc.address && x.state !== 'Tombstone');
      if (holder !== undefined) return this.exit(pod, proc, `duplicated store address: ${proc.address}, already registered by store ${holder.id}`);
      s = {
        id: this.nextId++,
        pod,
        address: proc.address,
        statusAddress: proc.address.replace(/:\d+$/, ':20180'),
        state: 'Up',
        leaderCount: 0,
        lastHeartbeat: now,
        startTime: now,
        labels: {},
        running: true,
      };
      this.stores.push(s);
      this.data.set(pod, s.id);
    }
    proc.storeId = s.id;
    proc.failure = undefined;
    Object.assign(s, { pod, running: true, stoppedAt: undefined, lastHeartbeat: now, startTime: now });
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
      const up = this.stores.filter((x) => x.state === 'Up' && x.running).length;
      if (up >= this.config.maxReplicas) s.offlineRegions = Math.max(0, (s.offlineRegions ?? 0) - this.config.evictRate);
      if (s.offlineRegions === 0 && s.leaderCount === 0) this.tombstone(s);
    }
  }

  /** A Tombstone store's TiKV refuses to keep running: tikv-server exits. */
  private tombstone(s: StoreRecord): void {
    s.state = 'Tombstone';
    s.running = false;
    s.offlineRegions = undefined;
    const proc = this.processes.get(s.pod);
    if (proc !== undefined && proc.running && proc.storeId === s.id) this.exit(s.pod, proc, `store ${s.id} is tombstone`);
  }

  /** tikv-server exits; recorded once per reason while its container keeps restarting it. */
  private exit(pod: string, proc: TikvProcess, reason: string): void {
    proc.storeId = undefined;
    if (proc.failure === reason) return;
    proc.failure = reason;
    this.records.processFailure(pod, `tikv-server exited: ${reason}`);
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

  /** Leaders that lost their store go to Up stores, without a scheduler if possible. */
  private place(n: number): void {
    const up = this.stores.filter((s) => s.state === 'Up' && s.running);
    const free = this.receivers();
    const targets = free.length > 0 ? free : up;
    if (targets.length === 0) this.unplaced += n;
    else spread(n, targets);
  }

  /** Stores that may take leaders: Up and without an evict-leader scheduler. */
  private receivers(): StoreRecord[] {
    return this.stores.filter((s) => s.state === 'Up' && s.running && !this.evicting.has(s.id));
  }

  private regionCount(s: StoreRecord): number {
    if (s.state === 'Tombstone') return 0;
    if (s.state === 'Offline') return s.offlineRegions ?? 0;
    const active = this.stores.filter((x) => x.state !== 'Offline' && x.state !== 'Tombstone').length;
    return Math.round((this.config.totalLeaders * Math.min(this.config.maxReplicas, active)) / active);
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
      address: s.address,
      statusAddress: s.statusAddress,
      state: s.state,
      leaderCount: s.leaderCount,
      regionCount: this.regionCount(s),
      lastHeartbeat: s.lastHeartbeat,
      startTime: s.startTime,
      labels: { ...s.labels },
    };
  }
}

/** Hands out `n` leaders one at a time to the target holding the fewest. */
function spread(n: number, targets: StoreRecord[]): void {
  for (let i = 0; i < n; i++) {
    const least = targets.reduce((a, b) => (b.leaderCount < a.leaderCount ? b : a));
    least.leaderCount++;
  }
}
