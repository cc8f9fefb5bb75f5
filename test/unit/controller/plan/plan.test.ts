import {
  EVICT_BEGIN_ANNOTATION,
  EVICT_END_ANNOTATION,
  LOG_BACKUP_FLUSHED_ANNOTATION,
  TICDC_DRAINED_ANNOTATION,
  TICDC_SHUTDOWN_BEGIN_ANNOTATION,
} from '../../../../src/controller/model/annotations';
import { probesWanted } from '../../../../src/controller/plan/probes';
import type { Pod } from '../../../../src/controller/model/objects';
import type { ComponentState } from '../../../../src/controller/view/view';
import type { ComponentKind } from '../../../../src/tidbcluster/names';
import { member, NOW, pdState, planOne, pod, pods, PROBES_OK, store, sts, type StsOpts } from '../../../support/plan-fixtures';

describe('replicas and partition when nothing is upgrading', () => {
  it('sets replicas from the annotation and holds partition at replicas', () => {
    const p = planOne({ kind: 'tidb', sts: sts('tidb', { replicas: 1, partition: 0, desired: 2 }), pods: [pod('tidb', 0)] });
    expect(p.action).toEqual({ type: 'apply', replicas: 2, partition: 2 });
    expect(p.phase).toBe('Scaling');
  });

  it('raises a partition below replicas back to replicas', () => {
    const p = planOne({ kind: 'pd', sts: sts('pd', { partition: 0 }), pods: pods('pd', ['r1', 'r1', 'r1']) });
    expect(p.action).toEqual({ type: 'apply', replicas: 3, partition: 3 });
    expect(p.phase).toBe('Normal');
    expect(p.busy).toBe(false);
  });

  it('does nothing when replicas and partition already match', () => {
    const p = planOne({ kind: 'pd', sts: sts('pd'), pods: pods('pd', ['r1', 'r1', 'r1']) });
    expect(p.action).toBeUndefined();
    expect(p.reason).toBe('up to date');
  });

  it('scales a stateless component in one Pod at a time', () => {
    const p = planOne({ kind: 'tidb', sts: sts('tidb', { desired: 1 }), pods: pods('tidb', ['r1', 'r1', 'r1']) });
    expect(p.action).toEqual({ type: 'apply', replicas: 2, partition: 2 });
    expect(p.phase).toBe('Scaling');
  });

  it('leaves the partition out for OnDelete', () => {
    const p = planOne({ kind: 'tidb', sts: sts('tidb', { replicas: 1, desired: 2, onDelete: true }), pods: [pod('tidb', 0)] });
    expect(p.action).toEqual({ type: 'apply', replicas: 2, partition: undefined });
  });

  it('touches nothing while paused', () => {
    const p = planOne({
      kind: 'tidb',
      sts: sts('tidb', { replicas: 1, partition: 0, desired: 3, settings: { paused: true } }),
      pods: [pod('tidb', 0)],
    });
    expect(p.action).toBeUndefined();
    expect(p.reason).toMatch(/paused/);
  });
});

describe('update strategy', () => {
  it('switches to OnDelete from Git in one write that lets the partition go', () => {
    const c = {
      kind: 'tidb' as const,
      sts: sts('tidb', { replicas: 2, settings: { updateStrategy: 'OnDelete' } }),
      pods: pods('tidb', ['r1', 'r1']),
    };
    const p = planOne(c);
    expect(p.action).toEqual({ type: 'apply', replicas: 2, partition: undefined });
    expect(p.event).toMatchObject({ reason: 'UpdateStrategy', message: 'c-tidb: updateStrategy RollingUpdate -> OnDelete' });
  });

  it('switches back to RollingUpdate with the partition at replicas in the same write, so no Pod rolls by itself', () => {
    const live = sts('tidb', { replicas: 2, current: 'r1', update: 'r2' });
    live.spec!.updateStrategy = { type: 'OnDelete' };
    const p = planOne({ kind: 'tidb', sts: live, pods: pods('tidb', ['r1', 'r2']) });
    expect(p.action).toEqual({ type: 'apply', replicas: 2, partition: 2 });
  });

  it('reads a StatefulSet without a partition as partition 0 and holds it at replicas', () => {
    const live = sts('tidb', { replicas: 2 });
    live.spec!.updateStrategy = { type: 'RollingUpdate' };
    expect(planOne({ kind: 'tidb', sts: live, pods: pods('tidb', ['r1', 'r1']) }).action).toEqual({
      type: 'apply',
      replicas: 2,
      partition: 2,
    });
  });
});

describe('Pods that are not Ready', () => {
  it('restarts no Pod while another Pod of the component is not Ready, and says why', () => {
    const c = {
      kind: 'tidb' as const,
      sts: sts('tidb', { replicas: 2, current: 'r1', update: 'r2' }),
      pods: [pod('tidb', 0, 'r1', { ready: false }), pod('tidb', 1, 'r1')],
    };
    const p = planOne(c);
    expect(p.action).toBeUndefined();
    expect(p.reason).toBe('upgrade waits: Pod c-tidb-0 is not Ready; c-tidb-1 restarts once every other Pod is Ready');
  });

  it('says which Pods are not Ready when there is nothing to do', () => {
    const c = {
      kind: 'tidb' as const,
      sts: sts('tidb', { replicas: 2 }),
      pods: [pod('tidb', 0, 'r1', { ready: false }), pod('tidb', 1, 'r1', { ready: false })],
    };
    expect(planOne(c).reason).toBe('up to date; Pods c-tidb-0, c-tidb-1 are not Ready');
  });
});

