/**
 * Replacing a Pod Git names (`tidb-gitops.io/replace`): the renderer's reading of the annotation, and
 * the planner's steps for a TiKV store and a PD member (src/controller/plan/replace.ts), each a pure
 * decision on a snapshot. The scenarios on a running cluster are in controller-scaling and real-api.
 */
import type { Pvc } from '../../../../src/controller/model/objects';
import type { ReplaceRecord } from '../../../../src/controller/records/replacements';
import { member, NOW, pdState, planOne, pods, store, sts } from '../../../support/plan-fixtures';
import { cluster, find, render, renderErrors } from '../../../support/render';
import { buildModel, compareModels, type KubeObject } from '../../../../src/diff';

const pvc = (name: string, uid: string, terminating = false): Pvc => ({
  metadata: { name, uid, ...(terminating && { deletionTimestamp: new Date(NOW) }) },
});
const withClaims = (kind: 'pd' | 'tikv', replace: string[], replicas = 3) => {
  const s = sts(kind, { replicas, settings: { replace } });
  s.spec!.volumeClaimTemplates = [{ metadata: { name: kind } }];
  return s;
};
const tikv = (replace: string[] = ['c-tikv-1']) => ({
  kind: 'tikv' as const,
  sts: withClaims('tikv', replace),
  pods: pods('tikv', ['r1', 'r1', 'r1']).map((p, i) => ({ ...p, metadata: { ...p.metadata, uid: `pod-uid-${i}` } })),
});
const claims = [pvc('tikv-c-tikv-0', 'claim-0'), pvc('tikv-c-tikv-1', 'claim-1'), pvc('tikv-c-tikv-2', 'claim-2')];
const fourStores = pdState({
  stores: [store(0, 10), store(1, 10, 'Down'), store(2, 10), { ...store(3, 10), address: 'c-tikv-3.c-tikv-peer.ns.svc:20160' }],
  maxReplicas: 3,
});
const record = (o: Partial<ReplaceRecord>): ReplaceRecord => ({
  component: 'tikv',
  phase: 'removing',
  startedAt: new Date(NOW).toISOString(),
  podUid: 'pod-uid-1',
  volumes: [{ name: 'tikv-c-tikv-1', uid: 'claim-1' }],
  storeId: 2,
  ...o,
});

describe('tidb-gitops.io/replace in the renderer', () => {
  const withReplace = (value: string) =>
    cluster({ pd: { replicas: 3 }, tikv: { replicas: 3 }, tidb: { replicas: 1 } }, { annotations: { 'tidb-gitops.io/replace': value } });
  const settingsOf = (objects: ReturnType<typeof render>, name: string) =>
    JSON.parse(find(objects, 'StatefulSet', name).metadata.annotations['tidb-gitops.io/settings']);

  it('hands each component the Pods it is to replace, in its settings (no Pod restarts for it)', () => {
    const objects = render(withReplace('demo-tikv-2, demo-pd-0,demo-tikv-0'));
    expect(settingsOf(objects, 'demo-tikv').replace).toEqual(['demo-tikv-0', 'demo-tikv-2']);
    expect(settingsOf(objects, 'demo-pd').replace).toEqual(['demo-pd-0']);
    expect(settingsOf(objects, 'demo-tidb').replace).toBeUndefined();
    const plain = render(cluster({ pd: { replicas: 3 }, tikv: { replicas: 3 }, tidb: { replicas: 1 } }));
    expect(find(objects, 'StatefulSet', 'demo-tikv').spec.template).toEqual(find(plain, 'StatefulSet', 'demo-tikv').spec.template);
  });

  it.each([
    ['demo-tikv-3', 'demo-tikv-3: tikv has 3 replicas (ordinals 0 to 2), so there is no such Pod to replace'],
    ['demo-tidb-0', 'expected Pods of PD, TiKV or TiFlash such as demo-tikv-1, separated by commas, got "demo-tidb-0"'],
    ['demo-tiflash-0', 'demo-tiflash-0: the cluster runs no tiflash'],
    ['demo-tikv-01', 'got "demo-tikv-01"'],
    ['demo-pd-1,demo-pd-1', 'demo-pd-1 is named twice'],
  ])('refuses %j', (value, message) => {
    const errors = renderErrors(withReplace(value));
    expect(errors).toContain('metadata.annotations["tidb-gitops.io/replace"] (line');
    expect(errors).toContain(message);
  });
});

