/**
 * PD pods as processes: what the rendered PD start script and pd-server do when a container starts.
 *
 * With data the member simply runs again: PD skips the join when its data directory holds a member
 * (tikv/pd server/join/join.go `PrepareJoinCluster`, `isDataExist`). Without data the pod asks discovery
 * (`GET <discovery>/new/<base64("<peerHost>:2380\n")>`, sent from the pod's IP when it has one) until
 * it gets a 200, then bootstraps (`--initial-cluster`) or joins (`--join`). A failed join exits
 * pd-server; the container restarts and asks discovery again, so failures are retried every
 * `discoveryRetryMs` until the pod is stopped. While pd-server runs, `onServing` tells the owner, which
 * opens the member's own client listener.
 */
import * as http from 'node:http';
import { PdMembers, type Member } from './pd-members';
import type { SimRecords, Timers } from './pd-runtime';

/**
 * - `discovering`: started without data, polling discovery or retrying a failed join;
 * - `running`: its member runs;
 * - `crashed`: pd-server exited for good (its member was removed); needs `wipeData` and a restart;
 * - `split`: runs a second, separate cluster of its own (a split-brain bootstrap).
 */
export type PdPodState = 'stopped' | 'discovering' | 'running' | 'crashed' | 'split';

export interface PdProcessesConfig {
  discoveryRetryMs: number;
  /** How joining members are named (`--name`): the pod name or the full peer host. */
  memberNames: 'pod' | 'host';
  /** Read at every attempt: a test may set the URL after the pods start. */
  discoveryUrl: () => string | undefined;
  /**
   * pd-server of the pod starts (`member`) or stops serving (undefined): killed with its container
   * (`graceful` false), or exiting by itself after its member was removed (true: the answers it was
   * writing still go out).
   */
  onServing: (pod: string, member: Member | undefined, graceful?: boolean) => void;
}

interface PdPod {
  name: string;
  peerHost: string;
  /** The pod's IP: discovery requests leave from it. */
  ip?: string;
  state: PdPodState;
  hasData: boolean;
  /** The member this pod's data belongs to. */
  memberId?: bigint;
  /** Bumped by every start and stop, so a stale discovery answer is dropped. */
  generation: number;
  inFlight?: http.ClientRequest;
  retry?: NodeJS.Timeout;
}

const DISCOVERY_TIMEOUT_MS = 1000;

export class PdProcesses {
  private readonly pods = new Map<string, PdPod>();

  constructor(
    private readonly config: PdProcessesConfig,
    private readonly members: PdMembers,
    private readonly timers: Timers,
    private readonly records: SimRecords,
  ) {}

  state(pod: string): PdPodState {
    return this.pods.get(pod)?.state ?? 'stopped';
  }

  /** The member the pod's pd-server serves, while it runs. */
  servingMember(podName: string): Member | undefined {
    const pod = this.pods.get(podName);
    return pod?.state === 'running' ? this.memberOf(pod) : undefined;
  }

  start(podName: string, peerHost: string, ip?: string): void {
    const pod = this.pods.get(podName) ?? this.newPod(podName, peerHost);
    if (pod.state === 'running' || pod.state === 'discovering' || pod.state === 'split') {
      throw new Error(`pdStart: pod ${podName} is already started (${pod.state}); call pdStop first`);
    }
    pod.peerHost = peerHost;
    pod.ip = ip;
    pod.generation++;
    if (!pod.hasData) {
      pod.state = 'discovering';
      this.discover(pod, pod.generation);
      return;
    }
    if (pod.memberId === undefined) {
      // Only a split-brain bootstrap leaves data without a member of this cluster.
      pod.state = 'split';
      return;
    }
    const member = this.members.byId(pod.memberId);
    if (member === undefined) {
      this.crash(pod, `its data belongs to member ${pod.memberId}, which was removed from the cluster`);
      return;
    }
    pod.state = 'running';
    this.members.start(member);
    this.config.onServing(pod.name, member);
  }

  stop(podName: string): void {
    const pod = this.pods.get(podName);
    if (pod === undefined) return;
    this.halt(pod);
    const member = this.memberOf(pod);
    const wasRunning = pod.state === 'running';
    pod.state = 'stopped';
    if (wasRunning) this.config.onServing(pod.name, undefined);
    if (wasRunning && member !== undefined && this.members.stop(member)) {
      this.records.stopsWhileLeader.push({ pod: podName, time: Date.now() });
    }
  }

  /** Pods whose next join dies between etcd's `MemberAdd` and starting etcd (a fault the tests inject). */
  readonly diesAfterMemberAdd = new Set<string>();

  /** The pod's volume is lost: its next start goes through discovery. */
  wipe(podName: string): void {
    const pod = this.pods.get(podName);
    if (pod === undefined) return;
    pod.hasData = false;
    const member = this.memberOf(pod);
    if (member !== undefined) member.hasData = false;
  }

  /** A member deleted through the API: pd-server of that member exits. */
  memberRemoved(member: Member): void {
    const pod = [...this.pods.values()].find((p) => p.memberId === member.memberId);
    if (pod !== undefined && pod.state === 'running') this.crash(pod, 'its member was removed from the cluster');
  }

