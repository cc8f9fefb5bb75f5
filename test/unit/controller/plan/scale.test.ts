import { failoverOf, type FailoverState } from '../../../../src/controller/records/failover';
import { trackHealth } from '../../../../src/controller/plan/failover';
import type { Pvc } from '../../../../src/controller/model/objects';
import type { PdStore } from '../../../../src/controller/clients/pd';
import { DEFAULT_PLAN_OPTIONS, type ComponentState } from '../../../../src/controller/view/view';
import {
  DEFER_DELETING_ANNOTATION,
  RETIRED_ANNOTATION,
  SCALE_IN_TIME_ANNOTATION,
  TICDC_SHUTDOWN_BEGIN_ANNOTATION,
} from '../../../../src/controller/model/annotations';
import type { ComponentKind } from '../../../../src/tidbcluster/names';
import { CLUSTER, member, NOW, pdState, planOne, pod, pods, store, sts, type StsOpts } from '../../../support/plan-fixtures';

const withClaims = (kind: ComponentKind, o: StsOpts = {}) => {
  const s = sts(kind, o);
  s.spec!.volumeClaimTemplates = [{ metadata: { name: kind } }];
  return s;
};
const comp = (kind: ComponentKind, o: StsOpts = {}, n = o.replicas ?? 3): ComponentState => ({
  kind,
  sts: withClaims(kind, o),
  pods: pods(
    kind,
    Array.from({ length: n }, () => 'r1'),
  ),
});
const pvc = (name: string, annotations?: Record<string, string>, uid = `uid-${name}`): Pvc => ({ metadata: { name, uid, annotations } });
const iso = (ms: number) => new Date(ms).toISOString();
const MIN = 60_000;

describe('scale-out', () => {
  it('grows one replica at a time, partition following replicas', () => {
    const p = planOne(comp('tikv', { replicas: 3, desired: 5 }));
    expect(p.action).toEqual({ type: 'apply', replicas: 4, partition: 4 });
    expect(p.phase).toBe('Scaling');
    expect(p.event?.reason).toBe('ScaleOut');
  });

  it('first deletes claims marked at an earlier scale-in on the ordinal about to be created', () => {
    const volumes = [pvc('tikv-c-tikv-2'), pvc('tikv-c-tikv-3', { [DEFER_DELETING_ANNOTATION]: iso(NOW) })];
    const p = planOne(comp('tikv', { replicas: 3, desired: 4 }), pdState(), [], { volumes });
    expect(p.action).toEqual({ type: 'delete-volumes', pod: 'c-tikv-3', volumes: [{ name: 'tikv-c-tikv-3', uid: 'uid-tikv-c-tikv-3' }] });
  });

  it('waits while such a claim is still terminating', () => {
    const volumes = [
      {
        metadata: { name: 'tikv-c-tikv-3', uid: 'u', deletionTimestamp: iso(NOW), annotations: { [DEFER_DELETING_ANNOTATION]: iso(NOW) } },
      },
    ];
    const p = planOne(comp('tikv', { replicas: 3, desired: 4 }), pdState(), [], { volumes });
    expect(p.action).toBeUndefined();
    expect(p.reason).toMatch(/waiting for volumes of c-tikv-3 to be deleted/);
  });

  it('keeps the partition of an upgrade step in flight', () => {
    const c: ComponentState = {
      kind: 'tidb',
      sts: withClaims('tidb', { replicas: 3, desired: 4, partition: 2, current: 'r1', update: 'r2' }),
      pods: pods('tidb', ['r1', 'r1', 'r1']),
    };
    expect(planOne(c).action).toEqual({ type: 'apply', replicas: 4, partition: 2 });
  });
});