describe('tidb-gitops.io/replace in diff', () => {
  const spec = { pd: { replicas: 3 }, tikv: { replicas: 3 }, tidb: { replicas: 1 } };
  const risks = (before: string | undefined, after: string | undefined) => {
    const at = (v: string | undefined) =>
      render(cluster(spec, v === undefined ? {} : { annotations: { 'tidb-gitops.io/replace': v } })) as KubeObject[];
    return compareModels(buildModel(at(before)), buildModel(at(after))).clusters.flatMap((c) =>
      c.risks.filter((r) => r.id === 'replace').map((r) => `${r.component}: ${r.message}`),
    );
  };

  it('is a risk for each Pod newly named, not for one named before, nor for taking a request back', () => {
    expect(risks(undefined, 'demo-tikv-1, demo-pd-0')).toEqual([
      'pd: demo-pd-0 is replaced, once: its PD member is deleted (after its leadership moves), then its volumes and Pod; it joins again as a new member on an empty volume. Its data is gone for good; keep the annotation until the status says it is done.',
      'tikv: demo-tikv-1 is replaced, once: its store is taken offline until PD has moved every region away (Tombstone), then its volumes and Pod are deleted; it starts again as a new, empty store. Its data is gone for good; keep the annotation until the status says it is done.',
    ]);
    expect(risks('demo-tikv-1', 'demo-tikv-1, demo-tikv-2')).toEqual([expect.stringMatching(/^tikv: demo-tikv-2 is replaced, once/)]);
    expect(risks('demo-tikv-1', undefined)).toEqual([]);
  });
});

