/**
 * Operations that do not move (src/controller/plan/stuck.ts): when a wait counts as stuck, when it
 * starts again, and the way out each kind of wait gets, read from the Pods where they say more.
 */
import { podTrouble, stuckHint, trackWaits, type WaitMark } from '../../../../src/controller/plan/stuck';
import type { ComponentPlan } from '../../../../src/controller/plan/plan';
import type { WaitCode } from '../../../../src/controller/plan/action';
import type { ComponentKind } from '../../../../src/tidbcluster/names';
import type { Pod } from '../../../../src/controller/model/objects';
import { NOW, pod, sts } from '../../../support/plan-fixtures';

const waiting = (reason: string, kind: ComponentKind = 'tikv'): ComponentPlan => ({
  kind,
  phase: 'Upgrading',
  desired: 3,
  reason,
  busy: true,
});
const tikv = (pods: Pod[] = []) => [{ kind: 'tikv' as const, sts: sts('tikv'), pods }];

describe('trackWaits', () => {
  const reason = 'upgrade waits: Pod c-tikv-0 is not Ready; c-tikv-1 restarts once every other Pod is Ready';

  it('counts a wait as stuck after stuckAfterMs on the same reason, reports it once, and forgets it when the component moves', () => {
    let marks: ReadonlyMap<ComponentKind, WaitMark> = new Map();
    const at = (ms: number, plans: ComponentPlan[]) => {
      const t = trackWaits(marks, plans, tikv(), NOW + ms, 30_000);
      marks = t.marks;
      return t;
    };
    expect(at(0, [waiting(reason)]).stuck.size).toBe(0);
    expect(at(29_999, [waiting(reason)]).stuck.size).toBe(0);
    const first = at(30_000, [waiting(reason)]);
    expect(first.report).toEqual([{ kind: 'tikv', phase: 'Upgrading', reason, since: NOW, hint: expect.any(String) }]);
    expect(first.stuck.get('tikv')?.since).toBe(NOW);
    const again = at(60_000, [waiting(reason)]);
    expect(again.report).toEqual([]);
    expect(again.stuck.has('tikv')).toBe(true);
    // An action, or an idle component, ends the wait; the next one counts from its own start.
    expect(at(61_000, [{ ...waiting(reason), action: { type: 'apply', replicas: 3, partition: 1 } }]).stuck.size).toBe(0);
    expect(marks.size).toBe(0);
    at(62_000, [waiting(reason)]);
    expect(at(91_999, [waiting(reason)]).stuck.size).toBe(0);
    expect(at(92_000, [waiting(reason)]).report).toHaveLength(1);
    expect(at(93_000, [{ ...waiting(reason), busy: false }]).marks.size).toBe(0);
  });

  it('counts no wait of a component in Normal, nor one that ends by itself at a time it names', () => {
    const normal: ComponentPlan = { ...waiting('PD member c-pd-1 is unhealthy; failover after 5m'), kind: 'pd', phase: 'Normal' };
    const minReady: ComponentPlan = {
      ...waiting('waiting for upgraded Pod c-tikv-2 to have been Ready for 120s (min-ready-seconds)'),
      wait: 'min-ready-seconds',
    };
    let marks: ReadonlyMap<ComponentKind, WaitMark> = new Map();
    for (const ms of [0, 60_000, 120_000]) {
      const t = trackWaits(marks, [normal, minReady], tikv(), NOW + ms, 30_000);
      expect(t.stuck.size).toBe(0);
      marks = t.marks;
    }
  });

  it('takes a reason that changes as progress: fewer leaders left starts the count again', () => {
    let marks: ReadonlyMap<ComponentKind, WaitMark> = new Map();
    for (let i = 0; i < 10; i++) {
      const t = trackWaits(
        marks,
        [waiting(`waiting for region leaders to leave store 4 (c-tikv-2): ${100 - i * 10} left`)],
        tikv(),
        NOW + i * 20_000,
        30_000,
      );
      expect(t.stuck.size).toBe(0);
      marks = t.marks;
    }
  });
});

