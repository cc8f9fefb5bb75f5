/**
 * Safe scaling and failover with the controller as a real process against the simulated cluster
 * (Kubernetes API + PD with TiKV stores). These need the bundle (`npm run build`), which `npm test`
 * makes first.
 */
import { render } from '../../support/render';
import { worldViolations } from '../../support/rbac';
import { World, simCluster, type ControllerProcess } from '../../sim/world';

jest.setTimeout(90_000);

const DEFER = 'tidb.pingcap.com/pvc-defer-deleting';
/** Short failover periods, so that a failure counts within a test. */
const FAST_FAILOVER = ['--pd-failover-period', '1s', '--tikv-failover-period', '1s', '--tidb-failover-period', '1s'];

let world: World | undefined;
afterEach(async () => {
  const w = world;
  world = undefined;
  if (!w) return;
  try {
    // Whatever the scenario did, the rendered Role allowed every request the controller made.
    expect(worldViolations(w)).toEqual([]);
    expect(w.violations).toEqual([]);
    expect(w.pd.splitBrain).toEqual([]);
  } finally {
    await w.close();
  }
});

interface Counts {
  pd?: number;
  tikv?: number;
  tidb?: number;
}

/** A fresh cluster with these replica counts and one controller, every component settled. */
async function running(
  counts: Counts = {},
  spec: Record<string, unknown> = {},
  pd = {},
  args: string[] = [],
): Promise<{ w: World; ctl: ControllerProcess }> {
  const n = { pd: 3, tikv: 3, tidb: 2, ...counts };
  const cluster = simCluster({
    pd: { replicas: n.pd, requests: { storage: '1Gi' } },
    tikv: { replicas: n.tikv, requests: { storage: '1Gi' } },
    tidb: { replicas: n.tidb },
    ...spec,
  });
  const w = await World.start({ cluster, pd, render });
  world = w;
  const ctl = await w.startController([...FAST_FAILOVER, ...args]);
  await w.waitFor(() => w.settled('pd', n.pd) && w.settled('tikv', n.tikv) && w.settled('tidb', n.tidb), 30_000, 'the cluster to come up');
  await w.waitFor(
    () => ['pd', 'tikv', 'tidb'].every((c) => w.status()?.components[c]?.phase === 'Normal'),
    10_000,
    'the status to say Normal',
  );
  return { w, ctl };
}

/** The cluster with the replica counts changed, as a Git change would render it. */
function scaled(w: World, counts: Counts, spec: Record<string, unknown> = {}) {
  const sts = (c: string) => w.sts(c).metadata.annotations['tidb-gitops.io/replicas'];
  const n = { pd: Number(sts('pd')), tikv: Number(sts('tikv')), tidb: Number(sts('tidb')), ...counts };
  return simCluster({
    pd: { replicas: n.pd, requests: { storage: '1Gi' } },
    tikv: { replicas: n.tikv, requests: { storage: '1Gi' } },
    tidb: { replicas: n.tidb },
    ...spec,
  });
}

const uidOf = (w: World, name: string): string | undefined => w.kube.get('PersistentVolumeClaim', w.namespace, name)?.metadata.uid;
const annotationsOf = (w: World, name: string): Record<string, string> =>
  w.kube.get('PersistentVolumeClaim', w.namespace, name)?.metadata.annotations ?? {};
const records = (w: World, c: string): Record<string, any> => w.status()?.failover?.components?.[c]?.records ?? {};
const healthy = (w: World) => w.pd.members().filter((m) => m.running);
/** The Pods or StatefulSets named by the events of a reason, oldest first. */
const eventTargets = (w: World, reason: string): string[] =>
  w
    .events(reason)
    .sort((a, b) => String(a.firstTimestamp).localeCompare(String(b.firstTimestamp)))
    .map((e) => e.involvedObject.name);
/** Reconcile passes the current controller has made, whatever their result. */
async function passes(w: World): Promise<number> {
  const body = (await w.controller().get('/metrics')).body;
  return [...body.matchAll(/^tidb_gitops_reconciles_total\{[^}]*\} (\d+)/gm)].reduce((n, m) => n + Number(m[1]), 0);
}

