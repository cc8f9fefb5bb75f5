/**
 * The controller as a real process against the simulated cluster (Kubernetes API + PD), one scenario
 * per test. These need the bundle (`npm run build`), which `npm test` makes first.
 */
import http from 'node:http';
import net from 'node:net';
import fc from 'fast-check';
import { worldViolations } from '../../support/rbac';
import { render } from '../../support/render';
import { World, simCluster, type ControllerProcess } from '../../sim/world';

jest.setTimeout(90_000);

const FIELD_MANAGER = 'tidb-gitops-controller';
/** The field manager of the writes a scenario makes itself, as a user or the kubelet would. */
const TEST_MANAGER = 'scenario';
const upgraded = (spec: Record<string, unknown> = {}) => simCluster({ version: 'v8.5.1', ...spec });

let world: World | undefined;
afterEach(async () => {
  const w = world;
  world = undefined;
  if (!w) return;
  try {
    // Whatever the scenario did, the rendered Role allowed every request the controller made.
    expect(worldViolations(w, TEST_MANAGER)).toEqual([]);
  } finally {
    await w.close();
  }
});

/** Brings a fresh cluster up with one controller and waits until every component is settled. */
async function running(spec: Record<string, unknown> = {}, pd = {}): Promise<{ w: World; ctl: ControllerProcess }> {
  const w = await World.start({ cluster: simCluster(spec), pd, render });
  world = w;
  const ctl = await w.startController();
  await w.waitFor(() => w.settled('pd', 3) && w.settled('tikv', 3) && w.settled('tidb', 2), 30_000, 'the cluster to come up');
  await w.waitFor(
    () => ['pd', 'tikv', 'tidb'].every((c) => w.status()?.components[c]?.phase === 'Normal'),
    10_000,
    'the status to say Normal',
  );
  return { w, ctl };
}

/** Pod names in the order they were stopped, per component. */
const stopsOf = (w: World, component: string) => w.stops.filter((s) => s.component === component).map((s) => s.pod);

/** Every write the controller made names its field manager. */
function expectOwnFieldManager(w: World): void {
  const writes = w.kube.requests.filter((r) => r.method !== 'GET' && r.status < 400);
  expect(writes.length).toBeGreaterThan(0);
  expect(writes.filter((r) => r.fieldManager !== FIELD_MANAGER).map((r) => `${r.method} ${r.path}`)).toEqual([]);
}

/** The upgrade ran one Pod at a time, highest ordinal first, PD then TiKV then TiDB, and broke no rule. */
function expectSafeUpgrade(w: World, opts: { tikvTimeouts?: string[] } = {}): void {
  expect(stopsOf(w, 'pd')).toEqual(['c-pd-2', 'c-pd-1', 'c-pd-0']);
  expect(stopsOf(w, 'tikv')).toEqual(['c-tikv-2', 'c-tikv-1', 'c-tikv-0']);
  expect(stopsOf(w, 'tidb')).toEqual(['c-tidb-1', 'c-tidb-0']);
  const last = (c: string) => Math.max(...w.stops.filter((s) => s.component === c).map((s) => s.time));
  const first = (c: string) => Math.min(...w.stops.filter((s) => s.component === c).map((s) => s.time));
  expect(first('tikv')).toBeGreaterThan(last('pd'));
  expect(first('tidb')).toBeGreaterThan(last('tikv'));
  for (const c of ['pd', 'tikv', 'tidb']) expect(w.kube.maxUnavailable(`c-${c}`)).toBeLessThanOrEqual(1);
  expect(w.pd.stopsWhileLeader).toEqual([]);
  expect(w.pd.stopsWithLeaders.map((s) => s.pod)).toEqual(opts.tikvTimeouts ?? []);
  // Each store restarted without leaders was asked to flush log backup first, once it had none.
  // (A controller killed between the flush and its note on the Pod asks again: any number of flushes, none with leaders.)
  const tikvStops = w.stops.filter((s) => s.component === 'tikv');
  tikvStops.forEach((stop, i) => {
    if ((opts.tikvTimeouts ?? []).includes(stop.pod)) return;
    const since = Math.max(
      0,
      ...tikvStops
        .slice(0, i)
        .filter((s) => s.pod === stop.pod)
        .map((s) => s.time),
    );
    const flushes = w.tikv.flushes.filter((f) => f.pod === stop.pod && f.time > since && f.time <= stop.time);
    expect({ pod: stop.pod, flushed: flushes.length > 0, leaders: flushes.filter((f) => f.leaders > 0) }).toEqual({
      pod: stop.pod,
      flushed: true,
      leaders: [],
    });
  });
  expect(w.pd.splitBrain).toEqual([]);
  expectOwnFieldManager(w);
}

