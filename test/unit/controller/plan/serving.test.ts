/**
 * Ready means serving: the readiness gate `tidb-gitops.io/serving` on the Pods a disruption budget
 * counts, the condition the controller sets from PD and TiDB, and budgets that never evict a Pod that
 * is not serving where that can lose a quorum.
 */
import { LEADERS_BACK_WAIT_MS, servingChanges, type ServingInput } from '../../../../src/controller/plan/serving';
import type { Pod } from '../../../../src/controller/model/objects';
import type { ComponentState } from '../../../../src/controller/view/view';
import type { ComponentKind } from '../../../../src/tidbcluster/names';
import { DISRUPTION_BUDGETS_ANNOTATION } from '../../../../src/tidbcluster/guard-rails';
import { SERVING_CONDITION } from '../../../../src/tidbcluster/serving';
import { NOW, pdState, store, sts } from '../../../support/plan-fixtures';
import { cluster, render, type Obj } from '../../../support/render';
import { tidbServing } from '../../../../src/controller/clients/tidb';
import { TidbSim } from '../../../sim/tidb';

const STARTED = NOW - 10_000;

/** A running Pod of the component with the gate, and its condition as it stands. */
function gated(
  kind: ComponentKind,
  ord: number,
  o: { condition?: { status: string; reason: string }; started?: number; terminating?: boolean; phase?: string } = {},
): Pod {
  return {
    metadata: {
      name: `c-${kind}-${ord}`,
      uid: `uid-${kind}-${ord}`,
      labels: { 'app.kubernetes.io/component': kind },
      deletionTimestamp: o.terminating ? new Date(NOW) : undefined,
    },
    spec: { readinessGates: [{ conditionType: SERVING_CONDITION }] },
    status: {
      phase: o.phase ?? 'Running',
      conditions: [{ type: 'Ready', status: 'False' }, ...(o.condition ? [{ type: SERVING_CONDITION, ...o.condition }] : [])],
      containerStatuses: [
        {
          name: kind,
          state:
            o.phase === 'Pending'
              ? { waiting: { reason: 'ContainerCreating' } }
              : { running: { startedAt: new Date(o.started ?? STARTED).toISOString() } },
        },
      ],
    },
  };
}

const comp = (kind: ComponentKind, pods: Pod[]): ComponentState => ({ kind, sts: sts(kind), pods });
const heard = (ord: number, leaders: number, o: { state?: string; at?: number; regions?: number } = {}) => ({
  ...store(ord, leaders, o.state),
  regionCount: o.regions ?? 100,
  lastHeartbeat: o.at ?? NOW,
});
const input = (components: ComponentState[], pd: ServingInput['pd'] = pdState(), extra: Partial<ServingInput> = {}): ServingInput => ({
  cluster: { name: 'c' },
  components,
  pd,
  probes: {},
  now: NOW,
  ...extra,
});
const one = (i: ServingInput) => servingChanges(i).changes.map((c) => `${c.pod} ${c.status} ${c.reason}`);

