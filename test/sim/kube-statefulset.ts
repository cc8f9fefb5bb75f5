/**
 * The StatefulSet controller of kube-controller-manager, as pure functions: API defaults and update
 * validation, revision naming, the plan of one sync (which Pods to create or delete) and the status it
 * reports. `kube-controllers.ts` runs them against the store.
 */
import type { KubeObject } from './kube-api';
import { clone, isObject, jsonEqual, shortHash } from './kube-util';

/** Pod label naming the revision a Pod was created from. */
export const REVISION_LABEL = 'controller-revision-hash';
/** Pod label naming the Pod itself (lets a Service select one Pod). */
export const POD_NAME_LABEL = 'statefulset.kubernetes.io/pod-name';
/** Pod label holding the ordinal. */
export const POD_INDEX_LABEL = 'apps.kubernetes.io/pod-index';

/** The revision name of a StatefulSet's current template: `<sts>-<hash of spec.template>`. */
export function revisionName(sts: KubeObject): string {
  return `${sts.metadata.name}-${shortHash(sts.spec?.template ?? {})}`;
}

/** The newest Kubernetes minor the simulator answers as: the release the real-API suites run. */
export const SIM_KUBE_MINOR = 37;

/**
 * Applies the API server's defaults to a StatefulSet spec (on every write, as the server does), as
 * `SetDefaults_StatefulSet` in `pkg/apis/apps/v1/defaults.go` gives them (kubernetes v1.32 to v1.37):
 * - `podManagementPolicy` OrderedReady, `replicas` 1, `revisionHistoryLimit` 10;
 * - `updateStrategy.type` RollingUpdate when empty, and only then an empty `rollingUpdate` too;
 * - `rollingUpdate.partition` 0 only when `rollingUpdate` is present: a set written with
 *   `updateStrategy: {type: RollingUpdate}` is stored without `rollingUpdate`, and the controller
 *   reads the missing partition as 0;
 * - `rollingUpdate.maxUnavailable` 1, likewise only when `rollingUpdate` is present, where the
 *   MaxUnavailableStatefulSet feature gate is on: from 1.37, where it is beta and on by default
 *   (`pkg/features/kube_features.go`; alpha and off before 1.35, beta and off in 1.35 and 1.36);
 * - `persistentVolumeClaimRetentionPolicy.whenDeleted` and `.whenScaled` Retain, each on its own
 *   (StatefulSetAutoDeletePVC is GA and locked on).
 * Fields the gates leave out are dropped afterwards by `dropStatefulSetDisabledFields`.
 * The embedded objects' `metadata.creationTimestamp` (the pod template's, each claim template's) is Go's
 * empty time: written back as `null` before 1.34, left out from 1.34, where `ObjectMeta.CreationTimestamp`
 * is `omitzero` (k8s.io/apimachinery `pkg/apis/meta/v1/types.go`).
 */
export function defaultStatefulSetSpec(spec: Record<string, any>, minor = SIM_KUBE_MINOR): Record<string, any> {
  const s = clone(spec);
  if (!s.podManagementPolicy) s.podManagementPolicy = 'OrderedReady';
  if (!isObject(s.updateStrategy)) s.updateStrategy = {};
  const strategy = s.updateStrategy;
  if (!strategy.type) {
    strategy.type = 'RollingUpdate';
    if (strategy.rollingUpdate == null) strategy.rollingUpdate = {};
  }
  if (strategy.type === 'RollingUpdate' && isObject(strategy.rollingUpdate)) {
    strategy.rollingUpdate.partition ??= 0;
    if (maxUnavailableGate(minor)) strategy.rollingUpdate.maxUnavailable ??= 1;
  }
  if (strategy.rollingUpdate === null) delete strategy.rollingUpdate;
  if (!isObject(s.persistentVolumeClaimRetentionPolicy)) s.persistentVolumeClaimRetentionPolicy = {};
  if (!s.persistentVolumeClaimRetentionPolicy.whenDeleted) s.persistentVolumeClaimRetentionPolicy.whenDeleted = 'Retain';
  if (!s.persistentVolumeClaimRetentionPolicy.whenScaled) s.persistentVolumeClaimRetentionPolicy.whenScaled = 'Retain';
  s.replicas ??= 1;
  s.revisionHistoryLimit ??= 10;
  const embedded = [s.template, ...(Array.isArray(s.volumeClaimTemplates) ? s.volumeClaimTemplates : [])].filter(isObject);
  for (const e of embedded) {
    if (!isObject(e.metadata)) e.metadata = {};
    if (minor >= 34 && e.metadata.creationTimestamp === null) delete e.metadata.creationTimestamp;
    else if (minor < 34) e.metadata.creationTimestamp ??= null;
  }
  return s;
}

