/**
 * tidb-operator's Pod-level requests (pkg/controller/tidbcluster/pod_control.go) as the planner takes
 * them: `tidb.pingcap.com/pd-transfer-leader` on PD, `tidb.pingcap.com/tidb-graceful-shutdown` on TiDB,
 * `tidb.pingcap.com/replace-volume` on PD, TiKV and TiFlash (src/controller/plan/pod-requests.ts,
 * replace.ts). The TiKV `evict-leader` request is in plan.test.ts.
 */
import type { Pod } from '../../../../src/controller/model/objects';
import type { ReplaceRecord } from '../../../../src/controller/records/replacements';
import { member, NOW, pdState, planOne, pods, sts } from '../../../support/plan-fixtures';

const annotated = (p: Pod, annotations: Record<string, string>): Pod => ({
  ...p,
  metadata: { ...p.metadata, uid: `${p.metadata.name}-uid`, annotations: { ...p.metadata.annotations, ...annotations } },
});
const pdWith = (ord: number, annotations: Record<string, string>) => {
  const list = pods('pd', ['r1', 'r1', 'r1']);
  list[ord] = annotated(list[ord], annotations);
  return { kind: 'pd' as const, sts: sts('pd'), pods: list };
};
const iso = (ms: number) => new Date(NOW + ms).toISOString();

describe('tidb.pingcap.com/pd-transfer-leader on a PD Pod', () => {
  it('none: moves leadership off the Pod while every member is healthy, and leaves a follower alone', () => {
    const p = planOne(pdWith(0, { 'tidb.pingcap.com/pd-transfer-leader': 'none' }), pdState({ leader: 'c-pd-0' }));
    expect(p.action).toEqual({ type: 'transfer-leader', pod: 'c-pd-0', from: 'c-pd-0', to: 'c-pd-2' });
    expect(p.event).toMatchObject({ reason: 'PDLeaderTransfer', pod: 'c-pd-0' });
    expect(planOne(pdWith(1, { 'tidb.pingcap.com/pd-transfer-leader': 'none' }), pdState({ leader: 'c-pd-0' }))).toMatchObject({
      action: undefined,
      reason: 'up to date',
    });
    const sick = planOne(
      pdWith(0, { 'tidb.pingcap.com/pd-transfer-leader': 'none' }),
      pdState({ leader: 'c-pd-0', members: [member(0), member(1, false), member(2)] }),
    );
    expect(sick.action).toBeUndefined();
    expect(sick.reason).toBe('the PD request on c-pd-0 waits: 2 of 3 PD members are healthy, and it needs more than half plus one');
  });

  it('delete-pod on a follower waits too while PD is not stable (as the operator, never with one or two members)', () => {
    const asked = { 'tidb.pingcap.com/pd-transfer-leader': 'delete-pod' };
    expect(
      planOne(pdWith(1, asked), pdState({ leader: 'c-pd-0', members: [member(0), member(1), member(2, false)] })).action,
    ).toBeUndefined();
    const one = { kind: 'pd' as const, sts: sts('pd', { replicas: 1 }), pods: [annotated(pods('pd', ['r1'])[0], asked)] };
    expect(planOne(one, pdState({ leader: 'c-pd-0', members: [member(0)] })).reason).toBe(
      'the PD request on c-pd-0 waits: 1 of 1 PD members are healthy, and it needs more than half plus one',
    );
  });

  it('delete-pod: moves leadership first, then deletes the Pod once it does not lead', () => {
    const asked = { 'tidb.pingcap.com/pd-transfer-leader': 'delete-pod' };
    expect(planOne(pdWith(0, asked), pdState({ leader: 'c-pd-0' })).action).toMatchObject({ type: 'transfer-leader', pod: 'c-pd-0' });
    const p = planOne(pdWith(0, asked), pdState({ leader: 'c-pd-2' }));
    expect(p.action).toEqual({ type: 'delete-pod', pod: 'c-pd-0', uid: 'c-pd-0-uid' });
    expect(p.event).toMatchObject({ reason: 'PDLeaderTransferDeletePod' });
  });

  it('removes an expired request (or one whose expiration time does not parse), and ignores an unknown value', () => {
    const expired = planOne(
      pdWith(0, { 'tidb.pingcap.com/pd-transfer-leader': 'none', 'tidb.pingcap.com/pd-evict-leader-expiration-time': iso(-1000) }),
      pdState({ leader: 'c-pd-0' }),
    );
    expect(expired.action).toEqual({
      type: 'clear-marks',
      marks: [{ pod: 'c-pd-0', keys: ['tidb.pingcap.com/pd-transfer-leader', 'tidb.pingcap.com/pd-evict-leader-expiration-time'] }],
    });
    const garbled = planOne(
      pdWith(0, { 'tidb.pingcap.com/pd-transfer-leader': 'none', 'tidb.pingcap.com/pd-evict-leader-expiration-time': 'soon' }),
      pdState({ leader: 'c-pd-0' }),
    );
    expect(garbled.action?.type).toBe('clear-marks');
    const later = planOne(
      pdWith(0, { 'tidb.pingcap.com/pd-transfer-leader': 'none', 'tidb.pingcap.com/pd-evict-leader-expiration-time': iso(60_000) }),
      pdState({ leader: 'c-pd-0' }),
    );
    expect(later.action?.type).toBe('transfer-leader');
    expect(planOne(pdWith(0, { 'tidb.pingcap.com/pd-transfer-leader': 'yes' }), pdState({ leader: 'c-pd-0' })).action?.type).not.toBe(
      'transfer-leader',
    );
  });
});