describe('rolling upgrade stepping', () => {
  const upgrading = (kind: ComponentKind, revs: string[], o: StsOpts = {}): ComponentState => ({
    kind,
    sts: sts(kind, { current: 'r1', update: 'r2', ...o }),
    pods: pods(kind, revs),
  });

  it('steps the highest ordinal first', () => {
    const p = planOne(upgrading('tidb', ['r1', 'r1', 'r1']));
    expect(p.phase).toBe('Upgrading');
    expect(p.action).toEqual({ type: 'apply', replicas: 3, partition: 2 });
    expect(p.event?.reason).toBe('UpgradeStep');
  });

  it('raises the partition again once the stepped Pod runs the new revision', () => {
    const p = planOne(upgrading('tidb', ['r1', 'r1', 'r2'], { partition: 2 }));
    expect(p.action).toEqual({ type: 'apply', replicas: 3, partition: 3 });
  });

  it('waits for the upgraded Pod to be Ready before the next step', () => {
    const c = upgrading('tidb', ['r1', 'r1', 'r2']);
    c.pods[2].status!.conditions![0].status = 'False';
    const p = planOne(c);
    expect(p.action).toBeUndefined();
    expect(p.reason).toMatch(/c-tidb-2 to be Ready/);
  });

  it('steps the next Pod down once the previous one is healthy', () => {
    expect(planOne(upgrading('tidb', ['r1', 'r1', 'r2'])).action).toEqual({ type: 'apply', replicas: 3, partition: 1 });
  });

  it('waits while a stepped Pod restarts', () => {
    const c = upgrading('tidb', ['r1', 'r1', 'r1'], { partition: 2 });
    expect(planOne(c).action).toBeUndefined();
    (c.pods as Pod[])[2] = pod('tidb', 2, 'r1', { terminating: true });
    expect(planOne(c).reason).toMatch(/c-tidb-2 to be recreated/);
  });

  it('restarts Pods of an intermediate revision when a newer template arrives', () => {
    const p = planOne(upgrading('tidb', ['r1', 'r2', 'r2'], { update: 'r3' }));
    expect(p.action).toEqual({ type: 'apply', replicas: 3, partition: 2 });
  });

  it('holds partition at replicas when every Pod is updated', () => {
    const p = planOne(upgrading('tidb', ['r2', 'r2', 'r2'], { partition: 0 }));
    expect(p.action).toEqual({ type: 'apply', replicas: 3, partition: 3 });
  });

  it('waits for earlier components (TiDB after TiKV)', () => {
    const tikv = upgrading('tikv', ['r1', 'r1', 'r1']);
    const p = planOne(upgrading('tidb', ['r1', 'r1', 'r1']), pdState(), [tikv]);
    expect(p.action).toBeUndefined();
    expect(p.reason).toMatch(/waits until tikv \(Upgrading\)/);
  });

  it('force-upgrade sets partition 0 without checks', () => {
    const p = planOne(upgrading('pd', ['r1', 'r1', 'r1'], { settings: { forceUpgrade: true } }), { error: 'down' });
    expect(p.action).toEqual({ type: 'apply', replicas: 3, partition: 0 });
    expect(p.event?.type).toBe('Warning');
    const q = planOne(upgrading('pd', ['r1', 'r1', 'r1'], { annotations: { 'tidb.pingcap.com/force-upgrade': 'true' } }), {
      error: 'down',
    });
    expect(q.action).toEqual({ type: 'apply', replicas: 3, partition: 0 });
  });

  it("holds TiKV while PD's StatefulSet controller has not seen a spec change that may be a new template", () => {
    // A version bump reaches every StatefulSet at once; TiKV's status caught up first, PD's did not.
    const pd = { kind: 'pd' as const, sts: sts('pd'), pods: pods('pd', ['r1', 'r1', 'r1']) };
    pd.sts.metadata.generation = 2;
    const p = planOne(upgrading('tikv', ['r1', 'r1', 'r1']), pdState(), [pd]);
    expect(p.action).toBeUndefined();
    expect(p.reason).toMatch(/waits until pd \(Upgrading\)/);
    pd.sts.status!.observedGeneration = 2;
    expect(planOne(upgrading('tikv', ['r1', 'r1', 'r1']), pdState(), [pd]).action).toBeDefined();
  });

  it('does not step while the StatefulSet controller has not seen the new spec', () => {
    const c = upgrading('tidb', ['r1', 'r1', 'r1']);
    c.sts.metadata.generation = 2;
    expect(planOne(c).action).toBeUndefined();
  });
});