describe('replacing a TiKV store', () => {
  it('records what it replaces by identity, with a Warning event, once the other Up stores can hold every region', () => {
    const p = planOne(tikv(), fourStores, [], { volumes: claims });
    expect(p.action).toEqual({
      type: 'replace-set',
      pod: 'c-tikv-1',
      record: {
        component: 'tikv',
        phase: 'removing',
        startedAt: new Date(NOW).toISOString(),
        podUid: 'pod-uid-1',
        volumes: [{ name: 'tikv-c-tikv-1', uid: 'claim-1' }],
        storeId: 2,
      },
    });
    expect(p.event).toMatchObject({ type: 'Warning', reason: 'ReplaceMember', pod: 'c-tikv-1' });
    expect(p.busy).toBe(true);
  });

  it('refuses while too few other stores are Up for max-replicas, and says why', () => {
    const p = planOne(tikv(), pdState({ stores: [store(0, 10), store(1, 10, 'Down'), store(2, 10)], maxReplicas: 3 }), [], {
      volumes: claims,
    });
    expect(p.action).toBeUndefined();
    expect(p.reason).toBe(
      'cannot replace c-tikv-1 yet: only 2 other TiKV stores are Up and PD keeps 3 replicas of each region (replication.max-replicas): its regions would have nowhere to go',
    );
    expect(p.event).toMatchObject({ type: 'Warning', reason: 'ReplaceRefused' });
  });

  it('one that cannot start yet holds nothing else: a scale-out (which may make it possible) goes on, the refusal noted', () => {
    const c = tikv();
    const s = withClaims('tikv', ['c-tikv-1']);
    s.metadata.annotations!['tidb-gitops.io/replicas'] = '4';
    const p = planOne({ ...c, sts: s }, pdState({ stores: [store(0, 10), store(1, 10, 'Down'), store(2, 10)], maxReplicas: 3 }), [], {
      volumes: claims,
    });
    expect(p.action).toMatchObject({ type: 'apply', replicas: 4 });
    expect(p.reason).toContain('; cannot replace c-tikv-1 yet: only 2 other TiKV stores are Up');
  });

  it('takes the store offline, waits while it is Offline, and goes on once it is Tombstone (gone from the stores)', () => {
    const replacements = { 'c-tikv-1': record({}) };
    expect(planOne(tikv(), fourStores, [], { volumes: claims, replacements }).action).toEqual({
      type: 'delete-store',
      pod: 'c-tikv-1',
      storeId: 2,
    });
    const offline = pdState({
      ...fourStores,
      stores: fourStores.stores.map((s) => (s.id === 2 ? { ...s, state: 'Offline', regionCount: 40 } : s)),
    });
    const waiting = planOne(tikv(), offline, [], { volumes: claims, replacements });
    expect(waiting.action).toBeUndefined();
    expect(waiting.reason).toBe('replacing c-tikv-1: store 2 is Offline, PD is moving its 40 regions away');
    const gone = pdState({ ...fourStores, stores: fourStores.stores.filter((s) => s.id !== 2) });
    expect(planOne(tikv(), gone, [], { volumes: claims, replacements }).action).toEqual({
      type: 'replace-set',
      pod: 'c-tikv-1',
      record: record({ phase: 'deleting' }),
    });
  });

  it('deletes the recorded claims and Pod, waits for a fresh Pod and its new store, then is done once', () => {
    const gone = pdState({ ...fourStores, stores: fourStores.stores.filter((s) => s.id !== 2) });
    const replacements = { 'c-tikv-1': record({ phase: 'deleting' }) };
    expect(planOne(tikv(), gone, [], { volumes: claims, replacements }).action).toEqual({
      type: 'replace-delete',
      pod: 'c-tikv-1',
      record: record({ phase: 'deleting' }),
    });
    // The old claim is being deleted and the old Pod is gone: wait.
    const c = tikv();
    const without1 = { ...c, pods: c.pods.filter((p) => p.metadata.name !== 'c-tikv-1') };
    const terminating = [claims[0], pvc('tikv-c-tikv-1', 'claim-1', true), claims[2]];
    expect(planOne(without1, gone, [], { volumes: terminating, replacements }).reason).toBe(
      'replacing c-tikv-1: waiting for its old volumes tikv-c-tikv-1 to be deleted',
    );
    // A new Pod on a new claim, its store not yet Up, then Up under a new id.
    const fresh = {
      ...c,
      pods: c.pods.map((p) => (p.metadata.name === 'c-tikv-1' ? { ...p, metadata: { ...p.metadata, uid: 'pod-uid-new' } } : p)),
    };
    const newClaims = [claims[0], pvc('tikv-c-tikv-1', 'claim-new'), claims[2]];
    expect(planOne(fresh, gone, [], { volumes: newClaims, replacements }).reason).toBe(
      'replacing c-tikv-1: waiting for its new store to be Up',
    );
    const back = pdState({ ...gone, stores: [...gone.stores, { ...store(1, 0), id: 9 }] });
    const done = planOne(fresh, back, [], { volumes: newClaims, replacements });
    expect(done.action).toEqual({
      type: 'replace-set',
      pod: 'c-tikv-1',
      record: { ...record({ phase: 'deleting' }), phase: 'done', doneAt: new Date(NOW).toISOString() },
    });
    expect(done.event).toEqual({
      type: 'Normal',
      reason: 'MemberReplaced',
      message: 'c-tikv-1 is replaced: store 9 in place of 2',
      pod: 'c-tikv-1',
    });
    // Done stays done while Git still asks; forgotten once it does not.
    const doneRecords = { 'c-tikv-1': { ...record({}), phase: 'done' as const } };
    expect(planOne(fresh, back, [], { volumes: newClaims, replacements: doneRecords }).action?.type ?? 'none').not.toMatch(/^replace/);
    expect(planOne(tikv([]), back, [], { volumes: newClaims, replacements: doneRecords }).action).toEqual({
      type: 'replace-set',
      pod: 'c-tikv-1',
      record: undefined,
    });
  });
});

