/**
 * The controller as a real process against servers that answer as the real ones do: PD v8.5 (64-bit
 * ids, ErrNotBootstrapped until TiKV bootstraps, per-member readiness, the merged evict-leader
 * scheduler), TiFlash's store status, TiCDC captures and Pump nodes, each Pod's server on its own
 * address, and a Kubernetes API server that restarts. These need the bundle (`npm run build`), which
 * `npm test` makes first.
 */
import { render } from '../../support/render';
import { worldViolations } from '../../support/rbac';
import { World, simCluster } from '../../sim/world';
import type { WorldOptions } from '../../sim/world';

jest.setTimeout(120_000);

let world: World | undefined;
afterEach(async () => {
  const w = world;
  world = undefined;
  if (!w) return;
  try {
    expect(worldViolations(w)).toEqual([]);
    expect(w.violations).toEqual([]);
    expect(w.pd.splitBrain).toEqual([]);
    expect(w.processes.failures).toEqual([]);
  } finally {
    await w.close();
  }
});

const BASE = {
  pd: { replicas: 3, requests: { storage: '1Gi' } },
  tikv: { replicas: 3, requests: { storage: '1Gi' } },
  tidb: { replicas: 2 },
};

async function start(spec: Record<string, unknown>, opts: Partial<WorldOptions> = {}): Promise<World> {
  const w = await World.start({ cluster: simCluster({ ...BASE, ...spec }), render, ...opts });
  world = w;
  await w.startController();
  return w;
}

const stopsOf = (w: World, component: string) => w.stops.filter((s) => s.component === component).map((s) => s.pod);
/** Every reason the status gave for a component, as the scenario polled it. */
function reasonsSeen(w: World, component: string): Set<string> {
  const seen = new Set<string>();
  const timer = setInterval(() => {
    const r = w.status()?.components[component]?.reason;
    if (r) seen.add(r);
  }, 10);
  timer.unref();
  return seen;
}

describe('PD', () => {
  it('upgrades PD while TiKV has not bootstrapped the cluster (PD answers ErrNotBootstrapped for stores)', async () => {
    const w = await start({}, { hold: ['tikv'] });
    await w.waitFor(() => w.settled('pd', 3) && w.settled('tidb', 2), 30_000, 'PD and TiDB to come up');
    await w.waitFor(() => w.status()?.pd?.bootstrapped === false, 10_000, 'the status to say PD is not bootstrapped');
    expect(w.pd.tikvBootstrapped()).toBe(false);
    await w.applyCluster(simCluster({ ...BASE, version: 'v8.5.1' }));
    await w.waitFor(() => w.settled('pd', 3), 60_000, 'the PD upgrade, without TiKV');
    expect(stopsOf(w, 'pd')).toEqual(['c-pd-2', 'c-pd-1', 'c-pd-0']);
    expect(w.pd.stopsWhileLeader).toEqual([]);
    await w.waitFor(() => /not Ready/.test(w.status()!.components.tikv.reason), 10_000, 'the TiKV status to say why it waits');
  });

  it('finishes a PD upgrade before TiKV bootstraps when leadership lands on an upgraded member that PD v8.5.2 to v8.5.7 call not ready', async () => {
    // Without region storage no follower loads regions, and a leader loads them only once TiKV
    // bootstrapped: the upgraded member that takes the leadership answers /ready with 500 for ever.
    const w = await start({ version: 'v8.5.2' }, { hold: ['tikv'], pd: { version: 'v8.5.2', regionLoadMs: 200, useRegionStorage: false } });
    await w.waitFor(() => w.settled('pd', 3) && w.status()?.pd?.bootstrapped === false, 30_000, 'PD to come up, not bootstrapped');
    const reasons = reasonsSeen(w, 'pd');
    await w.applyCluster(simCluster({ ...BASE, version: 'v8.5.3' }));
    await w.waitFor(() => w.settled('pd', 3) && stopsOf(w, 'pd').length === 3, 60_000, 'the PD upgrade');
    expect(stopsOf(w, 'pd')).toEqual(['c-pd-2', 'c-pd-1', 'c-pd-0']);
    expect(w.pd.stopsWhileLeader).toEqual([]);
    expect(w.pd.pdRegionsLoaded(w.pd.leader()!)).toBe(false);
    expect([...reasons].filter((r) => /regions not loaded/.test(r))).toEqual([]);
  });

  it('waits for each upgraded PD member to load its regions (PD v8.5.2+ /pd/api/v2/ready) before the next restart', async () => {
    const w = await start({ version: 'v8.5.2' }, { pd: { version: 'v8.5.2', regionLoadMs: 1500 } });
    await w.waitFor(() => w.settled('pd', 3) && w.settled('tikv', 3), 30_000, 'the cluster to come up');
    const reasons = reasonsSeen(w, 'pd');
    const restarted = new Set<string>();
    const notLoaded: string[] = [];
    w.kube.on('podStopped', (pod) => {
      if (pod.metadata.labels?.['app.kubernetes.io/component'] !== 'pd') return;
      for (const earlier of restarted)
        if (!w.pd.pdRegionsLoaded(earlier)) notLoaded.push(`${pod.metadata.name} stopped while ${earlier} had not loaded its regions`);
      restarted.add(pod.metadata.name);
    });
    await w.applyCluster(simCluster({ ...BASE, version: 'v8.5.3' }));
    await w.waitFor(() => w.settled('pd', 3) && stopsOf(w, 'pd').length === 3, 60_000, 'the PD upgrade');
    expect(notLoaded).toEqual([]);
    expect([...reasons].some((r) => /waiting for PD member c-pd-\d to be ready: regions not loaded yet/.test(r))).toBe(true);
  });

  it('finishes a PD upgrade under pd-server.use-region-storage = false, where a follower is never ready until it leads', async () => {
    const w = await start({ version: 'v8.5.2' }, { pd: { version: 'v8.5.2', regionLoadMs: 200, useRegionStorage: false } });
    await w.waitFor(() => w.settled('pd', 3) && w.settled('tikv', 3), 30_000, 'the cluster to come up');
    await w.applyCluster(simCluster({ ...BASE, version: 'v8.5.3' }));
    await w.waitFor(() => w.settled('pd', 3) && stopsOf(w, 'pd').length === 3, 60_000, 'the PD upgrade');
    expect(stopsOf(w, 'pd')).toEqual(['c-pd-2', 'c-pd-1', 'c-pd-0']);
    expect(w.pd.stopsWhileLeader).toEqual([]);
    // The followers' /ready never passed: the controller went on because PD keeps no region storage.
    const followers = ['c-pd-1', 'c-pd-2'].filter((m) => m !== w.pd.leader());
    expect(followers.some((m) => !w.pd.pdRegionsLoaded(m))).toBe(true);
  });
});