/** Polls `pred` like waitFor, and checks `invariant` at every poll; returns the first broken invariant text. */
async function watching(
  w: World,
  invariant: () => string | undefined,
  pred: () => boolean,
  timeoutMs: number,
  what: string,
): Promise<string[]> {
  const broken: string[] = [];
  await w.waitFor(
    () => {
      const b = invariant();
      if (b !== undefined && !broken.includes(b)) broken.push(b);
      return pred();
    },
    timeoutMs,
    what,
  );
  return broken;
}

describe('safe scale-in', () => {
  it('PD 5 -> 3 with the leader on an ordinal being removed: leadership moves first, members go one at a time', async () => {
    const { w } = await running({ pd: 5 });
    const res = await fetch(`${w.pd.url}/pd/api/v1/leader/transfer/c-pd-4`, { method: 'POST' });
    expect(res.status).toBe(200);
    await w.waitFor(() => w.pd.leader() === 'c-pd-4', 5000, 'c-pd-4 to lead');

    await w.applyCluster(scaled(w, { pd: 3 }));
    const broken = await watching(
      w,
      () => {
        // A Pod is only removed once its member is gone; the member count never drops below the Pods' majority.
        const replicas = w.sts('pd').spec.replicas;
        const memberNames = w.pd.members().map((m) => m.name);
        for (let ord = replicas; ord < 5; ord++)
          if (memberNames.includes(`c-pd-${ord}`) && w.pods('pd').length < ord + 1) return `c-pd-${ord} removed while still a member`;
        return healthy(w).length < 3 ? `only ${healthy(w).length} healthy PD members` : undefined;
      },
      () => w.settled('pd', 3) && w.pd.members().length === 3,
      30_000,
      'PD to scale in to 3',
    );
    expect(broken).toEqual([]);
    expect(
      w.pd
        .members()
        .map((m) => m.name)
        .sort(),
    ).toEqual(['c-pd-0', 'c-pd-1', 'c-pd-2']);
    expect(['c-pd-0', 'c-pd-1', 'c-pd-2']).toContain(w.pd.leader());
    expect(w.pd.stopsWhileLeader).toEqual([]);
    expect(eventTargets(w, 'PDLeaderTransfer')).toEqual(['c-pd-4']);
    expect(eventTargets(w, 'PDMemberDeleted')).toEqual(['c-pd-4', 'c-pd-3']);
    // The claims stay, marked for deferred deletion.
    for (const ord of [3, 4]) expect(annotationsOf(w, `pd-c-pd-${ord}`)[DEFER]).toBeDefined();
    expect(annotationsOf(w, 'pd-c-pd-2')[DEFER]).toBeUndefined();
    await w.waitFor(() => w.status()?.components.pd.phase === 'Normal', 5000, 'PD phase Normal');
  });

  it('TiKV 4 -> 3 while regions take time to move: replicas drop only after Tombstone; scaling out again starts on fresh data', async () => {
    const { w } = await running({ tikv: 4 }, {}, { evictRate: 4 });
    const store3 = w.pd.store('c-tikv-3')!;
    await w.applyCluster(scaled(w, { tikv: 3 }));
    let sawOffline = false;
    const broken = await watching(
      w,
      () => {
        const s = w.pd.stores().find((x) => x.id === store3.id)!;
        sawOffline ||= s.state === 'Offline';
        return w.sts('tikv').spec.replicas < 4 && s.state !== 'Tombstone'
          ? `replicas lowered while store ${s.id} is ${s.state}`
          : undefined;
      },
      () => w.settled('tikv', 3),
      60_000,
      'TiKV to scale in to 3',
    );
    expect(broken).toEqual([]);
    expect(sawOffline).toBe(true);
    expect(w.pd.stores().find((x) => x.id === store3.id)?.state).toBe('Tombstone');
    expect(w.pd.stopsWithLeaders).toEqual([]);
    expect(eventTargets(w, 'StoreDeleted')).toEqual(['c-tikv-3']);
    await w.waitFor(() => w.status()?.components.tikv.phase === 'Normal', 5000, 'TiKV phase Normal');
    const oldUid = uidOf(w, 'tikv-c-tikv-3');
    expect(annotationsOf(w, 'tikv-c-tikv-3')[DEFER]).toBeDefined();

    // Back to 4: the marked claim is deleted before c-tikv-3 exists again (the world records any Pod
    // created over a marked claim), and TiKV starts a new store instead of failing on the Tombstone one.
    const scaleOut = Date.now();
    await w.applyCluster(scaled(w, { tikv: 4 }));
    await w.waitFor(() => w.settled('tikv', 4), 30_000, 'TiKV to scale out to 4');
    expect(uidOf(w, 'tikv-c-tikv-3')).not.toBe(oldUid);
    expect(annotationsOf(w, 'tikv-c-tikv-3')[DEFER]).toBeUndefined();
    const fresh = w.pd.store('c-tikv-3')!;
    expect(fresh.id).not.toBe(store3.id);
    expect(fresh.state).toBe('Up');
    expect(w.pd.processFailures.filter((f) => f.time >= scaleOut)).toEqual([]);
    expect(w.events('DeleteVolumes')).toHaveLength(1);
  });

  it('resumes correctly when killed between "store deleted" and "replicas lowered"', async () => {
    const { w, ctl } = await running({ tikv: 4 }, {}, { evictRate: 2 });
    const store3 = w.pd.store('c-tikv-3')!;
    await w.applyCluster(scaled(w, { tikv: 3 }));
    await w.waitFor(() => w.pd.stores().find((x) => x.id === store3.id)?.state === 'Offline', 20_000, 'store 3 to go Offline');
    ctl.kill('SIGKILL');
    await ctl.exited;
    expect(w.sts('tikv').spec.replicas).toBe(4);
    await w.startController(FAST_FAILOVER, 'c-discovery-second');
    const broken = await watching(
      w,
      () =>
        w.sts('tikv').spec.replicas < 4 && w.pd.stores().find((x) => x.id === store3.id)?.state !== 'Tombstone'
          ? 'replicas lowered before Tombstone'
          : undefined,
      () => w.settled('tikv', 3),
      60_000,
      'the second controller to finish the scale-in',
    );
    expect(broken).toEqual([]);
    // One store taken offline, no other store touched, the claim kept and marked.
    const deletes = w.pd.requests.filter((r) => r.method === 'DELETE' && r.path.startsWith('/pd/api/v1/store/'));
    expect(new Set(deletes.map((r) => r.path))).toEqual(new Set([`/pd/api/v1/store/${store3.id}`]));
    expect(
      w.pd
        .stores()
        .filter((s) => s.state === 'Up')
        .map((s) => s.pod)
        .sort(),
    ).toEqual(['c-tikv-0', 'c-tikv-1', 'c-tikv-2']);
    expect(annotationsOf(w, 'tikv-c-tikv-3')[DEFER]).toBeDefined();
  });
});

