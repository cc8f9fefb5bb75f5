/**
 * The kubelet of the real-API tests: it registers a Node and keeps it alive (Lease renewals and
 * Ready heartbeats, as kubelet's node status loop does), binds the Pods of one namespace to it (no
 * scheduler runs), and plays each Pod's lifecycle through the API: Running with a Pod IP after
 * `startMs` once the ConfigMaps it mounts exist, Ready after `readyMs` while the readiness gate
 * passes, and on deletion, not Ready at once and gone after `stopMs` (deleted with grace period 0 and
 * a UID precondition, as kubelet finishes a termination).
 *
 * Every Pod gets its own loopback address (127.1xx.x.y), so a process playing the Pod's server can
 * send from the Pod's IP and a source-address check sees what it would see in a cluster.
 */
import { EventEmitter } from 'node:events';
import type { KubeClient, Obj } from './client';
import { readinessGatesPass } from '../sim/kube-kubelet';

export type PodEvent = 'podCreated' | 'podStarted' | 'podReady' | 'podUnready' | 'podStopped' | 'podGone';

export interface NodeSpec {
  readonly name: string;
  /** Labels beyond `kubernetes.io/hostname` and `kubernetes.io/os` (zones, regions). @default {} */
  readonly labels?: Readonly<Record<string, string>>;
}

export interface KubeletOptions {
  readonly node: string;
  /**
   * Several Nodes instead of the one named `node`: a Pod with ordinal k is bound to Node k mod n
   * (what a spread constraint over n zones ends with). @default [{ name: node }]
   */
  readonly nodes?: readonly NodeSpec[];
  readonly namespace: string;
  /** @default 150 */
  readonly startMs?: number;
  /** @default 50 */
  readonly readyMs?: number;
  /** @default 100 */
  readonly stopMs?: number;
  /** How often readiness is probed. @default 100 */
  readonly probeMs?: number;
}

interface Run {
  uid: string;
  name: string;
  ip: string;
  /** The Node it is bound to. */
  node?: string;
  state: 'pending' | 'running' | 'terminating';
  ready: boolean;
  /** The containers are ready (the Pod is Ready once the conditions of its readiness gates are True too). */
  containersReady?: boolean;
  readyDue: boolean;
  timer?: NodeJS.Timeout;
}