describe('tidb.pingcap.com/tidb-graceful-shutdown on a TiDB Pod', () => {
  const tidb = (value: string) => {
    const list = pods('tidb', ['r1', 'r1']);
    list[1] = annotated(list[1], { 'tidb.pingcap.com/tidb-graceful-shutdown': value });
    return { kind: 'tidb' as const, sts: sts('tidb', { replicas: 2 }), pods: list };
  };

  it('delete-pod: deletes the Pod while PD, TiKV and TiDB are idle; none does nothing', () => {
    const p = planOne(tidb('delete-pod'));
    expect(p.action).toEqual({ type: 'delete-pod', pod: 'c-tidb-1', uid: 'c-tidb-1-uid' });
    expect(p.event).toMatchObject({ reason: 'TiDBGracefulShutdown', pod: 'c-tidb-1' });
    expect(planOne(tidb('none'))).toMatchObject({ action: undefined, reason: 'up to date' });
    const tikvUpgrading = {
      kind: 'tikv' as const,
      sts: sts('tikv', { current: 'r1', update: 'r2' }),
      pods: pods('tikv', ['r1', 'r1', 'r1']),
    };
    const waiting = planOne(tidb('delete-pod'), pdState(), [tikvUpgrading]);
    expect(waiting.action).toBeUndefined();
    expect(waiting.reason).toBe(
      'deleting c-tidb-1, as its tidb.pingcap.com/tidb-graceful-shutdown annotation asks, waits until tikv is idle',
    );
  });
});

describe('tidb.pingcap.com/replace-volume on a TiKV Pod', () => {
  const tikv = (annotate: boolean, uid = 'c-tikv-1-uid') => {
    const list = pods('tikv', ['r1', 'r1', 'r1', 'r1']);
    list[1] = annotate
      ? annotated(list[1], { 'tidb.pingcap.com/replace-volume': 'true' })
      : { ...list[1], metadata: { ...list[1].metadata, uid } };
    const s = sts('tikv', { replicas: 4 });
    s.spec!.volumeClaimTemplates = [{ metadata: { name: 'tikv' } }];
    return { kind: 'tikv' as const, sts: s, pods: list };
  };
  const stores = pdState({
    stores: [0, 1, 2, 3].map((i) => ({
      id: i + 1,
      address: `c-tikv-${i}.c-tikv-peer.ns.svc:20160`,
      state: 'Up',
      leaderCount: 5,
      regionCount: 5,
      labels: {},
    })),
    maxReplicas: 3,
  });

  it('is a replacement, recorded as the Pod asked, kept while under way after the Pod (and its request) is gone, forgotten once done', () => {
    const p = planOne(tikv(true), stores);
    expect(p.action).toMatchObject({
      type: 'replace-set',
      pod: 'c-tikv-1',
      record: { component: 'tikv', phase: 'removing', requestedBy: 'pod', storeId: 2, podUid: 'c-tikv-1-uid' },
    });
    expect(p.reason).toBe(
      'replacing c-tikv-1 as its tidb.pingcap.com/replace-volume annotation asks: store 2 goes offline until PD reports it Tombstone',
    );
    const deleting: ReplaceRecord = {
      component: 'tikv',
      phase: 'deleting',
      requestedBy: 'pod',
      startedAt: iso(0),
      podUid: 'c-tikv-1-uid',
      volumes: [],
      storeId: 2,
    };
    // The new Pod carries no request: the replacement goes on to the end.
    const goneStore = pdState({ ...stores, stores: stores.stores.filter((s) => s.id !== 2) });
    const fresh = tikv(false, 'new-uid');
    expect(planOne(fresh, goneStore, [], { replacements: { 'c-tikv-1': deleting } }).reason).toBe(
      'replacing c-tikv-1: waiting for its new store to be Up',
    );
    const done = { ...deleting, phase: 'done' as const };
    expect(planOne(fresh, goneStore, [], { replacements: { 'c-tikv-1': done } }).action).toEqual({
      type: 'replace-set',
      pod: 'c-tikv-1',
      record: undefined,
    });
  });
});