const settledAll = (w: World) => () => w.settled('pd', 3) && w.settled('tikv', 3) && w.settled('tidb', 2);

describe('PD bootstrap through discovery', () => {
  it('bootstraps one member and joins the others', async () => {
    const { w, ctl } = await running();
    const members = w.pd.members();
    expect(members.map((m) => m.name).sort()).toEqual(['c-pd-0', 'c-pd-1', 'c-pd-2']);
    expect(members.every((m) => m.running)).toBe(true);
    expect(w.pd.splitBrain).toEqual([]);
    expect(w.events('PDBootstrap')).toHaveLength(1);
    // PD's view reaches the status on the next pass.
    await w.waitFor(
      // A pass while PD answered an error (an election just after bootstrap) writes no members yet.
      () =>
        w.status()?.components.pd.members?.filter((m: { health: boolean }) => m.health).length === 3 &&
        w.status()?.components.tikv.stores?.length === 3,
      5000,
      'three healthy members and three stores in the status',
    );
    const status = w.status()!;
    expect(status.components.pd.phase).toBe('Normal');
    expect(status.components.tikv.stores.map((s: { state: string }) => s.state)).toEqual(['Up', 'Up', 'Up']);
    expect((await ctl.get('/readyz')).status).toBe(200);
    const metrics = (await ctl.get('/metrics')).body;
    expect(metrics).toMatch(/^tidb_gitops_leader 1$/m);
    expect(metrics).toMatch(/tidb_gitops_discovery_requests_total\{path="new",code="200"\} 3/);
    expectOwnFieldManager(w);
  });

  it("rejects callers that are not the cluster's own PD Pods", async () => {
    const { w } = await running();
    const ask = async (host: string) =>
      (await fetch(`${w.pd.discoveryUrl}/new/${Buffer.from(`${host}:2380\n`).toString('base64')}`)).status;
    expect(await ask('c-pd-7.c-pd-peer.ns.svc')).toBe(403); // no such Pod
    expect(await ask('x-pd-0.x-pd-peer.ns.svc')).toBe(403); // another cluster
    expect(await ask('c-pd-0.c-pd-peer.other.svc')).toBe(403); // another namespace
    expect(await ask('not-a-peer-address')).toBe(400);
    // A Pod of the cluster, but the request comes from another address.
    const res = await fetch(`${w.kube.url}/api/v1/namespaces/ns/pods/c-pd-1/status?fieldManager=${TEST_MANAGER}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ status: { podIP: '10.9.9.9', podIPs: [{ ip: '10.9.9.9' }] } }),
    });
    expect(res.status).toBe(200);
    await new Promise((r) => setTimeout(r, 300));
    expect(await ask('c-pd-1.c-pd-peer.ns.svc')).toBe(403);
    expect(w.pd.members()).toHaveLength(3);
  });

  it('keeps one metrics series per route, however many distinct paths callers send', async () => {
    const { w, ctl } = await running();
    const base = w.pd.discoveryUrl!;
    for (let i = 0; i < 300; i += 50) {
      await Promise.all(Array.from({ length: 50 }, (_, j) => fetch(`${base}/unique-${i + j}/${'x'.repeat(i + j)}`).then((r) => r.text())));
    }
    const series = (await ctl.get('/metrics')).body.split('\n').filter((l) => l.startsWith('tidb_gitops_discovery_requests_total{'));
    expect([...new Set(series.map((l) => /path="([^"]*)"/.exec(l)?.[1]))].sort()).toEqual(['new', 'other']);
    expect(series.find((l) => l.includes('path="other"'))).toMatch(/code="404"\} 300$/);
  });

  it('lets a member that lost its data join again, and restarts with data need nothing', async () => {
    const { w } = await running();
    const before = w.pd.members().find((m) => m.name === 'c-pd-1')!.memberId;
    w.pd.wipeData('c-pd-1');
    w.kube.delete('Pod', 'ns', 'c-pd-1');
    // The event is sent alongside the discovery answer, so it may land after the Pod rejoined.
    await w.waitFor(
      () =>
        w.pd.members().find((m) => m.name === 'c-pd-1')?.memberId !== before && w.settled('pd', 3) && w.events('PDStaleMember').length > 0,
      20_000,
      'c-pd-1 to rejoin',
    );
    expect(w.events('PDStaleMember')).toHaveLength(1);
    const joins = w.pd.processFailures.length;
    w.kube.delete('Pod', 'ns', 'c-pd-2');
    await w.waitFor(() => w.stops.some((s) => s.pod === 'c-pd-2') && w.settled('pd', 3), 20_000, 'c-pd-2 to restart');
    expect(w.pd.processFailures.length).toBe(joins);
    expect(w.pd.members()).toHaveLength(3);
  });

  it('removes by id a member added for a Pod that died before starting it, so that the Pod joins again', async () => {
    const { w } = await running();
    w.pd.wipeData('c-pd-1');
    w.pd.pdDiesAfterMemberAdd('c-pd-1');
    w.kube.delete('Pod', 'ns', 'c-pd-1');
    // PD v8.5.x refuses every join while the unnamed member is there (server/join/join.go).
    await w.waitFor(
      () => w.pd.processFailures.some((f) => /has not joined successfully/.test(f.reason)) || w.pd.members().some((m) => m.name === ''),
      20_000,
      'the unstarted member',
    );
    await w.waitFor(() => w.settled('pd', 3) && w.pd.members().every((m) => m.name !== ''), 30_000, 'c-pd-1 to join again');
    expect(
      w.pd
        .members()
        .map((m) => m.name)
        .sort(),
    ).toEqual(['c-pd-0', 'c-pd-1', 'c-pd-2']);
    expect(w.events('PDStaleMember').some((e) => /added for c-pd-1 but never started/.test(String(e.message)))).toBe(true);
  });
});

describe('rolling upgrade', () => {
  it('upgrades PD, TiKV and TiDB one Pod at a time without restarting a leader', async () => {
    const { w } = await running();
    const stopsBefore = w.stops.length;
    await w.applyCluster(upgraded());
    await w.waitFor(settledAll(w), 60_000, 'the upgrade to finish');
    expect(w.stops.length - stopsBefore).toBe(8);
    expectSafeUpgrade(w);
    expect(w.events('EvictLeaderBegin')).toHaveLength(3);
    expect(w.pd.evictSchedulers()).toEqual([]);
    // v8.5.0 -> v8.5.1 is a pair whose DDL must be paused: before the first TiDB restart, resumed after the last.
    await w.waitFor(() => w.events('DDLResume').length === 1 && w.status()?.smoothUpgrade === undefined, 10_000, 'DDL to be resumed');
    const tidbStops = w.stops.filter((s) => s.component === 'tidb').map((s) => s.time);
    expect(w.tidb.upgradeOps.map((o) => o.op)).toEqual(['start', 'finish']);
    expect(w.tidb.upgradeOps[0].time).toBeLessThan(Math.min(...tidbStops));
    expect(w.tidb.upgradeOps[1].time).toBeGreaterThan(Math.max(...tidbStops));
    expect(w.tidb.ddlPaused).toBe(false);
    expect(w.events('DDLPause')).toHaveLength(1);
  });

  it('resumes DDL paused for a TiDB upgrade after the controller is killed mid-upgrade', async () => {
    const { w, ctl } = await running();
    await w.applyCluster(upgraded());
    await w.waitFor(() => w.tidb.ddlPaused && w.status()?.smoothUpgrade?.state === 'paused', 60_000, 'DDL to be paused');
    ctl.kill('SIGKILL');
    await ctl.exited;
    await w.startController();
    await w.waitFor(settledAll(w), 60_000, 'the upgrade to finish');
    await w.waitFor(() => !w.tidb.ddlPaused && w.status()?.smoothUpgrade === undefined, 20_000, 'DDL to be resumed');
    expectSafeUpgrade(w);
    expect(w.tidb.upgradeOps.filter((o) => o.changed).map((o) => o.op)).toEqual(['start', 'finish']);
  });

  it('a new template from Git restarts nothing until the controller steps', async () => {
    const { w, ctl } = await running();
    ctl.kill('SIGKILL');
    await ctl.exited;
    await w.applyCluster(upgraded());
    await new Promise((r) => setTimeout(r, 1000));
    expect(w.stops).toEqual([]);
    expect(w.sts('pd').status.updateRevision).not.toBe(w.sts('pd').status.currentRevision);
  });

  it.each([
    ['highest', 'c-pd-2', 'c-pd-0'],
    ['lowest', 'c-pd-0', 'c-pd-2'],
  ])('moves PD leadership away first when the leader has the %s ordinal', async (_where, leader, expectedTarget) => {
    const { w } = await running();
    if (w.pd.leader() !== leader) {
      await fetch(`${w.pd.url}/pd/api/v1/leader/transfer/${leader}`, { method: 'POST' });
      await w.waitFor(() => w.pd.leader() === leader, 5000, `${leader} to lead`);
    }
    const setup = w.pd.transfers.length;
    await w.applyCluster(upgraded());
    await w.waitFor(settledAll(w), 60_000, 'the upgrade to finish');
    expectSafeUpgrade(w);
    expect(w.pd.transfers[setup]).toMatchObject({ from: leader, to: expectedTarget });
    expect(w.events('PDLeaderTransfer').length).toBeGreaterThanOrEqual(1);
  });

  it('restarts a TiKV store after evictLeaderTimeout when its leaders do not leave', async () => {
    const { w } = await running({ tikv: { replicas: 3, requests: { storage: '1Gi' }, evictLeaderTimeout: '1s' } });
    w.pd.setEvictionStuck(w.pd.store('c-tikv-2')!.id);
    await w.applyCluster(upgraded({ tikv: { replicas: 3, requests: { storage: '1Gi' }, evictLeaderTimeout: '1s' } }));
    await w.waitFor(settledAll(w), 60_000, 'the upgrade to finish');
    expectSafeUpgrade(w, { tikvTimeouts: ['c-tikv-2'] });
    const begin = w.pd.schedulerLog.find((s) => s.op === 'add' && s.storeId === w.pd.store('c-tikv-2')!.id)!.time;
    expect(w.pd.stopsWithLeaders[0].time - begin).toBeGreaterThanOrEqual(1000);
    expect(w.events('EvictLeaderTimeout')).toHaveLength(1);
  });

  it('takes a newer template arriving mid-upgrade safely to the end', async () => {
    const { w } = await running();
    await w.applyCluster(upgraded());
    await w.waitFor(() => w.stops.some((s) => s.pod === 'c-tikv-2'), 30_000, 'the TiKV upgrade to start');
    await w.applyCluster(simCluster({ version: 'v8.5.2' }));
    await w.waitFor(settledAll(w), 60_000, 'the second upgrade to finish');
    for (const c of ['pd', 'tikv', 'tidb']) expect(w.kube.maxUnavailable(`c-${c}`)).toBeLessThanOrEqual(1);
    expect(w.pd.stopsWhileLeader).toEqual([]);
    expect(w.pd.stopsWithLeaders).toEqual([]);
    expect(w.pods('tikv').every((p) => p.spec.containers[0].image === 'pingcap/tikv:v8.5.2')).toBe(true);
    expectOwnFieldManager(w);
  });

  it('resumes after the controller is killed mid-upgrade, without a double step', async () => {
    const { w, ctl } = await running();
    await w.applyCluster(upgraded());
    await w.waitFor(() => w.pd.schedulerLog.some((s) => s.op === 'add'), 30_000, 'TiKV leader eviction to begin');
    ctl.kill('SIGKILL');
    await ctl.exited;
    await w.startController([], 'c-discovery-restarted');
    await w.waitFor(settledAll(w), 60_000, 'the upgrade to finish after the restart');
    expectSafeUpgrade(w);
    // Each Pod restarted exactly once.
    const counts = new Map<string, number>();
    for (const s of w.stops) counts.set(s.pod, (counts.get(s.pod) ?? 0) + 1);
    expect([...counts.values()].every((n) => n === 1)).toBe(true);
  });

  it('spec.paused stops all stepping', async () => {
    const { w } = await running();
    await w.applyCluster(upgraded({ paused: true }));
    await new Promise((r) => setTimeout(r, 1500));
    expect(w.stops).toEqual([]);
    expect(w.status()!.components.pd.reason).toMatch(/paused/);
    await w.applyCluster(upgraded());
    await w.waitFor(settledAll(w), 60_000, 'the upgrade to finish once unpaused');
    expectSafeUpgrade(w);
  });
});

describe('failures around the controller', () => {
  it('does nothing destructive while PD is unreachable or erroring, and goes on once it answers', async () => {
    const { w } = await running();
    w.pd.down = true;
    await w.applyCluster(upgraded());
    await new Promise((r) => setTimeout(r, 1500));
    expect(w.stops).toEqual([]);
    expect(w.status()!.pd.reachable).toBe(false);
    expect(w.sts('pd').spec.updateStrategy.rollingUpdate.partition).toBe(3);
    w.pd.down = false;
    w.pd.failNext(/GET \/pd\/api\/v1\/(health|stores)/, 500, 20);
    await new Promise((r) => setTimeout(r, 500));
    expect(w.stops).toEqual([]);
    await w.waitFor(settledAll(w), 60_000, 'the upgrade to finish once PD answers');
    expectSafeUpgrade(w);
  });

  it('retries Kubernetes API answers 409, 429 and 500', async () => {
    const { w } = await running();
    const patchSts = (r: { method: string; path: string }) => r.method === 'PATCH' && r.path.includes('/statefulsets/');
    w.kube.fail(patchSts, 500, 2);
    w.kube.fail(patchSts, 429, 2);
    w.kube.fail(patchSts, 409, 1);
    w.kube.fail((r) => r.method === 'PATCH' && r.path.includes('/pods/'), 500, 1);
    await w.applyCluster(upgraded());
    await w.waitFor(settledAll(w), 60_000, 'the upgrade to finish');
    const statuses = new Set(w.kube.requests.filter((r) => r.method === 'PATCH').map((r) => r.status));
    for (const code of [409, 429, 500, 200]) expect(statuses.has(code)).toBe(true);
    expectSafeUpgrade(w);
  });
});

describe('controller process', () => {
  it('lets only one of two replicas act, and hands over on SIGTERM', async () => {
    const { w, ctl } = await running();
    const second = await w.startController([], 'c-discovery-second');
    await new Promise((r) => setTimeout(r, 800));
    expect((await second.get('/readyz')).status).toBe(503);
    expect(w.kube.get('Lease', 'ns', 'c-discovery')!.spec.holderIdentity).toBe(ctl.identity);
    ctl.kill('SIGTERM');
    expect(await ctl.exited).toEqual({ code: 0, signal: null });
    expect(ctl.logs.some((l) => l.msg === 'released the lease')).toBe(true);
    await w.waitFor(async () => (await second.get('/readyz')).status === 200, 5000, 'the second replica to lead');
    await w.applyCluster(upgraded());
    await w.waitFor(settledAll(w), 60_000, 'the upgrade to finish under the new leader');
    expectSafeUpgrade(w);
    expect(ctl.logs.every((l) => typeof l.time === 'string' && typeof l.level === 'string')).toBe(true);
  });
});

describe('the discovery and metrics endpoints under hostile requests', () => {
  /** One raw request (no URL normalisation, unlike fetch): the status, or the way it failed. */
  function raw(
    port: number,
    path: string,
    opts: { method?: string; body?: Buffer; headers?: Record<string, string> } = {},
    agent?: http.Agent,
  ): Promise<number | string> {
    return new Promise((done) => {
      const req = http.request({ host: '127.0.0.1', port, path, method: opts.method ?? 'GET', headers: opts.headers, agent }, (res) => {
        res.resume();
        res.on('end', () => done(res.statusCode ?? 0));
      });
      req.setTimeout(15_000, () => req.destroy(new Error('timeout')));
      req.on('error', (e) => done(`error: ${(e as NodeJS.ErrnoException).code ?? e.message}`));
      req.end(opts.body);
    });
  }

  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const rssOf = (metrics: string) => Number(/^process_resident_memory_bytes (\d+)/m.exec(metrics)?.[1]);
  const discoverySeries = (metrics: string) => metrics.split('\n').filter((l) => l.startsWith('tidb_gitops_discovery_requests_total{'));

  /** Requests that have found bugs in servers like this one: each gets an answer, never a hang or a 5xx. */
  const hostile = fc.oneof(
    fc.constantFrom(
      '/new/',
      '/new',
      '/new/!!!',
      '/new/%ZZ',
      '/new/%00',
      `/new/${b64('c-pd-0.c-pd-peer.ns.svc:2380\n').replace(/=/g, '')}%`,
      '/verify/',
      `/verify/${b64('http://evil:2379')}`,
      `/new/${b64('c-pd-0.c-pd-peer.other.svc:2380')}`,
      `/new/${b64('x-pd-0.x-pd-peer.ns.svc:2380')}`,
      `/new/${b64('c-pd-99.c-pd-peer.ns.svc:2380')}`,
      `/new/${b64('rogue.c-pd-peer.ns.svc:2380')}`,
      `/new/${b64('c-pd-0.c-pd-peer.ns.svc:99999')}`,
      `/new/${b64('\u0000\u0085\ud83d\ude00')}`,
      '/../../etc/passwd',
      '/new/../../etc/passwd',
      '/%2e%2e/%2e%2e/',
      '//new//x',
      '/new/a/b/c/d',
      '/metrics',
      '/healthz',
      '/readyz',
      '/?x=1',
      '*',
      '/new/?a=%ff',
    ),
    fc.string({ unit: 'binary-ascii', maxLength: 60 }).map((s) => `/${encodeURIComponent(s)}`),
    fc.base64String({ maxLength: 200 }).map((s) => `/new/${s}`),
    fc.integer({ min: 100, max: 40_000 }).map((n) => `/new/${'A'.repeat(n)}`),
  );

  it('answers every one of 2,000 hostile requests at concurrency 50, keeps its metrics bounded and its memory flat', async () => {
    const { w, ctl } = await running();
    const discoveryPort = Number(new URL(w.pd.discoveryUrl!).port);
    const metricsPort = ctl.metricsPort!;
    const before = (await ctl.get('/metrics')).body;
    const requests = fc.sample(
      fc.tuple(hostile, fc.constantFrom('GET', 'GET', 'GET', 'POST', 'PUT', 'DELETE', 'HEAD', 'OPTIONS'), fc.boolean()),
      { seed: 9, numRuns: 2000 },
    );
    const agent = new http.Agent({ keepAlive: true, maxSockets: 50 });
    const answers: (number | string)[] = [];
    const started = Date.now();
    for (let i = 0; i < requests.length; i += 50) {
      answers.push(
        ...(await Promise.all(
          requests
            .slice(i, i + 50)
            .map(([path, method, toMetrics]) =>
              raw(
                toMetrics ? metricsPort : discoveryPort,
                path,
                { method, ...(method === 'POST' || method === 'PUT' ? { body: Buffer.alloc(64 * 1024, 'x') } : {}) },
                agent,
              ),
            ),
        )),
      );
    }
    agent.destroy();
    const elapsed = Date.now() - started;
    // Every request got an HTTP answer, none a server error, and none took the server down.
    // Over 16 KiB of headers, Node answers 431 and hangs up; a client still sending may see the reset first.
    const oversized = (i: number) => requests[i][0].length > 16 * 1024 - 512;
    const unanswered = answers.filter((a, i) => typeof a === 'string' && !(oversized(i) && a === 'error: ECONNRESET'));
    expect(unanswered).toEqual([]);
    expect(answers.filter((a) => (a as number) >= 500)).toEqual([]);
    const statuses = answers.filter((a) => typeof a === 'number');
    expect(new Set(statuses)).toEqual(new Set(statuses.filter((a) => [200, 400, 403, 404, 405, 414, 431].includes(a))));
    expect(elapsed).toBeLessThan(60_000);
    // The sample reaches the size limit: a path over 16 KiB is refused before any handler runs.
    expect(answers).toContain(431);
    expect(ctl.running).toBe(true);

    // No request created a PD member or a series of its own.
    expect(w.pd.members()).toHaveLength(3);
    const after = (await ctl.get('/metrics')).body;
    expect([...new Set(discoverySeries(after).map((l) => /path="([^"]*)"/.exec(l)?.[1]))].sort()).toEqual(expect.arrayContaining(['new']));
    expect(discoverySeries(after).length).toBeLessThanOrEqual(discoverySeries(before).length + 12);
    // Memory: the runaway growth was hundreds of MiB; a busy heap may keep a few.
    expect(rssOf(after) - rssOf(before)).toBeLessThan(40 * 1024 * 1024);
  });

  it('cuts off a client that sends its headers slowly, while answering everyone else at once', async () => {
    const { w } = await running();
    const port = Number(new URL(w.pd.discoveryUrl!).port);
    const socket = net.connect(port, '127.0.0.1');
    await new Promise((r) => socket.once('connect', r));
    // Writes after the server hung up fail; that is the point.
    socket.on('error', () => {});
    socket.write('GET /new/');
    // A trickle: one byte a second, never finishing the request line.
    const trickle = setInterval(() => socket.write('A'), 1000);
    const closed = new Promise<number>((r) => socket.once('close', () => r(Date.now())));
    const opened = Date.now();
    expect(await raw(port, '/new/!!!')).toBe(400);
    const closedAt = await closed;
    clearInterval(trickle);
    // The server's header timeout (5 s) ends it; well before the 15 s this test would wait.
    expect(closedAt - opened).toBeLessThan(12_000);
  });
});

describe('leader eviction asked for on a Pod (tidb.pingcap.com/evict-leader: delete-pod)', () => {
  it('evicts the store, flushes log backup, deletes the Pod once it has no leaders, then removes the scheduler', async () => {
    const { w } = await running();
    const storeId = w.pd.store('c-tikv-1')!.id;
    const res = await fetch(`${w.kube.url}/api/v1/namespaces/ns/pods/c-tikv-1?fieldManager=${TEST_MANAGER}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ metadata: { annotations: { 'tidb.pingcap.com/evict-leader': 'delete-pod' } } }),
    });
    expect(res.status).toBe(200);
    await w.waitFor(() => stopsOf(w, 'tikv').includes('c-tikv-1'), 30_000, 'c-tikv-1 to be deleted');
    await w.waitFor(
      () => w.settled('tikv', 3) && w.pd.evictSchedulers().length === 0 && Object.keys(w.status()?.evictions ?? {}).length === 0,
      30_000,
      'the scheduler to go',
    );
    expect(stopsOf(w, 'tikv')).toEqual(['c-tikv-1']);
    expect(w.pd.stopsWithLeaders).toEqual([]);
    const stop = w.stops.find((s) => s.pod === 'c-tikv-1')!.time;
    expect(w.tikv.flushes.filter((f) => f.pod === 'c-tikv-1' && f.time <= stop).map((f) => f.leaders)).toEqual([0]);
    expect(w.pd.schedulerLog.filter((s) => s.storeId === storeId).map((s) => s.op)).toEqual(['add', 'remove']);
    expect(w.events('EvictLeaderDeletePod')).toHaveLength(1);
    // The Pod made again carries no request: nothing more happens.
    expect(w.kube.get('Pod', 'ns', 'c-tikv-1')!.metadata.annotations?.['tidb.pingcap.com/evict-leader']).toBeUndefined();
  });
});