describe('PD failover', () => {
  it('replaces a member unhealthy beyond the period while a majority is healthy, then scales back', async () => {
    const { w } = await running();
    const oldClaim = uidOf(w, 'pd-c-pd-1');
    const oldId = w.pd.members().find((m) => m.name === 'c-pd-1')!.memberId;
    // Whether the extra replica's Pod came at all: on a busy machine the replaced member may be back first.
    let extraPod = false;
    w.kube.on('podCreated', (p) => (extraPod ||= p.metadata.name === 'c-pd-3'));
    w.stopPd('c-pd-1');
    await w.waitFor(() => w.events('PDFailover').length === 1, 20_000, 'PD failover');
    // The failed member, its Pod and its claim were replaced; one extra replica came and went again.
    await w.waitFor(() => w.sts('pd').spec.replicas === 4 || w.events('FailoverRecovered').length > 0, 20_000, 'the extra PD replica');
    await w.waitFor(() => w.events('FailoverRecovered').length === 1, 30_000, 'recovery');
    await w.waitFor(
      () => w.settled('pd', 3) && w.pd.members().length === 3 && healthy(w).length === 3,
      30_000,
      'PD back to 3 healthy members',
    );
    expect(eventTargets(w, 'FailoverRecorded')).toEqual(['c-pd-1']);
    expect(w.pd.members().map((m) => m.memberId)).not.toContain(oldId);
    expect(uidOf(w, 'pd-c-pd-1')).not.toBe(oldClaim);
    // The extra member is deleted from PD before its Pod goes, when it had joined: on a busy machine the
    // failed member may be back before c-pd-3 starts, and a member that never joined is not deleted.
    const deleted = [
      ...new Set(w.pd.requests.filter((r) => r.method === 'DELETE' && r.path.startsWith('/pd/api/v1/members/name/')).map((r) => r.path)),
    ];
    expect(deleted).toEqual(deleted.length > 0 ? ['/pd/api/v1/members/name/c-pd-3'] : []);
    const announced = () => [...new Set(eventTargets(w, 'PDMemberDeleted'))];
    await w.waitFor(() => announced().length === deleted.length, 10_000, 'the PDMemberDeleted event');
    expect(announced()).toEqual(deleted.length > 0 ? ['c-pd-3'] : []);
    expect(records(w, 'pd')).toEqual({});
    const metrics = await (await w.controller().get('/metrics')).body;
    expect(metrics).toMatch(/tidb_gitops_failures_recorded_total\{component="pd"\} 1/);
    if (extraPod) expect(metrics).toMatch(/tidb_gitops_failover_replicas_added_total\{component="pd"\} 1/);
    else expect(metrics).not.toMatch(/tidb_gitops_failover_replicas_added_total\{component="pd"\}/);
  });

  it('does not fail over without a healthy majority', async () => {
    const { w } = await running();
    w.stopPd('c-pd-1');
    w.stopPd('c-pd-2');
    await w.waitFor(() => w.status()?.pd?.reachable === false, 10_000, 'the status to say PD is unreachable');
    // Well beyond the 1s period, with many passes of the controller.
    const before = await passes(w);
    const until = Date.now() + 3000;
    await w.waitFor(async () => Date.now() > until && (await passes(w)) > before + 5, 20_000, 'the controller to look again several times');
    expect(w.sts('pd').spec.replicas).toBe(3);
    expect(w.events('FailoverRecorded')).toEqual([]);
    expect(w.kube.requests.filter((r) => r.method === 'DELETE')).toEqual([]);
    w.startPd('c-pd-1');
    w.startPd('c-pd-2');
    await w.waitFor(() => healthy(w).length === 3 && w.status()?.pd?.reachable === true, 20_000, 'PD to recover on its own');
    expect(w.sts('pd').spec.replicas).toBe(3);
    expect(records(w, 'pd')).toEqual({});
  });
});