describe('TiKV evict-leader schedulers', () => {
  it('removes the ones it added and never one an administrator added with pd-ctl', async () => {
    const w = await start({});
    await w.waitFor(() => w.settled('pd', 3) && w.settled('tikv', 3) && w.settled('tidb', 2), 30_000, 'the cluster to come up');
    const admins = w.pd.store('c-tikv-0')!.id;
    w.pd.addEvictLeaderScheduler(admins);
    // Idle passes leave it alone.
    await new Promise((r) => setTimeout(r, 3000));
    expect(w.pd.evictSchedulers()).toEqual([admins]);
    await w.applyCluster(simCluster({ ...BASE, version: 'v8.5.1' }));
    await w.waitFor(() => w.settled('tikv', 3) && w.settled('tidb', 2) && stopsOf(w, 'tikv').length === 3, 60_000, 'the upgrade');
    await new Promise((r) => setTimeout(r, 2000));
    expect(w.pd.evictSchedulers()).toEqual([admins]);
    // The controller removed exactly the schedulers it had added (the upgrade's, on the other stores).
    const removed = w.pd.schedulerLog.filter((c) => c.op === 'remove').map((c) => c.storeId);
    expect(removed.sort()).toEqual([w.pd.store('c-tikv-1')!.id, w.pd.store('c-tikv-2')!.id].sort());
    expect(w.status()!.evictions).toEqual({});
  });
});