describe('PD', () => {
  const pdUp = (revs: string[]) => ({ kind: 'pd' as const, sts: sts('pd', { current: 'r1', update: 'r2' }), pods: pods('pd', revs) });

  it('waits until an upgraded member says it is ready (/pd/api/v2/ready), then goes on', () => {
    const notYet = planOne(pdUp(['r1', 'r1', 'r2']), pdState(), [], {
      probes: { pdReady: { 'c-pd-2': { ok: false, detail: 'regions not loaded yet (HTTP 500)' } } },
    });
    expect(notYet.action).toBeUndefined();
    expect(notYet.reason).toBe('waiting for PD member c-pd-2 to be ready: regions not loaded yet (HTTP 500)');
    const unasked = planOne(pdUp(['r1', 'r1', 'r2']), pdState(), [], { probes: {} });
    expect(unasked.reason).toMatch(/checking whether PD member c-pd-2 is ready/);
    expect(planOne(pdUp(['r1', 'r1', 'r2'])).action).toEqual({ type: 'apply', replicas: 3, partition: 1 });
  });

  it('goes on with PD when stores cannot be read, and before TiKV bootstraps', () => {
    expect(planOne(pdUp(['r1', 'r1', 'r2']), pdState({ stores: [], storesError: 'HTTP 500' })).action).toEqual({
      type: 'apply',
      replicas: 3,
      partition: 1,
    });
    expect(planOne(pdUp(['r1', 'r1', 'r2']), pdState({ stores: [], bootstrapped: false })).action).toEqual({
      type: 'apply',
      replicas: 3,
      partition: 1,
    });
  });

  it('moves leadership to the highest healthy ordinal above before restarting the leader', () => {
    const p = planOne(pdUp(['r1', 'r1', 'r2']), pdState({ leader: 'c-pd-1' }));
    expect(p.action).toEqual({ type: 'transfer-leader', pod: 'c-pd-1', from: 'c-pd-1', to: 'c-pd-2' });
  });

  it('moves leadership to the lowest ordinal below when the leader has the highest ordinal', () => {
    const p = planOne(pdUp(['r1', 'r1', 'r1']), pdState({ leader: 'c-pd-2' }));
    expect(p.action).toEqual({ type: 'transfer-leader', pod: 'c-pd-2', from: 'c-pd-2', to: 'c-pd-0' });
  });

  it('steps a follower without a transfer', () => {
    expect(planOne(pdUp(['r1', 'r1', 'r1']), pdState({ leader: 'c-pd-0' })).action).toEqual({ type: 'apply', replicas: 3, partition: 2 });
  });

  it('matches members named by FQDN', () => {
    const members = [0, 1, 2].map((o) => ({ ...member(o), name: `c-pd-${o}.c-pd-peer.ns.svc.cluster.local` }));
    const p = planOne(pdUp(['r1', 'r1', 'r1']), pdState({ members, leader: members[2].name }));
    expect(p.action).toMatchObject({ type: 'transfer-leader', to: members[0].name });
  });

  it('waits for an upgraded member to be healthy', () => {
    const p = planOne(pdUp(['r1', 'r1', 'r2']), pdState({ members: [member(0), member(1), member(2, false)] }));
    expect(p.action).toBeUndefined();
    expect(p.reason).toMatch(/PD member c-pd-2 to be healthy/);
  });

  describe('tidb.pingcap.com/pd-check-quorum-before-upgrade', () => {
    const checked = (revs: string[]) => ({
      kind: 'pd' as const,
      sts: sts('pd', { current: 'r1', update: 'r2', settings: { checkQuorumBeforeUpgrade: true } }),
      pods: pods('pd', revs),
    });

    it('restarts a member only while more than a majority plus one are healthy', () => {
      // The member to restart is the unhealthy one: the other two keep a majority, enough by default, not with the check.
      const twoOfThree = pdState({ members: [member(0), member(1), member(2, false)] });
      expect(planOne(pdUp(['r1', 'r1', 'r1']), twoOfThree).action).toEqual({ type: 'apply', replicas: 3, partition: 2 });
      const held = planOne(checked(['r1', 'r1', 'r1']), twoOfThree);
      expect(held.action).toBeUndefined();
      expect(held.reason).toBe('pd-check-quorum-before-upgrade: 2 of 3 PD members are healthy; c-pd-2 restarts once 3 are');
      expect(planOne(checked(['r1', 'r1', 'r1'])).action).toEqual({ type: 'apply', replicas: 3, partition: 2 });
    });

    it('needs four of five', () => {
      const five = {
        kind: 'pd' as const,
        sts: sts('pd', { replicas: 5, current: 'r1', update: 'r2', settings: { checkQuorumBeforeUpgrade: true } }),
        pods: pods('pd', ['r1', 'r1', 'r1', 'r1', 'r1']),
      };
      const members = (sick: number[]) => pdState({ members: [0, 1, 2, 3, 4].map((i) => member(i, !sick.includes(i))) });
      // c-pd-4 and one more unhealthy: three healthy others are a majority of five, but not four.
      expect(planOne(five, members([1, 4])).reason).toMatch(/3 of 5 PD members are healthy; c-pd-4 restarts once 4 are/);
      expect(planOne({ ...five, sts: sts('pd', { replicas: 5, current: 'r1', update: 'r2' }) }, members([1, 4])).action).toEqual({
        type: 'apply',
        replicas: 5,
        partition: 4,
      });
      expect(planOne(five, members([1])).action).toEqual({ type: 'apply', replicas: 5, partition: 4 });
    });
  });

  it('never restarts a member when the others lack a healthy majority', () => {
    const p = planOne(pdUp(['r1', 'r1', 'r1']), pdState({ members: [member(0, false), member(1, false), member(2)], leader: 'c-pd-2' }));
    expect(p.action).toBeUndefined();
    expect(p.reason).toMatch(/healthy majority/);
  });

  it('does nothing destructive while the PD API is unreachable', () => {
    const p = planOne(pdUp(['r1', 'r1', 'r1']), { error: 'connect ECONNREFUSED' });
    expect(p.action).toBeUndefined();
    expect(p.reason).toMatch(/PD API unavailable: connect ECONNREFUSED/);
  });
});