describe('TiKV failover', () => {
  it('adds a replica for a store Down beyond the period and keeps it when the store is back, until recoverByUID says so', async () => {
    const { w } = await running();
    const down = w.pd.store('c-tikv-1')!;
    w.stopTikv('c-tikv-1');
    await w.waitFor(() => w.settled('tikv', 4) === false && w.sts('tikv').spec.replicas === 4, 20_000, 'the failover replica');
    await w.waitFor(() => w.pd.store('c-tikv-3')?.state === 'Up', 20_000, 'the new store');
    expect(Object.values(records(w, 'tikv')).map((r) => r.storeId)).toEqual([down.id]);
    w.startTikv('c-tikv-1');
    await w.waitFor(
      () => w.pd.store('c-tikv-1')?.state === 'Up' && w.status()?.components.tikv.phase === 'Failover',
      20_000,
      'the store to be Up again',
    );
    // Without recoverFailover the extra replica stays.
    const before = await passes(w);
    await w.waitFor(async () => (await passes(w)) > before + 3, 20_000, 'a few more passes');
    expect(w.sts('tikv').spec.replicas).toBe(4);
    // The health checks learn from the StatefulSet that the fourth Pod is the controller's, not a scale-in to come.
    expect(w.sts('tikv').metadata.annotations).toMatchObject({ 'tidb-gitops.io/replicas': '3', 'tidb-gitops.io/failover-replicas': '1' });
    const uid: string = w.status()!.failover.components.tikv.failoverUID;
    expect(w.status()!.components.tikv.reason).toContain(`failover.recoverByUID is ${uid}`);

    await w.applyCluster(scaled(w, {}, { tikv: { replicas: 3, requests: { storage: '1Gi' }, failover: { recoverByUID: uid } } }));
    await w.waitFor(
      () => w.settled('tikv', 3) && w.status()?.components.tikv.phase === 'Normal',
      60_000,
      'the failover replica to be scaled in',
    );
    expect(w.pd.stores().find((s) => s.pod === 'c-tikv-3')?.state ?? 'Tombstone').toBe('Tombstone');
    expect(records(w, 'tikv')).toEqual({});
    expect(w.pd.stopsWithLeaders.map((s) => s.pod)).toEqual(['c-tikv-1']);
    await w.waitFor(
      () => w.sts('tikv').metadata.annotations['tidb-gitops.io/failover-replicas'] === undefined,
      10_000,
      'the failover annotation to go',
    );
  });

  it('marks a refused TiKV scale-in on the StatefulSet for the health checks, says it is stuck and how to get out, and clears both when Git backs out', async () => {
    const { w } = await running({}, {}, {}, ['--stuck-after', '2s']);
    await w.applyCluster(scaled(w, { tikv: 2 }));
    await w.waitFor(
      () => w.sts('tikv').metadata.annotations['tidb-gitops.io/refused'] !== undefined,
      20_000,
      'the refusal on the StatefulSet',
    );
    const refused = w.sts('tikv').metadata.annotations['tidb-gitops.io/refused'];
    expect(refused).toContain('max-replicas');
    expect(w.events('FailedScaleIn').map((e) => e.message)).toContain(refused);
    expect(w.sts('tikv').spec.replicas).toBe(3);
    // The same wait for --stuck-after: the status gives the way out, and one OperationStuck event says it.
    await w.waitFor(() => w.status()?.components.tikv.stuck !== undefined, 20_000, 'the status to say the scale-in is stuck');
    expect(w.status()!.components.tikv.stuck.hint).toBe(
      'add a TiKV, or lower PD replication.max-replicas, or take the scale-in back in Git',
    );
    await w.waitFor(() => w.events('OperationStuck').length > 0, 10_000, 'the OperationStuck event');
    const [stuck] = w.events('OperationStuck');
    expect(stuck.type).toBe('Warning');
    expect(stuck.involvedObject).toMatchObject({ kind: 'StatefulSet', name: 'c-tikv' });
    expect(stuck.message).toMatch(/^tikv scaling has not moved for \d+s: TiKV cannot scale in: 3 Up stores and PD keeps 3 replicas/);
    await w.applyCluster(scaled(w, { tikv: 3 }));
    await w.waitFor(() => w.sts('tikv').metadata.annotations['tidb-gitops.io/refused'] === undefined, 20_000, 'the refusal to be cleared');
    expect(w.settled('tikv', 3)).toBe(true);
    await w.waitFor(() => w.status()?.components.tikv.stuck === undefined, 10_000, 'the stuck mark to go');
    expect(w.events('OperationStuck')).toHaveLength(1);
  });

  it('replaces the TiKV Git names, its store Down: offline to Tombstone, then a fresh claim and a new store, once; no other Pod restarts', async () => {
    const { w } = await running({ tikv: 4 }, {}, {}, ['--tikv-failover-period', '10m']);
    const claim = uidOf(w, 'tikv-c-tikv-1');
    const oldStore = w.pd.store('c-tikv-1')!.id;
    const others = ['c-tikv-0', 'c-tikv-2', 'c-tikv-3'].map((p) => [p, w.pd.store(p)!.id, uidOf(w, `tikv-${p}`)]);
    // Its volume is lost with its node: the TiKV process is gone and its store turns Down.
    w.stopTikv('c-tikv-1');
    await w.waitFor(() => w.pd.store('c-tikv-1')?.state === 'Down', 20_000, 'the store to be Down');
    const replace = (value?: string) =>
      simCluster(
        { pd: { replicas: 3, requests: { storage: '1Gi' } }, tikv: { replicas: 4, requests: { storage: '1Gi' } }, tidb: { replicas: 2 } },
        value === undefined ? {} : { annotations: { 'tidb-gitops.io/replace': value } },
      );
    await w.applyCluster(replace('c-tikv-1'));
    await w.waitFor(() => w.status()?.replacements?.['c-tikv-1']?.phase === 'done', 60_000, 'the replacement to be done');
    // The event follows the record it announces.
    await w.waitFor(() => w.events('MemberReplaced').length > 0, 10_000, 'the MemberReplaced event');
    expect(w.pd.stores().find((s) => s.id === oldStore)?.state ?? 'Tombstone').toBe('Tombstone');
    const fresh = w.pd.store('c-tikv-1')!;
    expect(fresh.id).not.toBe(oldStore);
    expect(fresh.state).toBe('Up');
    expect(uidOf(w, 'tikv-c-tikv-1')).not.toBe(claim);
    expect(w.status()!.replacements['c-tikv-1']).toMatchObject({
      component: 'tikv',
      storeId: oldStore,
      volumes: [{ name: 'tikv-c-tikv-1', uid: claim }],
    });
    // The others kept their stores and claims, and only c-tikv-1 stopped.
    expect(['c-tikv-0', 'c-tikv-2', 'c-tikv-3'].map((p) => [p, w.pd.store(p)!.id, uidOf(w, `tikv-${p}`)])).toEqual(others);
    expect(w.stops.map((s) => s.pod)).toEqual(['c-tikv-1']);
    expect(eventTargets(w, 'ReplaceMember')).toEqual(['c-tikv-1']);
    expect(eventTargets(w, 'MemberReplaced')).toEqual(['c-tikv-1']);
    // Done once: Git still asking changes nothing; taking the request back forgets the record.
    await w.waitFor(
      () => w.status()?.components.tikv.phase === 'Normal' && w.status()?.components.tikv.reason === 'up to date',
      20_000,
      'the component to be idle',
    );
    expect(w.stops.map((s) => s.pod)).toEqual(['c-tikv-1']);
    await w.applyCluster(replace());
    await w.waitFor(() => w.status()?.replacements === undefined, 20_000, 'the record to go with the request');
    expect(w.pd.store('c-tikv-1')!.id).toBe(fresh.id);
  });

  it('replaces the PD member Git names: leadership first, the member deleted, a fresh claim, a new member; the others untouched', async () => {
    const { w } = await running();
    // The leader itself: its leadership moves before its member is deleted.
    const target = w.pd.leader()!;
    const before = w.pd.members().find((m) => m.name === target)!.memberId;
    const claim = uidOf(w, `pd-${target}`);
    await w.applyCluster(
      simCluster(
        { pd: { replicas: 3, requests: { storage: '1Gi' } }, tikv: { replicas: 3, requests: { storage: '1Gi' } }, tidb: { replicas: 2 } },
        { annotations: { 'tidb-gitops.io/replace': target } },
      ),
    );
    await w.waitFor(() => w.status()?.replacements?.[target]?.phase === 'done', 60_000, 'the replacement to be done');
    const now = w.pd.members().find((m) => m.name === target)!;
    expect(now.memberId).not.toBe(before);
    expect(w.pd.members().filter((m) => m.running)).toHaveLength(3);
    expect(uidOf(w, `pd-${target}`)).not.toBe(claim);
    expect(w.stops.map((s) => s.pod)).toEqual([target]);
    expect(w.pd.stopsWhileLeader).toEqual([]);
    expect(w.pd.splitBrain).toEqual([]);
  });

  it('with recoverFailover, removes the extra replica once the store is Up again', async () => {
    const { w } = await running({}, { tikv: { replicas: 3, requests: { storage: '1Gi' }, recoverFailover: true } });
    w.stopTikv('c-tikv-2');
    await w.waitFor(() => w.sts('tikv').spec.replicas === 4, 20_000, 'the failover replica');
    await w.waitFor(() => w.pd.store('c-tikv-3')?.state === 'Up', 20_000, 'the new store');
    w.startTikv('c-tikv-2');
    await w.waitFor(() => w.settled('tikv', 3) && w.status()?.components.tikv.phase === 'Normal', 60_000, 'the failover replica to go');
    expect(w.events('FailoverRecovered')).toHaveLength(1);
    expect(eventTargets(w, 'StoreDeleted')).toEqual(['c-tikv-3']);
  });

  it('adds no more replicas than maxFailoverCount', async () => {
    const { w } = await running({ tikv: 4 }, { tikv: { replicas: 4, requests: { storage: '1Gi' }, maxFailoverCount: 1 } });
    w.stopTikv('c-tikv-1');
    w.stopTikv('c-tikv-2');
    await w.waitFor(() => w.events('FailoverLimit').length === 1, 20_000, 'the limit to be reported');
    await w.waitFor(() => w.settled('tikv', 5) === false && w.pods('tikv').length === 5, 20_000, 'the one failover Pod');
    expect(w.sts('tikv').spec.replicas).toBe(5);
    expect(Object.keys(records(w, 'tikv'))).toHaveLength(1);
    expect(w.status()!.components.tikv.reason).toMatch(/maxFailoverCount 1 is reached/);
  });
});