describe("tidb-operator's PD and TiDB Pod requests, made with kubectl annotate", () => {
  const annotate = async (w: World, pod: string, annotations: Record<string, string>) => {
    const res = await fetch(`${w.kube.url}/api/v1/namespaces/ns/pods/${pod}?fieldManager=${TEST_MANAGER}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ metadata: { annotations } }),
    });
    expect(res.status).toBe(200);
  };

  it('pd-transfer-leader: delete-pod on the leader moves leadership off it, then deletes it; tidb-graceful-shutdown: delete-pod deletes a TiDB Pod', async () => {
    const { w } = await running();
    const leader = w.pd.leader()!;
    await annotate(w, leader, { 'tidb.pingcap.com/pd-transfer-leader': 'delete-pod' });
    await w.waitFor(() => stopsOf(w, 'pd').includes(leader), 30_000, `${leader} to be deleted`);
    expect(w.pd.stopsWhileLeader).toEqual([]);
    expect(w.events('PDLeaderTransfer')).toHaveLength(1);
    await w.waitFor(() => w.settled('pd', 3), 30_000, 'PD to settle');
    expect(w.kube.get('Pod', 'ns', leader)!.metadata.annotations?.['tidb.pingcap.com/pd-transfer-leader']).toBeUndefined();
    expect(stopsOf(w, 'pd')).toEqual([leader]);

    await annotate(w, 'c-tidb-0', { 'tidb.pingcap.com/tidb-graceful-shutdown': 'delete-pod' });
    await w.waitFor(() => stopsOf(w, 'tidb').includes('c-tidb-0'), 30_000, 'c-tidb-0 to be deleted');
    await w.waitFor(() => w.settled('tidb', 2), 30_000, 'TiDB to settle');
    expect(stopsOf(w, 'tidb')).toEqual(['c-tidb-0']);
    expect(w.events('TiDBGracefulShutdown')).toHaveLength(1);
  });
});
