/**
 * The PD members as the embedded etcd sees them: membership, who runs, quorum, the leader, and each
 * member's region loading (what `/pd/api/v2/ready` reports).
 *
 * Ids are PD's: a member id is the etcd member id, a random-looking uint64 (etcd
 * server/etcdserver/api/membership/member.go `computeMemberID`, a SHA-1 of the peer URLs, cluster
 * token and time), almost always above 2^53; the cluster id is `(unix seconds << 32) + rand.Uint32()`
 * (tikv/pd pkg/storage/endpoint/cluster_id.go `initOrGetClusterID`, v8.5.7). Both are bigints here.
 *
 * Simplifications: an election takes `electionMs` and always picks the lowest-named running member;
 * a leader exists only while a majority of the members run; a bootstrapped single-member cluster
 * has its leader at once; the etcd leader is always the PD leader.
 */
import { randomBytes } from 'node:crypto';
import type { SimRecords, Timers } from './pd-runtime';

export interface Member {
  /** `--name` of the member: the pod name, or the pod's peer host when names must be global. */
  name: string;
  /** The etcd member id: stable for the member's life; a member removed and joined again gets a new one. */
  memberId: bigint;
  peerUrl: string;
  clientUrl: string;
  running: boolean;
  /** The member's data directory exists (false after `wipeData`). */
  hasData: boolean;
  /** The pod that runs the member. */
  pod: string;
  /**
   * Since when this run of the process loads its regions (epoch ms): a follower from the moment it
   * follows a leader (tikv/pd server/server.go `leaderLoop` → `StartSyncWithLeader` → pkg/syncer/client.go
   * `TryLoadRegionsOnce`), the leader once its RaftCluster runs, i.e. after TiKV bootstrapped
   * (server/cluster/cluster.go `LoadClusterInfo`). Unset while neither happened in this run.
   */
  loadingSince?: number;
}

export interface PdMembersConfig {
  electionMs: number;
  transferMs: number;
  /** How long a member takes to load its regions once it starts to (see `Member.loadingSince`). */
  regionLoadMs: number;
  /**
   * `pd-server.use-region-storage` (tikv/pd server/config/config.go, default true). When false a
   * follower never starts its region syncer (server/server.go `leaderLoop`: `if IsUseRegionStorage()
   * { StartSyncWithLeader }`), so nothing loads its regions until it leads (cluster.go `LoadClusterInfo`).
   */
  useRegionStorage: boolean;
}

/** A member as `addMember` takes it; the id is assigned here. */
export type NewMember = Omit<Member, 'memberId' | 'running' | 'hasData' | 'loadingSince'>;

/** PD's own message when a member with the joiner's name is already in the cluster (tikv/pd server/join/join.go `PrepareJoinCluster`). */
export const DUPLICATED_JOIN = 'missing data or join a duplicated pd';

const TWO_53 = 1n << 53n;
/** tikv/pd pkg/member/member.go `moveLeaderTimeout` (v8.5.7). */
export const MOVE_LEADER_TIMEOUT_MS = 5000;

/** A random uint64 in [2^53, 2^64): what an etcd member id almost always is. */
export function randomMemberId(): bigint {
  for (;;) {
    const id = randomBytes(8).readBigUInt64BE();
    if (id >= TWO_53) return id;
  }
}

/** tikv/pd pkg/storage/endpoint/cluster_id.go `initOrGetClusterID`: `(ts << 32) + uint64(rand.Uint32())`. */
export function newClusterId(nowMs = Date.now()): bigint {
  return (BigInt(Math.floor(nowMs / 1000)) << 32n) + BigInt(randomBytes(4).readUInt32BE());
}

export class PdMembers {
  private readonly byName = new Map<string, Member>();
  private leaderName: string | undefined;
  private cluster: bigint | undefined;
  private raftClusterBootstrapped = false;
  private election: NodeJS.Timeout | undefined;
  private transfer: NodeJS.Timeout | undefined;
  /** The member the transfer under way moves the leadership to, and the requests waiting on it. */
  private transferTo: string | undefined;
  private transferWaiters: (() => void)[] = [];

  constructor(
    private readonly config: PdMembersConfig,
    private readonly timers: Timers,
    private readonly records: SimRecords,
  ) {}

  /** The cluster id, set when the first member starts; undefined before. */
  get clusterId(): bigint | undefined {
    return this.cluster;
  }

  /** A PD member ever started: the PD cluster exists (TiKV may not have bootstrapped it yet). */
  get bootstrapped(): boolean {
    return this.cluster !== undefined;
  }

  get leader(): Member | undefined {
    return this.leaderName === undefined ? undefined : this.byName.get(this.leaderName);
  }

  list(): Member[] {
    return [...this.byName.values()];
  }