  /** Stops every discovery loop and request (the simulator closes). */
  close(): void {
    for (const pod of this.pods.values()) this.halt(pod);
  }

  private newPod(name: string, peerHost: string): PdPod {
    const pod: PdPod = { name, peerHost, state: 'stopped', hasData: false, generation: 0 };
    this.pods.set(name, pod);
    return pod;
  }

  private memberOf(pod: PdPod): Member | undefined {
    return pod.memberId === undefined ? undefined : this.members.byId(pod.memberId);
  }

  private halt(pod: PdPod): void {
    pod.generation++;
    pod.inFlight?.destroy();
    pod.inFlight = undefined;
    this.timers.cancel(pod.retry);
    pod.retry = undefined;
  }

  private crash(pod: PdPod, reason: string): void {
    this.halt(pod);
    if (pod.state === 'running') this.config.onServing(pod.name, undefined, true);
    pod.state = 'crashed';
    this.records.processFailure(pod.name, `pd-server exited: ${reason}`);
  }

  private discover(pod: PdPod, generation: number): void {
    const base = this.config.discoveryUrl();
    if (base === undefined) {
      this.retry(pod, generation);
      return;
    }
    const encoded = Buffer.from(`${pod.peerHost}:2380\n`).toString('base64');
    pod.inFlight = get(`${base.replace(/\/+$/, '')}/new/${encoded}`, pod.ip, (answer) => {
      if (generation !== pod.generation) return;
      pod.inFlight = undefined;
      if (answer.status === 200) this.applyArgs(pod, generation, answer.body.trim());
      else this.retry(pod, generation);
    });
  }

  private retry(pod: PdPod, generation: number): void {
    pod.retry = this.timers.after(this.config.discoveryRetryMs, () => {
      pod.retry = undefined;
      if (generation === pod.generation) this.discover(pod, generation);
    });
  }

  /** The discovery answer is pd-server's arguments. */
  private applyArgs(pod: PdPod, generation: number, args: string): void {
    const initial = /--initial-cluster=(\S+)/.exec(args)?.[1];
    const join = /--join=(\S+)/.exec(args)?.[1];
    const failure =
      initial !== undefined
        ? this.bootstrap(pod, initial)
        : join !== undefined
          ? this.join(
              pod,
              join.split(',').filter((u) => u !== ''),
            )
          : `discovery answered no --initial-cluster or --join: ${JSON.stringify(args)}`;
    if (failure === undefined) return;
    this.records.processFailure(pod.name, failure);
    this.retry(pod, generation);
  }

  private bootstrap(pod: PdPod, initialCluster: string): string | undefined {
    const self = initialCluster
      .split(',')
      .map((entry) => {
        const eq = entry.indexOf('=');
        return { name: entry.slice(0, eq), url: entry.slice(eq + 1) };
      })
      .find((e) => e.name === pod.name || e.name === pod.peerHost);
    if (self === undefined) return `--initial-cluster=${initialCluster} does not name ${pod.name} or ${pod.peerHost}`;
    const existing = this.members.clusterId;
    if (existing !== undefined) {
      this.records.splitBrain.push(
        `${pod.name} bootstrapped a second cluster with --initial-cluster=${initialCluster} while cluster ${existing} exists`,
      );
      pod.state = 'split';
      pod.hasData = true;
      pod.memberId = undefined;
      return undefined;
    }
    const member = this.members.bootstrap({
      name: self.name,
      pod: pod.name,
      peerUrl: self.url,
      clientUrl: self.url.replace(/:2380$/, ':2379'),
    });
    this.becomeMember(pod, member);
    return undefined;
  }

  private join(pod: PdPod, urls: string[]): string | undefined {
    const scheme = urls[0]?.startsWith('https://') ? 'https' : 'http';
    const name = this.config.memberNames === 'host' ? pod.peerHost : pod.name;
    const dies = this.diesAfterMemberAdd.delete(pod.name);
    const failure = this.members.join(
      { name, pod: pod.name, peerUrl: `${scheme}://${pod.peerHost}:2380`, clientUrl: `${scheme}://${pod.peerHost}:2379` },
      urls,
      dies,
    );
    if (failure !== undefined) return failure;
    this.becomeMember(pod, this.members.get(name) as Member);
    return undefined;
  }

  private becomeMember(pod: PdPod, member: Member): void {
    pod.memberId = member.memberId;
    pod.hasData = true;
    pod.state = 'running';
    this.config.onServing(pod.name, member);
  }
}

interface Answer {
  status: number;
  body: string;
}

/** One GET without keep-alive, from `localAddress` if given; a connection error or timeout answers status 0. */
function get(url: string, localAddress: string | undefined, done: (answer: Answer) => void): http.ClientRequest {
  let finished = false;
  const finish = (answer: Answer) => {
    if (finished) return;
    finished = true;
    done(answer);
  };
  const req = http.get(
    url,
    { agent: false, timeout: DISCOVERY_TIMEOUT_MS, ...(localAddress === undefined ? {} : { localAddress }) },
    (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => finish({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', () => finish({ status: 0, body: '' }));
    },
  );
  req.on('timeout', () => req.destroy());
  req.on('error', () => finish({ status: 0, body: '' }));
  return req;
}
