/**
 * Which old config revisions the controller deletes: hash-named component ConfigMaps that no Pod
 * mounts, no StatefulSet template names, and that Git is not in the middle of bringing in.
 */
import {
  configMapsOf,
  rolloutDone,
  staleConfigMaps,
  DEFAULT_CONFIG_GRACE_MS,
  type StaleConfigInput,
} from '../../../../src/controller/plan/configmaps';
import type { ConfigMapMeta, Pod, StatefulSet } from '../../../../src/controller/model/objects';
import { CLUSTER, NOW, pod, sts } from '../../../support/plan-fixtures';

const MIN = 60_000;
const OLD = 'c-tidb-0000aaaa';
const NEW = 'c-tidb-1111bbbb';

function cm(name: string, createdMinutesAgo: number, component = 'tidb'): ConfigMapMeta {
  return {
    metadata: {
      name,
      uid: `uid-${name}`,
      resourceVersion: '1',
      labels: { 'app.kubernetes.io/component': component },
      creationTimestamp: new Date(NOW - createdMinutesAgo * MIN).toISOString(),
    },
  };
}

const mounts = (name: string) => [
  { name: 'config', configMap: { name } },
  { name: 'startup-script', configMap: { name } },
];

function tidbSts(configMap: string, o: Parameters<typeof sts>[1] = {}): StatefulSet {
  const s = sts('tidb', { replicas: 2, ...o });
  const updated = o.update && o.update !== o.current ? 1 : 2;
  return {
    ...s,
    spec: { ...s.spec, template: { spec: { volumes: mounts(configMap) } } },
    status: { ...s.status, updatedReplicas: updated },
  };
}

function tidbPod(ord: number, configMap: string, rev = 'r1'): Pod {
  return { ...pod('tidb', ord, rev), spec: { volumes: mounts(configMap) } };
}

function stale(over: Partial<StaleConfigInput>) {
  const input: StaleConfigInput = {
    cluster: CLUSTER,
    statefulSets: [tidbSts(NEW)],
    pods: [tidbPod(0, NEW), tidbPod(1, NEW)],
    configMaps: [cm(OLD, 30), cm(NEW, 10)],
    now: NOW,
    ...over,
  };
  const result = staleConfigMaps(input);
  return { ...result, names: result.stale.map((c) => c.metadata.name) };
}

describe('old config revisions', () => {
  it('deletes the older revision once the rollout is done and no Pod mounts it', () => {
    expect(stale({}).names).toEqual([OLD]);
  });

  it('keeps a revision a Pod still mounts, even a terminating one', () => {
    const terminating = { ...tidbPod(1, OLD), metadata: { ...tidbPod(1, OLD).metadata, deletionTimestamp: new Date(NOW) } };
    expect(stale({ pods: [tidbPod(0, NEW), terminating] }).names).toEqual([]);
  });

  it('leaves a component alone while its rollout is under way', () => {
    const rolling = tidbSts(NEW, { current: 'r1', update: 'r2', partition: 1 });
    const r = stale({ statefulSets: [rolling], pods: [tidbPod(0, OLD, 'r1'), tidbPod(1, NEW, 'r2')] });
    expect(r.names).toEqual([]);
    expect(r.rollingOut).toEqual(['tidb']);
  });

  it('waits for the StatefulSet controller to observe a new spec', () => {
    const s = tidbSts(NEW);
    const unobserved = { ...s, metadata: { ...s.metadata, generation: 2 } };
    expect(stale({ statefulSets: [unobserved] }).names).toEqual([]);
  });

  it('keeps a newer unused revision for the grace period: Git may be applying its StatefulSet', () => {
    const incoming = 'c-tidb-2222cccc';
    const r = stale({ configMaps: [cm(NEW, 10), cm(incoming, 1)] });
    expect(r.names).toEqual([]);
    expect(r.recheckAt).toBe(NOW - MIN + DEFAULT_CONFIG_GRACE_MS);
    expect(stale({ configMaps: [cm(NEW, 10), cm(incoming, 1)], now: NOW + DEFAULT_CONFIG_GRACE_MS }).names).toEqual([incoming]);
  });

  it('treats a revision created in the same second as the one in use as newer (kept)', () => {
    expect(stale({ configMaps: [cm(OLD, 10), cm(NEW, 10)] }).names).toEqual([]);
  });

  it('never touches the revision in use, plain-named ConfigMaps, or other components and clusters', () => {
    const r = stale({
      configMaps: [
        cm(NEW, 90),
        cm('c-tidb', 90),
        cm('c-status', 90, 'discovery'),
        cm('other-tidb-0000aaaa', 90),
        cm('c-tidb-0000aaaa-x', 90),
        cm('c-tikv-0000aaaa', 90, 'tikv'),
      ],
      now: NOW + 2 * DEFAULT_CONFIG_GRACE_MS,
    });
    // c-tikv-0000aaaa: tikv has no StatefulSet here and nothing mounts it, so only its age counts.
    expect(r.names).toEqual(['c-tikv-0000aaaa']);
  });

  it('counts projected ConfigMap sources as mounts', () => {
    expect(
      configMapsOf([{ projected: { sources: [{ configMap: { name: 'a' } }, {}] } }, { configMap: { name: 'b' } }, { name: 'data' }]),
    ).toEqual(['a', 'b']);
    const projected: Pod = {
      ...pod('tidb', 1),
      spec: { volumes: [{ name: 'x', projected: { sources: [{ configMap: { name: OLD } }] } }] },
    };
    expect(stale({ pods: [tidbPod(0, NEW), projected] }).names).toEqual([]);
  });

  it('honours a shorter grace period', () => {
    expect(stale({ configMaps: [cm(NEW, 10), cm('c-tidb-2222cccc', 2)], graceMs: MIN }).names).toEqual(['c-tidb-2222cccc']);
  });

  it('calls a rollout done only when every replica runs the update revision', () => {
    const done = tidbSts(NEW);
    expect(rolloutDone(done)).toBe(true);
    expect(rolloutDone({ ...done, status: { ...done.status, updatedReplicas: 1 } })).toBe(false);
    expect(rolloutDone({ ...done, status: undefined })).toBe(false);
  });
});