describe('TiKV restarts in an upgrade', () => {
  const annotated = (annotations: Record<string, string>) => simCluster(BASE, { annotations });

  it('asks log backup to flush once a store has no leaders, and a task that fails to flush does not hold the restart', async () => {
    // FlushNow is there from TiKV v8.5.6 (tikv/tikv#18027).
    const w = await start(
      { version: 'v8.5.6' },
      { tikv: { logBackupTasks: [{ name: 'pitr' }, { name: 'audit', error: 'failed to write to external storage' }] } },
    );
    await w.waitFor(() => w.settled('pd', 3) && w.settled('tikv', 3) && w.settled('tidb', 2), 30_000, 'the cluster to come up');
    await w.applyCluster(simCluster({ ...BASE, version: 'v8.5.7' }));
    await w.waitFor(() => w.settled('tikv', 3) && w.settled('tidb', 2) && stopsOf(w, 'tikv').length === 3, 60_000, 'the upgrade');
    expect(w.pd.stopsWithLeaders).toEqual([]);
    for (const pod of ['c-tikv-2', 'c-tikv-1', 'c-tikv-0']) {
      const stop = w.stops.find((s) => s.pod === pod)!;
      const before = w.tikv.flushes.filter((f) => f.pod === pod && f.time <= stop.time);
      expect(before.length).toBeGreaterThan(0);
      expect(before.every((f) => f.leaders === 0 && f.version === 'v8.5.6' && f.answered === 'flushed')).toBe(true);
    }
    const failed = w.events('FailedLogBackupFlush');
    expect(failed.map((e) => e.involvedObject.name).sort()).toEqual(['c-tikv-0', 'c-tikv-1', 'c-tikv-2']);
    expect(failed[0].message).toMatch(
      /log backup did not flush on store \d+: task audit: failed to write to external storage; restarting c-tikv-\d anyway/,
    );
    // It read each store's own count before letting it go.
    expect(new Set(w.tikv.requests.filter((r) => r.path === '/metrics').map((r) => r.pod))).toEqual(
      new Set(['c-tikv-0', 'c-tikv-1', 'c-tikv-2']),
    );
  });

  it('says that a TiKV before v8.5.6 cannot flush on demand, not that it has no log backup, and restarts it', async () => {
    const w = await World.start({ cluster: simCluster(BASE), render, tikv: { logBackupTasks: [{ name: 'pitr' }] } });
    world = w;
    const controller = await w.startController();
    await w.waitFor(() => w.settled('pd', 3) && w.settled('tikv', 3) && w.settled('tidb', 2), 30_000, 'the cluster to come up');
    await w.applyCluster(simCluster({ ...BASE, version: 'v8.5.1' }));
    await w.waitFor(() => w.settled('tikv', 3) && w.settled('tidb', 2) && stopsOf(w, 'tikv').length === 3, 60_000, 'the upgrade');
    expect(w.pd.stopsWithLeaders).toEqual([]);
    for (const pod of ['c-tikv-2', 'c-tikv-1', 'c-tikv-0']) {
      const stop = w.stops.find((s) => s.pod === pod)!;
      const asked = w.tikv.flushes.filter((f) => f.pod === pod && f.time <= stop.time);
      expect(asked.map((f) => [f.version, f.answered])).toEqual([['v8.5.0', 'unimplemented']]);
    }
    const out = controller.stderr.join('\n');
    for (const pod of ['c-tikv-0', 'c-tikv-1', 'c-tikv-2']) {
      expect(out).toContain(
        `${pod} runs TiKV v8.5.0, which cannot flush log backup on demand (FlushNow came in v8.5.6): restarting it without a flush`,
      );
    }
    expect(out).not.toContain('no log backup service');
    expect(w.events('FailedLogBackupFlush')).toEqual([]);
  });

  it('says "no log backup service" where log backup is off on a TiKV that has FlushNow', async () => {
    const w = await World.start({ cluster: simCluster({ ...BASE, version: 'v8.5.6' }), render, tikv: { logBackup: false } });
    world = w;
    const controller = await w.startController();
    await w.waitFor(() => w.settled('pd', 3) && w.settled('tikv', 3) && w.settled('tidb', 2), 30_000, 'the cluster to come up');
    await w.applyCluster(simCluster({ ...BASE, version: 'v8.5.7' }));
    await w.waitFor(() => w.settled('tikv', 3) && w.settled('tidb', 2) && stopsOf(w, 'tikv').length === 3, 60_000, 'the upgrade');
    const out = controller.stderr.join('\n');
    for (const pod of ['c-tikv-0', 'c-tikv-1', 'c-tikv-2'])
      expect(out).toContain(`${pod} has no log backup service to flush (log-backup.enable is off)`);
    expect(out).not.toContain('cannot flush log backup on demand');
  });

  it('restarts without a flush under tidb.pingcap.com/tikv-restart-without-flush-log-backup', async () => {
    const w = await World.start({ cluster: annotated({ 'tidb.pingcap.com/tikv-restart-without-flush-log-backup': 'true' }), render });
    world = w;
    await w.startController();
    await w.waitFor(() => w.settled('pd', 3) && w.settled('tikv', 3) && w.settled('tidb', 2), 30_000, 'the cluster to come up');
    await w.applyCluster(
      simCluster({ ...BASE, version: 'v8.5.1' }, { annotations: { 'tidb.pingcap.com/tikv-restart-without-flush-log-backup': 'true' } }),
    );
    await w.waitFor(() => w.settled('tikv', 3) && w.settled('tidb', 2) && stopsOf(w, 'tikv').length === 3, 60_000, 'the upgrade');
    expect(w.pd.stopsWithLeaders).toEqual([]);
    expect(w.tikv.flushes).toEqual([]);
  });

  it('keeps each upgraded TiDB Ready for tidb-min-ready-seconds before the next restart', async () => {
    const annotations = { 'tidb.pingcap.com/tidb-min-ready-seconds': '3' };
    const w = await World.start({ cluster: annotated(annotations), render });
    world = w;
    await w.startController();
    await w.waitFor(() => w.settled('pd', 3) && w.settled('tikv', 3) && w.settled('tidb', 2), 30_000, 'the cluster to come up');
    const seen = reasonsSeen(w, 'tidb');
    await w.applyCluster(simCluster({ ...BASE, version: 'v8.5.1' }, { annotations }));
    await w.waitFor(() => w.settled('tidb', 2) && stopsOf(w, 'tidb').length === 2, 60_000, 'the upgrade');
    const [first, second] = w.stops.filter((s) => s.component === 'tidb');
    // The first Pod stops, starts again and turns Ready within 200 ms, and then is given 3 s, less up to
    // one second: the Ready condition's lastTransitionTime has whole seconds, as in Kubernetes.
    expect(second.time - first.time).toBeGreaterThanOrEqual(2000);
    expect(seen).toContain('waiting for upgraded Pod c-tidb-1 to have been Ready for 3s (min-ready-seconds)');
  });
});

