/**
 * StatefulSet states and the health each tool must report for them: Argo CD through
 * argocd/health/statefulset.lua, Flux through the example Kustomization's healthCheckExprs. For a
 * StatefulSet tidb-gitops rendered the two agree (Healthy = Current, Progressing = InProgress,
 * Degraded = Failed); every other StatefulSet gets Argo CD's built-in rules in both.
 */

export type Obj = Record<string, any>;
export type ArgoStatus = 'Healthy' | 'Progressing' | 'Degraded';
export type FluxStatus = 'Current' | 'InProgress' | 'Failed';

export const FLUX_OF: Record<ArgoStatus, FluxStatus> = { Healthy: 'Current', Progressing: 'InProgress', Degraded: 'Failed' };

export interface HealthCase {
  readonly name: string;
  readonly object: Obj;
  readonly argo: ArgoStatus;
  /** Argo CD's message, where the case pins it. */
  readonly message?: string;
}

const REV_A = 'basic-tikv-7d9f8b6c5';
const REV_B = 'basic-tikv-5c4b3a291';

interface Shape {
  generation?: number;
  /** Annotations on top of the rendered ones; `null` removes them all (another application's StatefulSet). */
  annotations?: Obj | null;
  spec?: Obj;
  /**
   * Status fields on top of a settled one; `null`: the status the API server gives a StatefulSet
   * before its controller saw it (its two non-optional fields, both 0; there is always a status).
   */
  status?: Obj | null;
}

/** basic-tikv as the renderer writes it and the API server returns it: 3 replicas asked for, all settled. */
export function statefulSet(shape: Shape = {}): Obj {
  const generation = shape.generation ?? 1;
  const obj: Obj = {
    apiVersion: 'apps/v1',
    kind: 'StatefulSet',
    metadata: {
      name: 'basic-tikv',
      namespace: 'tidb',
      generation,
      labels: { 'app.kubernetes.io/component': 'tikv', 'app.kubernetes.io/instance': 'basic' },
      ...(shape.annotations === null
        ? {}
        : { annotations: { 'tidb-gitops.io/replicas': '3', 'tidb-gitops.io/settings': '{}', ...shape.annotations } }),
    },
    spec: {
      replicas: 3,
      serviceName: 'basic-tikv-peer',
      podManagementPolicy: 'Parallel',
      updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 3 } },
      selector: { matchLabels: { 'app.kubernetes.io/component': 'tikv' } },
      template: { metadata: { labels: {} }, spec: { containers: [{ name: 'tikv', image: 'pingcap/tikv:v8.5.7' }] } },
      ...shape.spec,
    },
  };
  if (shape.status === null) {
    obj.status = { replicas: 0, availableReplicas: 0 };
  } else {
    obj.status = {
      observedGeneration: generation,
      replicas: 3,
      readyReplicas: 3,
      currentReplicas: 3,
      updatedReplicas: 3,
      availableReplicas: 3,
      currentRevision: REV_A,
      updateRevision: REV_A,
      collisionCount: 0,
      ...shape.status,
    };
  }
  return obj;
}

const plain = (shape: Shape): Obj => statefulSet({ ...shape, annotations: null });

