/**
 * The kubelet part of the simulation: each Pod goes Pending -> Running (after `startMs`, once every
 * ConfigMap it mounts exists) -> Ready
 * (after `readyMs` more, once the readiness gate passes), and on deletion terminates (not Ready at
 * once) and disappears after `stopMs`. Readiness follows the gate for as long as the Pod runs, as a
 * readiness probe does: a Ready Pod whose gate fails turns not Ready, and Ready again once it passes.
 * A Pod with `spec.readinessGates` is Ready only while their conditions (set by others) are True too,
 * its containers ready meanwhile (ContainersReady), as kubelet's status manager writes it (kubernetes
 * pkg/kubelet/status/generate.go, `GeneratePodReadyCondition` and `GenerateContainersReadyCondition`).
 * Pod statuses look like a kubelet's, with conditions and container statuses, so clients that inspect
 * them see familiar shapes. A Pod gets its podIP when it starts: the simulation has no separate pod
 * sandbox, and a real Pending Pod whose sandbox has not been set up (volumes still mounting) has none.
 */
import type { KubeObject } from './kube-api';
import { clone, rfc3339 } from './kube-util';

/**
 * Pod lifecycle moments, in the order they happen to one Pod; `podUnready` (a running Pod's readiness
 * gate failed) and `podReady` may then alternate while the Pod runs.
 */
export type PodEvent = 'podCreated' | 'podStarted' | 'podReady' | 'podUnready' | 'podStopped' | 'podGone';

/** What the kubelet needs from the API server around it. */
export interface KubeletHost {
  /** The stored Pod, if any. */
  getPod(namespace: string, name: string): KubeObject | undefined;
  /** Writes a new status for the Pod; returns the stored Pod. */
  writeStatus(pod: KubeObject, status: Record<string, any>): KubeObject;
  /** Ends the Pod's deletion: the object goes (unless finalizers still hold it). */
  removePod(pod: KubeObject): void;
  /** The address a starting Pod gets (what the CNI plugin assigns when the sandbox is set up). */
  podIP(pod: KubeObject): string;
  /**
   * The ConfigMaps the Pod mounts (not optional) that do not exist: its containers cannot start
   * until they do (the kubelet's "MountVolume.SetUp failed ... not found").
   */
  missingConfigMaps(pod: KubeObject): string[];
  /** Reports that a Pod could not start for missing ConfigMaps (it is tried again later). */
  mountFailed(pod: KubeObject, missing: string[]): void;
  /**
   * Are a started Pod's containers ready (its readiness probe, asked again and again while it runs)?
   * The Pod is Ready once they are and its `spec.readinessGates` conditions are True.
   */
  readinessGate(pod: KubeObject): boolean;
  /** Reports a lifecycle moment. */
  emit(event: PodEvent, pod: KubeObject): void;
}

/** Timings of the simulated kubelet. */
export interface KubeletTimings {
  startMs: number;
  readyMs: number;
  stopMs: number;
}

/** `running`: containers run, not Ready (not yet, or no longer); `ready`: Ready. */
type Phase = 'pending' | 'running' | 'ready' | 'terminating';

interface PodRun {
  namespace: string;
  name: string;
  uid: string;
  phase: Phase;
  /** Set once `readyMs` has passed since the containers started (stays set while the Pod runs). */
  readyDue: boolean;
  /** The containers are ready (ContainersReady): the Pod is Ready once its readiness gates pass too. */
  containersReady?: boolean;
  timer?: NodeJS.Timeout;
}

interface Condition {
  type: string;
  status: string;
  lastTransitionTime?: string;
}

function condition(type: string, ok: boolean, now: number): Condition {
  return { type, status: ok ? 'True' : 'False', lastTransitionTime: rfc3339(now) };
}

function containerStatuses(pod: KubeObject, state: 'waiting' | 'running', ready: boolean, startedAt: number): unknown[] {
  return (pod.spec?.containers ?? []).map((c: { name: string; image?: string }) => ({
    name: c.name,
    image: c.image ?? '',
    imageID: '',
    ready,
    started: state === 'running',
    restartCount: 0,
    state: state === 'running' ? { running: { startedAt: rfc3339(startedAt) } } : { waiting: { reason: 'ContainerCreating' } },
  }));
}