describe('TiFlash', () => {
  it('waits for an upgraded TiFlash to serve (/tiflash/store-status Running) before the next restart', async () => {
    const tiflash = { replicas: 2, storageClaims: [{ resources: { requests: { storage: '1Gi' } } }] };
    const w = await start({ tiflash }, { pd: { tiflashStartMs: 1500 } });
    await w.waitFor(() => w.settled('tiflash', 2) && w.settled('tikv', 3), 30_000, 'the cluster to come up');
    const reasons = reasonsSeen(w, 'tiflash');
    const notServing: string[] = [];
    w.kube.on('podStopped', (pod) => {
      if (pod.metadata.name === 'c-tiflash-0' && w.pd.tiflashStoreStatus('c-tiflash-1') !== 'Running') {
        notServing.push(`c-tiflash-0 stopped while c-tiflash-1 was ${w.pd.tiflashStoreStatus('c-tiflash-1')}`);
      }
    });
    await w.applyCluster(simCluster({ ...BASE, tiflash, version: 'v8.5.1' }));
    await w.waitFor(() => w.settled('tiflash', 2) && stopsOf(w, 'tiflash').length === 2, 60_000, 'the TiFlash upgrade');
    expect(stopsOf(w, 'tiflash')).toEqual(['c-tiflash-1', 'c-tiflash-0']);
    expect(notServing).toEqual([]);
    expect([...reasons].some((r) => /waiting for TiFlash c-tiflash-1 to serve: store status is "(Idle|Ready)"/.test(r))).toBe(true);
  });
});