describe('scale-in of PD', () => {
  const pd5 = comp('pd', { replicas: 5, desired: 3 });
  const members5 = [0, 1, 2, 3, 4].map((o) => member(o));

  it('moves leadership off the member being removed, to the lowest ordinal', () => {
    const p = planOne(pd5, pdState({ members: members5, leader: 'c-pd-4' }));
    expect(p.action).toEqual({ type: 'transfer-leader', pod: 'c-pd-4', from: 'c-pd-4', to: 'c-pd-0' });
  });

  it('skips an unhealthy member as the new leader', () => {
    const members = members5.map((m) => (m.name === 'c-pd-0' ? { ...m, healthy: false } : m));
    expect(planOne(pd5, pdState({ members, leader: 'c-pd-4' })).action).toMatchObject({ type: 'transfer-leader', to: 'c-pd-1' });
  });

  it('deletes the member, then marks the claims, then lowers replicas', () => {
    let p = planOne(pd5, pdState({ members: members5, leader: 'c-pd-0' }));
    expect(p.action).toEqual({ type: 'delete-member', pod: 'c-pd-4', member: 'c-pd-4' });
    const gone = pdState({ members: members5.slice(0, 4), leader: 'c-pd-0' });
    p = planOne(pd5, gone, [], { volumes: [pvc('pd-c-pd-4')] });
    expect(p.action).toEqual({ type: 'mark-volumes', pod: 'c-pd-4', volumes: ['pd-c-pd-4'] });
    p = planOne(pd5, gone, [], { volumes: [pvc('pd-c-pd-4', { [DEFER_DELETING_ANNOTATION]: iso(NOW) })] });
    expect(p.action).toEqual({ type: 'apply', replicas: 4, partition: 4 });
    expect(p.event?.reason).toBe('ScaleIn');
  });

  it('refuses PD to 0 while other components run', () => {
    const p = planOne(comp('pd', { replicas: 1, desired: 0 }), pdState({ members: [member(0)] }), [comp('tikv')]);
    expect(p.action).toBeUndefined();
    expect(p.event).toMatchObject({ type: 'Warning', reason: 'FailedScaleIn' });
  });

  it('does nothing without PD', () => {
    const p = planOne(pd5, { error: 'connection refused' });
    expect(p.action).toBeUndefined();
    expect(p.reason).toMatch(/PD API unavailable/);
  });
});