/**
 * The status a new Pod is stored with: scheduled onto the node at `hostIP`, Pending, not Ready, and
 * without a podIP: its sandbox is not set up yet, and the kubelet reports the IPs of the sandbox
 * (kubernetes v1.32 `pkg/kubelet/kubelet_pods.go` convertStatusToAPIStatus copies `podStatus.IPs`).
 */
export function pendingPodStatus(pod: KubeObject, hostIP: string, now: number): Record<string, any> {
  return {
    phase: 'Pending',
    conditions: [
      condition('PodScheduled', true, now),
      condition('Initialized', true, now),
      condition('ContainersReady', false, now),
      condition('Ready', false, now),
    ],
    hostIP,
    hostIPs: [{ ip: hostIP }],
    startTime: rfc3339(now),
    qosClass: 'BestEffort',
    containerStatuses: containerStatuses(pod, 'waiting', false, now),
  };
}

/**
 * Whether every condition the Pod's `spec.readinessGates` name is True in its status: kubelet counts
 * the Pod Ready only then (kubernetes pkg/kubelet/status/generate.go `GeneratePodReadyCondition`,
 * reason `ReadinessGatesNotReady` otherwise). Another party (a controller) sets those conditions.
 */
export function readinessGatesPass(pod: Record<string, any>): boolean {
  const conditions: Condition[] = pod.status?.conditions ?? [];
  return (pod.spec?.readinessGates ?? []).every((g: { conditionType: string }) =>
    conditions.some((c) => c.type === g.conditionType && c.status === 'True'),
  );
}

/**
 * Sets the Ready and ContainersReady conditions (keeping their transition time if unchanged) and the
 * containers' `ready`: the containers may be ready while the Pod is not, for a readiness gate.
 */
function withReadiness(status: Record<string, any>, ready: boolean, now: number, containersReady = ready): Record<string, any> {
  const next = clone(status);
  const wanted = (type: string) => (type === 'Ready' ? ready : type === 'ContainersReady' ? containersReady : undefined);
  next.conditions = (next.conditions ?? []).map((c: Condition) => {
    const ok = wanted(c.type);
    return ok !== undefined && c.status !== (ok ? 'True' : 'False') ? condition(c.type, ok, now) : c;
  });
  next.containerStatuses = (next.containerStatuses ?? []).map((c: Record<string, unknown>) => ({ ...c, ready: containersReady }));
  return next;
}

/** The status of a Pod whose deletion just began: no longer Ready. */
export function terminatingPodStatus(status: Record<string, any> | undefined, now: number): Record<string, any> {
  return withReadiness(status ?? {}, false, now);
}

/** Drives every Pod through its lifecycle on timers. */
export class Kubelet {
  private readonly runs = new Map<string, PodRun>();

  constructor(
    private readonly host: KubeletHost,
    private readonly timings: KubeletTimings,
    private readonly now: () => number = Date.now,
  ) {}

  /** Takes on a newly created Pod (already stored with a Pending status). */
  admit(pod: KubeObject): void {
    const run: PodRun = {
      namespace: pod.metadata.namespace!,
      name: pod.metadata.name,
      uid: pod.metadata.uid,
      phase: 'pending',
      readyDue: false,
    };
    this.runs.set(run.uid, run);
    this.host.emit('podCreated', pod);
    run.timer = this.after(this.timings.startMs, () => this.start(run));
  }

  /**
   * Carries out a deletion that already stored the Pod with a deletionTimestamp and a not-Ready
   * status: reports `podStopped`, then removes the Pod after `stopMs` (at once if `immediate`).
   */
  terminate(pod: KubeObject, immediate: boolean): void {
    let run = this.runs.get(pod.metadata.uid);
    if (!run) {
      run = { namespace: pod.metadata.namespace!, name: pod.metadata.name, uid: pod.metadata.uid, phase: 'pending', readyDue: false };
      this.runs.set(run.uid, run);
    }
    if (run.timer) clearTimeout(run.timer);
    const wasTerminating = run.phase === 'terminating';
    run.phase = 'terminating';
    if (!wasTerminating) this.host.emit('podStopped', pod);
    if (immediate) this.remove(run);
    else if (!wasTerminating) run.timer = this.after(this.timings.stopMs, () => this.remove(run!));
  }