describe('the serving condition', () => {
  test('TiKV: True once its store is Up in PD, heard from since the Pod started, with region leaders', () => {
    const pd = pdState({ stores: [heard(0, 40), heard(1, 0, { state: 'Down' }), heard(2, 40, { at: STARTED - 5000 })] });
    expect(one(input([comp('tikv', [gated('tikv', 0), gated('tikv', 1), gated('tikv', 2)])], pd))).toEqual([
      'c-tikv-0 True StoreUp',
      'c-tikv-1 False StoreNotUp',
      // Up, but PD's word is the previous Pod's: no heartbeat since this one started.
      'c-tikv-2 False StoreNotHeard',
    ]);
    // A store PD does not list yet.
    expect(one(input([comp('tikv', [gated('tikv', 5)])], pd))).toEqual(['c-tikv-5 False NoStore']);
  });

  test('TiKV: waits for its leaders to come back, unless nothing can bring them', () => {
    const noLeaders = (o: { regions?: number; evicting?: boolean; started?: number } = {}) =>
      one(
        input(
          [comp('tikv', [gated('tikv', 1, { started: o.started })])],
          pdState({ stores: [heard(0, 50), heard(1, 0, { regions: o.regions }), heard(2, 50)], evicting: new Set(o.evicting ? [2] : []) }),
        ),
      );
    expect(noLeaders()).toEqual(['c-tikv-1 False LeadersNotBack']);
    expect(noLeaders({ regions: 0 })).toEqual(['c-tikv-1 True StoreUp']);
    expect(noLeaders({ evicting: true })).toEqual(['c-tikv-1 True StoreUp']);
    expect(noLeaders({ started: NOW - LEADERS_BACK_WAIT_MS })).toEqual(['c-tikv-1 True StoreUp']);
    expect(noLeaders({ started: NOW - LEADERS_BACK_WAIT_MS + 1000 })).toEqual(['c-tikv-1 False LeadersNotBack']);
  });

  test('TiKV: once True, leaders that move away later keep it; a store that stops being Up takes it', () => {
    const serving = { status: 'True', reason: 'StoreUp' };
    expect(
      one(
        input([comp('tikv', [gated('tikv', 1, { condition: serving })])], pdState({ stores: [heard(0, 50), heard(1, 0), heard(2, 50)] })),
      ),
    ).toEqual([]);
    expect(
      one(
        input(
          [comp('tikv', [gated('tikv', 1, { condition: serving })])],
          pdState({ stores: [heard(0, 50), heard(1, 0, { state: 'Disconnected' }), heard(2, 50)] }),
        ),
      ),
    ).toEqual(['c-tikv-1 False StoreNotUp']);
  });

  test('TiFlash: its store Up is enough (it holds learners, never leaders)', () => {
    const flash = { ...heard(1, 0), labels: { engine: 'tiflash' }, address: 'c-tiflash-0.c-tiflash-peer.ns.svc:3930' };
    expect(one(input([comp('tiflash', [gated('tiflash', 0)])], pdState({ stores: [heard(0, 50), flash] })))).toEqual([
      'c-tiflash-0 True StoreUp',
    ]);
  });

  test('PD: the member healthy in PD; TiDB: its /status', () => {
    const pd = pdState({
      members: [
        { name: 'c-pd-0', memberId: '1', clientUrls: [], healthy: true },
        { name: 'c-pd-1', memberId: '2', clientUrls: [], healthy: false },
      ],
    });
    expect(one(input([comp('pd', [gated('pd', 0), gated('pd', 1), gated('pd', 2)])], pd))).toEqual([
      'c-pd-0 True MemberHealthy',
      'c-pd-1 False MemberUnhealthy',
      'c-pd-2 False NotAMember',
    ]);
    const probes = {
      tidbStatus: { 'c-tidb-0': { ok: true, detail: 'serving' }, 'c-tidb-1': { ok: false, detail: 'HTTP 500 (shutting down)' } },
    };
    // A TiDB not asked this pass keeps what it has.
    expect(one(input([comp('tidb', [gated('tidb', 0), gated('tidb', 1), gated('tidb', 2)])], pd, { probes }))).toEqual([
      'c-tidb-0 True StatusOK',
      'c-tidb-1 False StatusFailing',
    ]);
  });

  test('writes only what changed, never on Pods without the gate, not running, or being deleted', () => {
    const pd = pdState({ stores: [heard(0, 40), heard(1, 40), heard(2, 40)] });
    const plain: Pod = { ...gated('tikv', 2), spec: {} };
    const pods = [
      gated('tikv', 0, { condition: { status: 'True', reason: 'StoreUp' } }),
      gated('tikv', 1, { phase: 'Pending' }),
      plain,
      gated('tikv', 3, { terminating: true }),
    ];
    expect(one(input([comp('tikv', pods)], pd))).toEqual([]);
    // Nothing waits: the controller need not look again soon.
    expect(servingChanges(input([comp('tikv', pods)], pd)).notServing).toBe(false);
    expect(
      servingChanges(input([comp('tikv', [gated('tikv', 0)])], pdState({ stores: [heard(0, 0, { state: 'Down' })] }))).notServing,
    ).toBe(true);
    expect(servingChanges(input([comp('tikv', [gated('tikv', 0)])], pd)).changes[0]).toEqual({
      pod: 'c-tikv-0',
      uid: 'uid-tikv-0',
      status: 'True',
      reason: 'StoreUp',
      message: 'store 1 of c-tikv-0 is Up with 40 region leaders',
    });
  });

  test('while PD cannot be read, PD and store Pods keep their conditions', () => {
    const pods = [
      comp('pd', [gated('pd', 0, { condition: { status: 'True', reason: 'MemberHealthy' } })]),
      comp('tikv', [gated('tikv', 0, { condition: { status: 'True', reason: 'StoreUp' } }), gated('tikv', 1)]),
    ];
    expect(one(input(pods, { error: 'connect ECONNREFUSED' }))).toEqual([]);
    expect(one(input(pods, pdState({ storesError: 'HTTP 503' })))).toEqual([]);
  });
});