describe('stuckHint', () => {
  const crashing = (ord: number, reason: string, restarts = 7): Pod => {
    const p = pod('tikv', ord, 'r1', { ready: false });
    p.status = {
      ...p.status,
      phase: 'Running',
      containerStatuses: [{ name: 'tikv', restartCount: restarts, state: { waiting: { reason } } }],
    };
    return p;
  };

  it('names a crash-looping Pod the wait is about and the way out, not the Pod that is being restarted', () => {
    const reason = 'upgrade waits: Pod c-tikv-0 is not Ready; c-tikv-1 restarts once every other Pod is Ready';
    const hint = stuckHint(reason, [crashing(0, 'CrashLoopBackOff'), pod('tikv', 1), pod('tikv', 2, 'r2')]);
    expect(hint).toMatch(/^c-tikv-0 is CrashLoopBackOff, restarted 7 times: read kubectl logs --previous c-tikv-0 and fix the cause/);
    expect(hint).toContain('tidb.pingcap.com/force-upgrade: "true"');
    expect(hint).not.toContain('c-tikv-1 is');
    // c-tikv-1 is not c-tikv-10.
    expect(stuckHint('upgrade waits: Pod c-tikv-10 is not Ready', [crashing(1, 'CrashLoopBackOff')])).toMatch(/^see the reason/);
  });

  it.each([
    ['ImagePullBackOff', 'c-tikv-2 is ImagePullBackOff: its image cannot be pulled; fix the image or its pull secret in Git'],
    ['ErrImagePull', 'c-tikv-2 is ErrImagePull: its image cannot be pulled; fix the image or its pull secret in Git'],
    [
      'CreateContainerConfigError',
      'c-tikv-2 is CreateContainerConfigError: a Secret or ConfigMap it mounts or reads is missing; create it',
    ],
  ])('%s', (waitingReason, expected) => {
    expect(stuckHint('waiting for upgraded Pod c-tikv-2 to be Ready', [crashing(2, waitingReason, 0)], 'upgraded-pod-not-ready')).toBe(
      expected,
    );
  });

  it('a Pod no node takes is Unschedulable', () => {
    const p = pod('tikv', 0, 'r1', { ready: false });
    p.status = { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False' }] };
    expect(podTrouble(p)).toBe('Unschedulable');
    expect(stuckHint('scale-in waits: Pod c-tikv-0 is not Ready; c-tikv-3 is removed once every remaining Pod is Ready', [p])).toMatch(
      /^c-tikv-0 is Unschedulable: no node can take it/,
    );
  });

  it('a Pod still being created, or Ready, is no trouble', () => {
    expect(podTrouble(crashing(0, 'ContainerCreating', 0))).toBeUndefined();
    expect(podTrouble(pod('tikv', 0))).toBeUndefined();
  });

  it.each<[string, WaitCode | undefined, number | undefined, RegExp]>([
    [
      'waiting for upgraded Pod c-tidb-1 to be Ready',
      'upgraded-pod-not-ready',
      undefined,
      /^the new revision does not become Ready: fix it in Git, or take the change back/,
    ],
    [
      'store 5 (c-tikv-3) is Offline: PD is moving its 120 regions away; replicas stay until it is Tombstone',
      'store-offline-moving',
      5,
      /pd-ctl store 5, pd-ctl operator show\)\. To keep the store, take the scale-in back in Git and run pd-ctl store cancel-delete 5$/,
    ],
    [
      'TiKV cannot scale in: 3 Up stores and PD keeps 3 replicas of each region (replication.max-replicas)',
      'too-few-up-stores',
      undefined,
      /^add a TiKV, or lower PD replication\.max-replicas/,
    ],
    ['waiting for store 2 (c-tikv-1) to be Up, it is Disconnected', 'store-not-up', 2, /^the store does not heartbeat PD/],
    ["PD's registry of tso servers unavailable: connect ECONNREFUSED", 'pd-unreadable', undefined, /^the controller cannot read PD/],
    [
      'waiting for the StatefulSet controller to observe the new spec',
      undefined,
      undefined,
      /docs\/operations.md, "When an operation is stuck"/,
    ],
  ])('%s', (reason, code, storeId, expected) => {
    expect(stuckHint(reason, [], code, storeId)).toMatch(expected);
  });
});
