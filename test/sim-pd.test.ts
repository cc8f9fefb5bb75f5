import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PdSim, type PdSimOptions } from './sim/pd-api';
import { DUPLICATED_JOIN } from './sim/pd-members';
import { World, simCluster } from './sim/world';
import { render } from './support/render';

// ---- helpers: an HTTP client, a discovery stub, cleanup ----

interface Reply {
  status: number;
  // Parsed JSON of any shape: the tests check PD's response shapes field by field.
  body: any;
}

function call(method: string, url: string, body?: unknown): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        resolve({ status: res.statusCode ?? 0, body: text === '' ? undefined : JSON.parse(text) });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body === undefined ? undefined : JSON.stringify(body));
  });
}

type DiscoveryAnswer = { status: number; body: string };

interface Discovery {
  url: string;
  /** Request paths as received (`/new/<base64>`). */
  paths: string[];
  close(): Promise<void>;
}

/** A discovery service: decodes `/new/<base64(host:2380\n)>` and lets the test answer for the host. */
async function startDiscovery(answer: (peerHost: string) => Promise<DiscoveryAnswer> | DiscoveryAnswer): Promise<Discovery> {
  const paths: string[] = [];
  const server = http.createServer(async (req, res) => {
    paths.push(req.url ?? '');
    const decoded = Buffer.from((req.url ?? '').replace(/^\/new\//, ''), 'base64').toString('utf8');
    const { status, body } = decoded.endsWith(':2380\n')
      ? await answer(decoded.slice(0, -':2380\n'.length))
      : { status: 400, body: `bad request ${req.url}` };
    res.writeHead(status).end(body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    paths,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

/**
 * Answers like tidb-operator's discovery, simplified: `bootstrapPod` gets `--initial-cluster`, the
 * others `--join` with the client URLs of the members PD lists (500 while PD does not answer).
 */
function operatorLikeDiscovery(sim: PdSim, bootstrapPod: string) {
  return async (peerHost: string): Promise<DiscoveryAnswer> => {
    const pod = peerHost.split('.')[0];
    if (pod === bootstrapPod) return { status: 200, body: `--initial-cluster=${pod}=http://${peerHost}:2380\n` };
    const members = await call('GET', `${sim.url}/pd/api/v1/members`);
    if (members.status !== 200) return { status: 500, body: 'PD is not ready' };
    const urls = (members.body.members as { name: string; peer_urls: string[] }[])
      .filter((m) => m.name !== pod && m.name !== peerHost)
      .map((m) => m.peer_urls[0].replace(/:2380$/, ':2379'));
    return { status: 200, body: `--join=${urls.join(',')}\n` };
  };
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** Fast timings for tests; each test overrides what it needs. */
async function startSim(options: Partial<PdSimOptions> = {}): Promise<PdSim> {
  const sim = await PdSim.start({ cluster: 'demo', namespace: 'ns', electionMs: 20, transferMs: 10, discoveryRetryMs: 10, ...options });
  cleanups.push(() => sim.close());
  return sim;
}

/** Starts `n` PD pods against an operator-like discovery and waits for them all to run under a leader. */
async function formPdCluster(sim: PdSim, n: number): Promise<Discovery> {
  const discovery = await startDiscovery(operatorLikeDiscovery(sim, 'demo-pd-0'));
  cleanups.push(() => discovery.close());
  sim.discoveryUrl = discovery.url;
  for (let i = 0; i < n; i++) sim.pdStart(`demo-pd-${i}`);
  await sim.waitFor(() => sim.members().filter((m) => m.running).length === n && sim.leader() !== undefined, 3000, `${n} running PD members`);
  return discovery;
}

/** A PD cluster and three TiKV stores with the leaders spread evenly (rounds run by hand). */
async function withStores(options: Partial<PdSimOptions> = {}, tikvs = 3): Promise<PdSim> {
  const sim = await startSim({ tickMs: 0, ...options });
  await formPdCluster(sim, 1);
  for (let i = 0; i < tikvs; i++) sim.tikvStart(`demo-tikv-${i}`);
  ticks(sim, 100);
  return sim;
}

function ticks(sim: PdSim, n: number): void {
  for (let i = 0; i < n; i++) sim.tick();
}

const leaders = (sim: PdSim) => sim.stores().map((s) => s.leaderCount);
const sum = (xs: number[]) => xs.reduce((a, b) => a + b, 0);

// ---- PD members ----

describe('PD members', () => {
  test('every API answers 503 before the cluster is bootstrapped', async () => {
    const sim = await startSim();
    for (const path of ['/pd/api/v1/health', '/pd/api/v1/members', '/pd/api/v1/stores', '/pd/api/v2/ready']) {
      expect(await call('GET', sim.url + path)).toEqual({ status: 503, body: 'cluster is not bootstrapped' });
    }
    expect(sim.requests.map((r) => r.status)).toEqual([503, 503, 503, 503]);
  });

  test('one pod bootstraps through discovery, the others join: three healthy members and a leader', async () => {
    const sim = await startSim();
    const discovery = await formPdCluster(sim, 3);

    expect(discovery.paths).toContain(`/new/${Buffer.from('demo-pd-0.demo-pd-peer.ns.svc:2380\n').toString('base64')}`);
    expect(sim.leader()).toBe('demo-pd-0');
    expect(['demo-pd-0', 'demo-pd-1', 'demo-pd-2'].map((p) => sim.pdState(p))).toEqual(['running', 'running', 'running']);
    expect(sim.splitBrain).toEqual([]);

    const health = await call('GET', `${sim.url}/pd/api/v1/health`);
    expect(health.status).toBe(200);
    expect(health.body).toHaveLength(3);
    expect(health.body[1]).toEqual({
      name: 'demo-pd-1',
      member_id: sim.members()[1].memberId,
      client_urls: ['http://demo-pd-1.demo-pd-peer.ns.svc:2379'],
      health: true,
    });

    const members = (await call('GET', `${sim.url}/pd/api/v1/members`)).body;
    expect(members.header).toEqual({ cluster_id: sim.clusterId() });
    expect(members.members.map((m: { name: string }) => m.name)).toEqual(['demo-pd-0', 'demo-pd-1', 'demo-pd-2']);
    expect(members.leader).toEqual({
      name: 'demo-pd-0',
      member_id: sim.members()[0].memberId,
      peer_urls: ['http://demo-pd-0.demo-pd-peer.ns.svc:2380'],
      client_urls: ['http://demo-pd-0.demo-pd-peer.ns.svc:2379'],
    });
    expect(members.etcd_leader).toEqual(members.leader);

    expect((await call('GET', `${sim.url}/pd/api/v1/leader`)).body.name).toBe('demo-pd-0');
    expect((await call('GET', `${sim.url}/pd/api/v2/ready`)).status).toBe(200);
    expect((await call('GET', `${sim.url}/pd/api/v1/cluster`)).body).toEqual({ id: sim.clusterId(), max_peer_count: 3 });
    expect((await call('GET', `${sim.url}/pd/api/v1/config`)).body.replication).toMatchObject({ 'max-replicas': 3, 'location-labels': '' });
  });

  test('a pod keeps asking discovery until it answers 200', async () => {
    const sim = await startSim();
    let refusals = 3;
    const discovery = await startDiscovery((host) =>
      refusals-- > 0 ? { status: 500, body: 'not yet' } : { status: 200, body: `--initial-cluster=${host}=http://${host}:2380` },
    );
    cleanups.push(() => discovery.close());
    sim.discoveryUrl = discovery.url;
    sim.pdStart('demo-pd-0');
    await sim.waitFor(() => sim.leader() !== undefined, 3000, 'a leader');
    expect(discovery.paths).toHaveLength(4);
    // The answer named the member by its host: accepted as well.
    expect(sim.leader()).toBe('demo-pd-0.demo-pd-peer.ns.svc');
  });

  test('fails a join under a name already in the cluster, until that member is deleted', async () => {
    const sim = await startSim();
    await formPdCluster(sim, 3);
    const oldId = sim.members()[2].memberId;

    sim.pdStop('demo-pd-2');
    sim.wipeData('demo-pd-2');
    sim.pdStart('demo-pd-2');
    await sim.waitFor(() => sim.processFailures.some((f) => f.pod === 'demo-pd-2'), 3000, 'a failed join');
    expect(sim.processFailures.find((f) => f.pod === 'demo-pd-2')?.reason).toBe(DUPLICATED_JOIN);
    expect(sim.pdState('demo-pd-2')).toBe('discovering');

    expect((await call('DELETE', `${sim.url}/pd/api/v1/members/name/demo-pd-2`)).status).toBe(200);
    await sim.waitFor(() => sim.members().some((m) => m.name === 'demo-pd-2' && m.running), 3000, 'demo-pd-2 joined again');
    expect(sim.members().find((m) => m.name === 'demo-pd-2')?.memberId).not.toBe(oldId);

    expect((await call('DELETE', `${sim.url}/pd/api/v1/members/name/nobody`)).status).toBe(404);
    expect((await call('DELETE', `${sim.url}/pd/api/v1/members/id/12345`)).status).toBe(404);
  });

  test('a member deleted by id exits, and its old data keeps it from starting until wiped', async () => {
    const sim = await startSim();
    await formPdCluster(sim, 3);
    const id = sim.members()[2].memberId;

    expect((await call('DELETE', `${sim.url}/pd/api/v1/members/id/${id}`)).status).toBe(200);
    expect(sim.pdState('demo-pd-2')).toBe('crashed');
    expect(sim.members().map((m) => m.name)).toEqual(['demo-pd-0', 'demo-pd-1']);

    sim.pdStop('demo-pd-2');
    sim.pdStart('demo-pd-2');
    expect(sim.pdState('demo-pd-2')).toBe('crashed');

    sim.pdStop('demo-pd-2');
    sim.wipeData('demo-pd-2');
    sim.pdStart('demo-pd-2');
    await sim.waitFor(() => sim.pdState('demo-pd-2') === 'running', 3000, 'demo-pd-2 running');
    expect(sim.members()).toHaveLength(3);
  });

  test('records a split brain when discovery tells a second pod to bootstrap', async () => {
    const sim = await startSim();
    const discovery = await startDiscovery((host) => ({ status: 200, body: `--initial-cluster=${host.split('.')[0]}=http://${host}:2380` }));
    cleanups.push(() => discovery.close());
    sim.discoveryUrl = discovery.url;
    sim.pdStart('demo-pd-0');
    await sim.waitFor(() => sim.leader() !== undefined, 3000, 'a leader');
    sim.pdStart('demo-pd-1');
    await sim.waitFor(() => sim.splitBrain.length > 0, 3000, 'a split brain');
    expect(sim.splitBrain[0]).toMatch(/^demo-pd-1 bootstrapped a second cluster/);
    expect(sim.pdState('demo-pd-1')).toBe('split');
    expect(sim.members().map((m) => m.name)).toEqual(['demo-pd-0']);
  });

  test('transfers the leader after a delay when the target runs, and refuses a stopped or unknown target', async () => {
    const sim = await startSim();
    await formPdCluster(sim, 3);

    expect((await call('POST', `${sim.url}/pd/api/v1/leader/transfer/demo-pd-2`)).status).toBe(200);
    await sim.waitFor(() => sim.leader() === 'demo-pd-2', 3000, 'leader demo-pd-2');
    expect(sim.transfers).toEqual([{ from: 'demo-pd-0', to: 'demo-pd-2', time: expect.any(Number) }]);
    expect((await call('GET', `${sim.url}/pd/api/v1/leader`)).body.name).toBe('demo-pd-2');

    sim.pdStop('demo-pd-1');
    const refused = await call('POST', `${sim.url}/pd/api/v1/leader/transfer/demo-pd-1`);
    expect(refused).toEqual({ status: 500, body: 'failed to transfer leader: member demo-pd-1 is not running' });
    expect((await call('POST', `${sim.url}/pd/api/v1/leader/transfer/nobody`)).status).toBe(500);
  });

  test('stopping the leader is recorded; the lowest-named running member is elected; no majority, no leader', async () => {
    const sim = await startSim();
    await formPdCluster(sim, 3);

    sim.pdStop('demo-pd-0');
    expect(sim.stopsWhileLeader).toEqual([{ pod: 'demo-pd-0', time: expect.any(Number) }]);
    expect(sim.leader()).toBeUndefined();
    await sim.waitFor(() => sim.leader() === 'demo-pd-1', 3000, 'leader demo-pd-1');
    const health = (await call('GET', `${sim.url}/pd/api/v1/health`)).body;
    expect(health.map((h: { health: boolean }) => h.health)).toEqual([false, true, true]);

    // A follower stop that loses the majority drops the leader but is no leader stop.
    sim.pdStop('demo-pd-2');
    expect(sim.leader()).toBeUndefined();
    expect(await call('GET', `${sim.url}/pd/api/v1/health`)).toEqual({ status: 503, body: 'no leader' });
    sim.pdStop('demo-pd-1');
    expect(sim.stopsWhileLeader).toHaveLength(1);

    sim.pdStart('demo-pd-2');
    sim.pdStart('demo-pd-0');
    await sim.waitFor(() => sim.leader() === 'demo-pd-0', 3000, 'leader demo-pd-0 with data');
  });
});

// ---- TiKV stores and schedulers ----

describe('TiKV stores', () => {
  test('stores register with ids from 1 and the leaders spread evenly', async () => {
    const sim = await withStores();
    expect(sim.stores().map((s) => [s.id, s.pod, s.state])).toEqual([
      [1, 'demo-tikv-0', 'Up'],
      [2, 'demo-tikv-1', 'Up'],
      [3, 'demo-tikv-2', 'Up'],
    ]);
    expect(leaders(sim)).toEqual([100, 100, 100]);

    const stores = (await call('GET', `${sim.url}/pd/api/v1/stores`)).body;
    expect(stores.count).toBe(3);
    expect(stores.stores[1].store).toEqual({
      id: 2,
      address: 'demo-tikv-1.demo-tikv-peer.ns.svc:20160',
      state: 0,
      state_name: 'Up',
      labels: [],
      status_address: 'demo-tikv-1.demo-tikv-peer.ns.svc:20180',
    });
    expect(stores.stores[1].status).toMatchObject({ leader_count: 100, region_count: 300 });
    expect(new Date(stores.stores[1].status.last_heartbeat_ts).getTime()).toBe(sim.stores()[1].lastHeartbeat);

    expect((await call('GET', `${sim.url}/pd/api/v1/store/3`)).body.store.address).toBe(sim.tikvAddress('demo-tikv-2'));
    expect((await call('GET', `${sim.url}/pd/api/v1/store/9`)).status).toBe(404);
  });

  test('an evict-leader scheduler drains its store by evictRate leaders per round', async () => {
    const sim = await withStores();
    expect(await call('POST', `${sim.url}/pd/api/v1/schedulers`, { name: 'evict-leader-scheduler', store_id: 3 })).toMatchObject({ status: 200 });
    expect((await call('GET', `${sim.url}/pd/api/v1/schedulers`)).body).toContain('evict-leader-scheduler-3');
    expect(await call('POST', `${sim.url}/pd/api/v1/schedulers`, { name: 'evict-leader-scheduler', store_id: 3 })).toEqual({
      status: 500,
      body: 'scheduler existed',
    });

    const drained: number[] = [];
    for (let i = 0; i < 5; i++) {
      sim.tick();
      drained.push(sim.stores()[2].leaderCount);
      expect(sum(leaders(sim))).toBe(300);
    }
    expect(drained).toEqual([70, 40, 10, 0, 0]);
    expect(leaders(sim)).toEqual([150, 150, 0]);

    expect((await call('DELETE', `${sim.url}/pd/api/v1/schedulers/evict-leader-scheduler-3`)).status).toBe(200);
    expect((await call('DELETE', `${sim.url}/pd/api/v1/schedulers/evict-leader-scheduler-3`)).status).toBe(404);
    expect(sim.schedulerLog.map((c) => [c.op, c.storeId])).toEqual([
      ['add', 3],
      ['remove', 3],
    ]);

    // Without the scheduler the balancer brings the leaders back.
    ticks(sim, 20);
    expect(leaders(sim)).toEqual([100, 100, 100]);
  });

  test('a stuck eviction does not progress until released; with no store to take leaders none move', async () => {
    const sim = await withStores({ stuckEviction: [2] });
    await call('POST', `${sim.url}/pd/api/v1/schedulers`, { name: 'evict-leader-scheduler', store_id: 2 });
    ticks(sim, 10);
    expect(sim.store('demo-tikv-1')?.leaderCount).toBe(100);
    sim.setEvictionStuck(2, false);
    sim.tick();
    expect(sim.store('demo-tikv-1')?.leaderCount).toBe(70);

    for (const id of [1, 3]) await call('POST', `${sim.url}/pd/api/v1/schedulers`, { name: 'evict-leader-scheduler', store_id: id });
    const before = leaders(sim);
    ticks(sim, 10);
    expect(leaders(sim)).toEqual(before);
  });

  test('stopping a TiKV that holds leaders is recorded; the store turns Disconnected, Down, and Up again', async () => {
    const sim = await withStores({ tickMs: 5, storeDownMs: 50 });
    sim.tikvStop('demo-tikv-1');
    expect(sim.stopsWithLeaders).toEqual([{ pod: 'demo-tikv-1', storeId: 2, leaderCount: 100, time: expect.any(Number) }]);
    expect(sim.store('demo-tikv-1')).toMatchObject({ state: 'Disconnected', leaderCount: 0 });
    expect(sum(leaders(sim))).toBe(300);
    await sim.waitFor(() => sim.store('demo-tikv-1')?.state === 'Down', 3000, 'store 2 Down');
    expect((await call('GET', `${sim.url}/pd/api/v1/stores`)).body.stores[1].store).toMatchObject({ state: 0, state_name: 'Down' });

    sim.tikvStart('demo-tikv-1');
    expect(sim.store('demo-tikv-1')).toMatchObject({ id: 2, state: 'Up' });
    await sim.waitFor(() => sim.store('demo-tikv-1')?.leaderCount === 100, 3000, 'leaders back on store 2');

    // Drained first, then stopped: nothing to record.
    await call('POST', `${sim.url}/pd/api/v1/schedulers`, { name: 'evict-leader-scheduler', store_id: 2 });
    await sim.waitFor(() => sim.store('demo-tikv-1')?.leaderCount === 0, 3000, 'store 2 drained');
    sim.tikvStop('demo-tikv-1');
    expect(sim.stopsWithLeaders).toHaveLength(1);
  });

  test('a deleted store goes Offline and turns Tombstone once its regions can move', async () => {
    const sim = await withStores({}, 4);
    expect((await call('DELETE', `${sim.url}/pd/api/v1/store/4`)).status).toBe(200);
    expect((await call('GET', `${sim.url}/pd/api/v1/store/4`)).body.store).toMatchObject({ state: 1, state_name: 'Offline' });
    ticks(sim, 20);
    expect(sim.store('demo-tikv-3')).toMatchObject({ state: 'Tombstone', leaderCount: 0, regionCount: 0 });
    expect((await call('GET', `${sim.url}/pd/api/v1/stores`)).body.count).toBe(3);
    const tombstones = (await call('GET', `${sim.url}/pd/api/v1/stores?state=2`)).body;
    expect(tombstones.stores.map((s: { store: { id: number } }) => s.store.id)).toEqual([4]);
    expect((await call('DELETE', `${sim.url}/pd/api/v1/store/4`)).status).toBe(410);

    // Three stores left for three replicas: the next one cannot drain.
    await call('DELETE', `${sim.url}/pd/api/v1/store/3`);
    ticks(sim, 20);
    expect(sim.store('demo-tikv-2')?.state).toBe('Offline');
  });

  test('can list evict-leader schedulers as one entry, with the store ids in the scheduler config', async () => {
    const sim = await withStores({ mergedEvictScheduler: true, stuckEviction: [1, 3] });
    for (const id of [1, 3]) await call('POST', `${sim.url}/pd/api/v1/schedulers`, { name: 'evict-leader-scheduler', store_id: id });
    const list = (await call('GET', `${sim.url}/pd/api/v1/schedulers`)).body;
    expect(list.filter((s: string) => s.startsWith('evict-leader'))).toEqual(['evict-leader-scheduler']);
    const config = (await call('GET', `${sim.url}/pd/api/v1/scheduler-config/evict-leader-scheduler/list`)).body;
    expect(Object.keys(config['store-id-ranges'])).toEqual(['1', '3']);
  });
});

// ---- TiKV data ----

describe('TiKV data', () => {
  const tombstoneStore4 = async (sim: PdSim) => {
    expect((await call('DELETE', `${sim.url}/pd/api/v1/store/4`)).status).toBe(200);
    ticks(sim, 20);
    expect(sim.store('demo-tikv-3')?.state).toBe('Tombstone');
  };

  test('a TiKV remembers its store: restarts on its data resume it, Offline ones stay Offline', async () => {
    const sim = await withStores();
    expect(['demo-tikv-0', 'demo-tikv-1', 'demo-tikv-2'].map((p) => sim.tikvDataStoreId(p))).toEqual([1, 2, 3]);
    expect(sim.tikvState('demo-tikv-2')).toBe('running');
    sim.tikvStop('demo-tikv-2');
    expect(sim.tikvState('demo-tikv-2')).toBe('stopped');
    expect(sim.tikvDataStoreId('demo-tikv-2')).toBe(3);
    sim.tikvStart('demo-tikv-2');
    expect(sim.store('demo-tikv-2')).toMatchObject({ id: 3, state: 'Up' });

    // Three stores for three replicas: an Offline one cannot drain, and a restart keeps it Offline.
    await call('DELETE', `${sim.url}/pd/api/v1/store/3`);
    sim.tikvStop('demo-tikv-2');
    sim.tikvStart('demo-tikv-2');
    ticks(sim, 5);
    expect(sim.store('demo-tikv-2')).toMatchObject({ id: 3, state: 'Offline' });
    expect(sim.tikvState('demo-tikv-2')).toBe('running');
    expect(sim.stores()).toHaveLength(3);
    expect(sim.processFailures).toEqual([]);
  });

  test('a TiKV on the data of a Tombstone store exits, until the data is wiped', async () => {
    const sim = await withStores({}, 4);
    await tombstoneStore4(sim);
    // The running tikv-server exits as its store turns Tombstone.
    expect(sim.tikvState('demo-tikv-3')).toBe('failed');
    expect(sim.processFailures.map((f) => [f.pod, f.reason])).toEqual([['demo-tikv-3', 'tikv-server exited: store 4 is tombstone']]);

    sim.tikvStop('demo-tikv-3');
    sim.tikvStart('demo-tikv-3');
    expect(sim.tikvState('demo-tikv-3')).toBe('failed');
    expect(sim.processFailures).toHaveLength(2);
    expect(sim.processFailures[1]).toMatchObject({ pod: 'demo-tikv-3', reason: 'tikv-server exited: store 4 is tombstone' });
    // The container keeps restarting it; the same failure is recorded once.
    ticks(sim, 5);
    expect(sim.processFailures).toHaveLength(2);
    expect(sim.stores().map((s) => [s.id, s.state])).toEqual([
      [1, 'Up'],
      [2, 'Up'],
      [3, 'Up'],
      [4, 'Tombstone'],
    ]);
    expect(sim.store('demo-tikv-3')).toMatchObject({ id: 4, state: 'Tombstone' });

    // The volume is lost: the next restart registers a new store.
    sim.tikvWipe('demo-tikv-3');
    expect(sim.tikvDataStoreId('demo-tikv-3')).toBeUndefined();
    sim.tick();
    expect(sim.tikvState('demo-tikv-3')).toBe('running');
    expect(sim.store('demo-tikv-3')).toMatchObject({ id: 5, state: 'Up', address: sim.tikvAddress('demo-tikv-3') });
    expect(sim.tikvDataStoreId('demo-tikv-3')).toBe(5);
    ticks(sim, 50);
    expect(sum(leaders(sim))).toBe(300);
    expect(sim.store('demo-tikv-3')!.leaderCount).toBe(75);
    expect(sim.processFailures).toHaveLength(2);
  });

  test('a wiped TiKV started again registers a new store once its old store is Tombstone', async () => {
    const sim = await withStores({}, 4);
    await tombstoneStore4(sim);
    sim.tikvStop('demo-tikv-3');
    sim.tikvWipe('demo-tikv-3');
    sim.tikvStart('demo-tikv-3');
    expect(sim.tikvState('demo-tikv-3')).toBe('running');
    expect(sim.store('demo-tikv-3')).toMatchObject({ id: 5, state: 'Up' });
    expect(sim.processFailures).toHaveLength(1);
  });

  test('PD refuses a TiKV without data whose address a store that is not Tombstone still holds', async () => {
    const sim = await withStores({}, 4);
    sim.tikvStop('demo-tikv-3');
    sim.tikvWipe('demo-tikv-3');
    sim.tikvStart('demo-tikv-3');
    expect(sim.tikvState('demo-tikv-3')).toBe('failed');
    expect(sim.processFailures.map((f) => f.reason)).toEqual([
      `tikv-server exited: duplicated store address: ${sim.tikvAddress('demo-tikv-3')}, already registered by store 4`,
    ]);
    expect(sim.store('demo-tikv-3')).toMatchObject({ id: 4, state: 'Disconnected' });

    // Once the old store is deleted and drained, the restarting container gets a store of its own.
    expect((await call('DELETE', `${sim.url}/pd/api/v1/store/4`)).status).toBe(200);
    ticks(sim, 20);
    expect(sim.stores().map((s) => [s.id, s.state])).toEqual([
      [1, 'Up'],
      [2, 'Up'],
      [3, 'Up'],
      [4, 'Tombstone'],
      [5, 'Up'],
    ]);
    expect(sim.store('demo-tikv-3')?.id).toBe(5);
    expect(sim.processFailures).toHaveLength(1);
  });

  test('a wipe does not stop a running TiKV', async () => {
    const sim = await withStores();
    sim.tikvWipe('demo-tikv-0');
    ticks(sim, 5);
    expect(sim.tikvState('demo-tikv-0')).toBe('running');
    expect(sim.store('demo-tikv-0')).toMatchObject({ id: 1, state: 'Up', leaderCount: 100 });
    sim.tikvStop('demo-tikv-0');
    expect(sim.stopsWithLeaders.map((s) => s.storeId)).toEqual([1]);
  });
});

// ---- the world: both simulators around rendered manifests ----

describe('World', () => {
  /** A world with one Pod per component (no controller sets replicas), PD formed through a stub discovery. */
  async function startWorld(): Promise<World> {
    const w = await World.start({ cluster: simCluster(), render, pd: { electionMs: 20, discoveryRetryMs: 10 } });
    cleanups.push(() => w.close());
    const discovery = await startDiscovery(operatorLikeDiscovery(w.pd, 'c-pd-0'));
    cleanups.push(() => discovery.close());
    w.pd.discoveryUrl = discovery.url;
    await w.waitFor(() => ['pd', 'tikv', 'tidb'].every((c) => w.pods(c).length === 1 && ready(w.pods(c)[0])), 10_000, 'one Ready Pod per component');
    return w;
  }
  const ready = (pod: Record<string, any>): boolean =>
    (pod.status?.conditions ?? []).some((c: { type: string; status: string }) => c.type === 'Ready' && c.status === 'True');
  const podReady = (w: World, name: string) => ready(w.kube.get('Pod', 'ns', name)!);

  test('stopping a process inside its Pod turns the Pod not Ready; starting it again, Ready', async () => {
    const w = await startWorld();
    const unready: string[] = [];
    w.kube.on('podUnready', (p) => unready.push(p.metadata.name));
    const uid = w.kube.get('Pod', 'ns', 'c-tikv-0')!.metadata.uid;

    w.stopTikv('c-tikv-0');
    await w.waitFor(() => !podReady(w, 'c-tikv-0'), 2000, 'c-tikv-0 not Ready');
    expect(w.pd.store('c-tikv-0')?.state).toBe('Disconnected');
    expect(w.kube.get('Pod', 'ns', 'c-tikv-0')).toMatchObject({ metadata: { uid }, status: { phase: 'Running' } });
    w.startTikv('c-tikv-0');
    await w.waitFor(() => podReady(w, 'c-tikv-0'), 2000, 'c-tikv-0 Ready again');
    expect(w.pd.store('c-tikv-0')).toMatchObject({ id: 1, state: 'Up' });

    w.stopPd('c-pd-0');
    await w.waitFor(() => !podReady(w, 'c-pd-0'), 2000, 'c-pd-0 not Ready');
    w.startPd('c-pd-0');
    await w.waitFor(() => podReady(w, 'c-pd-0') && w.pd.leader() === 'c-pd-0', 2000, 'c-pd-0 Ready again');
    expect(unready).toEqual(['c-tikv-0', 'c-pd-0']);
    expect(w.stops).toEqual([]);

    expect(() => w.stopPd('c-tikv-0')).toThrow('Pod c-tikv-0 is not a pd Pod');
    expect(() => w.stopTikv('c-tikv-9')).toThrow('no Pod ns/c-tikv-9');
  });

  test('lists claims per component; a deleted claim wipes the data of its Pod', async () => {
    const w = await startWorld();
    expect(w.pvcs('pd').map((c) => c.metadata.name)).toEqual(['pd-c-pd-0']);
    expect(w.pvcs('tikv').map((c) => c.metadata.name)).toEqual(['tikv-c-tikv-0']);
    expect(w.pvcs('tidb')).toEqual([]);
    expect(w.pd.tikvDataStoreId('c-tikv-0')).toBe(1);
    expect(w.pd.members()[0].hasData).toBe(true);

    // Another cluster's claim with a similar name wipes nothing.
    w.kube.apply({ apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'tikv-cc-tikv-0', namespace: 'ns' }, spec: {} });
    expect(w.pvcs('tikv').map((c) => c.metadata.name)).toEqual(['tikv-c-tikv-0']);
    w.kube.delete('PersistentVolumeClaim', 'ns', 'tikv-cc-tikv-0');
    expect(w.pd.tikvDataStoreId('c-tikv-0')).toBe(1);

    const res = await fetch(`${w.kube.url}/api/v1/namespaces/ns/persistentvolumeclaims/tikv-c-tikv-0`, { method: 'DELETE' });
    expect(res.status).toBe(200);
    expect(w.pd.tikvDataStoreId('c-tikv-0')).toBeUndefined();
    w.kube.delete('PersistentVolumeClaim', 'ns', 'pd-c-pd-0');
    expect(w.pd.members()[0].hasData).toBe(false);
  });

  test('records a Pod created while a claim of its is marked for deletion', async () => {
    const w = await startWorld();
    const res = await fetch(`${w.kube.url}/api/v1/namespaces/ns/persistentvolumeclaims/tikv-c-tikv-0`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/merge-patch+json' },
      body: JSON.stringify({ metadata: { annotations: { 'tidb.pingcap.com/pvc-defer-deleting': '2024-01-01T00:00:00Z' } } }),
    });
    expect(res.status).toBe(200);
    expect(w.violations).toEqual([]);
    w.kube.delete('Pod', 'ns', 'c-tikv-0');
    await w.waitFor(() => w.violations.length > 0, 3000, 'a violation');
    expect(w.violations).toEqual([
      'Pod c-tikv-0 was created on PersistentVolumeClaim tikv-c-tikv-0, which is marked for deletion (tidb.pingcap.com/pvc-defer-deleting: "2024-01-01T00:00:00Z")',
    ]);
  });
});

// ---- faults ----

describe('faults', () => {
  test('while down, connections fail; afterwards the API answers again', async () => {
    const sim = await startSim();
    await formPdCluster(sim, 1);
    const answered = sim.requests.length;
    sim.down = true;
    await expect(call('GET', `${sim.url}/pd/api/v1/health`)).rejects.toThrow();
    expect(sim.requests).toHaveLength(answered);
    sim.down = false;
    expect((await call('GET', `${sim.url}/pd/api/v1/health`)).status).toBe(200);
  });

  test('failNext answers the matching requests with the given status, the given number of times', async () => {
    const sim = await startSim();
    await formPdCluster(sim, 1);
    sim.failNext('GET /pd/api/v1/stores', 500, 2);
    sim.failNext(/^POST .*schedulers/, 503);
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await call('GET', `${sim.url}/pd/api/v1/stores`)).status);
    expect(statuses).toEqual([500, 500, 200]);
    expect(await call('POST', `${sim.url}/pd/api/v1/schedulers`, {})).toEqual({ status: 503, body: 'injected failure' });
    expect((await call('GET', `${sim.url}/pd/api/v1/health`)).status).toBe(200);
    expect(sim.requests.slice(-5).map((r) => `${r.method} ${r.path} ${r.status}`)).toEqual([
      'GET /pd/api/v1/stores 500',
      'GET /pd/api/v1/stores 500',
      'GET /pd/api/v1/stores 200',
      'POST /pd/api/v1/schedulers 503',
      'GET /pd/api/v1/health 200',
    ]);
  });
});