describe("TiDB's /status, as the controller reads it", () => {
  test('200 while the server serves, 500 once it shuts down, an error when nothing listens', async () => {
    const sim = new TidbSim({ port: 0 });
    await sim.serverStart('c-tidb-0', '127.0.0.1');
    try {
      const base = `http://127.0.0.1:${sim.port('c-tidb-0')}`;
      expect(await tidbServing(base)).toEqual({ ok: true, detail: 'serving' });
      sim.shutDown('c-tidb-0');
      expect(await tidbServing(base)).toEqual({ ok: false, detail: 'HTTP 500 (shutting down)' });
      await sim.serverStop('c-tidb-0');
      expect((await tidbServing(base)).detail).toMatch(/ECONNREFUSED/);
    } finally {
      await sim.close();
    }
  });
});

describe('rendered gates and budgets', () => {
  const podSpec = (objects: Obj[], name: string) =>
    objects.find((o) => o.kind === 'StatefulSet' && o.metadata.name === name)!.spec.template.spec;
  const withAll = cluster({
    tiflash: { replicas: 1, storageClaims: [{ resources: { requests: { storage: '10Gi' } } }] },
    ticdc: { replicas: 2 },
  });

  test('PD, TiKV, TiFlash and TiDB Pods carry the gate; TiCDC does not; the controller may set it', () => {
    const objects = render(withAll);
    for (const kind of ['pd', 'tikv', 'tiflash', 'tidb'])
      expect(podSpec(objects, `demo-${kind}`).readinessGates).toEqual([{ conditionType: 'tidb-gitops.io/serving' }]);
    expect(podSpec(objects, 'demo-ticdc').readinessGates).toBeUndefined();
    const role = objects.find((o) => o.kind === 'Role' && o.metadata.name === 'demo-discovery')!;
    expect(role.rules).toContainEqual({ apiGroups: [''], resources: ['pods/status'], verbs: ['patch'] });
  });

  test('PD and TiKV budgets evict a Pod that is not serving only while the budget holds without it', () => {
    const budgets = Object.fromEntries(
      render(withAll)
        .filter((o) => o.kind === 'PodDisruptionBudget')
        .map((b) => [b.metadata.name, b.spec.unhealthyPodEvictionPolicy]),
    );
    expect(budgets).toEqual({
      'demo-pd': 'IfHealthyBudget',
      'demo-tikv': 'IfHealthyBudget',
      'demo-tiflash': 'AlwaysAllow',
      'demo-tidb': 'AlwaysAllow',
      'demo-ticdc': 'AlwaysAllow',
    });
  });

  test('a component without a budget has no gate, and with none at all the controller gets no pods/status', () => {
    const some = render(cluster({}, { annotations: { [DISRUPTION_BUDGETS_ANNOTATION]: 'tidb=none' } }));
    expect(podSpec(some, 'demo-tidb').readinessGates).toBeUndefined();
    expect(podSpec(some, 'demo-tikv').readinessGates).toHaveLength(1);
    const none = render(cluster({}, { annotations: { [DISRUPTION_BUDGETS_ANNOTATION]: 'none' } }));
    expect(podSpec(none, 'demo-pd').readinessGates).toBeUndefined();
    const role = none.find((o) => o.kind === 'Role' && o.metadata.name === 'demo-discovery')!;
    expect(JSON.stringify(role.rules)).not.toContain('pods/status');
  });
});