/** Whether the MaxUnavailableStatefulSet feature gate is on by default in a minor. */
const maxUnavailableGate = (minor: number): boolean => minor >= 37;

/**
 * Drops what a disabled feature gate does not allow, as `dropStatefulSetDisabledFields` in
 * `pkg/registry/apps/statefulset/strategy.go` does on create and update: with MaxUnavailableStatefulSet
 * off (before 1.37), `rollingUpdate.maxUnavailable` goes unless the stored set already had it.
 */
export function dropStatefulSetDisabledFields(next: KubeObject, old?: KubeObject, minor = SIM_KUBE_MINOR): void {
  if (maxUnavailableGate(minor)) return;
  const rolling = next.spec?.updateStrategy?.rollingUpdate;
  if (isObject(rolling) && old?.spec?.updateStrategy?.rollingUpdate?.maxUnavailable == null) delete rolling.maxUnavailable;
}

function isNonNegativeInt(v: unknown): boolean {
  return Number.isInteger(v) && (v as number) >= 0;
}

/** Validation errors of a (defaulted) StatefulSet, worded like the API server's. */
export function validateStatefulSet(sts: KubeObject): string[] {
  const spec = sts.spec ?? {};
  const problems: string[] = [];
  if (!isNonNegativeInt(spec.replicas))
    problems.push(`spec.replicas: Invalid value: ${JSON.stringify(spec.replicas)}: must be greater than or equal to 0`);
  const selector = spec.selector;
  const labels: Record<string, string> = spec.template?.metadata?.labels ?? {};
  if (!isObject(selector) || (Object.keys(selector.matchLabels ?? {}).length === 0 && (selector.matchExpressions ?? []).length === 0)) {
    problems.push('spec.selector: Required value');
  } else if (Object.entries(selector.matchLabels ?? {}).some(([k, v]) => labels[k] !== v)) {
    problems.push(
      `spec.template.metadata.labels: Invalid value: ${JSON.stringify(labels)}: \`selector\` does not match template \`labels\``,
    );
  }
  if (!['OrderedReady', 'Parallel'].includes(spec.podManagementPolicy)) {
    problems.push(`spec.podManagementPolicy: Unsupported value: ${JSON.stringify(spec.podManagementPolicy)}`);
  }
  const strategy = spec.updateStrategy ?? {};
  if (strategy.type === 'RollingUpdate') {
    // pkg/apis/apps/validation/validation.go: the partition is checked only when rollingUpdate is given.
    if (strategy.rollingUpdate !== undefined && !isNonNegativeInt(strategy.rollingUpdate?.partition)) {
      problems.push(
        `spec.updateStrategy.rollingUpdate.partition: Invalid value: ${JSON.stringify(strategy.rollingUpdate?.partition)}: must be greater than or equal to 0`,
      );
    }
  } else if (strategy.type === 'OnDelete') {
    // pkg/apis/apps/validation/validation.go, ValidateStatefulSetSpec: the refused value is printed as
    // the internal Go struct encodes, both fields by their Go names (`{"Partition":0,"MaxUnavailable":1}`).
    if (strategy.rollingUpdate !== undefined) {
      const value = JSON.stringify({
        Partition: strategy.rollingUpdate?.partition ?? 0,
        MaxUnavailable: strategy.rollingUpdate?.maxUnavailable ?? null,
      });
      problems.push(`spec.updateStrategy.rollingUpdate: Invalid value: ${value}: only allowed for updateStrategy 'RollingUpdate'`);
    }
  } else {
    problems.push(`spec.updateStrategy.type: Unsupported value: ${JSON.stringify(strategy.type)}`);
  }
  if (!isObject(spec.template?.spec) || !Array.isArray(spec.template.spec.containers) || spec.template.spec.containers.length === 0) {
    problems.push('spec.template.spec.containers: Required value');
  }
  return problems;
}