describe('scale-in of TiKV', () => {
  const tikv4 = comp('tikv', { replicas: 4, desired: 3 });
  const four = (o: Partial<PdStore> = {}) => [store(0, 100), store(1, 100), store(2, 100), { ...store(3, 100), ...o }];

  it('refuses to go below PD max-replicas while the store is Up', () => {
    const p = planOne(comp('tikv', { replicas: 3, desired: 2 }), pdState({ maxReplicas: 3, tombstones: [] }));
    expect(p.action).toBeUndefined();
    expect(p.event).toMatchObject({ type: 'Warning', reason: 'FailedScaleIn' });
    expect(p.reason).toMatch(/3 Up stores .* 3 replicas/);
  });

  it('waits until PD max-replicas is read', () => {
    expect(planOne(tikv4, pdState({ stores: four() })).reason).toMatch(/max-replicas/);
  });

  it('evicts leaders first, noting the scale-in time', () => {
    const p = planOne(tikv4, pdState({ stores: four(), maxReplicas: 3, tombstones: [] }));
    expect(p.action).toEqual({
      type: 'evict-begin',
      pod: 'c-tikv-3',
      storeId: 4,
      annotation: SCALE_IN_TIME_ANNOTATION,
      record: { pod: 'c-tikv-3', for: 'scale-in', since: iso(NOW) },
    });
  });

  it('waits for leaders to leave, then takes the store offline', () => {
    const evicting = (pods4: ComponentState, leaders: number) =>
      planOne(pods4, pdState({ stores: four({ leaderCount: leaders }), maxReplicas: 3, tombstones: [], evicting: new Set([4]) }));
    const annotated: ComponentState = {
      ...tikv4,
      pods: [...tikv4.pods.slice(0, 3), pod('tikv', 3, 'r1', { annotations: { [SCALE_IN_TIME_ANNOTATION]: iso(NOW - MIN) } })],
    };
    expect(evicting(annotated, 40).reason).toMatch(/region leaders to leave store 4/);
    expect(evicting(annotated, 0).action).toEqual({ type: 'delete-store', pod: 'c-tikv-3', storeId: 4 });
  });

  it('takes the store offline anyway 5 minutes after the scale-in began', () => {
    const late: ComponentState = {
      ...tikv4,
      pods: [...tikv4.pods.slice(0, 3), pod('tikv', 3, 'r1', { annotations: { [SCALE_IN_TIME_ANNOTATION]: iso(NOW - 5 * MIN) } })],
    };
    const p = planOne(late, pdState({ stores: four({ leaderCount: 40 }), maxReplicas: 3, tombstones: [], evicting: new Set([4]) }));
    expect(p.action).toMatchObject({ type: 'delete-store', storeId: 4 });
  });

  it('keeps replicas while the store is Offline and its regions move', () => {
    const p = planOne(
      tikv4,
      pdState({ stores: four({ state: 'Offline', leaderCount: 0, regionCount: 70 }), maxReplicas: 3, tombstones: [] }),
    );
    expect(p.action).toBeUndefined();
    expect(p.reason).toMatch(/store 4 .* Offline: PD is moving its 70 regions/);
    expect(p.busy).toBe(true);
  });

  it('once Tombstone: removes its scheduler, marks the claims, lowers replicas', () => {
    const tomb = { ...store(3, 0, 'Tombstone'), lastHeartbeat: NOW };
    const base = { stores: four().slice(0, 3), maxReplicas: 3, tombstones: [tomb] };
    const evictions = { 4: { pod: 'c-tikv-3', for: 'scale-in' as const, since: iso(NOW) } };
    expect(planOne(tikv4, pdState({ ...base, evicting: new Set([4]) }), [], { evictions }).action).toEqual({
      type: 'evict-cleanup',
      storeIds: [4],
    });
    // A scheduler the controller did not add stays.
    expect(planOne(tikv4, pdState({ ...base, evicting: new Set([4]) }), [], { volumes: [pvc('tikv-c-tikv-3')] }).action).toMatchObject({
      type: 'mark-volumes',
    });
    expect(planOne(tikv4, pdState(base), [], { volumes: [pvc('tikv-c-tikv-3')] }).action).toEqual({
      type: 'mark-volumes',
      pod: 'c-tikv-3',
      volumes: ['tikv-c-tikv-3'],
    });
    const marked = [pvc('tikv-c-tikv-3', { [DEFER_DELETING_ANNOTATION]: iso(NOW) })];
    expect(planOne(tikv4, pdState(base), [], { volumes: marked }).action).toEqual({ type: 'apply', replicas: 3, partition: 3 });
  });

  it('does not take an older Tombstone of the same address for the current Pod', () => {
    const young: ComponentState = {
      ...tikv4,
      pods: [...tikv4.pods.slice(0, 3), { ...pod('tikv', 3), metadata: { ...pod('tikv', 3).metadata, creationTimestamp: iso(NOW) } }],
    };
    const old = { ...store(3, 0, 'Tombstone'), id: 9, lastHeartbeat: NOW - 10 * MIN };
    const p = planOne(young, pdState({ stores: four().slice(0, 3), maxReplicas: 3, tombstones: [old] }));
    expect(p.action).toBeUndefined();
    expect(p.reason).toMatch(/store of c-tikv-3 to register/);
  });

  it('removes a Pod that never registered a store after 5 resync periods', () => {
    const created = (ago: number): ComponentState => ({
      ...tikv4,
      pods: [
        ...tikv4.pods.slice(0, 3),
        { metadata: { name: 'c-tikv-3', creationTimestamp: iso(NOW - ago) }, status: { conditions: [{ type: 'Ready', status: 'False' }] } },
      ],
    });
    const state = pdState({ stores: four().slice(0, 3), maxReplicas: 3, tombstones: [] });
    expect(planOne(created(MIN), state).action).toBeUndefined();
    expect(planOne(created(3 * MIN), state).action).toEqual({ type: 'apply', replicas: 3, partition: 3 });
  });
});

describe('scale-in of TiCDC, Pump and TiDB', () => {
  it('drains a TiCDC capture until the Pod is marked retired', () => {
    const c = comp('ticdc', { replicas: 2, desired: 1 });
    expect(planOne(c).action).toEqual({ type: 'retire', pod: 'c-ticdc-1', how: 'ticdc' });
    const retired: ComponentState = { ...c, pods: [c.pods[0], pod('ticdc', 1, 'r1', { annotations: { [RETIRED_ANNOTATION]: iso(NOW) } })] };
    expect(planOne(retired).action).toEqual({ type: 'apply', replicas: 1, partition: 1 });
  });

  it('removes a capture after gracefulShutdownTimeout, with a warning', () => {
    const c = comp('ticdc', { replicas: 2, desired: 1, settings: { gracefulShutdownTimeout: '1m' } });
    const late: ComponentState = {
      ...c,
      pods: [c.pods[0], pod('ticdc', 1, 'r1', { annotations: { [TICDC_SHUTDOWN_BEGIN_ANNOTATION]: iso(NOW - MIN) } })],
    };
    const p = planOne(late);
    expect(p.action).toEqual({ type: 'apply', replicas: 1, partition: 1 });
    expect(p.event).toMatchObject({ type: 'Warning', reason: 'DrainTimeout' });
  });

  it('takes a Pump node offline first', () => {
    expect(planOne(comp('pump', { replicas: 3, desired: 2 })).action).toEqual({ type: 'retire', pod: 'c-pump-2', how: 'pump' });
  });

  it('marks the claims of a TiDB Pod before removing it', () => {
    const p = planOne(comp('tidb', { replicas: 3, desired: 2 }), undefined, [], { volumes: [pvc('tidb-c-tidb-2')] });
    expect(p.action).toEqual({ type: 'mark-volumes', pod: 'c-tidb-2', volumes: ['tidb-c-tidb-2'] });
  });
});