describe('replacing a PD member', () => {
  const pdComp = () => ({
    kind: 'pd' as const,
    sts: withClaims('pd', ['c-pd-1']),
    pods: pods('pd', ['r1', 'r1', 'r1']).map((p, i) => ({ ...p, metadata: { ...p.metadata, uid: `pd-uid-${i}` } })),
  });
  const pdClaims = [pvc('pd-c-pd-0', 'p0'), pvc('pd-c-pd-1', 'p1'), pvc('pd-c-pd-2', 'p2')];

  it('moves leadership off it first, then records it with its member id', () => {
    expect(planOne(pdComp(), pdState({ leader: 'c-pd-1' }), [], { volumes: pdClaims }).action).toEqual({
      type: 'transfer-leader',
      pod: 'c-pd-1',
      from: 'c-pd-1',
      to: 'c-pd-2',
    });
    const p = planOne(pdComp(), pdState({ leader: 'c-pd-0' }), [], { volumes: pdClaims });
    expect(p.action).toMatchObject({
      type: 'replace-set',
      pod: 'c-pd-1',
      record: { component: 'pd', phase: 'removing', memberId: '101', podUid: 'pd-uid-1', volumes: [{ name: 'pd-c-pd-1', uid: 'p1' }] },
    });
  });

  it('refuses while the other members have no healthy majority', () => {
    const p = planOne(pdComp(), pdState({ leader: 'c-pd-0', members: [member(0), member(1, false), member(2, false)] }), [], {
      volumes: pdClaims,
    });
    expect(p.reason).toBe('cannot replace c-pd-1 yet: removing c-pd-1 would leave 1 healthy of 2 PD members, not a majority');
  });

  it('deletes the member, then its claims and Pod, and is done once a new member is healthy in the Pod', () => {
    const removing = {
      'c-pd-1': {
        ...record({ component: 'pd', podUid: 'pd-uid-1', volumes: [{ name: 'pd-c-pd-1', uid: 'p1' }], memberId: '101' }),
        storeId: undefined,
      },
    };
    expect(planOne(pdComp(), pdState(), [], { volumes: pdClaims, replacements: removing }).action).toMatchObject({
      type: 'replace-delete',
      pod: 'c-pd-1',
      record: { phase: 'removing' },
    });
    const withoutMember = pdState({ members: [member(0), member(2)] });
    expect(planOne(pdComp(), withoutMember, [], { volumes: pdClaims, replacements: removing }).action).toMatchObject({
      type: 'replace-set',
      record: { phase: 'deleting' },
    });
    const deleting = { 'c-pd-1': { ...removing['c-pd-1'], phase: 'deleting' as const } };
    const fresh = {
      ...pdComp(),
      pods: pdComp().pods.map((p) => (p.metadata.name === 'c-pd-1' ? { ...p, metadata: { ...p.metadata, uid: 'pd-uid-new' } } : p)),
    };
    const newClaims = [pdClaims[0], pvc('pd-c-pd-1', 'p-new'), pdClaims[2]];
    expect(planOne(fresh, withoutMember, [], { volumes: newClaims, replacements: deleting }).reason).toBe(
      'replacing c-pd-1: waiting for its new PD member to be healthy',
    );
    const rejoined = pdState({ members: [member(0), { ...member(1), memberId: '7777777777777777777' }, member(2)] });
    expect(planOne(fresh, rejoined, [], { volumes: newClaims, replacements: deleting }).event).toMatchObject({
      reason: 'MemberReplaced',
      message: 'c-pd-1 is replaced: PD member 7777777777777777777 in place of 101',
    });
  });
});