let nextAddress = 1;
/** A loopback address of its own for each Pod: 127.<100 + jest worker>.x.y, unique across test processes. */
function allocateIp(): string {
  const n = nextAddress++;
  const worker = (Number(process.env.JEST_WORKER_ID) || 0) % 100;
  return `127.${100 + worker}.${(n >> 8) & 255}.${n & 255}`;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const microTime = (ms: number) => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
const time = (ms: number) => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');

/** How a Job's Pod ended: its container's exit code and termination message. */
export interface JobOutcome {
  readonly exitCode: number;
  readonly message: string;
}

export class Kubelet extends EventEmitter {
  /** Decides whether a running Pod may be Ready; asked on every probe. */
  readinessGate: (pod: Obj) => boolean = () => true;
  /**
   * Runs the container of a Job's Pod (one with the Job controller's `batch.kubernetes.io/job-name`
   * label) once it has started; the Pod then ends Succeeded or Failed with the outcome in its
   * container's terminated state, as kubelet reports a container that exited. Without it, Job Pods
   * run for ever like any other.
   */
  runJob?: (pod: Obj) => Promise<JobOutcome>;
  /**
   * Runs a deleted Pod's preStop hooks (one of its containers has `lifecycle.preStop`) while its
   * containers still run, as kubelet does before it stops them; cut off at the Pod's grace period.
   * Without it, hooks are skipped.
   */
  preStop?: (pod: Obj) => Promise<void>;
  /** Every preStop run: the Pod, and how long it held the Pod (ms). */
  readonly preStops: { pod: string; ms: number }[] = [];
  private readonly runs = new Map<string, Run>();
  private readonly pods = new Map<string, Obj>();
  private stopWatch?: () => void;
  private heartbeat?: NodeJS.Timeout;
  private probe?: NodeJS.Timeout;
  private alive = true;
  /** Nodes that are gone (`stopNode`): no heartbeat, no status, their containers stopped. */
  private readonly deadNodes = new Set<string>();
  /** Pods that stopped and whose successor is not Ready yet, by component; and the most at once. */
  private readonly down = new Map<string, Set<string>>();
  private readonly mostDown = new Map<string, number>();
  private closed = false;
  private readonly o: Required<KubeletOptions>;

  constructor(
    private readonly kube: KubeClient,
    options: KubeletOptions,
  ) {
    super();
    this.o = { startMs: 150, readyMs: 50, stopMs: 100, probeMs: 100, nodes: [{ name: options.node }], ...options };
  }

  /**
   * The Node a Pod is bound to: by its ordinal over the Nodes, passing over a Node that is gone (as
   * the scheduler does a Node the node-lifecycle controller tainted).
   */
  private nodeFor(pod: string): string {
    const ordinal = Number(/-(\d+)$/.exec(pod)?.[1] ?? 0);
    const n = this.o.nodes.length;
    for (let i = 0; i < n; i++) {
      const node = this.o.nodes[(ordinal + i) % n].name;
      if (!this.deadNodes.has(node)) return node;
    }
    return this.o.nodes[ordinal % n].name;
  }

  /**
   * A Node is gone for good (its machine died): its heartbeats and Lease renewals stop, the
   * containers of its Pods stop, and nothing about its Pods is written any more; the node-lifecycle
   * controller then marks the Node and its Pods not Ready. A Pod on it goes only by a deletion with
   * no grace period, as nobody is there to confirm a graceful one. The Pods it runs, by name.
   */
  stopNode(node: string): string[] {
    this.deadNodes.add(node);
    const lost: string[] = [];
    for (const run of this.runs.values()) {
      if (run.node !== node) continue;
      clearTimeout(run.timer);
      const pod = this.pods.get(run.name);
      if (run.state === 'running' && pod) this.emit('podStopped', pod);
      run.state = 'terminating';
      lost.push(run.name);
    }
    return lost;
  }

  /**
   * The most Pods of a component that were down at once: stopped, and their successor not Ready yet
   * (what a rollout's maxUnavailable is about).
   */
  maxDown(component: string): number {
    return this.mostDown.get(component) ?? 0;
  }

  private track(pod: Obj, event: PodEvent): void {
    const component = pod?.metadata?.labels?.['app.kubernetes.io/component'];
    if (!component) return;
    const set = this.down.get(component) ?? new Set<string>();
    this.down.set(component, set);
    if (event === 'podStopped') set.add(pod.metadata.name);
    if (event === 'podReady') set.delete(pod.metadata.name);
    this.mostDown.set(component, Math.max(this.mostDown.get(component) ?? 0, set.size));
  }

  override emit(event: PodEvent, pod: Obj): boolean {
    this.track(pod, event);
    return super.emit(event, pod);
  }

  /** The Pod's address, once the kubelet started it. */
  ipOf(pod: string): string | undefined {
    return this.runs.get(pod)?.ip;
  }

  async start(): Promise<void> {
    for (const node of this.o.nodes) {
      const labels = { 'kubernetes.io/hostname': node.name, 'kubernetes.io/os': 'linux', ...node.labels };
      await this.kube.create({ apiVersion: 'v1', kind: 'Node', metadata: { name: node.name, labels } }).catch((e) => {
        if (e.status !== 409) throw e;
      });
    }
    await this.beat();
    this.heartbeat = setInterval(() => void this.beat(), 2000);
    this.stopWatch = this.kube.watch(`/api/v1/namespaces/${this.o.namespace}/pods`, '', (type, pod) => this.onPod(type, pod));
    this.probe = setInterval(() => void this.probeAll(), this.o.probeMs);
  }

  /**
   * The kubelet stops talking to the API server (a dead or cut-off node): no heartbeats and no Pod
   * status writes until `resume`; the node-lifecycle controller then marks the Node and its Pods not
   * Ready. The containers keep running.
   */
  pause(): void {
    this.alive = false;
  }

  /** The kubelet is back: heartbeats resume and every Pod's status is written again. */
  async resume(): Promise<void> {
    this.alive = true;
    await this.beat();
    for (const run of this.runs.values()) if (run.state === 'running') await this.writeStatus(run);
  }

  async close(): Promise<void> {
    this.closed = true;
    this.stopWatch?.();
    clearInterval(this.heartbeat);
    clearInterval(this.probe);
    for (const run of this.runs.values()) clearTimeout(run.timer);
  }

  /** Node status and Lease renewal, as kubelet's node status loop does. */
  private async beat(): Promise<void> {
    if (!this.alive || this.closed) return;
    for (const { name } of this.o.nodes) if (!this.deadNodes.has(name)) await this.beatNode(name);
  }

  private async beatNode(node: string): Promise<void> {
    const now = Date.now();
    try {
      await this.kube.patch(`/api/v1/nodes/${node}/status`, 'strategic', {
        status: {
          conditions: [
            {
              type: 'Ready',
              status: 'True',
              reason: 'KubeletReady',
              message: 'kubelet is posting ready status',
              lastHeartbeatTime: time(now),
              lastTransitionTime: time(now),
            },
          ],
          addresses: [
            { type: 'InternalIP', address: '127.0.0.1' },
            { type: 'Hostname', address: node },
          ],
          capacity: { cpu: '64', memory: '256Gi', pods: '500' },
          allocatable: { cpu: '64', memory: '256Gi', pods: '500' },
        },
      });
      const lease = `/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases/${node}`;
      const body = {
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: node, namespace: 'kube-node-lease' },
        spec: { holderIdentity: node, leaseDurationSeconds: 40, renewTime: microTime(now) },
      };
      await this.kube.patch(lease, 'apply', body, 'fieldManager=kubelet&force=true');
    } catch {
      // The next beat tries again.
    }
  }

  private onPod(type: string, pod: Obj): void {
    if (this.closed) return;
    const name = pod.metadata.name as string;
    if (type === 'DELETED') {
      this.pods.delete(name);
      const run = this.runs.get(name);
      if (run && run.uid === pod.metadata.uid) {
        clearTimeout(run.timer);
        this.runs.delete(name);
        if (run.state === 'running') this.emit('podStopped', pod);
      }
      this.emit('podGone', pod);
      return;
    }
    this.pods.set(name, pod);
    let run = this.runs.get(name);
    if (run && run.uid !== pod.metadata.uid) {
      // A successor of the same name: the old one is gone (its DELETED event may come later).
      clearTimeout(run.timer);
      this.runs.delete(name);
      run = undefined;
    }
    if (run?.node !== undefined && this.deadNodes.has(run.node)) return;
    if (!run) {
      if (pod.metadata.deletionTimestamp) return;
      run = { uid: pod.metadata.uid, name, ip: allocateIp(), state: 'pending', ready: false, readyDue: false };
      this.runs.set(name, run);
      this.emit('podCreated', pod);
      void this.admit(run, pod);
      return;
    }
    if (pod.metadata.deletionTimestamp && run.state !== 'terminating') {
      void this.terminate(run);
      return;
    }
    // The node-lifecycle controller marked a live Pod not Ready: write the truth again, as the status manager does.
    const stored = (pod.status?.conditions ?? []).find((c: Obj) => c.type === 'Ready')?.status === 'True';
    if (run.state === 'running' && this.alive && stored !== run.ready) void this.writeStatus(run);
  }

  private async admit(run: Run, pod: Obj): Promise<void> {
    run.node = pod.spec?.nodeName ?? this.nodeFor(run.name);
    if (!pod.spec?.nodeName) {
      try {
        await this.kube.ok('POST', `/api/v1/namespaces/${this.o.namespace}/pods/${run.name}/binding`, {
          body: {
            apiVersion: 'v1',
            kind: 'Binding',
            metadata: { name: run.name, uid: run.uid },
            target: { apiVersion: 'v1', kind: 'Node', name: run.node },
          },
        });
      } catch {
        // Deleted meanwhile, or bound by someone else.
      }
    }
    run.timer = setTimeout(() => void this.startContainers(run), this.o.startMs);
  }

  /** Starts the containers once every ConfigMap the Pod mounts exists (kubelet's volume setup). */
  private async startContainers(run: Run): Promise<void> {
    // Once closed, nothing is started nor retried: a retry would keep the test process alive for ever.
    if (this.closed || this.runs.get(run.name) !== run || run.state !== 'pending') return;
    const pod = this.pods.get(run.name);
    if (!pod) return;
    const wanted = new Set<string>();
    for (const v of pod.spec?.volumes ?? []) {
      if (v.configMap?.name && !v.configMap.optional) wanted.add(v.configMap.name);
      for (const s of v.projected?.sources ?? []) if (s.configMap?.name && !s.configMap.optional) wanted.add(s.configMap.name);
    }
    for (const cm of wanted) {
      if (!(await this.kube.get(`/api/v1/namespaces/${this.o.namespace}/configmaps/${cm}`).catch(() => undefined))) {
        if (this.closed) return;
        run.timer = setTimeout(() => void this.startContainers(run), this.o.startMs);
        return;
      }
    }
    if (this.runs.get(run.name) !== run || run.state !== 'pending') return;
    // A Job's container whose environment names a Secret (or key) that does not exist does not start:
    // kubelet's CreateContainerConfigError, retried until the Secret is there.
    if (this.runJob && pod.metadata.labels?.['batch.kubernetes.io/job-name'] !== undefined) {
      const missing = await this.missingSecretKey(pod);
      if (missing) {
        await this.writeWaiting(run, pod, 'CreateContainerConfigError', missing);
        if (this.closed) return;
        run.timer = setTimeout(() => void this.startContainers(run), 1000);
        return;
      }
    }
    run.state = 'running';
    (run as Run & { startedAt: number }).startedAt = Date.now();
    await this.writeStatus(run);
    this.emit('podStarted', pod);
    if (this.runJob && pod.metadata.labels?.['batch.kubernetes.io/job-name'] !== undefined) {
      void this.finishJob(run, pod, this.runJob);
      return;
    }
    run.timer = setTimeout(() => {
      run.readyDue = true;
      void this.probeOne(run);
    }, this.o.readyMs);
  }

  private async probeAll(): Promise<void> {
    for (const run of [...this.runs.values()]) await this.probeOne(run);
  }

  private async probeOne(run: Run): Promise<void> {
    if (run.state !== 'running' || !run.readyDue || this.closed) return;
    const pod = this.pods.get(run.name);
    if (!pod) return;
    // Kubelet counts a Pod Ready once its containers are and every condition of its readinessGates is
    // True (kubernetes pkg/kubelet/status/generate.go GeneratePodReadyCondition).
    const containersReady = this.readinessGate(pod);
    const ready = containersReady && readinessGatesPass(pod);
    if (ready === run.ready && containersReady === run.containersReady) return;
    const changed = ready !== run.ready;
    run.containersReady = containersReady;
    run.ready = ready;
    if (this.alive) await this.writeStatus(run);
    if (changed) this.emit(ready ? 'podReady' : 'podUnready', pod);
  }

  private async writeStatus(run: Run): Promise<void> {
    const pod = this.pods.get(run.name);
    if (!pod || !this.alive) return;
    const now = Date.now();
    const startedAt = (run as Run & { startedAt?: number }).startedAt ?? now;
    const cond = (type: string, ok: boolean) => ({
      type,
      status: ok ? 'True' : 'False',
      lastProbeTime: null,
      lastTransitionTime: time(now),
    });
    const running = run.state === 'running';
    const status = {
      phase: running ? 'Running' : 'Pending',
      hostIP: '127.0.0.1',
      hostIPs: [{ ip: '127.0.0.1' }],
      podIP: run.ip,
      podIPs: [{ ip: run.ip }],
      startTime: time(startedAt),
      conditions: [
        cond('PodReadyToStartContainers', running),
        cond('Initialized', true),
        cond('Ready', running && run.ready),
        cond('ContainersReady', running && run.containersReady === true),
        cond('PodScheduled', true),
      ],
      containerStatuses: (pod.spec?.containers ?? []).map((c: Obj) => ({
        name: c.name,
        image: c.image,
        imageID: '',
        ready: running && run.containersReady === true,
        started: running,
        restartCount: 0,
        state: running ? { running: { startedAt: time(startedAt) } } : { waiting: { reason: 'ContainerCreating' } },
      })),
    };
    try {
      // A strategic merge, as kubelet's status manager patches: conditions merge by type, so the ones
      // another party owns (a readiness gate's) stay.
      await this.kube.patch(
        `/api/v1/namespaces/${this.o.namespace}/pods/${run.name}/status`,
        'strategic',
        { metadata: { uid: run.uid }, status },
        'fieldManager=kubelet',
      );
    } catch {
      // Gone or replaced: its watch events say so.
    }
  }

  /** What kubelet says of the first `secretKeyRef` its containers' environment cannot resolve, if any. */
  private async missingSecretKey(pod: Obj): Promise<string | undefined> {
    for (const c of pod.spec?.containers ?? []) {
      for (const e of c.env ?? []) {
        const ref = e.valueFrom?.secretKeyRef;
        if (!ref || ref.optional) continue;
        const secret = await this.kube.get(`/api/v1/namespaces/${this.o.namespace}/secrets/${ref.name}`).catch(() => undefined);
        if (!secret) return `secret "${ref.name}" not found`;
        if (!(ref.key in (secret.data ?? {}))) return `couldn't find key ${ref.key} in Secret ${this.o.namespace}/${ref.name}`;
      }
    }
    return undefined;
  }

  /** A Pending Pod whose container waits for a reason (as kubelet reports CreateContainerConfigError). */
  private async writeWaiting(run: Run, pod: Obj, reason: string, message: string): Promise<void> {
    const status = {
      phase: 'Pending',
      containerStatuses: (pod.spec?.containers ?? []).map((c: Obj) => ({
        name: c.name,
        image: c.image,
        imageID: '',
        ready: false,
        started: false,
        restartCount: 0,
        state: { waiting: { reason, message } },
      })),
    };
    try {
      await this.kube.patch(
        `/api/v1/namespaces/${this.o.namespace}/pods/${run.name}/status`,
        'merge',
        { metadata: { uid: run.uid }, status },
        'fieldManager=kubelet',
      );
    } catch {
      // Gone or replaced meanwhile.
    }
  }

  /** Runs a Job's container to its end and reports the Pod Succeeded or Failed. */
  private async finishJob(run: Run, pod: Obj, runJob: (pod: Obj) => Promise<JobOutcome>): Promise<void> {
    let outcome: JobOutcome;
    try {
      outcome = await runJob(pod);
    } catch (e) {
      outcome = { exitCode: 128, message: String(e) };
    }
    if (this.runs.get(run.name) !== run || run.state !== 'running' || this.closed) return;
    run.state = 'terminating';
    const now = Date.now();
    const startedAt = (run as Run & { startedAt?: number }).startedAt ?? now;
    const cond = (type: string, ok: boolean) => ({
      type,
      status: ok ? 'True' : 'False',
      lastProbeTime: null,
      lastTransitionTime: time(now),
    });
    const status = {
      phase: outcome.exitCode === 0 ? 'Succeeded' : 'Failed',
      conditions: [
        cond('PodReadyToStartContainers', false),
        cond('Initialized', true),
        cond('Ready', false),
        cond('ContainersReady', false),
        cond('PodScheduled', true),
      ],
      containerStatuses: (pod.spec?.containers ?? []).map((c: Obj) => ({
        name: c.name,
        image: c.image,
        imageID: '',
        ready: false,
        started: false,
        restartCount: 0,
        state: {
          terminated: {
            exitCode: outcome.exitCode,
            reason: outcome.exitCode === 0 ? 'Completed' : 'Error',
            message: outcome.message,
            startedAt: time(startedAt),
            finishedAt: time(now),
          },
        },
      })),
    };
    try {
      await this.kube.patch(
        `/api/v1/namespaces/${this.o.namespace}/pods/${run.name}/status`,
        'merge',
        { metadata: { uid: run.uid }, status },
        'fieldManager=kubelet',
      );
    } catch {
      // Gone or replaced meanwhile.
    }
    this.emit('podStopped', pod);
  }

  private async terminate(run: Run): Promise<void> {
    clearTimeout(run.timer);
    const wasRunning = run.state === 'running';
    run.state = 'terminating';
    run.ready = false;
    run.containersReady = false;
    const pod = this.pods.get(run.name);
    const hooked = (pod?.spec?.containers ?? []).some((c: Obj) => c.lifecycle?.preStop);
    if (wasRunning && pod && hooked && this.preStop) {
      const started = Date.now();
      const grace = (pod.spec?.terminationGracePeriodSeconds ?? 30) * 1000;
      let cut: NodeJS.Timeout | undefined;
      await Promise.race([this.preStop(pod).catch(() => undefined), new Promise((r) => (cut = setTimeout(r, grace)))]);
      clearTimeout(cut);
      this.preStops.push({ pod: run.name, ms: Date.now() - started });
    }
    if (wasRunning && pod) this.emit('podStopped', pod);
    await sleep(this.o.stopMs);
    while (!this.alive && !this.closed) await sleep(100);
    try {
      await this.kube.delete(`/api/v1/namespaces/${this.o.namespace}/pods/${run.name}`, {
        gracePeriodSeconds: 0,
        preconditions: { uid: run.uid },
      });
    } catch {
      // Already gone.
    }
  }
}