const failover = (components: FailoverState['components'], unhealthySince: Record<string, string> = {}): FailoverState => ({
  components,
  unhealthySince,
});
const options = { ...DEFAULT_PLAN_OPTIONS, failoverPeriodMs: { pd: MIN, tikv: MIN, tidb: MIN }, newFailoverUid: 'uid-1' };
const SETTINGS = { maxFailoverCount: 3 };

describe('PD failover', () => {
  const pd3 = comp('pd', { settings: SETTINGS });
  const sick = [member(0), member(1, false), member(2)];

  it('records a member unhealthy beyond the period, with its Pod and claims', () => {
    const p = planOne(pd3, pdState({ members: sick }), [], {
      options,
      volumes: [pvc('pd-c-pd-1')],
      failover: failover({}, { 'pd/c-pd-1': iso(NOW - MIN) }),
    });
    expect(p.action).toEqual({
      type: 'failover-set',
      failover: {
        records: {
          'c-pd-1': {
            pod: 'c-pd-1',
            createdAt: iso(NOW),
            memberId: '101',
            podUid: undefined,
            volumes: [{ name: 'pd-c-pd-1', uid: 'uid-pd-c-pd-1' }],
            memberDeleted: false,
          },
        },
      },
    });
    expect(p.event).toMatchObject({ type: 'Warning', reason: 'FailoverRecorded' });
  });

  it('waits for the period', () => {
    const p = planOne(pd3, pdState({ members: sick }), [], { options, failover: failover({}, { 'pd/c-pd-1': iso(NOW - 10_000) }) });
    expect(p.action).toBeUndefined();
    expect(p.reason).toMatch(/c-pd-1 is unhealthy; failover after 1m/);
    expect(p.busy).toBe(true);
  });

  it('never fails over without a healthy majority', () => {
    const members = [member(0), member(1, false), member(2, false)];
    const since = { 'pd/c-pd-1': iso(NOW - MIN), 'pd/c-pd-2': iso(NOW - MIN) };
    const p = planOne(pd3, pdState({ members }), [], { options, failover: failover({}, since) });
    expect(p.action).toBeUndefined();
    expect(p.event).toMatchObject({ type: 'Warning', reason: 'FailoverNoQuorum' });
  });

  it('deletes a recorded member, then counts it as one extra replica', () => {
    const record = { pod: 'c-pd-1', createdAt: iso(NOW), memberId: '101', memberDeleted: false };
    let p = planOne(pd3, pdState({ members: sick }), [], { options, failover: failover({ pd: { records: { 'c-pd-1': record } } }) });
    expect(p.action).toEqual({ type: 'failover-delete', key: 'c-pd-1', record });
    p = planOne(pd3, pdState({ members: [member(0), member(2)] }), [], {
      options,
      failover: failover({ pd: { records: { 'c-pd-1': { ...record, memberDeleted: true } } } }),
    });
    expect(p.action).toEqual({ type: 'apply', replicas: 4, partition: 4 });
    expect(p.phase).toBe('Failover');
  });

  it('deletes the claims before the Pod, and adds the replica only once member, Pod and claims are gone', () => {
    const record = {
      pod: 'c-pd-1',
      createdAt: iso(NOW),
      memberId: '101',
      podUid: 'pod-1',
      volumes: [{ name: 'pd-c-pd-1', uid: 'uid-pd-c-pd-1' }],
      memberDeleted: false,
    };
    const records = failover({ pd: { records: { 'c-pd-1': record } } });
    const withPod1 = (uid: string): ComponentState => ({
      ...pd3,
      pods: pd3.pods.map((p, i) => (i === 1 ? { ...p, metadata: { ...p.metadata, uid } } : p)),
    });
    const gone = pdState({ members: [member(0), member(2)] });
    // Member gone, but the old Pod and its claim are still there: delete again (claims first, see the executor).
    expect(planOne(withPod1('pod-1'), gone, [], { options, failover: records, volumes: [pvc('pd-c-pd-1')] }).action).toEqual({
      type: 'failover-delete',
      key: 'c-pd-1',
      record,
    });
    // The Pod is gone and its claim is Terminating (kubernetes.io/pvc-protection held it until then): wait for it.
    const terminating = { ...pvc('pd-c-pd-1'), metadata: { ...pvc('pd-c-pd-1').metadata, deletionTimestamp: iso(NOW) } };
    const waiting = planOne(withPod1('pod-1b'), gone, [], { options, failover: records, volumes: [terminating] });
    expect(waiting.action).toBeUndefined();
    expect(waiting.reason).toMatch(/waiting for volumes pd-c-pd-1 of failed PD member c-pd-1 to be deleted/);
    // All gone (a successor Pod may already exist, on a fresh claim): now the record counts as a replica.
    const done = planOne(withPod1('pod-1b'), gone, [], { options, failover: records, volumes: [pvc('pd-c-pd-1', undefined, 'uid-new')] });
    expect(done.action).toEqual({ type: 'failover-set', failover: { records: { 'c-pd-1': { ...record, memberDeleted: true } } } });
  });

  it('does not fail over a member while no other PD Pod is Ready', () => {
    const c: ComponentState = { ...pd3, pods: [pod('pd', 0, 'r1', { ready: false }), pod('pd', 1), pod('pd', 2, 'r1', { ready: false })] };
    const p = planOne(c, pdState({ members: sick }), [], { options, failover: failover({}, { 'pd/c-pd-1': iso(NOW - MIN) }) });
    expect(p.action).toBeUndefined();
    expect(p.reason).toMatch(
      /Pods c-pd-0, c-pd-2 are not Ready too: with no Pod of the component Ready, this is a node or control-plane fault/,
    );
  });

  it('stops at maxFailoverCount', () => {
    const done = { pod: 'c-pd-0', createdAt: iso(NOW), memberId: '1', memberDeleted: true };
    const c = { ...comp('pd', { replicas: 4, desired: 3, settings: { maxFailoverCount: 1 } }) };
    const p = planOne(c, pdState({ members: [...sick, member(3)] }), [], {
      options,
      failover: failover({ pd: { records: { old: done } } }, { 'pd/c-pd-1': iso(NOW - MIN) }),
    });
    expect(p.action).toBeUndefined();
    expect(p.event).toMatchObject({ type: 'Warning', reason: 'FailoverLimit' });
  });

  it('clears the records once every desired member is healthy', () => {
    const done = { pod: 'c-pd-1', createdAt: iso(NOW), memberId: '101', memberDeleted: true };
    const c = comp('pd', { replicas: 4, desired: 3, settings: SETTINGS });
    const p = planOne(c, pdState({ members: [0, 1, 2, 3].map((o) => member(o)) }), [], {
      options,
      failover: failover({ pd: { records: { 'c-pd-1': done } } }),
    });
    expect(p.action).toEqual({ type: 'failover-set', failover: undefined });
    expect(p.event?.reason).toBe('FailoverRecovered');
  });

  it('is off with maxFailoverCount 0 or --auto-failover=false', () => {
    const since = failover({}, { 'pd/c-pd-1': iso(NOW - MIN) });
    expect(
      planOne(comp('pd', { settings: { maxFailoverCount: 0 } }), pdState({ members: sick }), [], { options, failover: since }).action,
    ).toBeUndefined();
    expect(
      planOne(pd3, pdState({ members: sick }), [], { options: { ...options, autoFailover: false }, failover: since }).action,
    ).toBeUndefined();
  });
});

