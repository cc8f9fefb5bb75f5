/**
 * The PD members as the embedded etcd sees them: membership, who runs, quorum, and the leader.
 *
 * Simplifications: an election takes `electionMs` and always picks the lowest-named running member;
 * a leader exists only while a majority of the members run; a bootstrapped single-member cluster
 * has its leader at once.
 */
import type { SimRecords, Timers } from './pd-runtime';

export interface PdMember {
  /** `--name` of the member: the pod name, or the pod's peer host when names must be global. */
  name: string;
  /** Stable for the member's life; a member removed and joined again gets a new id, as in PD. */
  memberId: number;
  peerUrl: string;
  clientUrl: string;
  running: boolean;
  /** The member's data directory exists (false after `wipeData`). */
  hasData: boolean;
  /** The pod that runs the member. */
  pod: string;
}

export interface PdMembersConfig {
  electionMs: number;
  transferMs: number;
}

/** A member as `addMember` takes it; the id is assigned here. */
export type NewMember = Omit<PdMember, 'memberId' | 'running' | 'hasData'>;

/** PD's own message when a member with the joiner's name is already in the cluster. */
export const DUPLICATED_JOIN = 'missing data or join a duplicated pd';

export class PdMembers {
  private readonly byName = new Map<string, PdMember>();
  private leaderName: string | undefined;
  private cluster: number | undefined;
  private nextMemberId = 0x1d3f0001;
  private election: NodeJS.Timeout | undefined;
  private transfer: NodeJS.Timeout | undefined;

  constructor(
    private readonly config: PdMembersConfig,
    private readonly timers: Timers,
    private readonly records: SimRecords,
  ) {}

  /** The cluster id, set at bootstrap; undefined while no member has bootstrapped. */
  get clusterId(): number | undefined {
    return this.cluster;
  }

  get bootstrapped(): boolean {
    return this.cluster !== undefined;
  }

  get leader(): PdMember | undefined {
    return this.leaderName === undefined ? undefined : this.byName.get(this.leaderName);
  }

  list(): PdMember[] {
    return [...this.byName.values()];
  }

  byId(memberId: number): PdMember | undefined {
    return this.list().find((m) => m.memberId === memberId);
  }

  get(name: string): PdMember | undefined {
    return this.byName.get(name);
  }

  /** A majority of the members run: the cluster can elect and keep a leader. */
  hasQuorum(): boolean {
    const running = this.list().filter((m) => m.running).length;
    return running * 2 > this.byName.size;
  }

  /** `--initial-cluster`: a new single-member cluster led by this member. The caller checks `bootstrapped`. */
  bootstrap(member: NewMember): PdMember {
    // Below 2^53, so it survives JSON in JavaScript clients; real ids are random 64-bit numbers.
    this.cluster = 7_100_000_000_000_000 + Math.floor(Math.random() * 1_000_000_000);
    const added = this.addMember(member);
    this.leaderName = added.name;
    return added;
  }

  /**
   * `--join`: PD refuses a name already in the cluster and needs a running member behind one of the
   * given client URLs, and a leader to add the member through. Returns why it failed, if it did.
   */
  join(member: NewMember, joinUrls: string[]): string | undefined {
    if (!this.bootstrapped) return `join ${joinUrls.join(',')}: no PD cluster answers`;
    if (this.byName.has(member.name)) return DUPLICATED_JOIN;
    const wanted = new Set(joinUrls.map(normalizeUrl));
    const reachable = this.list().some((m) => m.running && wanted.has(normalizeUrl(m.clientUrl)));
    if (!reachable) return `join ${joinUrls.join(',')}: no running member behind these client URLs`;
    if (this.leader === undefined) return 'join: the cluster has no leader to add the member';
    this.addMember(member);
    return undefined;
  }

  start(member: PdMember): void {
    member.running = true;
    this.reconsider();
  }

  /** The member's process stopped; returns whether it was the leader. */
  stop(member: PdMember): boolean {
    member.running = false;
    const wasLeader = this.leaderName === member.name;
    if (wasLeader) this.loseLeader();
    this.reconsider();
    return wasLeader;
  }

  /** Removes a member (the API's member delete). The caller makes its process exit. */
  remove(member: PdMember): void {
    this.byName.delete(member.name);
    if (this.leaderName === member.name) this.loseLeader();
    this.reconsider();
  }

  /** Starts a leader transfer; returns an error message when PD would refuse it. */
  transferLeader(target: string): string | undefined {
    const to = this.byName.get(target);
    if (to === undefined) return `failed to transfer leader: member ${target} not found`;
    if (!to.running) return `failed to transfer leader: member ${target} is not running`;
    const from = this.leaderName;
    if (from === undefined || from === target) return undefined;
    this.timers.cancel(this.transfer);
    this.transfer = this.timers.after(this.config.transferMs, () => {
      this.transfer = undefined;
      // The transfer is void if leadership or the target changed meanwhile.
      if (this.leaderName !== from || !to.running || this.byName.get(target) !== to) return;
      this.leaderName = target;
      this.records.transfers.push({ from, to: target, time: Date.now() });
    });
    return undefined;
  }

  private addMember(member: NewMember): PdMember {
    const added: PdMember = { ...member, memberId: this.nextMemberId++, running: true, hasData: true };
    this.byName.set(added.name, added);
    return added;
  }

  private loseLeader(): void {
    this.leaderName = undefined;
    this.timers.cancel(this.transfer);
    this.transfer = undefined;
  }

  /** After any change: a leader without quorum steps down; without a leader an election is due. */
  private reconsider(): void {
    if (this.leaderName !== undefined && !this.hasQuorum()) this.loseLeader();
    if (this.leaderName !== undefined || this.election !== undefined || !this.bootstrapped) return;
    this.election = this.timers.after(this.config.electionMs, () => {
      this.election = undefined;
      if (this.leaderName !== undefined || !this.hasQuorum()) return;
      const candidates = this.list()
        .filter((m) => m.running)
        .map((m) => m.name)
        .sort();
      this.leaderName = candidates[0];
    });
  }
}

function normalizeUrl(url: string): string {
  return url.trim().replace(/\/+$/, '').toLowerCase();
}
