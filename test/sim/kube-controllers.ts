/**
 * The controllers of kube-controller-manager that the simulation runs against the store: the
 * StatefulSet controller (the planner in `kube-statefulset.ts` decides, this executes) and the
 * pvc-protection controller; and the availability tracker behind `KubeSim.maxUnavailable`.
 */
import type { KubeObject } from './kube-api';
import type { EventRecorder } from './kube-events';
import { PVC_PROTECTION_FINALIZER, type Registry } from './kube-registry';
import { typeByApiVersionKind } from './kube-resources';
import { labelSelectorMatcher } from './kube-selectors';
import {
  controllerRef,
  isPodReady,
  newStatefulSetClaims,
  newStatefulSetPod,
  ordinalOf,
  planStatefulSet,
  podView,
  revisionName,
  statefulSetStatus,
} from './kube-statefulset';
import type { ObjectStore } from './kube-store';
import { clone } from './kube-util';

const PODS = typeByApiVersionKind('v1', 'Pod')!;
const CLAIMS = typeByApiVersionKind('v1', 'PersistentVolumeClaim')!;
const STATEFULSETS = typeByApiVersionKind('apps/v1', 'StatefulSet')!;

/** Syncs every StatefulSet: Pods, claims and status. */
export class StatefulSetController {
  /** Templates by revision name, per StatefulSet (`<ns>/<name>`), like ControllerRevisions. */
  private readonly revisions = new Map<string, Map<string, Record<string, any>>>();

  constructor(
    private readonly store: ObjectStore,
    private readonly registry: Registry,
    private readonly events: EventRecorder,
    private readonly now: () => number = Date.now,
  ) {}

  /** One sync of every StatefulSet. */
  syncAll(): void {
    for (const sts of this.store.list(STATEFULSETS)) this.sync(sts);
  }

  private sync(sts: KubeObject): void {
    const ns = sts.metadata.namespace!;
    const name = sts.metadata.name;
    const spec = sts.spec;
    const history = this.revisionsOf(`${ns}/${name}`);
    const updateRevision = revisionName(sts);
    history.set(updateRevision, clone(spec.template));
    const recorded: string | undefined = sts.status?.currentRevision;
    const currentRevision = recorded && history.has(recorded) ? recorded : updateRevision;

    const plan = planStatefulSet({
      replicas: spec.replicas,
      partition: spec.updateStrategy.rollingUpdate?.partition ?? 0,
      strategy: spec.updateStrategy.type,
      parallel: spec.podManagementPolicy === 'Parallel',
      currentRevision,
      updateRevision,
      pods: this.podsOf(sts).map(({ pod, ordinal }) => podView(pod, ordinal)),
    });
    // A user hook may change things while the plan runs; a failed step is retried by a later sync.
    for (const { ordinal, revision } of plan.create) {
      attempt(() => this.createPod(sts, ordinal, history.get(revision) ?? spec.template, revision));
    }
    for (const podName of plan.delete) attempt(() => this.registry.delete(PODS, ns, podName));

    const fresh = this.store.get(STATEFULSETS, ns, name);
    if (!fresh || fresh.metadata.uid !== sts.metadata.uid) return;
    const status = statefulSetStatus(fresh, this.podsOf(fresh), currentRevision, revisionName(fresh), this.now());
    attempt(() => this.registry.commit(STATEFULSETS, fresh, { ...fresh, status }, { subresource: 'status' }));
  }

  private revisionsOf(key: string): Map<string, Record<string, any>> {
    let m = this.revisions.get(key);
    if (!m) this.revisions.set(key, (m = new Map()));
    return m;
  }

  /** The set's Pods with their ordinals, adopting matching orphans named like its Pods. */
  private podsOf(sts: KubeObject): Array<{ pod: KubeObject; ordinal: number }> {
    const selector = labelSelectorMatcher(sts.spec.selector);
    const out: Array<{ pod: KubeObject; ordinal: number }> = [];
    for (let pod of this.store.list(PODS, sts.metadata.namespace)) {
      const ordinal = ordinalOf(sts.metadata.name, pod.metadata.name);
      if (ordinal === undefined) continue;
      const ref = controllerRef(pod);
      if (!ref) {
        if (!selector(pod) || pod.metadata.deletionTimestamp) continue;
        pod = this.adopt(sts, pod);
      } else if (ref.uid !== sts.metadata.uid) {
        continue;
      }
      out.push({ pod, ordinal });
    }
    return out;
  }