describe('TiKV failover', () => {
  const tikv3 = comp('tikv', { settings: SETTINGS });
  const down = [store(0, 100), store(1, 0, 'Down'), store(2, 100)];
  const record = { pod: 'c-tikv-1', createdAt: iso(NOW), storeId: 2 };

  it('adds a replica for a store Down beyond the period, and sets the failover UID once', () => {
    const p = planOne(tikv3, pdState({ stores: down }), [], { options, failover: failover({}, { 'tikv/2': iso(NOW - MIN) }) });
    expect(p.action).toEqual({ type: 'failover-set', failover: { records: { '2': record }, failoverUID: 'uid-1' } });
    const after = planOne(tikv3, pdState({ stores: down }), [], {
      options,
      failover: failover({ tikv: { records: { '2': record }, failoverUID: 'uid-1' } }),
    });
    expect(after.action).toEqual({ type: 'apply', replicas: 4, partition: 4 });
  });

  it('keeps the extra replica when the store is Up again, unless recoverFailover is set', () => {
    const c4 = (settings: Record<string, unknown>) => comp('tikv', { replicas: 4, desired: 3, settings: { ...SETTINGS, ...settings } });
    const state = failover({ tikv: { records: { '2': record }, failoverUID: 'uid-1' } });
    const up = pdState({ stores: [store(0, 100), store(1, 100), store(2, 100), store(3, 100)] });
    const kept = planOne(c4({}), up, [], { options, failover: state });
    expect(kept.action).toBeUndefined();
    expect(kept.phase).toBe('Failover');
    expect(kept.reason).toMatch(/stay until recoverFailover is set or failover.recoverByUID is uid-1/);
    expect(planOne(c4({ recoverFailover: true }), up, [], { options, failover: state }).action).toEqual({
      type: 'failover-set',
      failover: undefined,
    });
    expect(planOne(c4({ recoverByUID: 'uid-1' }), up, [], { options, failover: state }).action).toEqual({
      type: 'failover-set',
      failover: undefined,
    });
    expect(planOne(c4({ recoverByUID: 'other' }), up, [], { options, failover: state }).action).toBeUndefined();
  });

  it('stops at maxFailoverCount', () => {
    const c = comp('tikv', { replicas: 4, desired: 3, settings: { maxFailoverCount: 1 } });
    const stores = [store(0, 100), store(1, 0, 'Down'), store(2, 0, 'Down'), store(3, 100)];
    const p = planOne(c, pdState({ stores }), [], {
      options,
      failover: failover({ tikv: { records: { '2': record } } }, { 'tikv/3': iso(NOW - MIN) }),
    });
    expect(p.action).toBeUndefined();
    expect(p.event?.reason).toBe('FailoverLimit');
  });

  it('drops records of ordinals no longer desired', () => {
    const c = comp('tikv', { replicas: 2, desired: 1, settings: SETTINGS });
    const p = planOne(c, pdState(), [], { options, failover: failover({ tikv: { records: { '2': record } } }) });
    expect(p.action).toEqual({ type: 'failover-set', failover: undefined });
  });

  it('does not hold other components while its extra replicas are in place', () => {
    const state = failover({ tikv: { records: { '2': record } } });
    const tidb: ComponentState = {
      kind: 'tidb',
      sts: sts('tidb', { current: 'r1', update: 'r2' }),
      pods: pods('tidb', ['r1', 'r1', 'r1']),
    };
    const stores = [store(0, 100), store(1, 0, 'Down'), store(2, 100), store(3, 100)];
    const p = planOne(tidb, pdState({ stores }), [comp('tikv', { replicas: 4, desired: 3, settings: SETTINGS })], {
      options,
      failover: state,
    });
    expect(p.action).toEqual({ type: 'apply', replicas: 3, partition: 2 });
  });
});