/** The spec fields an update may change; changing any other is forbidden. */
const MUTABLE_SPEC_FIELDS = [
  'replicas',
  'ordinals',
  'template',
  'updateStrategy',
  'persistentVolumeClaimRetentionPolicy',
  'minReadySeconds',
  'revisionHistoryLimit',
];
/** The immutable fields 1.37 names one by one, in the order it checks them. */
const IMMUTABLE_SPEC_FIELDS = ['selector', 'volumeClaimTemplates', 'serviceName', 'podManagementPolicy'];

/**
 * Validation errors of a StatefulSet update (on top of `validateStatefulSet`), as
 * `ValidateStatefulSetUpdate` in `pkg/apis/apps/validation/validation.go` has them: up to 1.36 any
 * spec field outside the mutable ones is forbidden, in one error for the whole spec (worded as 1.35
 * and 1.36 word it); from 1.37 only
 * selector, volumeClaimTemplates, serviceName and podManagementPolicy are immutable, each with its
 * own `field is immutable` (the real one prints the new value in Go's notation; here it is JSON).
 */
export function validateStatefulSetUpdate(old: KubeObject, next: KubeObject, minor = SIM_KUBE_MINOR): string[] {
  if (minor >= 37) {
    const changed = IMMUTABLE_SPEC_FIELDS.filter((f) => !jsonEqual(old.spec?.[f] ?? null, next.spec?.[f] ?? null));
    return changed.map((f) => `spec.${f}: Invalid value: ${JSON.stringify(next.spec?.[f] ?? null)}: field is immutable`);
  }
  const fixed = (spec: Record<string, any> = {}) => {
    const rest = clone(spec);
    for (const f of MUTABLE_SPEC_FIELDS) delete rest[f];
    return rest;
  };
  if (jsonEqual(fixed(old.spec), fixed(next.spec))) return [];
  return [
    "spec: Forbidden: updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', " +
      "'updateStrategy', 'revisionHistoryLimit', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden",
  ];
}

/** The ordinal of a Pod named `<sts>-<n>`, or undefined for any other name. */
export function ordinalOf(stsName: string, podName: string): number | undefined {
  const prefix = `${stsName}-`;
  if (!podName.startsWith(prefix)) return undefined;
  const rest = podName.slice(prefix.length);
  return /^(0|[1-9]\d*)$/.test(rest) ? Number(rest) : undefined;
}

/** Whether a Pod is Running, has condition Ready=True and is not being deleted. */
export function isPodReady(pod: KubeObject): boolean {
  if (pod.metadata.deletionTimestamp || pod.status?.phase !== 'Running') return false;
  return (pod.status?.conditions ?? []).some((c: { type: string; status: string }) => c.type === 'Ready' && c.status === 'True');
}

/** Whether a Pod has been Ready for at least `minReadySeconds`. */
export function isPodAvailable(pod: KubeObject, minReadySeconds: number, now: number): boolean {
  if (!isPodReady(pod)) return false;
  if (minReadySeconds <= 0) return true;
  const ready = (pod.status.conditions as Array<{ type: string; lastTransitionTime?: string }>).find((c) => c.type === 'Ready');
  const since = ready?.lastTransitionTime ? Date.parse(ready.lastTransitionTime) : now;
  return now - since >= minReadySeconds * 1000;
}

/** What the planner needs to know of one Pod of the set. */
export interface PodView {
  readonly name: string;
  readonly ordinal: number;
  readonly revision: string;
  readonly ready: boolean;
  readonly terminating: boolean;
}