  private adopt(sts: KubeObject, pod: KubeObject): KubeObject {
    const next = clone(pod) as KubeObject;
    next.metadata.ownerReferences = [
      ...(pod.metadata.ownerReferences ?? []),
      {
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        name: sts.metadata.name,
        uid: sts.metadata.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ];
    return this.registry.commit(PODS, pod, next);
  }

  /**
   * Creates the Pod's missing claims, then the Pod, as `CreateStatefulPod` and
   * `createPersistentVolumeClaims` in kubernetes v1.32 `pkg/controller/statefulset/stateful_pod_control.go`
   * do: a claim that exists but is being deleted blocks the Pod, which is not created; a `FailedCreate`
   * Warning Event on the set says why, and a later sync tries again (once the claim is gone, it is
   * created afresh).
   */
  private createPod(sts: KubeObject, ordinal: number, template: Record<string, any>, revision: string): void {
    const pod = newStatefulSetPod(sts, template, ordinal, revision);
    const errors: string[] = [];
    for (const claim of newStatefulSetClaims(sts, pod.metadata.name)) {
      const existing = this.store.get(CLAIMS, claim.metadata.namespace!, claim.metadata.name);
      if (!existing) this.registry.create(CLAIMS, claim.metadata.namespace!, claim, { keepStatus: true });
      else if (existing.metadata.deletionTimestamp) errors.push(`pvc ${claim.metadata.name} is being deleted`);
    }
    if (errors.length > 0) {
      const message = `create Pod ${pod.metadata.name} in StatefulSet ${sts.metadata.name} failed error: ${aggregateError(errors)}`;
      this.events.event(STATEFULSETS, sts, 'Warning', 'FailedCreate', message);
      return;
    }
    this.registry.create(PODS, sts.metadata.namespace!, pod);
  }
}

/**
 * The text of `errors.NewAggregate(errs).Error()` (kubernetes v1.32
 * `staging/src/k8s.io/apimachinery/pkg/util/errors/errors.go`): one error as is, several (repeats
 * dropped) as `[a, b]`.
 */
function aggregateError(messages: string[]): string {
  const distinct = [...new Set(messages)];
  return distinct.length === 1 ? distinct[0] : `[${distinct.join(', ')}]`;
}

/**
 * The pvc-protection controller of kube-controller-manager (kubernetes v1.32
 * `pkg/controller/volume/pvcprotection/pvc_protection_controller.go`, processPVC): removes the
 * pvc-protection finalizer from a claim being deleted once no Pod uses it (the API server then removes
 * the claim), and puts the finalizer back on a live claim that lacks it.
 */
export class PvcProtectionController {
  constructor(
    private readonly store: ObjectStore,
    private readonly registry: Registry,
  ) {}

  /** One pass over every claim. */
  syncAll(): void {
    for (const pvc of this.store.list(CLAIMS)) attempt(() => this.sync(pvc));
  }

  private sync(pvc: KubeObject): void {
    const finalizers: string[] = pvc.metadata.finalizers ?? [];
    const protectedClaim = finalizers.includes(PVC_PROTECTION_FINALIZER);
    if (pvc.metadata.deletionTimestamp) {
      if (!protectedClaim || this.isBeingUsed(pvc)) return;
      const next = clone(pvc) as KubeObject;
      next.metadata.finalizers = finalizers.filter((f) => f !== PVC_PROTECTION_FINALIZER);
      this.registry.commit(CLAIMS, pvc, next);
    } else if (!protectedClaim) {
      const next = clone(pvc) as KubeObject;
      next.metadata.finalizers = [...finalizers, PVC_PROTECTION_FINALIZER];
      this.registry.commit(CLAIMS, pvc, next);
    }
  }

  /**
   * Whether a Pod of the claim's namespace uses it (`podUsesPVC`): a scheduled Pod naming the claim in
   * a `persistentVolumeClaim` volume, whatever its phase and even while it terminates; only the Pod
   * object's removal releases the claim.
   */
  private isBeingUsed(pvc: KubeObject): boolean {
    return this.store
      .list(PODS, pvc.metadata.namespace)
      .some(
        (pod) => isScheduled(pod) && (pod.spec?.volumes ?? []).some((v: any) => v.persistentVolumeClaim?.claimName === pvc.metadata.name),
      );
  }
}

/**
 * Whether a Pod is scheduled. The real check is `spec.nodeName != ""`; the simulation binds every Pod
 * at creation without naming a node (PodScheduled True), so that condition counts as well.
 */
function isScheduled(pod: KubeObject): boolean {
  if (pod.spec?.nodeName) return true;
  return (pod.status?.conditions ?? []).some((c: { type: string; status: string }) => c.type === 'PodScheduled' && c.status === 'True');
}

function attempt(step: () => unknown): void {
  try {
    step();
  } catch {
    // Conflicts and vanished objects resolve themselves on the next sync.
  }
}

/**
 * Tracks, per StatefulSet name, the most Pods (ordinal < spec.replicas) that were missing or not
 * Ready at the same time, counting only from the moment the set first had all its Pods Ready.
 */
export class AvailabilityTracker {
  /** uid of each set (by `<ns>/<name>`) that has had all its Pods Ready. */
  private readonly settled = new Map<string, string>();
  private readonly worst = new Map<string, number>();

  constructor(private readonly store: ObjectStore) {}

  /** Re-measures the set a changed object belongs to (a StatefulSet, or a Pod it owns). */
  observe(obj: KubeObject): void {
    const ns = obj.metadata.namespace!;
    if (obj.kind === 'StatefulSet') this.measure(ns, obj.metadata.name);
    else if (obj.kind === 'Pod') {
      const ref = controllerRef(obj);
      if (ref?.kind === 'StatefulSet') this.measure(ns, ref.name);
    }
  }

  /** The worst count seen for StatefulSets with this name (0 if none). */
  max(stsName: string): number {
    return this.worst.get(stsName) ?? 0;
  }

  private measure(ns: string, name: string): void {
    const sts = this.store.get(STATEFULSETS, ns, name);
    if (!sts) return;
    let unavailable = 0;
    for (let ordinal = 0; ordinal < (sts.spec.replicas ?? 1); ordinal++) {
      const pod = this.store.get(PODS, ns, `${name}-${ordinal}`);
      if (!pod || !isPodReady(pod)) unavailable++;
    }
    const key = `${ns}/${name}`;
    if (unavailable === 0) this.settled.set(key, sts.metadata.uid);
    if (this.settled.get(key) === sts.metadata.uid) this.worst.set(name, Math.max(this.worst.get(name) ?? 0, unavailable));
  }
}