describe('TiDB failover', () => {
  const unready = (c: ComponentState): ComponentState => ({ ...c, pods: [c.pods[0], pod('tidb', 1, 'r1', { ready: false })] });

  it('adds a replica for a Pod not Ready beyond the period, and drops it once Ready', () => {
    const c = comp('tidb', { replicas: 2, settings: SETTINGS });
    const p = planOne(unready(c), undefined, [], { options, failover: failover({}, { 'tidb/c-tidb-1': iso(NOW - MIN) }) });
    expect(p.action).toEqual({ type: 'failover-set', failover: { records: { 'c-tidb-1': { pod: 'c-tidb-1', createdAt: iso(NOW) } } } });
    const c3 = comp('tidb', { replicas: 3, desired: 2, settings: SETTINGS });
    const back = planOne(c3, undefined, [], {
      options,
      failover: failover({ tidb: { records: { 'c-tidb-1': { pod: 'c-tidb-1', createdAt: iso(NOW) } } } }),
    });
    expect(back.action).toEqual({ type: 'failover-set', failover: undefined });
  });
});

describe('failover while readiness is lost everywhere', () => {
  it('adds no TiDB replica when every TiDB Pod turned not Ready at once (a node or control-plane fault)', () => {
    const c: ComponentState = {
      ...comp('tidb', { replicas: 2, settings: SETTINGS }),
      pods: [pod('tidb', 0, 'r1', { ready: false }), pod('tidb', 1, 'r1', { ready: false })],
    };
    const since = { 'tidb/c-tidb-0': iso(NOW - MIN), 'tidb/c-tidb-1': iso(NOW - MIN) };
    const p = planOne(c, undefined, [], { options, failover: failover({}, since) });
    expect(p.action).toBeUndefined();
    expect(p.reason).toMatch(/c-tidb-0 is not Ready, but Pod c-tidb-1 is not Ready either/);
  });

  it('adds no TiKV replica for a Down store while no TiKV Pod is Ready, and one while another is', () => {
    const unready = (ords: number[]): ComponentState => ({
      ...comp('tikv', { settings: SETTINGS }),
      pods: [0, 1, 2].map((o) => pod('tikv', o, 'r1', { ready: !ords.includes(o) })),
    });
    const pd = pdState({ stores: [store(0, 100), store(1, 0, 'Down'), store(2, 100)] });
    const p = planOne(unready([0, 1, 2]), pd, [], { options, failover: failover({}, { 'tikv/2': iso(NOW - MIN) }) });
    expect(p.action).toBeUndefined();
    expect(p.reason).toMatch(/store 2 \(c-tikv-1\) is Down, but Pods c-tikv-0, c-tikv-2 are not Ready too/);
    expect(planOne(unready([0, 1]), pd, [], { options, failover: failover({}, { 'tikv/2': iso(NOW - MIN) }) }).action).toMatchObject({
      type: 'failover-set',
    });
  });
});