/** A Pod as the planner sees it. */
export function podView(pod: KubeObject, ordinal: number): PodView {
  return {
    name: pod.metadata.name,
    ordinal,
    revision: pod.metadata.labels?.[REVISION_LABEL] ?? '',
    ready: isPodReady(pod),
    terminating: Boolean(pod.metadata.deletionTimestamp),
  };
}

/** The inputs of one StatefulSet sync. */
export interface StatefulSetState {
  readonly replicas: number;
  /** Pods with an ordinal below this keep (and are recreated at) the current revision. */
  readonly partition: number;
  readonly strategy: 'RollingUpdate' | 'OnDelete';
  /** podManagementPolicy Parallel (else OrderedReady). */
  readonly parallel: boolean;
  readonly currentRevision: string;
  readonly updateRevision: string;
  /** The set's Pods, any order. */
  readonly pods: readonly PodView[];
}

/** The actions of one sync: Pods to create (ordinal and revision) and Pods to delete (by name). */
export interface StatefulSetPlan {
  create: Array<{ ordinal: number; revision: string }>;
  delete: string[];
}

/**
 * One sync of the StatefulSet controller:
 * 1. create missing Pods below `replicas` (OrderedReady: one at a time, and only once every lower
 *    ordinal is Ready; Parallel: all at once);
 * 2. delete Pods at or above `replicas`, highest first (OrderedReady: one at a time, only when the
 *    rest are Ready; Parallel: all at once);
 * 3. RollingUpdate: once every Pod is present, Ready and not terminating, delete the highest-ordinal
 *    Pod at or above the partition that is not at the update revision (it comes back from the update
 *    revision in a later sync). One at a time, whatever the podManagementPolicy.
 */
export function planStatefulSet(s: StatefulSetState): StatefulSetPlan {
  const plan: StatefulSetPlan = { create: [], delete: [] };
  const byOrdinal = new Map(s.pods.map((p) => [p.ordinal, p]));
  const revisionFor = (ordinal: number) => (s.strategy === 'RollingUpdate' && ordinal < s.partition ? s.currentRevision : s.updateRevision);

  for (let ordinal = 0; ordinal < s.replicas; ordinal++) {
    const pod = byOrdinal.get(ordinal);
    if (!pod) {
      plan.create.push({ ordinal, revision: revisionFor(ordinal) });
      if (!s.parallel) return plan;
    } else if (!s.parallel && (pod.terminating || !pod.ready)) {
      return plan;
    }
  }

  const condemned = s.pods.filter((p) => p.ordinal >= s.replicas).sort((a, b) => b.ordinal - a.ordinal);
  const firstUnhealthy = [...condemned].reverse().find((p) => !p.ready || p.terminating);
  for (const pod of condemned) {
    if (pod.terminating) {
      if (!s.parallel) return plan;
      continue;
    }
    if (!s.parallel && !pod.ready && pod !== firstUnhealthy) return plan;
    plan.delete.push(pod.name);
    if (!s.parallel) return plan;
  }

  if (s.strategy !== 'RollingUpdate' || plan.create.length > 0 || plan.delete.length > 0) return plan;
  const settled =
    condemned.length === 0 &&
    Array.from({ length: s.replicas }, (_, i) => byOrdinal.get(i)).every((p) => p !== undefined && p.ready && !p.terminating);
  if (!settled) return plan;
  for (let ordinal = s.replicas - 1; ordinal >= s.partition; ordinal--) {
    const pod = byOrdinal.get(ordinal)!;
    if (pod.revision !== s.updateRevision) {
      plan.delete.push(pod.name);
      break;
    }
  }
  return plan;
}

/**
 * The status the controller reports for a set with these Pods. `currentRevision` moves to the update
 * revision (RollingUpdate only, as in Kubernetes) once every Pod below `replicas` exists at the update
 * revision and is Ready and no other Pod of the set remains. Zero counts that Kubernetes omits
 * (`readyReplicas`, `currentReplicas`, `updatedReplicas`) are omitted here too.
 */