  /**
   * Polls the readiness gate of running Pods (called on the simulator's ticker): a not-Ready Pod whose
   * gate passes turns Ready, a Ready one whose gate fails turns not Ready. Terminating Pods are left alone.
   */
  tick(): void {
    for (const run of [...this.runs.values()]) {
      if (run.phase === 'running') this.tryReady(run);
      else if (run.phase === 'ready') this.checkReady(run);
    }
  }

  /** Stops every timer. */
  stop(): void {
    for (const run of this.runs.values()) if (run.timer) clearTimeout(run.timer);
    this.runs.clear();
  }

  /** The current stored Pod of a run, unless it was replaced or removed meanwhile. */
  private current(run: PodRun): KubeObject | undefined {
    const pod = this.host.getPod(run.namespace, run.name);
    return pod && pod.metadata.uid === run.uid ? pod : undefined;
  }

  private start(run: PodRun): void {
    run.timer = undefined;
    const pod = this.current(run);
    if (!pod || run.phase !== 'pending') return;
    const missing = this.host.missingConfigMaps(pod);
    if (missing.length > 0) {
      this.host.mountFailed(pod, missing);
      run.timer = this.after(this.timings.startMs, () => this.start(run));
      return;
    }
    const now = this.now();
    run.phase = 'running';
    const status = clone(pod.status ?? {});
    const ip = this.host.podIP(pod);
    status.phase = 'Running';
    status.podIP = ip;
    status.podIPs = [{ ip }];
    status.containerStatuses = containerStatuses(pod, 'running', false, now);
    this.host.emit('podStarted', this.host.writeStatus(pod, status));
    run.timer = this.after(this.timings.readyMs, () => {
      run.timer = undefined;
      run.readyDue = true;
      this.tryReady(run);
    });
  }

  /**
   * A running Pod turns Ready once its containers are (the host's gate) and every condition of its
   * readiness gates is True; containers ready without the conditions are ContainersReady only.
   */
  private tryReady(run: PodRun): void {
    const pod = this.current(run);
    if (!pod || run.phase !== 'running' || !run.readyDue) return;
    const containers = this.host.readinessGate(pod);
    if (containers && readinessGatesPass(pod)) {
      run.phase = 'ready';
      run.containersReady = true;
      this.host.emit('podReady', this.host.writeStatus(pod, withReadiness(pod.status ?? {}, true, this.now())));
    } else if (containers !== (run.containersReady ?? false)) {
      run.containersReady = containers;
      this.host.writeStatus(pod, withReadiness(pod.status ?? {}, false, this.now(), containers));
    }
  }

  /**
   * A Ready Pod whose containers' gate fails turns not Ready (Ready and ContainersReady False); one
   * whose readiness gate condition turns False, not Ready with its containers still ready.
   */
  private checkReady(run: PodRun): void {
    const pod = this.current(run);
    if (!pod || run.phase !== 'ready') return;
    const containers = this.host.readinessGate(pod);
    if (containers && readinessGatesPass(pod)) return;
    // The gate may have deleted or replaced the Pod (a hook's doing): act only on the same running Pod.
    const still = this.current(run);
    if (!still || run.phase !== 'ready') return;
    run.phase = 'running';
    run.containersReady = containers;
    this.host.emit('podUnready', this.host.writeStatus(still, withReadiness(still.status ?? {}, false, this.now(), containers)));
  }

  private remove(run: PodRun): void {
    run.timer = undefined;
    this.runs.delete(run.uid);
    const pod = this.current(run);
    if (pod) this.host.removePod(pod);
  }

  private after(ms: number, fn: () => void): NodeJS.Timeout {
    const t = setTimeout(fn, ms);
    t.unref();
    return t;
  }
}