describe('scale-in while Pods are not Ready', () => {
  it('removes no TiDB Pod while a remaining one is not Ready, and says why', () => {
    const c: ComponentState = {
      ...comp('tidb', { replicas: 3, desired: 2 }),
      pods: [pod('tidb', 0, 'r1', { ready: false }), pod('tidb', 1), pod('tidb', 2)],
    };
    const p = planOne(c);
    expect(p.action).toBeUndefined();
    expect(p.reason).toBe('scale-in waits: Pod c-tidb-0 is not Ready; c-tidb-2 is removed once every remaining Pod is Ready');
    expect(planOne({ ...c, pods: pods('tidb', ['r1', 'r1', 'r1']) }).action).toEqual({ type: 'apply', replicas: 2, partition: 2 });
  });
});

describe('health history and records in the status', () => {
  it('notes when things turn unhealthy and keeps the first time', () => {
    const input = {
      cluster: CLUSTER,
      components: [comp('pd'), comp('tikv'), { ...comp('tidb'), pods: [pod('tidb', 0), pod('tidb', 1, 'r1', { ready: false })] }],
      pd: pdState({ members: [member(0), member(1, false), member(2)], stores: [store(0, 1), store(1, 0, 'Down'), store(2, 1)] }),
      now: NOW,
    };
    const first = trackHealth({ 'pd/c-pd-1': iso(NOW - MIN), 'pd/c-pd-0': iso(NOW - MIN) }, input);
    expect(first).toEqual({ 'pd/c-pd-1': iso(NOW - MIN), 'tikv/2': iso(NOW), 'tidb/c-tidb-1': iso(NOW) });
    // PD unreadable: what PD said is kept, not forgotten.
    expect(trackHealth(first, { ...input, pd: { error: 'down' } })).toEqual(first);
  });

  it('reads records back from a status document, ignoring damage', () => {
    const state = failover(
      { tikv: { records: { '2': { pod: 'c-tikv-1', createdAt: iso(NOW), storeId: 2 } }, failoverUID: 'u' } },
      { 'tikv/2': iso(NOW) },
    );
    expect(failoverOf(JSON.parse(JSON.stringify({ failover: state })))).toEqual(state);
    expect(failoverOf({ failover: 'x' })).toEqual({ components: {}, unhealthySince: {} });
    expect(failoverOf(undefined)).toEqual({ components: {}, unhealthySince: {} });
  });
});