export const HEALTH_CASES: readonly HealthCase[] = [
  // ---- rendered by tidb-gitops
  {
    name: 'fresh: created, not yet seen by the StatefulSet controller',
    object: statefulSet({ spec: { replicas: 1 }, status: null }),
    argo: 'Progressing',
    message: 'waiting for the StatefulSet controller to observe generation 1',
  },
  {
    name: 'fresh: one Pod starting, the controller will add the others',
    object: statefulSet({
      spec: { replicas: 1 },
      status: { replicas: 1, readyReplicas: 0, currentReplicas: 1, updatedReplicas: 1, availableReplicas: 0 },
    }),
    argo: 'Progressing',
    message: '0 of 1 Pods ready; scaling to 3 replicas',
  },
  {
    name: 'scaling out from Git: the annotation says 3, spec.replicas still 1 and that Pod ready',
    object: statefulSet({ spec: { replicas: 1 }, status: { replicas: 1, readyReplicas: 1, currentReplicas: 1, updatedReplicas: 1 } }),
    argo: 'Progressing',
    message: 'scaling to 3 replicas: 1 so far; the tidb-gitops controller adds Pods step by step',
  },
  {
    name: 'scaling out from Git: spec.replicas raised to 3 (no generation change for Git), 1 of 3 ready',
    object: statefulSet({ generation: 4, status: { replicas: 3, readyReplicas: 1, availableReplicas: 1 } }),
    argo: 'Progressing',
    message: '1 of 3 Pods ready',
  },
  {
    name: 'stepping: a new template, the partition held at the replica count',
    object: statefulSet({ generation: 2, status: { updateRevision: REV_B, updatedReplicas: 0, currentReplicas: 3 } }),
    argo: 'Progressing',
    message: 'rolling update: 0 of 3 Pods updated; the tidb-gitops controller steps the partition one Pod at a time',
  },
  {
    name: 'stepping: the partition lowered to 2, Pod 2 restarting',
    object: statefulSet({
      generation: 3,
      spec: { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } } },
      status: { updateRevision: REV_B, updatedReplicas: 1, currentReplicas: 2, readyReplicas: 2 },
    }),
    argo: 'Progressing',
    message: 'rolling update: 1 of 3 Pods updated',
  },
  {
    name: 'stepping: Pod 2 back at the new revision, partition held for the next Pod',
    object: statefulSet({ generation: 4, status: { updateRevision: REV_B, updatedReplicas: 1, currentReplicas: 2 } }),
    argo: 'Progressing',
    message: 'rolling update: 1 of 3 Pods updated; the tidb-gitops controller steps the partition one Pod at a time',
  },
  {
    name: 'done: every Pod at the update revision and ready',
    object: statefulSet({ generation: 6, status: { currentRevision: REV_B, updateRevision: REV_B } }),
    argo: 'Healthy',
    message: '3 of 3 Pods ready',
  },
  {
    name: 'OnDelete: a template change waits for Pods to be deleted',
    object: statefulSet({
      generation: 2,
      spec: { updateStrategy: { type: 'OnDelete' } },
      status: { updateRevision: REV_B, updatedReplicas: 1, currentReplicas: 2 },
    }),
    argo: 'Healthy',
    message: '3 of 3 Pods ready; 1 at the latest revision, the others update when they are deleted (OnDelete)',
  },
  {
    name: 'OnDelete: a Pod not ready',
    object: statefulSet({ spec: { updateStrategy: { type: 'OnDelete' } }, status: { readyReplicas: 2 } }),
    argo: 'Progressing',
    message: '2 of 3 Pods ready',
  },
  {
    name: 'generation lagging: a spec change not observed yet',
    object: statefulSet({ generation: 5, status: { observedGeneration: 4 } }),
    argo: 'Progressing',
    message: 'waiting for the StatefulSet controller to observe generation 5',
  },
  {
    name: 'generation lagging: no observedGeneration at all',
    object: statefulSet({ status: { observedGeneration: undefined } }),
    argo: 'Progressing',
    message: 'waiting for the StatefulSet controller to observe generation 1',
  },
  {
    name: 'failover extras: one Pod added on top of the 3 asked for, all ready',
    object: statefulSet({
      generation: 3,
      annotations: { 'tidb-gitops.io/failover-replicas': '1' },
      spec: { replicas: 4, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 4 } } },
      status: { replicas: 4, readyReplicas: 4, currentReplicas: 4, updatedReplicas: 4 },
    }),
    argo: 'Healthy',
    message: '4 of 4 Pods ready (1 added by failover)',
  },
  {
    name: 'failover extras: the added Pod still starting',
    object: statefulSet({
      generation: 3,
      annotations: { 'tidb-gitops.io/failover-replicas': '1' },
      spec: { replicas: 4 },
      status: { replicas: 4, readyReplicas: 3, currentReplicas: 4, updatedReplicas: 4 },
    }),
    argo: 'Progressing',
    message: '3 of 4 Pods ready',
  },
  {
    name: 'pending scale-in: the annotation says 2, the controller still retiring the third store',
    object: statefulSet({ annotations: { 'tidb-gitops.io/replicas': '2' } }),
    argo: 'Progressing',
    message: 'scaling in to 2 replicas: 3 so far; the tidb-gitops controller removes Pods one at a time',
  },
  {
    name: 'pending scale-in: spec.replicas lowered, the last Pod still shutting down',
    object: statefulSet({
      generation: 2,
      annotations: { 'tidb-gitops.io/replicas': '2' },
      spec: { replicas: 2, updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } } },
      status: { replicas: 3, readyReplicas: 2 },
    }),
    argo: 'Progressing',
    message: '3 Pods for 2 replicas; the others are shutting down',
  },
  {
    name: 'refused scale-in: below PD max-replicas, held at 3',
    object: statefulSet({
      annotations: {
        'tidb-gitops.io/replicas': '2',
        'tidb-gitops.io/refused': 'TiKV 3 -> 2 would leave fewer stores than max-replicas (3)',
      },
    }),
    argo: 'Degraded',
    message: 'the tidb-gitops controller refuses to scale in: TiKV 3 -> 2 would leave fewer stores than max-replicas (3)',
  },
  {
    name: 'scaled to zero',
    object: statefulSet({
      annotations: { 'tidb-gitops.io/replicas': '0' },
      spec: { replicas: 0 },
      status: { replicas: 0, readyReplicas: 0, currentReplicas: 0, updatedReplicas: 0 },
    }),
    argo: 'Healthy',
    message: '0 of 0 Pods ready',
  },
  {
    name: 'counts past one digit print as whole numbers',
    object: statefulSet({
      annotations: { 'tidb-gitops.io/replicas': '12' },
      spec: { replicas: 12 },
      status: { replicas: 12, readyReplicas: 10 },
    }),
    argo: 'Progressing',
    message: '10 of 12 Pods ready',
  },

  // ---- another application's StatefulSet: Argo CD's built-in rules
  {
    name: 'other app: a partitioned canary with its new Pods updated',
    object: plain({
      generation: 2,
      spec: { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 2 } } },
      status: { updateRevision: REV_B, updatedReplicas: 1, currentReplicas: 2 },
    }),
    argo: 'Healthy',
    message: 'partitioned roll out complete: 1 new pods have been updated...',
  },
  {
    name: 'other app: a partitioned canary still updating',
    object: plain({
      generation: 2,
      spec: { updateStrategy: { type: 'RollingUpdate', rollingUpdate: { partition: 1 } } },
      status: { updateRevision: REV_B, updatedReplicas: 1, currentReplicas: 2 },
    }),
    argo: 'Progressing',
    message: 'Waiting for partitioned roll out to finish: 1 out of 2 new pods have been updated...',
  },
  {
    name: 'other app: a Pod not ready',
    object: plain({ status: { readyReplicas: 1 } }),
    argo: 'Progressing',
    message: 'Waiting for 2 pods to be ready...',
  },
  {
    name: 'other app: OnDelete with a template change',
    object: plain({ generation: 2, spec: { updateStrategy: { type: 'OnDelete' } }, status: { updateRevision: REV_B, updatedReplicas: 0 } }),
    argo: 'Healthy',
    message: 'statefulset has 3 ready pods',
  },
  {
    name: 'other app: no update strategy given, revisions differ',
    object: plain({ generation: 2, spec: { updateStrategy: undefined }, status: { updateRevision: REV_B, updatedReplicas: 1 } }),
    argo: 'Progressing',
    message: `waiting for statefulset rolling update to complete 1 pods at revision ${REV_B}...`,
  },
  {
    name: 'other app: no update strategy given, done',
    object: plain({ generation: 2, spec: { updateStrategy: undefined } }),
    argo: 'Healthy',
    message: `statefulset rolling update complete 3 pods at revision ${REV_A}...`,
  },
  {
    name: 'other app: generation lagging',
    object: plain({ generation: 3, status: { observedGeneration: 2 } }),
    argo: 'Progressing',
    message: 'Waiting for statefulset spec update to be observed...',
  },
  {
    name: 'other app: fresh, no status',
    object: plain({ status: null }),
    argo: 'Progressing',
    message: 'Waiting for statefulset spec update to be observed...',
  },
];