export function statefulSetStatus(
  sts: KubeObject,
  pods: ReadonlyArray<{ pod: KubeObject; ordinal: number }>,
  currentRevision: string,
  updateRevision: string,
  now: number,
): Record<string, any> {
  const spec = sts.spec ?? {};
  const minReadySeconds = spec.minReadySeconds ?? 0;
  let replicas = 0;
  let ready = 0;
  let available = 0;
  let current = 0;
  let updated = 0;
  for (const { pod } of pods) {
    replicas++;
    if (isPodReady(pod)) ready++;
    if (isPodAvailable(pod, minReadySeconds, now)) available++;
    if (pod.metadata.deletionTimestamp) continue;
    const revision = pod.metadata.labels?.[REVISION_LABEL];
    if (revision === currentRevision) current++;
    if (revision === updateRevision) updated++;
  }
  const complete =
    spec.updateStrategy?.type === 'RollingUpdate' &&
    pods.length === spec.replicas &&
    pods.every(
      ({ pod, ordinal }) => ordinal < spec.replicas && isPodReady(pod) && pod.metadata.labels?.[REVISION_LABEL] === updateRevision,
    );
  if (complete) {
    currentRevision = updateRevision;
    current = updated;
  }
  const status: Record<string, any> = { observedGeneration: sts.metadata.generation, replicas };
  if (ready) status.readyReplicas = ready;
  if (current) status.currentReplicas = current;
  if (updated) status.updatedReplicas = updated;
  status.currentRevision = currentRevision;
  status.updateRevision = updateRevision;
  status.collisionCount = 0;
  status.availableReplicas = available;
  return status;
}

/** The Pod a StatefulSet creates for `ordinal` from the template of `revision`. */
export function newStatefulSetPod(sts: KubeObject, template: Record<string, any>, ordinal: number, revision: string): KubeObject {
  const name = `${sts.metadata.name}-${ordinal}`;
  const spec = clone(template.spec ?? {});
  spec.hostname = name;
  if (sts.spec.serviceName) spec.subdomain = sts.spec.serviceName;
  for (const claim of sts.spec.volumeClaimTemplates ?? []) {
    const volume = { name: claim.metadata.name, persistentVolumeClaim: { claimName: `${claim.metadata.name}-${name}` } };
    spec.volumes = [...(spec.volumes ?? []).filter((v: { name: string }) => v.name !== volume.name), volume];
  }
  const metadata: KubeObject['metadata'] = {
    name,
    namespace: sts.metadata.namespace,
    labels: {
      ...(template.metadata?.labels ?? {}),
      [REVISION_LABEL]: revision,
      [POD_NAME_LABEL]: name,
      [POD_INDEX_LABEL]: String(ordinal),
    },
    ownerReferences: [
      {
        apiVersion: 'apps/v1',
        kind: 'StatefulSet',
        name: sts.metadata.name,
        uid: sts.metadata.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ],
  };
  if (template.metadata?.annotations) metadata.annotations = clone(template.metadata.annotations);
  return { apiVersion: 'v1', kind: 'Pod', metadata, spec };
}

/** The PersistentVolumeClaims (bound at once) that the set's volumeClaimTemplates give a Pod. */
export function newStatefulSetClaims(sts: KubeObject, podName: string): KubeObject[] {
  return (sts.spec.volumeClaimTemplates ?? []).map((claim: KubeObject) => ({
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name: `${claim.metadata.name}-${podName}`,
      namespace: sts.metadata.namespace,
      labels: { ...(claim.metadata.labels ?? {}), ...(sts.spec.selector?.matchLabels ?? {}) },
    },
    spec: clone(claim.spec ?? {}),
    status: { phase: 'Bound', accessModes: clone(claim.spec?.accessModes ?? []), capacity: clone(claim.spec?.resources?.requests ?? {}) },
  }));
}

/** The controller ownerReference of an object, if any. */
export function controllerRef(obj: KubeObject): { uid: string; name: string; kind: string } | undefined {
  return (obj.metadata.ownerReferences ?? []).find((r: { controller?: boolean }) => r.controller);
}