  /**
   * etcd's `MemberAdd` went through but the process died before its etcd started: the member is in
   * the list with its peer URL, no name and no client URLs (etcd publishes those when it starts,
   * server/etcdserver/server.go `publishV3`), and it counts towards the quorum. PD v8.5.x then refuses
   * every join, even this Pod's own (tikv/pd server/join/join.go `PrepareJoinCluster` at v8.5.7:
   * `there is a member %d that has not joined successfully`); only a removal by id ends it.
   */
  addUnstarted(peerUrl: string, pod: string): Member {
    const added = this.addMember({ name: '', pod, peerUrl, clientUrl: '' });
    added.running = false;
    added.hasData = false;
    this.reconsider();
    return added;
  }

  byId(memberId: bigint): Member | undefined {
    return this.list().find((m) => m.memberId === memberId);
  }

  get(name: string): Member | undefined {
    return this.byName.get(name);
  }

  /** A majority of the members run: the cluster can elect and keep a leader. */
  hasQuorum(): boolean {
    const running = this.list().filter((m) => m.running).length;
    return running * 2 > this.byName.size;
  }

  /** Whether the member has loaded its regions (`storage.AreRegionsLoaded`, tikv/pd pkg/storage/storage.go). */
  regionsLoaded(member: Member, now = Date.now()): boolean {
    return member.running && member.loadingSince !== undefined && now - member.loadingSince >= this.config.regionLoadMs;
  }

  /** TiKV bootstrapped the raft cluster: the leader's RaftCluster starts and loads the regions. */
  raftBootstrapped(): void {
    this.raftClusterBootstrapped = true;
    this.noteLoading();
  }

  /** `--initial-cluster`: a new single-member cluster led by this member. The caller checks `bootstrapped`. */
  bootstrap(member: NewMember): Member {
    this.cluster = newClusterId();
    const added = this.addMember(member);
    this.leaderName = added.name;
    this.noteLoading();
    return added;
  }

  /**
   * `--join`: PD refuses a name already in the cluster and needs a running member behind one of the
   * given client URLs, and a leader to add the member through (`MemberAdd` needs quorum). Returns why
   * it failed, if it did. tikv/pd server/join/join.go `PrepareJoinCluster`. `diesAfterAdd`: the
   * process dies right after `MemberAdd` (see `addUnstarted`).
   */
  join(member: NewMember, joinUrls: string[], diesAfterAdd = false): string | undefined {
    if (!this.bootstrapped) return `join ${joinUrls.join(',')}: no PD cluster answers`;
    const wanted = new Set(joinUrls.map(normalizeUrl));
    const reachable = this.list().some((m) => m.running && wanted.has(normalizeUrl(m.clientUrl)));
    if (!reachable) return `join ${joinUrls.join(',')}: no running member behind these client URLs`;
    // join.go (v8.5.7) looks at the unnamed members first, then at the names.
    const unstarted = this.list().find((m) => m.name === '');
    if (unstarted !== undefined) return unstartedRefusal(unstarted.memberId);
    if (this.byName.has(member.name)) return DUPLICATED_JOIN;
    if (this.leader === undefined) return 'join: the cluster has no leader to add the member';
    if (diesAfterAdd) {
      this.addUnstarted(member.peerUrl, member.pod);
      return 'the process died after MemberAdd, before its etcd started';
    }
    this.addMember(member);
    this.noteLoading();
    return undefined;
  }

  start(member: Member): void {
    member.running = true;
    member.loadingSince = undefined;
    this.reconsider();
  }

  /** The member's process stopped; returns whether it was the leader. */
  stop(member: Member): boolean {
    member.running = false;
    member.loadingSince = undefined;
    const wasLeader = this.leaderName === member.name;
    if (wasLeader) this.loseLeader();
    this.reconsider();
    return wasLeader;
  }

  /** Removes a member (the API's member delete). The caller makes its process exit. */
  remove(member: Member): void {
    this.byName.delete(keyOf(member));
    member.running = false;
    member.loadingSince = undefined;
    if (this.leaderName === member.name) this.loseLeader();
    this.reconsider();
  }