describe('TiKV leader eviction', () => {
  const at = (ms: number) => new Date(NOW - ms).toISOString();
  const tikvUp = (revs: string[], annotations?: Record<number, Record<string, string>>, settings = { evictLeaderTimeout: '10m' }) => ({
    kind: 'tikv' as const,
    sts: sts('tikv', { current: 'r1', update: 'r2', settings }),
    pods: revs.map((r, i) => pod('tikv', i, r, { annotations: annotations?.[i] })),
  });

  const ours = (pod: string, why: 'upgrade' | 'scale-in' = 'upgrade') => ({ pod, for: why, since: new Date(NOW).toISOString() });

  it('begins eviction on the store of the Pod to restart, recording the scheduler as its own', () => {
    const p = planOne(tikvUp(['r1', 'r1', 'r1']));
    expect(p.action).toEqual({
      type: 'evict-begin',
      pod: 'c-tikv-2',
      storeId: 3,
      annotation: EVICT_BEGIN_ANNOTATION,
      record: ours('c-tikv-2'),
    });
  });

  it('does not record a scheduler an administrator added before the upgrade reached the store', () => {
    const p = planOne(tikvUp(['r1', 'r1', 'r1']), pdState({ evicting: new Set([3]) }));
    expect(p.action).toEqual({ type: 'evict-begin', pod: 'c-tikv-2', storeId: 3, annotation: EVICT_BEGIN_ANNOTATION });
  });

  it('waits while leaders remain, asks log backup to flush when none are left, then steps', () => {
    const c = tikvUp(['r1', 'r1', 'r1'], { 2: { [EVICT_BEGIN_ANNOTATION]: at(1000) } });
    expect(planOne(c, pdState({ evicting: new Set([3]) })).reason).toMatch(/100 left/);
    const stores = [store(0, 150), store(1, 150), store(2, 0)];
    expect(planOne(c, pdState({ stores, evicting: new Set([3]) })).action).toEqual({
      type: 'flush-log-backup',
      pod: 'c-tikv-2',
      storeId: 3,
      revision: 'r2',
    });
    const flushed = tikvUp(['r1', 'r1', 'r1'], { 2: { [EVICT_BEGIN_ANNOTATION]: at(1000), [LOG_BACKUP_FLUSHED_ANNOTATION]: 'r2' } });
    expect(planOne(flushed, pdState({ stores, evicting: new Set([3]) })).action).toEqual({ type: 'apply', replicas: 3, partition: 2 });
  });

  describe('the leader count TiKV itself reports (/metrics)', () => {
    const evicted = pdState({ stores: [store(0, 150), store(1, 150), store(2, 0)], evicting: new Set([3]) });
    const flushed = { [EVICT_BEGIN_ANNOTATION]: at(1000), [LOG_BACKUP_FLUSHED_ANNOTATION]: 'r2' };
    const withMetric = (m: { count?: number; detail: string } | undefined) => {
      const tikvLeaders: Record<string, { count?: number; detail: string }> = m ? { 'c-tikv-2': m } : {};
      return { probes: { ...PROBES_OK, tikvLeaders } };
    };

    it('waits while the server still counts leaders that PD no longer does', () => {
      const p = planOne(tikvUp(['r1', 'r1', 'r1'], { 2: flushed }), evicted, [], withMetric({ count: 4, detail: '4 leaders' }));
      expect(p.action).toBeUndefined();
      expect(p.reason).toMatch(/PD counts no leaders on store 3, but c-tikv-2's \/metrics still shows 4/);
    });

    it('waits until the count has been read', () => {
      const p = planOne(tikvUp(['r1', 'r1', 'r1'], { 2: flushed }), evicted, [], withMetric(undefined));
      expect(p.action).toBeUndefined();
      expect(p.reason).toMatch(/reading c-tikv-2's own count from its \/metrics/);
    });

    it("restarts on PD's count when the server cannot be asked, and says so", () => {
      const p = planOne(tikvUp(['r1', 'r1', 'r1'], { 2: flushed }), evicted, [], withMetric({ detail: 'connect ECONNREFUSED' }));
      expect(p.action).toEqual({ type: 'apply', replicas: 3, partition: 2 });
      expect(p.event).toMatchObject({
        type: 'Warning',
        reason: 'LeaderCountUnverified',
        message: expect.stringContaining('connect ECONNREFUSED'),
      });
    });

    it('restarts after evictLeaderTimeout when only the server still counts leaders', () => {
      const c = tikvUp(['r1', 'r1', 'r1'], { 2: { [EVICT_BEGIN_ANNOTATION]: at(11 * 60_000) } });
      const p = planOne(c, evicted, [], withMetric({ count: 7, detail: '7 leaders' }));
      expect(p.action).toEqual({ type: 'apply', replicas: 3, partition: 2 });
      expect(p.event).toMatchObject({ reason: 'EvictLeaderTimeout', message: expect.stringContaining('still has 7 region leaders') });
    });

    it('is read only for TiKV Pods whose leaders are being evicted for their restart', () => {
      const c = tikvUp(['r1', 'r1', 'r1'], { 2: { [EVICT_BEGIN_ANNOTATION]: at(1000) } });
      expect(probesWanted([c]).tikvLeaders).toEqual(['c-tikv-2']);
      expect(probesWanted([tikvUp(['r1', 'r1', 'r1'])]).tikvLeaders).toEqual([]);
      expect(
        probesWanted([
          {
            ...c,
            sts: sts('tikv', { current: 'r2', update: 'r2' }),
            pods: c.pods.map((p) => ({
              ...p,
              metadata: { ...p.metadata, labels: { ...p.metadata.labels, 'controller-revision-hash': 'r2' } },
            })),
          },
        ]).tikvLeaders,
      ).toEqual([]);
    });
  });

  describe('log backup flush (tidb.pingcap.com/tikv-restart-without-flush-log-backup)', () => {
    const evicted = pdState({ stores: [store(0, 150), store(1, 150), store(2, 0)], evicting: new Set([3]) });

    it('flushes again when the mark is from another revision (an upgrade taken back in Git)', () => {
      const c = tikvUp(['r1', 'r1', 'r1'], { 2: { [EVICT_BEGIN_ANNOTATION]: at(1000), [LOG_BACKUP_FLUSHED_ANNOTATION]: 'r0' } });
      expect(planOne(c, evicted).action).toMatchObject({ type: 'flush-log-backup', revision: 'r2' });
    });

    it('restarts without a flush when the cluster opts out', () => {
      const c = tikvUp(['r1', 'r1', 'r1'], { 2: { [EVICT_BEGIN_ANNOTATION]: at(1000) } }, {
        evictLeaderTimeout: '10m',
        flushLogBackup: false,
      } as never);
      expect(planOne(c, evicted).action).toEqual({ type: 'apply', replicas: 3, partition: 2 });
    });
  });

  describe('tidb.pingcap.com/tikv-check-all-stores-up-before-upgrade', () => {
    const checked = { evictLeaderTimeout: '10m', checkStoresUpBeforeUpgrade: true } as never;

    it('holds every restart, eviction included, while a store is not Up', () => {
      for (const state of ['Offline', 'Disconnected', 'Down']) {
        const p = planOne(
          tikvUp(['r1', 'r1', 'r1'], {}, checked),
          pdState({ stores: [store(0, 100), store(1, 100, state), store(2, 100)] }),
        );
        expect(p.action).toBeUndefined();
        expect(p.reason).toBe(
          `tikv-check-all-stores-up-before-upgrade: store 2 (c-tikv-1.c-tikv-peer.ns.svc:20160) is ${state}; c-tikv-2 restarts once every store is Up`,
        );
      }
    });

    it('goes on when every store is Up, and is off unless asked for', () => {
      expect(planOne(tikvUp(['r1', 'r1', 'r1'], {}, checked)).action).toMatchObject({ type: 'evict-begin', pod: 'c-tikv-2' });
      expect(
        planOne(tikvUp(['r1', 'r1', 'r1']), pdState({ stores: [store(0, 100), store(1, 100, 'Offline'), store(2, 100)] })).action,
      ).toMatchObject({ type: 'evict-begin' });
    });
  });

  it('does not let a begin time left by an upgrade taken back cut the next eviction short', () => {
    // The Pod kept evictLeaderBeginTime from an hour ago; the scheduler was removed when Git took that upgrade back.
    const c = tikvUp(['r1', 'r1', 'r1'], { 2: { [EVICT_BEGIN_ANNOTATION]: at(60 * 60_000) } });
    const p = planOne(c, pdState());
    expect(p.action).toEqual({
      type: 'evict-begin',
      pod: 'c-tikv-2',
      storeId: 3,
      annotation: EVICT_BEGIN_ANNOTATION,
      record: ours('c-tikv-2'),
    });
    expect(p.event).toMatchObject({ reason: 'EvictLeaderBegin' });
  });

  it('re-adds a scheduler that went missing', () => {
    const c = tikvUp(['r1', 'r1', 'r1'], { 2: { [EVICT_BEGIN_ANNOTATION]: at(1000) } });
    const evictions = { 3: ours('c-tikv-2') };
    expect(planOne(c, pdState({ stores: [store(0, 150), store(1, 150), store(2, 0)] }), [], { evictions }).action).toEqual({
      type: 'evict-begin',
      pod: 'c-tikv-2',
      storeId: 3,
      annotation: EVICT_BEGIN_ANNOTATION,
    });
  });

  it('steps anyway after evictLeaderTimeout, with a warning', () => {
    const c = tikvUp(['r1', 'r1', 'r1'], { 2: { [EVICT_BEGIN_ANNOTATION]: at(11 * 60_000) } });
    const p = planOne(c, pdState({ evicting: new Set([3]) }));
    expect(p.action).toEqual({ type: 'apply', replicas: 3, partition: 2 });
    expect(p.event).toMatchObject({ type: 'Warning', reason: 'EvictLeaderTimeout' });
  });

  it('removes its own scheduler from an upgraded store once it is Up', () => {
    const up = pdState({ stores: [store(0, 150), store(1, 150), store(2, 0)], evicting: new Set([3]) });
    const p = planOne(tikvUp(['r1', 'r1', 'r2']), up, [], { evictions: { 3: ours('c-tikv-2') } });
    expect(p.action).toEqual({ type: 'evict-end', pod: 'c-tikv-2', storeId: 3, remove: true });
  });

  it('leaves a scheduler it did not add on an upgraded store, and goes on', () => {
    const up = pdState({ stores: [store(0, 150), store(1, 150), store(2, 0)], evicting: new Set([3]) });
    expect(planOne(tikvUp(['r1', 'r1', 'r2']), up).action).toEqual({
      type: 'evict-begin',
      pod: 'c-tikv-1',
      storeId: 2,
      annotation: EVICT_BEGIN_ANNOTATION,
      record: ours('c-tikv-1'),
    });
  });

  it('waits for leaders to come back to an upgraded store in a large cluster', () => {
    const c = tikvUp(['r1', 'r1', 'r2'], { 2: { [EVICT_END_ANNOTATION]: at(1000) } });
    const stores = [store(0, 1400), store(1, 1400), store(2, 200)];
    expect(planOne(c, pdState({ stores })).reason).toMatch(/come back to store 3/);
    const back = [store(0, 1100), store(1, 1100), store(2, 800)];
    expect(planOne(c, pdState({ stores: back })).action).toEqual({
      type: 'evict-begin',
      pod: 'c-tikv-1',
      storeId: 2,
      annotation: EVICT_BEGIN_ANNOTATION,
      record: ours('c-tikv-1'),
    });
  });

  it('removes only its own schedulers left behind once no upgrade runs', () => {
    const idle = { kind: 'tikv' as const, sts: sts('tikv'), pods: pods('tikv', ['r1', 'r1', 'r1']) };
    const p = planOne(idle, pdState({ evicting: new Set([1, 2, 99]) }), [], { evictions: { 1: ours('c-tikv-0') } });
    expect(p.action).toEqual({ type: 'evict-cleanup', storeIds: [1] });
  });

  it('never removes a scheduler an administrator added with pd-ctl', () => {
    const idle = { kind: 'tikv' as const, sts: sts('tikv'), pods: pods('tikv', ['r1', 'r1', 'r1']) };
    const p = planOne(idle, pdState({ evicting: new Set([1, 2]) }));
    expect(p.action).toBeUndefined();
    expect(p.reason).toBe('up to date');
  });

  it('leaves a user-asked eviction alone', () => {
    const c = {
      kind: 'tikv' as const,
      sts: sts('tikv'),
      pods: [pod('tikv', 0, 'r1', { annotations: { 'tidb.pingcap.com/evict-leader': 'none' } })],
    };
    expect(planOne(c, pdState({ evicting: new Set([1]) })).action).toBeUndefined();
  });

  it('waits while stores cannot be read', () => {
    const p = planOne(
      tikvUp(['r1', 'r1', 'r1']),
      pdState({ stores: [], evicting: new Set(), storesError: 'GET /pd/api/v1/stores: HTTP 500' }),
    );
    expect(p.action).toBeUndefined();
    expect(p.reason).toBe('PD stores unavailable: GET /pd/api/v1/stores: HTTP 500');
  });

  it('restarts a store without eviction when there is no other store', () => {
    const c = { kind: 'tikv' as const, sts: sts('tikv', { replicas: 1, current: 'r1', update: 'r2' }), pods: [pod('tikv', 0)] };
    expect(planOne(c, pdState({ stores: [store(0, 300)] })).action).toEqual({ type: 'apply', replicas: 1, partition: 0 });
  });
});

describe('TiCDC: each capture hands its tables over before its restart', () => {
  const MIN = 60_000;
  const iso = (ms: number) => new Date(ms).toISOString();
  const ticdc = (revs: string[], annotations: Record<number, Record<string, string>> = {}, o: StsOpts = {}): ComponentState => ({
    kind: 'ticdc',
    sts: sts('ticdc', { current: 'r1', update: 'r2', ...o }),
    pods: revs.map((r, i) => pod('ticdc', i, r, { annotations: annotations[i] })),
  });

  it('drains the highest ordinal first, naming the next Pod to restart, whose ownership is taken next', () => {
    const p = planOne(ticdc(['r1', 'r1', 'r1']));
    expect(p.action).toEqual({ type: 'drain-capture', pod: 'c-ticdc-2', next: 'c-ticdc-1', targetVersion: undefined });
    expect(p.reason).toBe('draining the TiCDC capture of c-ticdc-2 before its restart');
  });

  it('the last Pod to restart has no next one', () => {
    const p = planOne(ticdc(['r1', 'r2', 'r2']));
    expect(p.action).toEqual({ type: 'drain-capture', pod: 'c-ticdc-0', next: undefined, targetVersion: undefined });
  });

  it('steps the partition once the Pod is marked drained', () => {
    const p = planOne(ticdc(['r1', 'r1', 'r1'], { 2: { [TICDC_DRAINED_ANNOTATION]: iso(NOW) } }));
    expect(p.action).toEqual({ type: 'apply', replicas: 3, partition: 2 });
    expect(p.event?.reason).toBe('UpgradeStep');
  });

  it('restarts it anyway after gracefulShutdownTimeout, with a warning', () => {
    const late = ticdc(
      ['r1', 'r1', 'r1'],
      { 2: { [TICDC_SHUTDOWN_BEGIN_ANNOTATION]: iso(NOW - 2 * MIN) } },
      { settings: { gracefulShutdownTimeout: '1m' } },
    );
    const p = planOne(late);
    expect(p.action).toEqual({ type: 'apply', replicas: 3, partition: 2 });
    expect(p.event).toMatchObject({ type: 'Warning', reason: 'DrainTimeout', pod: 'c-ticdc-2' });
    const inTime = ticdc(
      ['r1', 'r1', 'r1'],
      { 2: { [TICDC_SHUTDOWN_BEGIN_ANNOTATION]: iso(NOW - 30_000) } },
      { settings: { gracefulShutdownTimeout: '1m' } },
    );
    expect(planOne(inTime).action?.type).toBe('drain-capture');
  });
});

describe('min-ready-seconds (tidb.pingcap.com/<component>-min-ready-seconds)', () => {
  const since = (s: number) => new Date(NOW - s * 1000).toISOString();
  const tidb = (readyFor: number, settings: Record<string, unknown> = { minReadySeconds: 30 }) => ({
    kind: 'tidb' as const,
    sts: sts('tidb', { replicas: 2, current: 'r1', update: 'r2', settings }),
    pods: [pod('tidb', 0, 'r1'), pod('tidb', 1, 'r2', { readySince: since(readyFor) })],
  });

  it('holds the next restart until the upgraded Pod has been Ready that long', () => {
    const p = planOne(tidb(10));
    expect(p.action).toBeUndefined();
    expect(p.reason).toBe('waiting for upgraded Pod c-tidb-1 to have been Ready for 30s (min-ready-seconds)');
    expect(planOne(tidb(31)).action).toEqual({ type: 'apply', replicas: 2, partition: 0 });
  });

  it('waits on a Pod whose Ready condition has no transition time, and not at all without the setting', () => {
    const noTime = { ...tidb(0), pods: [pod('tidb', 0, 'r1'), pod('tidb', 1, 'r2')] };
    expect(planOne(noTime).action).toBeUndefined();
    expect(planOne(tidb(0, {})).action).toEqual({ type: 'apply', replicas: 2, partition: 0 });
  });

  it('applies to TiKV before its next eviction begins', () => {
    const tikv = {
      kind: 'tikv' as const,
      sts: sts('tikv', { current: 'r1', update: 'r2', settings: { minReadySeconds: 60 } }),
      pods: [pod('tikv', 0), pod('tikv', 1), pod('tikv', 2, 'r2', { readySince: since(5) })],
    };
    expect(planOne(tikv).reason).toMatch(/c-tikv-2 to have been Ready for 60s/);
  });
});

describe('operation marks left on Pods that did not restart', () => {
  it('clears them once the component is idle, and only the operation marks', () => {
    const left = {
      kind: 'tikv' as const,
      sts: sts('tikv'),
      pods: [
        pod('tikv', 0, 'r1', {
          annotations: {
            [EVICT_BEGIN_ANNOTATION]: 'then',
            [LOG_BACKUP_FLUSHED_ANNOTATION]: 'r2',
            'tidb.pingcap.com/evict-leader': 'none',
            other: 'x',
          },
        }),
        pod('tikv', 1),
        pod('tikv', 2, 'r1', { annotations: { [EVICT_END_ANNOTATION]: 'then' } }),
      ],
    };
    const p = planOne(left);
    expect(p.action).toEqual({
      type: 'clear-marks',
      marks: [
        { pod: 'c-tikv-0', keys: [EVICT_BEGIN_ANNOTATION, LOG_BACKUP_FLUSHED_ANNOTATION] },
        { pod: 'c-tikv-2', keys: [EVICT_END_ANNOTATION] },
      ],
    });
    expect(planOne({ ...left, pods: [pod('tikv', 0), pod('tikv', 1), pod('tikv', 2)] }).action).toBeUndefined();
  });

  it('keeps them while an upgrade is under way', () => {
    const c = {
      kind: 'tikv' as const,
      sts: sts('tikv', { current: 'r1', update: 'r2' }),
      pods: [pod('tikv', 0), pod('tikv', 1), pod('tikv', 2, 'r2', { annotations: { [EVICT_END_ANNOTATION]: 'then' } })],
    };
    expect(planOne(c).action?.type).not.toBe('clear-marks');
  });
});

describe('leader eviction asked for on a TiKV Pod (tidb.pingcap.com/evict-leader)', () => {
  const ask = (value: string, extra: Record<string, string> = {}) => ({ 'tidb.pingcap.com/evict-leader': value, ...extra });
  const tikv = (annotations: Record<string, string>) => ({
    kind: 'tikv' as const,
    sts: sts('tikv'),
    pods: [pod('tikv', 0), pod('tikv', 1, 'r1', { annotations }), pod('tikv', 2)],
  });
  const request = { pod: 'c-tikv-1', for: 'request' as const, since: new Date(NOW).toISOString() };

  it("evicts the store, recording the scheduler as the request's, once every store is Up", () => {
    const p = planOne(tikv(ask('none')));
    expect(p.action).toEqual({ type: 'evict-begin', pod: 'c-tikv-1', storeId: 2, record: request });
    expect(p.event).toMatchObject({ reason: 'EvictLeaderBegin' });
    const held = planOne(tikv(ask('none')), pdState({ stores: [store(0, 100), store(1, 100), store(2, 100, 'Disconnected')] }));
    expect(held.action).toBeUndefined();
    expect(held.reason).toBe('leader eviction asked for on c-tikv-1 waits: store 3 is Disconnected');
  });

  it('keeps the scheduler while the Pod asks, and removes it once it no longer does', () => {
    const evicting = pdState({ stores: [store(0, 150), store(1, 0), store(2, 150)], evicting: new Set([2]) });
    expect(planOne(tikv(ask('none')), evicting, [], { evictions: { 2: request } }).action).toBeUndefined();
    expect(planOne(tikv({}), evicting, [], { evictions: { 2: request } }).action).toEqual({ type: 'evict-cleanup', storeIds: [2] });
  });

  it('with delete-pod: waits for no leaders by both counts, flushes log backup, then deletes the Pod', () => {
    const withLeaders = pdState({ stores: [store(0, 150), store(1, 20), store(2, 150)], evicting: new Set([2]) });
    expect(planOne(tikv(ask('delete-pod')), withLeaders, [], { evictions: { 2: request } }).reason).toMatch(/20 left/);
    const none = pdState({ stores: [store(0, 150), store(1, 0), store(2, 150)], evicting: new Set([2]) });
    const metric = (count: number) => ({
      evictions: { 2: request },
      probes: { ...PROBES_OK, tikvLeaders: { 'c-tikv-1': { count, detail: `${count} leaders` } } },
    });
    expect(planOne(tikv(ask('delete-pod')), none, [], metric(3)).reason).toMatch(/still shows 3/);
    expect(planOne(tikv(ask('delete-pod')), none, [], metric(0)).action).toEqual({
      type: 'flush-log-backup',
      pod: 'c-tikv-1',
      storeId: 2,
      revision: 'r1',
    });
    const flushed = planOne(tikv(ask('delete-pod', { [LOG_BACKUP_FLUSHED_ANNOTATION]: 'r1' })), none, [], metric(0));
    expect(flushed.action).toEqual({ type: 'delete-pod', pod: 'c-tikv-1', uid: undefined, storeId: 2 });
    expect(flushed.event).toMatchObject({ reason: 'EvictLeaderDeletePod' });
    expect(probesWanted([tikv(ask('delete-pod'))]).tikvLeaders).toEqual(['c-tikv-1']);
  });

  it('removes a request past its expiration time, and ignores values the operator does not know', () => {
    const expired = planOne(
      tikv(ask('none', { 'tidb.pingcap.com/tikv-evict-leader-expiration-time': new Date(NOW - 1000).toISOString() })),
    );
    expect(expired.action).toEqual({
      type: 'clear-marks',
      marks: [{ pod: 'c-tikv-1', keys: ['tidb.pingcap.com/evict-leader', 'tidb.pingcap.com/tikv-evict-leader-expiration-time'] }],
    });
    expect(planOne(tikv(ask('yes-please'))).action).toBeUndefined();
  });
});

describe('a TiKV Pod someone else deletes (a node drain)', () => {
  const drain = { pod: 'c-tikv-1', for: 'drain' as const, since: new Date(NOW).toISOString() };
  const tikv = (second = pod('tikv', 1, 'r1', { terminating: true, ready: false })) => ({
    kind: 'tikv' as const,
    sts: sts('tikv'),
    pods: [pod('tikv', 0), second, pod('tikv', 2)],
  });

  it("evicts its store's leaders at once, recording the scheduler as the drain's", () => {
    const p = planOne(tikv());
    expect(p.action).toEqual({ type: 'evict-begin', pod: 'c-tikv-1', storeId: 2, record: drain });
    expect(p.event).toMatchObject({ reason: 'DrainEvictLeader', pod: 'c-tikv-1' });
    expect(p.busy).toBe(true);
  });

  it('comes before an upgrade or a scale-out the component is in the middle of', () => {
    const upgrading = { ...tikv(), sts: sts('tikv', { current: 'r1', update: 'r2', partition: 2 }) };
    expect(planOne(upgrading).action).toMatchObject({ type: 'evict-begin', pod: 'c-tikv-1', record: drain });
    const growing = { ...tikv(), sts: sts('tikv', { desired: 4 }) };
    expect(planOne(growing).action).toMatchObject({ type: 'evict-begin', pod: 'c-tikv-1', record: drain });
  });

  it("leaves alone a store that is being evicted already (the controller's own restart, an administrator), has no leaders, or is not Up", () => {
    expect(planOne(tikv(), pdState({ evicting: new Set([2]) })).action?.type).not.toBe('evict-begin');
    expect(planOne(tikv(), pdState({ stores: [store(0, 100), store(1, 0), store(2, 100)] })).action?.type).not.toBe('evict-begin');
    expect(planOne(tikv(), pdState({ stores: [store(0, 100), store(1, 100, 'Offline'), store(2, 100)] })).action?.type).not.toBe(
      'evict-begin',
    );
    // Without PD's stores there is nothing to do: the component's own plan goes on.
    expect(planOne(tikv(), { error: 'connection refused' }).action?.type).not.toBe('evict-begin');
  });

  it('moves PD leadership off a PD Pod being deleted, to the member the operator would pick', () => {
    const pdComp = {
      kind: 'pd' as const,
      sts: sts('pd'),
      pods: [pod('pd', 0, 'r1', { terminating: true, ready: false }), pod('pd', 1), pod('pd', 2)],
    };
    const p = planOne(pdComp);
    expect(p.action).toEqual({ type: 'transfer-leader', pod: 'c-pd-0', from: 'c-pd-0', to: 'c-pd-2' });
    expect(p.event).toMatchObject({ reason: 'DrainPDLeaderTransfer', pod: 'c-pd-0' });
    // A follower being deleted has nothing to hand over.
    expect(planOne(pdComp, pdState({ leader: 'c-pd-1' })).action?.type).not.toBe('transfer-leader');
  });

  it('moves a TSO primary off its Pod being deleted (v8.3.0 and later can transfer)', () => {
    const msPod = (ord: number, terminating = false) => ({
      ...pod('tso', ord, 'r1', { terminating, ready: !terminating }),
      spec: { containers: [{ name: 'tso', image: 'pingcap/pd:v8.5.0' }] },
    });
    const members = [0, 1].map((i) => ({ name: `c-tso-${i}`, serviceAddr: `http://c-tso-${i}.c-tso-peer.ns.svc:2379` }));
    const tso = { kind: 'tso' as const, sts: sts('tso', { replicas: 2 }), pods: [msPod(0, true), msPod(1)] };
    const withMs = (primary: string) => pdState({ ms: { tso: { members, primary } } });
    const p = planOne(tso, withMs(members[0].serviceAddr));
    expect(p.action).toEqual({ type: 'transfer-primary', service: 'tso', pod: 'c-tso-0', primary: members[0].serviceAddr, to: 'c-tso-1' });
    expect(p.event).toMatchObject({ reason: 'DrainPrimaryTransfer', pod: 'c-tso-0' });
    expect(planOne(tso, withMs(members[1].serviceAddr)).action?.type).not.toBe('transfer-primary');
  });

  it('keeps the scheduler until the Pod runs again and PD hears from its store, then removes it, Ready or not', () => {
    const started = new Date(NOW - 5000).toISOString();
    const heard = (at: number, state = 'Up') => ({ ...store(1, 0, state), lastHeartbeat: at });
    const evicting = (s1 = heard(NOW)) => pdState({ stores: [store(0, 150), s1, store(2, 150)], evicting: new Set([2]) });
    const runningPod = (ready: boolean) => {
      const p = pod('tikv', 1, 'r1', { ready });
      return {
        ...p,
        status: { ...p.status, phase: 'Running', containerStatuses: [{ name: 'tikv', state: { running: { startedAt: started } } }] },
      };
    };
    const keep = (p: ReturnType<typeof pod> | undefined, pd = evicting()) => {
      const c = tikv();
      return planOne({ ...c, pods: [c.pods[0], ...(p ? [p] : []), c.pods[2]] }, pd, [], { evictions: { 2: drain } }).action;
    };
    expect(keep(pod('tikv', 1, 'r1', { terminating: true, ready: false }))).toBeUndefined();
    expect(keep(undefined)).toBeUndefined();
    // Created, its containers not started yet.
    expect(keep(pod('tikv', 1, 'r1', { ready: false }))).toBeUndefined();
    // Running, but the store's Up state is the old Pod's: PD last heard from it before the start.
    expect(keep(runningPod(false), evicting(heard(NOW - 10_000)))).toBeUndefined();
    expect(keep(runningPod(false), evicting(heard(NOW, 'Disconnected')))).toBeUndefined();
    // Not Ready: its readiness gate waits for the leaders the scheduler keeps away.
    expect(keep(runningPod(false))).toEqual({ type: 'evict-cleanup', storeIds: [2] });
    expect(keep(runningPod(true))).toEqual({ type: 'evict-cleanup', storeIds: [2] });
  });
});

describe('PD micro-services in an upgrade', () => {
  it('upgrades TSO before TiKV bootstraps under PD v8.0-v8.1, whose registry answers ErrNotBootstrapped until then; another registry error waits', () => {
    const msPod = (ord: number, rev: string) => ({
      ...pod('tso', ord, rev),
      spec: { containers: [{ name: 'tso', image: 'pingcap/pd:v8.1.0' }] },
    });
    const tso = {
      kind: 'tso' as const,
      sts: sts('tso', { replicas: 2, update: 'r2', partition: 2 }),
      pods: [msPod(0, 'r1'), msPod(1, 'r1')],
    };
    const notBootstrapped = pdState({
      stores: [],
      bootstrapped: false,
      ms: {
        tso: {
          error: 'HTTP 500 [PD:cluster:ErrNotBootstrapped]TiKV cluster not bootstrapped, please start TiKV first',
          notBootstrapped: true,
        },
      },
    });
    expect(planOne(tso, notBootstrapped).action).toMatchObject({ partition: 1 });
    const unavailable = planOne(tso, pdState({ ms: { tso: { error: 'connect ECONNREFUSED' } } }));
    expect(unavailable.action).toBeUndefined();
    expect(unavailable.reason).toContain("PD's registry of tso servers unavailable: connect ECONNREFUSED");
    // The restarted server counts once its Pod is Ready: its registration cannot be read yet.
    const half = { ...tso, pods: [msPod(0, 'r1'), msPod(1, 'r2')] };
    expect(planOne(half, notBootstrapped).action).toMatchObject({ partition: 0 });
  });
});
