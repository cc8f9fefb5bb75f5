/**
 * Snapshots for planner tests: a cluster `c` in `ns`, StatefulSets with the rendered annotations,
 * Pods, PD members and stores, and a one-call planner.
 */
import { ANNOTATION, type ComponentKind } from '../../src/tidbcluster/names';
import type { ClusterInfo } from '../../src/controller/model/cluster';
import type { Pod, StatefulSet } from '../../src/controller/model/objects';
import type { PdMember, PdStore } from '../../src/controller/clients/pd';
import { plan } from '../../src/controller/plan/plan';
import type { ComponentState, PdState, PlanInput, Probes } from '../../src/controller/view/view';

export const CLUSTER: ClusterInfo = {
  name: 'c',
  namespace: 'ns',
  clusterDomain: '',
  acrossK8s: false,
  tls: false,
  discoveryMtls: false,
  pdAddresses: [],
  cluster: null,
  components: ['pd', 'tikv', 'tidb'],
};
export const NOW = Date.parse('2026-01-01T00:00:00Z');

export interface StsOpts {
  desired?: number;
  replicas?: number;
  partition?: number;
  current?: string;
  update?: string;
  settings?: Record<string, unknown>;
  onDelete?: boolean;
  annotations?: Record<string, string>;
}

export function sts(kind: ComponentKind, o: StsOpts = {}): StatefulSet {
  const replicas = o.replicas ?? 3;
  return {
    metadata: {
      name: `c-${kind}`,
      generation: 1,
      annotations: {
        [ANNOTATION.replicas]: String(o.desired ?? replicas),
        [ANNOTATION.settings]: JSON.stringify({ ...(o.onDelete && { updateStrategy: 'OnDelete' }), ...o.settings }),
        ...o.annotations,
      },
    },
    spec: {
      replicas,
      updateStrategy: o.onDelete ? { type: 'OnDelete' } : { type: 'RollingUpdate', rollingUpdate: { partition: o.partition ?? replicas } },
    },
    status: { observedGeneration: 1, replicas, currentRevision: o.current ?? 'r1', updateRevision: o.update ?? o.current ?? 'r1' },
  };
}

export function pod(
  kind: ComponentKind,
  ord: number,
  rev = 'r1',
  o: { ready?: boolean; annotations?: Record<string, string>; terminating?: boolean; readySince?: string } = {},
): Pod {
  return {
    metadata: {
      name: `c-${kind}-${ord}`,
      labels: { 'controller-revision-hash': rev, 'app.kubernetes.io/component': kind },
      annotations: o.annotations,
      deletionTimestamp: o.terminating ? new Date(NOW) : undefined,
    },
    status: {
      conditions: [
        { type: 'Ready', status: o.ready === false ? 'False' : 'True', ...(o.readySince ? { lastTransitionTime: o.readySince } : {}) },
      ],
    },
  };
}

export const pods = (kind: ComponentKind, revs: string[]) => revs.map((r, i) => pod(kind, i, r));
export const member = (ord: number, healthy = true): PdMember => ({
  name: `c-pd-${ord}`,
  memberId: String(100 + ord),
  clientUrls: [],
  healthy,
});
export const store = (ord: number, leaders: number, state = 'Up'): PdStore => ({
  id: ord + 1,
  address: `c-tikv-${ord}.c-tikv-peer.ns.svc:20160`,
  state,
  leaderCount: leaders,
  regionCount: 0,
  labels: {},
});
export const pdState = (o: Partial<PdState> = {}): PdState => ({
  members: [member(0), member(1), member(2)],
  leader: 'c-pd-0',
  stores: [store(0, 100), store(1, 100), store(2, 100)],
  evicting: new Set(),
  ...o,
});

/** Every PD member ready, every TiFlash serving and every TiKV without leaders, as the controller's probes would find them. */
export const PROBES_OK: Probes = {
  pdReady: Object.fromEntries([0, 1, 2, 3, 4, 5].map((i) => [`c-pd-${i}`, { ok: true, detail: 'ready' }])),
  tiflashStatus: Object.fromEntries([0, 1, 2, 3, 4, 5].map((i) => [`c-tiflash-${i}`, { ok: true, detail: 'Running' }])),
  tikvLeaders: Object.fromEntries([0, 1, 2, 3, 4, 5].map((i) => [`c-tikv-${i}`, { count: 0, detail: '0 leaders' }])),
};

/** Plans a cluster of `others` and `c`, and returns the plan of `c`. Probes all pass unless `extra.probes` says otherwise. */
export function planOne(
  c: ComponentState,
  pd: PdState | { error: string } | undefined = pdState(),
  others: ComponentState[] = [],
  extra: Partial<
    Pick<PlanInput, 'volumes' | 'failover' | 'options' | 'now' | 'probes' | 'evictions' | 'volumeSizes' | 'volumeRefusals' | 'replacements'>
  > = {},
) {
  const all = [...others, c];
  return plan({ cluster: CLUSTER, components: all, pd, now: NOW, probes: PROBES_OK, ...extra }).find((p) => p.kind === c.kind)!;
}