  /**
   * `POST /leader/transfer/{name}` on the leader: `ResignEtcdLeader` (tikv/pd pkg/member/member.go,
   * v8.5.7) picks the member with that name and calls `MoveEtcdLeader`, which waits up to
   * `moveLeaderTimeout` (5 s) for etcd's leadership to move (etcd server/etcdserver/server.go
   * `MoveLeader`); the PD leader follows the etcd leader. Resolves with PD's error text, if any.
   */
  transferLeader(target: string): Promise<string | undefined> {
    const to = this.byName.get(target);
    if (to === undefined) return Promise.resolve('no valid pd to transfer etcd leader');
    const from = this.leaderName;
    if (from === target) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      // etcd's ErrTimeoutLeaderTransfer, wrapped by errs.ErrEtcdMoveLeader.Wrap(err).GenWithStackByCause():
      // the cause text appears twice (pingcap/errors normalize.go).
      const cause = 'etcdserver: request timed out, leader transfer took too long';
      const timeout = this.timers.after(MOVE_LEADER_TIMEOUT_MS, () => resolve(`[PD:etcd:ErrEtcdMoveLeader]${cause}: ${cause}`));
      if (!to.running) return; // a stopped member never takes the leadership: the move times out
      const done = (): void => {
        this.timers.cancel(timeout);
        resolve(undefined);
      };
      // A request for the transferee already under way joins it: raft ignores a second
      // MsgTransferLeader to the same node ("transfer leadership to %x is in progress, ignores request
      // to same node", etcd raft/raft.go `stepLeader`), and etcd's `MoveLeader` only waits for the
      // leader to change. To another member, the transfer under way is aborted and this one starts.
      if (this.transfer !== undefined && this.transferTo === target) {
        this.transferWaiters.push(done);
        return;
      }
      this.timers.cancel(this.transfer);
      this.transferTo = target;
      this.transferWaiters = [done];
      // Not cancelled when `MoveEtcdLeader` gives up at 5 s: its deadline only ends the wait, raft's
      // transfer goes on, and PD runs it under the server's context, not the request's
      // (server/api/member.go `TransferLeader` passes `h.svr.Context()`), so a client that hangs up
      // does not stop it either. (Raft gives a transfer up within an election timeout, 3 s in
      // PD, raft/raft.go `tickHeartbeat`; a `transferMs` above 5 s plays the rare transfer that PD
      // reports as timed out and that still lands.)
      this.transfer = this.timers.after(this.config.transferMs, () => {
        this.transfer = undefined;
        this.transferTo = undefined;
        const waiters = this.transferWaiters.splice(0);
        // The transfer is void if leadership or the target changed meanwhile (the move then times out).
        if (this.leaderName !== from || !to.running || this.byName.get(target) !== to) return;
        this.leaderName = target;
        this.records.transfers.push({ from: from as string, to: target, time: Date.now() });
        this.noteLoading();
        for (const w of waiters) w();
      });
    });
  }

  private addMember(member: NewMember): Member {
    let memberId = randomMemberId();
    while (this.byId(memberId) !== undefined) memberId = randomMemberId();
    const added: Member = { ...member, memberId, running: true, hasData: true };
    this.byName.set(keyOf(added), added);
    return added;
  }

  private loseLeader(): void {
    this.leaderName = undefined;
    this.timers.cancel(this.transfer);
    this.transfer = undefined;
    this.transferTo = undefined;
    this.transferWaiters = [];
  }

  /**
   * Members that start to load their regions now: followers of a leader (from their own LevelDB,
   * pkg/syncer/client.go `StartSyncWithLeader`, only with region storage), and the leader of a
   * bootstrapped cluster. Once loaded, a member stays loaded for the life of its process
   * (pkg/storage/storage.go `regionLoaded` is never reset).
   */
  private noteLoading(): void {
    const leader = this.leaderName;
    if (leader === undefined) return;
    const now = Date.now();
    for (const m of this.byName.values()) {
      if (!m.running || m.loadingSince !== undefined) continue;
      if (m.name === leader ? this.raftClusterBootstrapped : this.config.useRegionStorage) m.loadingSince = now;
    }
  }

  /** After any change: a leader without quorum steps down; without a leader an election is due. */
  private reconsider(): void {
    if (this.leaderName !== undefined && !this.hasQuorum()) this.loseLeader();
    this.noteLoading();
    if (this.leaderName !== undefined || this.election !== undefined || !this.bootstrapped) return;
    this.election = this.timers.after(this.config.electionMs, () => {
      this.election = undefined;
      if (this.leaderName !== undefined || !this.hasQuorum()) return;
      const candidates = this.list()
        .filter((m) => m.running)
        .map((m) => m.name)
        .sort();
      this.leaderName = candidates[0];
      this.noteLoading();
    });
  }
}

/** Members by name; an unstarted member has none, so it goes by its id. */
function keyOf(m: Member): string {
  return m.name === '' ? `#${m.memberId}` : m.name;
}

/** tikv/pd server/join/join.go `PrepareJoinCluster` (v8.5.7) for a member with no name. */
export function unstartedRefusal(memberId: bigint): string {
  return `there is a member ${memberId} that has not joined successfully`;
}

function normalizeUrl(url: string): string {
  return url.trim().replace(/\/+$/, '').toLowerCase();
}