describe('TiCDC and Pump', () => {
  const spec = { ticdc: { replicas: 3 }, pump: { replicas: 3, requests: { storage: '1Gi' } } };
  const up = (w: World) => w.settled('ticdc', 3) && w.settled('pump', 3) && w.settled('tidb', 2);

  it('drains a capture and takes a Pump node offline before each scale-in', async () => {
    const w = await start(spec);
    await w.waitFor(() => up(w) && w.ticdc!.captures().filter((c) => c.state === 'running').length === 3, 40_000, 'the cluster to come up');
    await w.waitFor(() => w.pump!.nodes().filter((n) => n.state === 'online').length === 3, 10_000, 'three pump nodes online');
    await w.applyCluster(simCluster({ ...BASE, ticdc: { replicas: 2 }, pump: { replicas: 2, requests: { storage: '1Gi' } } }));
    await w.waitFor(() => w.settled('ticdc', 2) && w.settled('pump', 2), 60_000, 'the scale-in');
    expect(w.ticdc!.stopsWithTables).toEqual([]);
    expect(w.pump!.stopsWhileOnline).toEqual([]);
    expect(w.pump!.stateOf('c-pump-2')).toBe('offline');
    expect(w.ticdc!.tablesOf('c-ticdc-2')).toBe(0);
  });

  it('rolls TiCDC and Pump through an upgrade, after TiDB', async () => {
    const w = await start(spec);
    await w.waitFor(() => up(w), 40_000, 'the cluster to come up');
    await w.applyCluster(simCluster({ ...BASE, ...spec, version: 'v8.5.1' }));
    await w.waitFor(() => up(w) && stopsOf(w, 'ticdc').length === 3 && stopsOf(w, 'pump').length === 3, 90_000, 'the upgrade');
    expect(stopsOf(w, 'pump')).toEqual(['c-pump-2', 'c-pump-1', 'c-pump-0']);
    expect(stopsOf(w, 'ticdc')).toEqual(['c-ticdc-2', 'c-ticdc-1', 'c-ticdc-0']);
    // Each capture handed its tables over before its restart.
    expect(w.ticdc!.stopsWithTables).toEqual([]);
    const drained = new Set(w.ticdc!.requests.filter((r) => r.method === 'PUT' && r.path === '/api/v1/captures/drain').map((r) => r.pod));
    expect([...drained].sort()).toEqual(['c-ticdc-0', 'c-ticdc-1', 'c-ticdc-2']);
    const first = (c: string) => Math.min(...w.stops.filter((s) => s.component === c).map((s) => s.time));
    const last = (c: string) => Math.max(...w.stops.filter((s) => s.component === c).map((s) => s.time));
    expect(first('tidb')).toBeGreaterThan(last('pump'));
    expect(first('ticdc')).toBeGreaterThan(last('tidb'));
  });
});

describe("TiCDC's new architecture", () => {
  it('v8.5.6, whose drain API moves nothing: each capture goes only once ownership is off it and the owner is healthy; no drain is asked', async () => {
    const ticdc = { replicas: 3, env: [{ name: 'TICDC_NEWARCH', value: 'true' }] };
    const w = await start({ version: 'v8.5.6', ticdc });
    await w.waitFor(
      () => w.settled('ticdc', 3) && w.ticdc!.captures().filter((c) => c.state === 'running' && c.architecture === 'new').length === 3,
      40_000,
      'the cluster to come up',
    );
    await w.applyCluster(simCluster({ ...BASE, version: 'v8.5.6', ticdc: { ...ticdc, annotations: { restart: '1' } } }));
    await w.waitFor(() => w.settled('ticdc', 3) && stopsOf(w, 'ticdc').length === 3, 90_000, 'the TiCDC rolling restart');
    expect(stopsOf(w, 'ticdc')).toEqual(['c-ticdc-2', 'c-ticdc-1', 'c-ticdc-0']);
    expect(w.ticdc!.stopsWhileOwner).toEqual([]);
    expect(w.ticdc!.requests.filter((r) => r.path === '/api/v1/captures/drain')).toEqual([]);
    expect(w.controller().logs.some((l) => /runs TiCDC v8\.5\.6 in its new architecture, whose drain API moves no table/.test(l.msg))).toBe(
      true,
    );
  });
});

describe('Kubernetes API server restart', () => {
  it('rides out the restart and its 403s (RBAC caches not yet filled), then finishes an upgrade', async () => {
    const w = await start({});
    await w.waitFor(() => w.settled('pd', 3) && w.settled('tikv', 3) && w.settled('tidb', 2), 30_000, 'the cluster to come up');
    await w.kube.restart({ downMs: 500, forbiddenMs: 1000 });
    expect(w.kube.requests.some((r) => r.status === 403)).toBe(true);
    expect(w.controller().running).toBe(true);
    await w.applyCluster(simCluster({ ...BASE, version: 'v8.5.1' }));
    await w.waitFor(
      () => w.settled('pd', 3) && w.settled('tikv', 3) && w.settled('tidb', 2) && stopsOf(w, 'tidb').length === 2,
      60_000,
      'the upgrade after the restart',
    );
    expect(w.controller().running).toBe(true);
  });
});
