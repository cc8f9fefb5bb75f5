/**
 * The PD micro-service simulators against what the real servers answer (tikv/pd v8.5.7 and earlier
 * releases where they differ): PD in API mode (`/pd/api/v2/ms/members|primary/{service}`, pd-http)
 * and the TSO and scheduling servers (test/sim/pdms.ts: registry entries, primary election, primary
 * transfer behind the redirector, TSO health and keyspace group), all over real HTTP.
 */
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gunzipSync } from 'node:zlib';
import { PdSim, type PdSimOptions } from '../../sim/pd-api';
import { MsRegistry, PdmsSim, bindJsonStringMap, decodeRegistryEntry, type PdmsService, type PdmsSimOptions } from '../../sim/pdms';
import { World, simCluster } from '../../sim/world';
import { render } from '../../support/render';
import { PdClient, PdError, transferMsPrimary } from '../../../src/controller/clients/pd';

// ---- helpers ----

interface Reply {
  status: number;
  /** The body as sent, gunzipped when it came gzipped. */
  text: string;
  /** The bytes as sent. */
  raw: Buffer;
  type?: string;
  headers: http.IncomingHttpHeaders;
}

/** A plain node:http request (no Accept-Encoding unless given), the way the controller's client asks. */
function call(method: string, url: string, body?: string, headers: Record<string, string> = {}): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, agent: false, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const raw = Buffer.concat(chunks);
        const text = (res.headers['content-encoding'] === 'gzip' ? gunzipSync(raw) : raw).toString('utf8');
        resolve({ status: res.statusCode ?? 0, text, raw, type: res.headers['content-type'], headers: res.headers });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** One port for every listener (each on its own loopback address), unlikely to be taken. */
const PORT = 20000 + Math.floor(Math.random() * 20000);
const PD_IPS = ['127.0.7.1', '127.0.7.2', '127.0.7.3'];
const GIN_JSON = 'application/json; charset=utf-8';
const TEXT = 'text/plain; charset=utf-8';

/** Listens on a free loopback port until the test ends; the base URL. */
async function listenForTest(server: http.Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanups.push(
    () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  );
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A discovery service like the operator's: the first PD pod bootstraps, the others join the members PD lists. */
async function startDiscovery(pd: PdSim): Promise<string> {
  const server = http.createServer((req, res) => {
    void (async () => {
      const peerHost = Buffer.from((req.url ?? '').replace(/^\/new\//, ''), 'base64')
        .toString('utf8')
        .replace(/:2380\n$/, '');
      const pod = peerHost.split('.')[0];
      if (pod === 'demo-pd-0') return res.writeHead(200).end(`--initial-cluster=${pod}=http://${peerHost}:2380\n`);
      const members = await call('GET', `${pd.url}/pd/api/v1/members`).catch(() => undefined);
      if (members?.status !== 200) return res.writeHead(500).end('PD is not ready');
      const urls = (JSON.parse(members.text).members as { name: string; peer_urls: string[] }[])
        .filter((m) => m.name !== pod)
        .map((m) => m.peer_urls[0].replace(/:2380$/, ':2379'));
      res.writeHead(200).end(`--join=${urls.join(',')}\n`);
    })();
  });
  return listenForTest(server);
}

/** PD (in API mode unless told otherwise) with `members` running members, each on its own IP. */
async function startPd(options: Partial<PdSimOptions> = {}, members = 1): Promise<PdSim> {
  const pd = await PdSim.start({
    cluster: 'demo',
    namespace: 'ns',
    electionMs: 20,
    transferMs: 10,
    discoveryRetryMs: 10,
    regionLoadMs: 50,
    clientPort: PORT,
    microservices: true,
    keyspaceGroupAllocMs: 20,
    ...options,
  });
  cleanups.push(() => pd.close());
  pd.discoveryUrl = await startDiscovery(pd);
  for (let i = 0; i < members; i++) pd.pdStart(`demo-pd-${i}`, undefined, PD_IPS[i]);
  await pd.waitFor(() => pd.members().filter((m) => m.running).length === members && pd.leader() !== undefined, 3000, 'PD running');
  await sleep(20); // the member listeners bind
  return pd;
}

/** Each micro-service Pod's loopback address. */
const IPS: Record<string, string> = {
  'demo-tso-0': '127.0.8.1',
  'demo-tso-1': '127.0.8.2',
  'demo-tso-2': '127.0.8.3',
  'demo-scheduling-0': '127.0.8.11',
  'demo-scheduling-1': '127.0.8.12',
  'demo-scheduling-2': '127.0.8.13',
};
const url = (pod: string) => `http://${IPS[pod]}:${PORT}`;
const addr = (pod: string) => `http://${pod}.${pod.replace(/-\d+$/, '')}-peer.ns.svc:${PORT}`;
const serviceOf = (pod: string) => (pod.startsWith('demo-tso') ? 'tso' : 'scheduling') as PdmsService;

/** The leases are each release's own (3 s / 5 s, scaled 1/10) unless a test sets them. */
function startPdms(pd: PdSim, options: Partial<PdmsSimOptions> = {}): PdmsSim {
  const sim = new PdmsSim(pd, { cluster: 'demo', namespace: 'ns', port: PORT, electionMs: 20, retryMs: 10, ...options });
  cleanups.push(() => sim.close());
  return sim;
}

/** Starts the Pods' servers one after the other (so they register in this order). */
async function startServers(sim: PdmsSim, pods: string[], version = 'v8.5.7'): Promise<void> {
  for (const pod of pods) await sim.serverStart(pod, IPS[pod], serviceOf(pod), version);
}

async function primaryOf(sim: PdmsSim, service: PdmsService): Promise<string> {
  await sim.waitFor(() => sim.primary(service) !== undefined, 2000, `a ${service} primary`);
  return sim.primary(service)!.pod;
}

const transfer = (pod: string, newPrimary: string, headers: Record<string, string> = {}) =>
  call('POST', `${url(pod)}/${serviceOf(pod)}/api/v1/primary/transfer`, JSON.stringify({ new_primary: newPrimary }), headers);

// ---- PD in API mode: /pd/api/v2/ms/* ----

describe('PD: /pd/api/v2/ms/members/{service}', () => {
  test('null until a server registers; then the entries in key (address) order, indented by 4 spaces', async () => {
    const pd = await startPd();
    expect(await call('GET', `${pd.url}/pd/api/v2/ms/members/tso`)).toMatchObject({ status: 200, text: 'null', type: GIN_JSON });
    const sim = startPdms(pd);
    await startServers(sim, ['demo-tso-1', 'demo-tso-0']);
    const reply = await call('GET', `${pd.url}/pd/api/v2/ms/members/tso`);
    expect(reply).toMatchObject({ status: 200, type: GIN_JSON });
    const stamps = (JSON.parse(reply.text) as { 'start-timestamp': number }[]).map((e) => e['start-timestamp']);
    for (const t of stamps) expect(Math.abs(t - Date.now() / 1000)).toBeLessThan(5);
    const entry = (pod: string, started: number) =>
      [
        '    {',
        `        "name": "${pod}",`,
        `        "service-addr": "${addr(pod)}",`,
        '        "version": "v8.5.7",',
        '        "git-hash": "6dce4a68e3e93b523657bd05cba89a86d64de117",',
        '        "deploy-path": "/",',
        `        "start-timestamp": ${started}`,
        '    }',
      ].join('\n');
    expect(reply.text).toBe(`[\n${entry('demo-tso-0', stamps[0])},\n${entry('demo-tso-1', stamps[1])}\n]`);
    // Each service has its own keys; resource_manager is known, and has none here.
    expect((await call('GET', `${pd.url}/pd/api/v2/ms/members/scheduling`)).text).toBe('null');
    expect((await call('GET', `${pd.url}/pd/api/v2/ms/members/resource_manager`)).text).toBe('null');
  });

  test('an unknown service is 500 with the error as a compact JSON string', async () => {
    const pd = await startPd();
    expect(await call('GET', `${pd.url}/pd/api/v2/ms/members/TSO`)).toMatchObject({
      status: 500,
      text: '"unknown service name TSO"',
      type: GIN_JSON,
    });
    expect(await call('GET', `${pd.url}/pd/api/v2/ms/members/api`)).toMatchObject({ status: 500, text: '"unknown service name api"' });
  });

  test('PD not in API mode: 404 "not support micro service" for both routes; other methods and paths gin\'s 404', async () => {
    const pd = await startPd({ microservices: false });
    const notSupported = { status: 404, text: '"not support micro service"', type: GIN_JSON };
    expect(await call('GET', `${pd.url}/pd/api/v2/ms/members/tso`)).toMatchObject(notSupported);
    expect(await call('GET', `${pd.url}/pd/api/v2/ms/primary/scheduling`)).toMatchObject(notSupported);
    const gin404 = { status: 404, text: '404 page not found', type: 'text/plain' };
    expect(await call('POST', `${pd.url}/pd/api/v2/ms/members/tso`)).toMatchObject(gin404);
    expect(await call('GET', `${pd.url}/pd/api/v2/ms/members/`)).toMatchObject(gin404);
    expect(await call('GET', `${pd.url}/pd/api/v2/ms/members/tso/x`)).toMatchObject(gin404);
    pd.microservices = true;
    expect(await call('GET', `${pd.url}/pd/api/v2/ms/members/tso`)).toMatchObject({ status: 200, text: 'null' });
  });

  test('a follower forwards /ms/* to the leader (without one: 503, no wait); an unknown v2 path is its own 404 from v8.5.2', async () => {
    const pd = await startPd({ version: 'v8.5.2' }, 2);
    const sim = startPdms(pd);
    await startServers(sim, ['demo-scheduling-0']);
    const follower = `http://${PD_IPS[1]}:${PORT}`;
    expect(pd.leader()).toBe('demo-pd-0');
    expect(JSON.parse((await call('GET', `${follower}/pd/api/v2/ms/members/scheduling`)).text)).toMatchObject([
      { name: 'demo-scheduling-0' },
    ]);
    pd.pdStop('demo-pd-0'); // no quorum: no leader
    const started = Date.now();
    expect(await call('GET', `${follower}/pd/api/v2/ms/primary/scheduling`)).toMatchObject({
      status: 503,
      text: '"[PD:server:ErrLeaderNil]leader is nil"',
      type: GIN_JSON,
    });
    expect(Date.now() - started).toBeLessThan(1000);
    expect(await call('GET', `${follower}/pd/api/v2/ms/nope`)).toMatchObject({ status: 404, text: '404 page not found' });
  });

  test('v8.5.0: every v2 request goes through the redirector, an unknown path too', async () => {
    const pd = await startPd({ version: 'v8.5.0' }, 2);
    const follower = `http://${PD_IPS[1]}:${PORT}`;
    expect(await call('GET', `${follower}/pd/api/v2/ms/members/tso`)).toMatchObject({ status: 200, text: 'null' });
    pd.pdStop('demo-pd-0');
    expect((await call('GET', `${follower}/pd/api/v2/ms/nope`)).status).toBe(503);
  });
});

describe('PD: /pd/api/v2/ms/primary/{service}', () => {
  test("the primary's advertise address as an indented JSON string", async () => {
    const pd = await startPd();
    const sim = startPdms(pd);
    await startServers(sim, ['demo-tso-0']);
    await primaryOf(sim, 'tso');
    expect(await call('GET', `${pd.url}/pd/api/v2/ms/primary/tso`)).toMatchObject({
      status: 200,
      text: `"${addr('demo-tso-0')}"`,
      type: GIN_JSON,
    });
  });

  test('waits 25 looks 100 ms apart (2.5 s, scaled 1/10) for a primary: the one elected meanwhile, else ""; shorter than any lease', async () => {
    const pd = await startPd();
    const sim = startPdms(pd, { electionMs: 100 });
    let started = Date.now();
    expect(await call('GET', `${pd.url}/pd/api/v2/ms/primary/scheduling`)).toMatchObject({ status: 200, text: '""', type: GIN_JSON });
    const waited = Date.now() - started;
    expect(waited).toBeGreaterThanOrEqual(240);
    // In reality 2.5 s against leases of 3 s (up to v8.5.4) or 5 s: a killed primary's key outlives the wait.
    expect(waited).toBeLessThan(Math.min(sim.leaderLeaseMs('v8.5.4'), sim.leaderLeaseMs('v8.5.7')));
    // Any name waits the same: an unknown service never gets a primary.
    started = Date.now();
    const pending = call('GET', `${pd.url}/pd/api/v2/ms/primary/scheduling`);
    await startServers(sim, ['demo-scheduling-0']);
    expect((await pending).text).toBe(`"${addr('demo-scheduling-0')}"`);
    expect(Date.now() - started).toBeGreaterThanOrEqual(90);
  });
});

// ---- the servers: registry entries ----

describe('registry entries and names by release', () => {
  test('--name from v8.3.0 (the pod name; the peer FQDN with a cluster domain); <svc>-<hostname> without it; no name field before v8.3.0', async () => {
    const pd = await startPd();
    const sim = startPdms(pd);
    await sim.serverStart('demo-tso-0', IPS['demo-tso-0'], 'tso', 'v8.2.0');
    await sim.serverStart('demo-tso-1', IPS['demo-tso-1'], 'tso', 'v8.3.0', { name: null });
    await sim.serverStart('demo-tso-2', IPS['demo-tso-2'], 'tso', 'v8.4.0', { name: null });
    await sim.serverStart('demo-scheduling-0', IPS['demo-scheduling-0'], 'scheduling', 'v7.5.0');
    await sim.serverStart('demo-scheduling-1', IPS['demo-scheduling-1'], 'scheduling', 'v8.3.0', { name: null });
    expect(sim.members('tso').map((m) => m.name)).toEqual(['TSO-demo-tso-0', 'TSO-demo-tso-1', 'tso-demo-tso-2']);
    expect(sim.members('scheduling').map((m) => m.name)).toEqual(['Scheduling-demo-scheduling-0', 'Scheduling-demo-scheduling-1']);

    const tso = JSON.parse((await call('GET', `${pd.url}/pd/api/v2/ms/members/tso`)).text);
    // v8.2's entry has no name: PD's struct leaves it empty.
    expect(tso.map((e: Record<string, unknown>) => [e.name, e.version, e['git-hash']])).toEqual([
      ['', 'v8.2.0', 'c0ee2cd6c2eea7ad9372cc5bd00f6774abad6834'],
      ['TSO-demo-tso-1', 'v8.3.0', '8b35fcdb1e12d29204d4f130c2169fdd5478fd33'],
      ['tso-demo-tso-2', 'v8.4.0', 'fc6e45cc348da147e90fbac6cc665366b11db8cd'],
    ]);
    // v7.5 wrote only the address.
    const scheduling = JSON.parse((await call('GET', `${pd.url}/pd/api/v2/ms/members/scheduling`)).text);
    expect(scheduling[0]).toEqual({
      name: '',
      'service-addr': addr('demo-scheduling-0'),
      version: '',
      'git-hash': '',
      'deploy-path': '',
      'start-timestamp': 0,
    });
    expect(scheduling[1].name).toBe('Scheduling-demo-scheduling-1');
  });

  test('--name before v8.3.0 ends the process; with a cluster domain the operator names it by its FQDN', async () => {
    const pd = await startPd();
    const sim = startPdms(pd, { clusterDomain: 'cluster.local' });
    await expect(sim.serverStart('demo-tso-0', IPS['demo-tso-0'], 'tso', 'v8.2.0', { name: 'demo-tso-0' })).rejects.toThrow(
      'unknown flag: --name',
    );
    expect(sim.members('tso')).toEqual([]);
    await sim.serverStart('demo-tso-1', IPS['demo-tso-1'], 'tso', 'v8.5.7');
    expect(sim.members('tso')[0]).toMatchObject({
      name: 'demo-tso-1.demo-tso-peer.ns.svc.cluster.local',
      serviceAddr: `http://demo-tso-1.demo-tso-peer.ns.svc.cluster.local:${PORT}`,
    });
  });

  test('a server starts (registers, listens, is running) only once PD has a cluster id', async () => {
    const pd = await PdSim.start({
      cluster: 'demo',
      namespace: 'ns',
      electionMs: 20,
      discoveryRetryMs: 10,
      clientPort: PORT,
      microservices: true,
    });
    cleanups.push(() => pd.close());
    const sim = startPdms(pd);
    const starting = sim.serverStart('demo-tso-0', IPS['demo-tso-0'], 'tso');
    await sleep(100);
    expect(sim.members('tso')).toMatchObject([{ state: 'waiting' }]);
    expect(sim.running('demo-tso-0')).toBe(false);
    await expect(call('GET', `${url('demo-tso-0')}/tso/api/v1/health`)).rejects.toThrow(/ECONNREFUSED/);
    pd.discoveryUrl = await startDiscovery(pd);
    pd.pdStart('demo-pd-0', undefined, PD_IPS[0]);
    await starting;
    expect(sim.running('demo-tso-0')).toBe(true);
    expect(pd.ms.entries('tso')).toHaveLength(1);
  });
});

describe('start-up before v8.3.0 (WaitAPIServiceReady, then InitClusterID: 5 tries 1 s apart, then log.Fatal)', () => {
  test('v8.2.0 waits for PD in API mode as long as it takes; v8.5.7 does not ask', async () => {
    const pd = await startPd({ microservices: false });
    const sim = startPdms(pd);
    const old = sim.serverStart('demo-scheduling-0', IPS['demo-scheduling-0'], 'scheduling', 'v8.2.0');
    await startServers(sim, ['demo-scheduling-1'], 'v8.5.7');
    await sleep(300);
    expect(sim.members('scheduling').map((m) => [m.pod, m.state])).toEqual([
      ['demo-scheduling-0', 'waiting'],
      ['demo-scheduling-1', 'running'],
    ]);
    pd.microservices = true;
    await old;
    expect(sim.running('demo-scheduling-0')).toBe(true);
  });

  test('PD answers but its etcd has no quorum: v8.2.0 gives up after 5 tries (the process exits), v8.5.7 waits', async () => {
    const pd = await startPd({}, 2);
    pd.pdStop('demo-pd-0'); // demo-pd-1 serves, without a leader
    await pd.waitFor(() => pd.leader() === undefined, 1000, 'no leader');
    const sim = startPdms(pd);
    const started = Date.now();
    const old = sim.serverStart('demo-tso-0', IPS['demo-tso-0'], 'tso', 'v8.2.0');
    const now = sim.serverStart('demo-tso-1', IPS['demo-tso-1'], 'tso', 'v8.5.7');
    await expect(old).rejects.toThrow('run server failed: failed to init cluster ID after retrying 5 times');
    expect(Date.now() - started).toBeGreaterThanOrEqual(450); // 5 × 1 s, scaled
    expect(sim.running('demo-tso-0')).toBe(false);
    expect(sim.members('tso').map((m) => [m.pod, m.state])).toEqual([['demo-tso-1', 'waiting']]);
    expect(pd.ms.entries('tso')).toEqual([]);
    pd.pdStart('demo-pd-0', undefined, PD_IPS[0]);
    await now;
    expect(sim.running('demo-tso-1')).toBe(true);
  });
});

// ---- the servers: election, stop, kill ----

describe('primary election', () => {
  test('a stopped primary (SIGTERM) revokes at once: its entry goes, another member is primary electionMs later', async () => {
    const pd = await startPd();
    const sim = startPdms(pd, { electionMs: 100 });
    await startServers(sim, ['demo-scheduling-0', 'demo-scheduling-1']);
    const first = await primaryOf(sim, 'scheduling');
    const other = first === 'demo-scheduling-0' ? 'demo-scheduling-1' : 'demo-scheduling-0';
    await sim.serverStop(first);
    expect(pd.ms.entries('scheduling')).toHaveLength(1);
    expect(sim.primary('scheduling')).toBeUndefined();
    const started = Date.now();
    // PD's GetPrimary waits for the next one.
    expect((await call('GET', `${pd.url}/pd/api/v2/ms/primary/scheduling`)).text).toBe(`"${addr(other)}"`);
    expect(Date.now() - started).toBeGreaterThanOrEqual(50);
    expect(sim.elections.map((e) => e.pod)).toEqual([first, other]);
    await expect(call('GET', `${url(first)}/scheduling/api/v1/primary/transfer`)).rejects.toThrow(/ECONNREFUSED/);
  });

  test('a killed primary keeps its key for the lease (PD names it, secondaries cannot forward to it), its entry for the registry TTL', async () => {
    const pd = await startPd();
    const sim = startPdms(pd, { leaseMs: 400, registryTtlMs: 700 });
    await startServers(sim, ['demo-tso-0', 'demo-tso-1']);
    const first = await primaryOf(sim, 'tso');
    const other = first === 'demo-tso-0' ? 'demo-tso-1' : 'demo-tso-0';
    await sim.serverKill(first);
    expect(sim.primary('tso')).toMatchObject({ pod: first, alive: false });
    expect((await call('GET', `${pd.url}/pd/api/v2/ms/primary/tso`)).text).toBe(`"${addr(first)}"`);
    // The secondary still sees a primary (health ok) but the proxy cannot reach it.
    expect(await call('GET', `${url(other)}/tso/api/v1/health`)).toMatchObject({ status: 200, text: '"ok"' });
    expect(await transfer(other, other)).toMatchObject({
      status: 500,
      text: '[PD:apiutil:ErrRedirect]redirect failed\n',
      type: TEXT,
      headers: { 'x-content-type-options': 'nosniff' },
    });
    await sleep(250);
    expect(sim.primary('tso')?.pod).toBe(first);
    await sim.waitFor(() => sim.primary('tso')?.pod === other, 1000, 'the other primary');
    expect(pd.ms.entries('tso')).toHaveLength(2);
    await sim.waitFor(() => pd.ms.entries('tso').length === 1, 1000, 'the killed entry expired');
  });

  test('/tso/api/v1/health: 500 text "no leader elected" until a primary is known, then 200 "ok"', async () => {
    const pd = await startPd();
    const sim = startPdms(pd, { electionMs: 300 });
    await startServers(sim, ['demo-tso-0']);
    expect(await call('GET', `${url('demo-tso-0')}/tso/api/v1/health`)).toMatchObject({
      status: 500,
      text: 'no leader elected',
      type: TEXT,
    });
    await primaryOf(sim, 'tso');
    expect(await call('GET', `${url('demo-tso-0')}/tso/api/v1/health`)).toMatchObject({ status: 200, text: '"ok"', type: GIN_JSON });
    // Scheduling servers have no health route.
    await startServers(sim, ['demo-scheduling-0']);
    expect((await call('GET', `${url('demo-scheduling-0')}/scheduling/api/v1/health`)).status).toBe(404);
  });
});

describe('leases by release (3 s up to v8.5.4 and in v9.0.0-beta.1, 5 s from v8.5.5; scaled 1/10)', () => {
  test('the leader lease (primary key, transfer flag) and the registry lease', () => {
    const sim = new PdmsSim({ ms: new MsRegistry() } as unknown as PdSim, { cluster: 'demo', namespace: 'ns' });
    const leases = ['v7.5.0', 'v8.1.0', 'v8.3.0', 'v8.5.3', 'v8.5.4', 'v8.5.5', 'v8.5.7', 'v9.0.0-beta.1'].map((v) => [
      v,
      sim.leaderLeaseMs(v),
      sim.registryTtlMs(v),
    ]);
    expect(leases).toEqual([
      ['v7.5.0', 300, 300],
      ['v8.1.0', 300, 300],
      ['v8.3.0', 300, 300],
      ['v8.5.3', 300, 300],
      ['v8.5.4', 300, 300],
      ['v8.5.5', 500, 500],
      ['v8.5.7', 500, 500],
      ['v9.0.0-beta.1', 300, 300],
    ]);
    // A test may fix them for every release.
    const fixed = new PdmsSim({ ms: new MsRegistry() } as unknown as PdSim, {
      cluster: 'demo',
      namespace: 'ns',
      leaseMs: 42,
      registryTtlMs: 43,
    });
    expect([fixed.leaderLeaseMs('v8.5.7'), fixed.registryTtlMs('v8.5.4')]).toEqual([42, 43]);
  });

  test.each([
    ['v8.5.4', 300],
    ['v8.5.5', 500],
  ] as const)("a killed %s primary: its key and entry outlive it by its release's lease (%i ms)", async (version, lease) => {
    const pd = await startPd();
    const sim = startPdms(pd);
    await startServers(sim, ['demo-scheduling-0'], version);
    await primaryOf(sim, 'scheduling');
    await startServers(sim, ['demo-scheduling-1'], version);
    const killed = Date.now();
    await sim.serverKill('demo-scheduling-0');
    await sim.waitFor(() => sim.primary('scheduling')?.pod === 'demo-scheduling-1', 2000, 'the other primary');
    const elected = Date.now() - killed;
    expect(elected).toBeGreaterThanOrEqual(lease - 10);
    expect(elected).toBeLessThan(lease + 180);
    await sim.waitFor(() => pd.ms.entries('scheduling').length === 1, 2000, 'the killed entry expired');
    expect(Date.now() - killed).toBeLessThan(lease + 180);
  });
});

describe('/tso/api/v1/health by release', () => {
  const NOT_SERVED =
    '[PD:tso:ErrGetAllocatorManager]get allocator manager failed, requested keyspace group with id 0 is not served by this host/pod';
  const health = (pod: string, headers: Record<string, string> = {}) => call('GET', `${url(pod)}/tso/api/v1/health`, undefined, headers);

  test("v7.5.0: no such route, and the engine-wide redirector forwards even that to the primary (gin's 404 from there)", async () => {
    const pd = await startPd();
    const sim = startPdms(pd, { electionMs: 200 });
    await startServers(sim, ['demo-tso-0'], 'v7.5.0');
    // No primary yet: the redirector has nowhere to send it.
    expect(await health('demo-tso-0')).toMatchObject({ status: 503, text: '"[PD:server:ErrLeaderNil]leader is nil"', type: GIN_JSON });
    const primary = await primaryOf(sim, 'tso');
    await startServers(sim, ['demo-tso-1'], 'v7.5.0');
    const secondary = primary === 'demo-tso-0' ? 'demo-tso-1' : 'demo-tso-0';
    expect(await health(secondary)).toMatchObject({ status: 404, text: '404 page not found', type: 'text/plain' });
    expect(sim.requests.slice(-2)).toMatchObject([
      { pod: primary, path: '/tso/api/v1/health', status: 404, redirectedFrom: secondary },
      { pod: secondary, status: 404 },
    ]);
    expect(await health(primary)).toMatchObject({ status: 404, text: '404 page not found' });
    // Forwarded once already, to a secondary: v7.5's error text.
    expect(await health(secondary, { 'Service-Redirector': 'x' })).toMatchObject({
      status: 500,
      text: '"[PD:apiutil:ErrRedirect]redirect failed"',
      type: GIN_JSON,
    });
    expect(sim.unsimulated).toEqual([`${primary} GET /tso/api/v1/health`, `${primary} GET /tso/api/v1/health`]);
  });

  test("v8.5.3: behind the group's redirector: a secondary answers with the primary's health, or the redirector's errors", async () => {
    const pd = await startPd();
    const sim = startPdms(pd, { electionMs: 200 });
    await startServers(sim, ['demo-tso-0', 'demo-tso-1', 'demo-tso-2'], 'v8.5.3');
    // No primary: 503 (v8.5.4+ answers 500 "no leader elected" itself).
    expect(await health('demo-tso-1')).toMatchObject({ status: 503, text: '"[PD:server:ErrLeaderNil]leader is nil"', type: GIN_JSON });
    pd.tikvStart('demo-tikv-0');
    await sim.waitFor(() => pd.ms.defaultKeyspaceGroup?.length === 2, 2000, 'the group allocated');
    const primary = await primaryOf(sim, 'tso');
    const peer = primary === 'demo-tso-0' ? 'demo-tso-1' : 'demo-tso-0';
    expect(await health(peer)).toMatchObject({ status: 200, text: '"ok"', type: GIN_JSON });
    expect(sim.requests.at(-2)).toMatchObject({ pod: primary, status: 200, redirectedFrom: peer });
    // Out of the keyspace group: its redirector knows no primary (v8.5.4+: the allocator manager's error).
    expect(await health('demo-tso-2')).toMatchObject({ status: 503, text: '"[PD:server:ErrLeaderNil]leader is nil"' });
    expect(await health('demo-tso-2', { 'Service-Allow-Direct-Handle': '1' })).toMatchObject({ status: 500, text: NOT_SERVED, type: TEXT });
    // A killed primary: the proxy cannot reach it (v8.5.4+: 200 "ok", the key is still there).
    await sim.serverKill(primary);
    expect(await health(peer)).toMatchObject({ status: 500, text: '[PD:apiutil:ErrRedirect]redirect failed\n', type: TEXT });
  });

  test('v8.5.4: answered by the server asked, primary or not', async () => {
    const pd = await startPd();
    const sim = startPdms(pd, { electionMs: 200 });
    await startServers(sim, ['demo-tso-0', 'demo-tso-1'], 'v8.5.4');
    expect(await health('demo-tso-1')).toMatchObject({ status: 500, text: 'no leader elected', type: TEXT });
    const primary = await primaryOf(sim, 'tso');
    const peer = primary === 'demo-tso-0' ? 'demo-tso-1' : 'demo-tso-0';
    expect(await health(peer, { 'Service-Redirector': 'x' })).toMatchObject({ status: 200, text: '"ok"' });
    expect(sim.requests.at(-1)).toMatchObject({ pod: peer, status: 200 });
    expect(sim.requests.at(-1)?.redirectedFrom).toBeUndefined();
  });

  test.each([
    ['v8.0.0', '"[PD:apiutil:ErrRedirect]redirect failed"'],
    ['v8.1.0', '"[PD:apiutil:ErrRedirect]redirect failed"'],
    ['v8.1.1', '"[PD:apiutil:ErrRedirectToNotPrimary]redirect to not primary"'],
    ['v8.2.0', '"[PD:apiutil:ErrRedirectToNotPrimary]redirect to not primary"'],
  ] as const)('%s: a request forwarded once already, to a secondary: 500 %s', async (version, text) => {
    const pd = await startPd();
    const sim = startPdms(pd);
    await startServers(sim, ['demo-tso-0'], version);
    const primary = await primaryOf(sim, 'tso');
    await startServers(sim, ['demo-tso-1'], version);
    const secondary = primary === 'demo-tso-0' ? 'demo-tso-1' : 'demo-tso-0';
    expect(await health(secondary, { 'Service-Redirector': 'x' })).toMatchObject({ status: 500, text, type: GIN_JSON });
    expect(await health(secondary)).toMatchObject({ status: 200, text: '"ok"' });
  });
});

// ---- the servers: primary transfer ----

describe('POST /{service}/api/v1/primary/transfer', () => {
  test('the primary steps down at once, the named member campaigns; PD\'s /ms/primary answers it, never "" meanwhile', async () => {
    const pd = await startPd();
    const sim = startPdms(pd, { electionMs: 150 });
    await startServers(sim, ['demo-scheduling-0', 'demo-scheduling-1', 'demo-scheduling-2']);
    const first = await primaryOf(sim, 'scheduling');
    const target = ['demo-scheduling-0', 'demo-scheduling-1', 'demo-scheduling-2'].find((p) => p !== first)!;
    expect(await transfer(first, target)).toMatchObject({ status: 200, text: '"success"', type: GIN_JSON });
    expect(sim.primary('scheduling')).toBeUndefined();
    expect(sim.transfers).toMatchObject([
      { service: 'scheduling', pod: first, from: first, to: target, toAddr: addr(target), asked: target },
    ]);
    const started = Date.now();
    expect((await call('GET', `${pd.url}/pd/api/v2/ms/primary/scheduling`)).text).toBe(`"${addr(target)}"`);
    expect(Date.now() - started).toBeGreaterThanOrEqual(100);
    expect(sim.primary('scheduling')?.pod).toBe(target);
  });

  test('new_primary "" (or no such key, or null) picks any other member; naming itself hands the primary back to itself', async () => {
    const pd = await startPd();
    const sim = startPdms(pd);
    await startServers(sim, ['demo-tso-0', 'demo-tso-1']); // no TiKV: each TSO server is its own group
    const sched = ['demo-scheduling-0', 'demo-scheduling-1'];
    await startServers(sim, sched);
    const first = await primaryOf(sim, 'scheduling');
    const other = sched.find((p) => p !== first)!;
    expect((await call('POST', `${url(first)}/scheduling/api/v1/primary/transfer`, '{}')).text).toBe('"success"');
    await sim.waitFor(() => sim.primary('scheduling')?.pod === other, 1000, 'the other one');
    expect((await call('POST', `${url(other)}/scheduling/api/v1/primary/transfer`, 'null')).status).toBe(200);
    await sim.waitFor(() => sim.primary('scheduling')?.pod === first, 1000, 'back');
    expect((await transfer(first, first)).status).toBe(200);
    await sim.waitFor(() => sim.primary('scheduling')?.pod === first, 1000, 'itself again');
    expect(sim.transfers.map((t) => [t.from, t.to, t.asked])).toEqual([
      [first, other, ''],
      [other, first, ''],
      [first, first, first],
    ]);
    expect(sim.elections.map((e) => e.pod).filter((p) => p.startsWith('demo-scheduling'))).toEqual([first, other, first, first]);
  });

  test("errors: the only member, no such member, a bad body (400, the decoder's text)", async () => {
    const pd = await startPd();
    const sim = startPdms(pd);
    await startServers(sim, ['demo-scheduling-0']);
    await primaryOf(sim, 'scheduling');
    expect(await transfer('demo-scheduling-0', 'demo-scheduling-1')).toMatchObject({
      status: 500,
      text: '"no valid secondary to transfer primary, the only member is demo-scheduling-0"',
      type: GIN_JSON,
    });
    await startServers(sim, ['demo-scheduling-1']);
    expect(await transfer('demo-scheduling-0', 'demo-scheduling-9')).toMatchObject({
      status: 500,
      text: '"no valid secondary to transfer primary, from demo-scheduling-0 to demo-scheduling-9"',
    });
    // Pod names, not addresses.
    expect((await transfer('demo-scheduling-0', addr('demo-scheduling-1'))).status).toBe(500);
    const bad = async (body: string) => {
      const r = await call('POST', `${url('demo-scheduling-0')}/scheduling/api/v1/primary/transfer`, body);
      return [r.status, r.text, r.type];
    };
    expect(await bad('')).toEqual([400, 'EOF', TEXT]);
    expect(await bad('{"new_primary":')).toEqual([400, 'unexpected EOF', TEXT]);
    expect(await bad('x')).toEqual([400, "invalid character 'x' looking for beginning of value", TEXT]);
    expect(await bad('["demo-scheduling-1"]')).toEqual([400, 'json: cannot unmarshal array into Go value of type map[string]string', TEXT]);
    expect(await bad('{"new_primary":1}')).toEqual([400, 'json: cannot unmarshal number into Go value of type string', TEXT]);
    expect(sim.transfers).toEqual([]);
    expect(sim.primary('scheduling')?.pod).toBe('demo-scheduling-0');
  });

  test('v8.5.5 scheduling: a secondary forwards to the primary; a forwarded request that meets no primary 500; no primary 503', async () => {
    const pd = await startPd();
    const sim = startPdms(pd, { electionMs: 300 });
    await startServers(sim, ['demo-scheduling-0', 'demo-scheduling-1'], 'v8.5.5');
    // No primary yet: 503.
    expect(await transfer('demo-scheduling-1', 'demo-scheduling-0')).toMatchObject({
      status: 503,
      text: '"[PD:server:ErrLeaderNil]leader is nil"',
      type: GIN_JSON,
    });
    const first = await primaryOf(sim, 'scheduling');
    const other = first === 'demo-scheduling-0' ? 'demo-scheduling-1' : 'demo-scheduling-0';
    expect(await transfer(other, other)).toMatchObject({ status: 200, text: '"success"' });
    expect(sim.requests.slice(-2)).toMatchObject([
      { pod: first, path: '/scheduling/api/v1/primary/transfer', status: 200, redirectedFrom: other },
      { pod: other, path: '/scheduling/api/v1/primary/transfer', status: 200 },
    ]);
    expect(sim.transfers).toMatchObject([{ pod: first, from: first, to: other }]);
    await sim.waitFor(() => sim.primary('scheduling')?.pod === other, 1000, 'the other primary');
    // The redirector's header on a request to a secondary: it was forwarded once already.
    expect(await transfer(first, first, { 'Service-Redirector': 'someone' })).toMatchObject({
      status: 500,
      text: '"[PD:apiutil:ErrRedirectToNotPrimary]redirect to not primary"',
    });
    // Service-Allow-Direct-Handle: the secondary handles it itself (and, a former primary, it still has its lease).
    expect((await transfer(first, first, { 'Service-Allow-Direct-Handle': 'true' })).status).toBe(200);
  });

  test.each([
    ['scheduling', 'v8.3.0'],
    ['scheduling', 'v8.5.4'],
    ['scheduling', 'v9.0.0-beta.1'],
    ['tso', 'v8.3.0'],
    ['tso', 'v8.5.3'],
    ['tso', 'v9.0.0-beta.1'],
  ] as const)(
    "%s %s: the transfer is behind the group's redirector too: a secondary forwards it to the primary",
    async (service, version) => {
      const pd = await startPd();
      const sim = startPdms(pd);
      const [p0, p1] = [`demo-${service}-0`, `demo-${service}-1`];
      await startServers(sim, [p0], version);
      await primaryOf(sim, service);
      await startServers(sim, [p1], version);
      if (service === 'tso') {
        // From v8.4.0 only the default keyspace group's members are candidates: PD allocates it both servers.
        pd.tikvStart('demo-tikv-0');
        await sim.waitFor(() => pd.ms.defaultKeyspaceGroup?.length === 2, 2000, 'the group allocated');
        await sim.waitFor(() => sim.primary(service)?.pod === p0, 2000, `${p0} still primary`);
      }
      expect(await transfer(p1, p1)).toMatchObject({ status: 200, text: '"success"', type: GIN_JSON });
      expect(sim.requests.slice(-2)).toMatchObject([
        { pod: p0, path: `/${service}/api/v1/primary/transfer`, status: 200, redirectedFrom: p1 },
        { pod: p1, path: `/${service}/api/v1/primary/transfer`, status: 200 },
      ]);
      expect(sim.transfers).toMatchObject([{ pod: p0, from: p0, to: p1, asked: p1 }]);
      await sim.waitFor(() => sim.primary(service)?.pod === p1, 1000, `${p1} primary`);
    },
  );

  test('Service-Allow-Direct-Handle: a server that never was primary has no expected-primary lease; a former primary still has one', async () => {
    const pd = await startPd();
    const sim = startPdms(pd, { electionMs: 200 });
    await startServers(sim, ['demo-scheduling-0'], 'v8.5.4');
    await primaryOf(sim, 'scheduling');
    await startServers(sim, ['demo-scheduling-1'], 'v8.5.4');
    const direct = { 'Service-Allow-Direct-Handle': 'true' };
    expect(await transfer('demo-scheduling-1', 'demo-scheduling-0', direct)).toMatchObject({
      status: 500,
      text: '"current lease is nil, please check leadership"',
    });
    expect((await transfer('demo-scheduling-0', 'demo-scheduling-1')).status).toBe(200);
    await sim.waitFor(() => sim.primary('scheduling')?.pod === 'demo-scheduling-1', 1000, 'demo-scheduling-1 primary');
    // A former primary's lease was never cleared: its transfer still moves the primary (the flag's change makes the primary step down).
    expect(await transfer('demo-scheduling-0', 'demo-scheduling-0', direct)).toMatchObject({ status: 200, text: '"success"' });
    expect(sim.primary('scheduling')).toBeUndefined();
    await sim.waitFor(() => sim.primary('scheduling')?.pod === 'demo-scheduling-0', 1000, 'demo-scheduling-0 primary again');
    expect(sim.transfers.map((t) => [t.pod, t.from, t.to])).toEqual([
      ['demo-scheduling-0', 'demo-scheduling-0', 'demo-scheduling-1'],
      ['demo-scheduling-0', 'demo-scheduling-0', 'demo-scheduling-0'],
    ]);
  });

  test("the chosen member is not running: nobody campaigns until the flag's lease expires", async () => {
    const pd = await startPd();
    const sim = startPdms(pd, { leaseMs: 400, registryTtlMs: 2000 });
    await startServers(sim, ['demo-scheduling-0']);
    await primaryOf(sim, 'scheduling');
    await startServers(sim, ['demo-scheduling-1']);
    await sim.serverKill('demo-scheduling-1'); // still registered
    expect((await transfer('demo-scheduling-0', 'demo-scheduling-1')).status).toBe(200);
    await sleep(250);
    expect(sim.primary('scheduling')).toBeUndefined();
    await sim.waitFor(() => sim.primary('scheduling')?.pod === 'demo-scheduling-0', 1000, 'the flag expired');
  });

  test('servers before v8.3.0 have no expected-primary check: they campaign whatever the flag names', async () => {
    const pd = await startPd();
    const sim = startPdms(pd);
    await startServers(sim, ['demo-scheduling-0']);
    await primaryOf(sim, 'scheduling');
    await startServers(sim, ['demo-scheduling-2']);
    await sim.serverStart('demo-scheduling-1', IPS['demo-scheduling-1'], 'scheduling', 'v8.2.0');
    await sim.serverKill('demo-scheduling-2'); // the pick: registered, never campaigns
    const transferred = Date.now();
    expect((await transfer('demo-scheduling-0', 'demo-scheduling-2')).status).toBe(200);
    // demo-scheduling-0 (v8.5.7) holds back for the flag (500 ms); the v8.2.0 server does not.
    await sim.waitFor(() => sim.primary('scheduling') !== undefined, 1000, 'a primary');
    expect(sim.primary('scheduling')?.pod).toBe('demo-scheduling-1');
    expect(Date.now() - transferred).toBeLessThan(300);
  });

  test("a primary before v8.3.0 watches no flag: a later transfer's flag does not make it step down", async () => {
    const pd = await startPd();
    const sim = startPdms(pd);
    await startServers(sim, ['demo-scheduling-0']);
    await primaryOf(sim, 'scheduling');
    await sim.serverStart('demo-scheduling-1', IPS['demo-scheduling-1'], 'scheduling', 'v8.2.0');
    // The only other server: the v8.2.0 one (no name in its entry).
    expect(await transfer('demo-scheduling-0', '')).toMatchObject({ status: 200 });
    await sim.waitFor(() => sim.primary('scheduling')?.pod === 'demo-scheduling-1', 1000, 'the v8.2.0 primary');
    expect(sim.transfers.at(-1)).toMatchObject({ to: '', toAddr: addr('demo-scheduling-1') });
    // demo-scheduling-0 kept its (stale) lease: the transfer goes through, the flag names it, nobody steps down.
    expect(await transfer('demo-scheduling-0', 'demo-scheduling-0', { 'Service-Allow-Direct-Handle': '1' })).toMatchObject({ status: 200 });
    await sleep(650);
    expect(sim.primary('scheduling')?.pod).toBe('demo-scheduling-1');
    expect(sim.elections.map((e) => e.pod)).toEqual(['demo-scheduling-0', 'demo-scheduling-1']);
  });

  test("the flag's lease is the transferring server's release's; members held back look again every 200 ms (scaled)", async () => {
    const pd = await startPd();
    // Half-speed time: the re-check is 100 ms, the v8.5.4 flag 1.5 s.
    const sim = startPdms(pd, { timeScale: 0.5 });
    await startServers(sim, ['demo-scheduling-0'], 'v8.5.4');
    await primaryOf(sim, 'scheduling');
    await startServers(sim, ['demo-scheduling-1'], 'v8.5.4');
    await sim.serverKill('demo-scheduling-1');
    const transferred = Date.now();
    expect((await transfer('demo-scheduling-0', 'demo-scheduling-1')).status).toBe(200);
    await sim.waitFor(() => sim.primary('scheduling') !== undefined, 3000, 'a primary');
    const elected = Date.now() - transferred;
    // Held back from the key's going (t=0): looks at 1.5 s (the flag expired then or a moment later)
    // or 1.6 s, then the campaign (electionMs 20).
    expect(elected).toBeGreaterThanOrEqual(1500);
    expect(elected).toBeLessThan(1800);
    expect(sim.primary('scheduling')?.pod).toBe('demo-scheduling-0');
  });

  test('re-check: a flag that expires between two looks is seen at the next one', async () => {
    const pd = await startPd();
    // The re-check 100 ms; the flag 250 ms: looks at 100, 200, 300 ms: the campaign starts at 300.
    const sim = startPdms(pd, { timeScale: 0.5, leaseMs: 250 });
    await startServers(sim, ['demo-scheduling-0']);
    await primaryOf(sim, 'scheduling');
    await startServers(sim, ['demo-scheduling-1']);
    await sim.serverKill('demo-scheduling-1');
    const transferred = Date.now();
    expect((await transfer('demo-scheduling-0', 'demo-scheduling-1')).status).toBe(200);
    await sim.waitFor(() => sim.primary('scheduling') !== undefined, 3000, 'a primary');
    const elected = Date.now() - transferred;
    expect(elected).toBeGreaterThanOrEqual(300);
    expect(elected).toBeLessThan(450);
  });

  test('v8.3.0 TSO: no keyspace-group filter: the pick may be out of the group, then no primary until the flag expires', async () => {
    const pd = await startPd();
    const sim = startPdms(pd);
    const pods = ['demo-tso-0', 'demo-tso-1', 'demo-tso-2'];
    await startServers(sim, pods, 'v8.3.0');
    pd.tikvStart('demo-tikv-0');
    await sim.waitFor(() => pd.ms.defaultKeyspaceGroup?.length === 2, 2000, 'the group allocated');
    expect(sim.members('tso').map((m) => m.inKeyspaceGroup)).toEqual([true, true, false]);
    const primary = await primaryOf(sim, 'tso');
    const elections = sim.elections.length;
    const transferred = Date.now();
    expect(await transfer(primary, 'demo-tso-2')).toMatchObject({ status: 200, text: '"success"' });
    expect(sim.transfers.at(-1)).toMatchObject({ to: 'demo-tso-2', toAddr: addr('demo-tso-2') });
    // demo-tso-2 is out of the election; the members hold back for the flag (3 s at v8.3.0: 300 ms).
    await sleep(200);
    expect(sim.primary('tso')).toBeUndefined();
    await sim.waitFor(() => sim.primary('tso') !== undefined, 1000, 'a primary once the flag expired');
    expect(Date.now() - transferred).toBeGreaterThanOrEqual(290);
    expect(Date.now() - transferred).toBeLessThan(480);
    expect(sim.elections.slice(elections).map((e) => e.pod)).not.toContain('demo-tso-2');
    // v8.4.0+ refuses that pick (see the keyspace-group tests).
  });

  test("no transfer route before v8.3.0, nor a GET on it: gin's 404 (recorded as unsimulated paths)", async () => {
    const pd = await startPd();
    const sim = startPdms(pd);
    await sim.serverStart('demo-tso-0', IPS['demo-tso-0'], 'tso', 'v8.2.0');
    expect(await call('POST', `${url('demo-tso-0')}/tso/api/v1/primary/transfer`, '{}')).toMatchObject({
      status: 404,
      text: '404 page not found',
      type: 'text/plain',
    });
    await startServers(sim, ['demo-scheduling-0']);
    expect((await call('GET', `${url('demo-scheduling-0')}/scheduling/api/v1/primary/transfer`)).status).toBe(404);
    expect((await call('POST', `${url('demo-scheduling-0')}/tso/api/v1/primary/transfer`, '{}')).status).toBe(404);
    expect(sim.unsimulated).toEqual([
      'demo-tso-0 POST /tso/api/v1/primary/transfer',
      'demo-scheduling-0 GET /scheduling/api/v1/primary/transfer',
      'demo-scheduling-0 POST /tso/api/v1/primary/transfer',
    ]);
  });
});

// ---- TSO: the default keyspace group ----

describe('TSO and the default keyspace group', () => {
  test('PD: GET /pd/api/v2/tso/keyspace-groups/0 (tso_keyspace_group.go): 500 before bootstrap, then the group members; null for a group never saved', async () => {
    const groupUrl = (_pd: PdSim, id = '0') => `http://${PD_IPS[0]}:${PORT}/pd/api/v2/tso/keyspace-groups/${id}`;
    const pd = await startPd();
    expect(await call('GET', groupUrl(pd))).toMatchObject({
      status: 500,
      text: '"[PD:cluster:ErrNotBootstrapped]TiKV cluster not bootstrapped, please start TiKV first"',
      type: GIN_JSON,
    });
    const sim = startPdms(pd);
    await startServers(sim, ['demo-tso-0', 'demo-tso-1', 'demo-tso-2']);
    pd.tikvStart('demo-tikv-0');
    await sim.waitFor(() => pd.ms.defaultKeyspaceGroup?.length === 2, 2000, 'the group allocated');
    const reply = await call('GET', groupUrl(pd));
    expect(reply).toMatchObject({ status: 200, type: GIN_JSON });
    expect(JSON.parse(reply.text)).toEqual({
      id: 0,
      'user-kind': 'basic',
      members: [addr('demo-tso-0'), addr('demo-tso-1')].map((address) => ({ address, priority: 0 })),
      keyspaces: [0],
    });
    expect(reply.text).toContain('\n    "id": 0,');
    expect(await call('GET', groupUrl(pd, '4097'))).toMatchObject({ status: 400, text: '"invalid keyspace group id"' });
    expect(await call('GET', groupUrl(pd, '7'))).toMatchObject({ status: 200, text: 'null' });
  });

  test('PD not in API mode: GET /pd/api/v2/tso/keyspace-groups/0 is 500 "keyspace group manager is not initialized", once bootstrapped', async () => {
    const pd = await startPd({ microservices: false });
    pd.tikvStart('demo-tikv-0');
    await pd.waitFor(() => pd.tikvBootstrapped(), 2000, 'bootstrapped');
    expect(await call('GET', `http://${PD_IPS[0]}:${PORT}/pd/api/v2/tso/keyspace-groups/0`)).toMatchObject({
      status: 500,
      text: '"keyspace group manager is not initialized"',
    });
  });

  test('each TSO server is its own group until TiKV bootstraps; then PD gives the group 2 servers and the third leaves the election', async () => {
    const pd = await startPd();
    const sim = startPdms(pd);
    const pods = ['demo-tso-0', 'demo-tso-1', 'demo-tso-2'];
    await startServers(sim, pods);
    const first = await primaryOf(sim, 'tso');
    const other = pods.find((p) => p !== first)!;
    // The primary's group is itself alone: no other candidate.
    expect(await transfer(first, other)).toMatchObject({
      status: 500,
      text: `"no valid secondary to transfer primary, from ${first} to ${other}"`,
    });
    expect(pd.ms.defaultKeyspaceGroup).toBeUndefined();

    pd.tikvStart('demo-tikv-0');
    // Round-robin over the nodes in the order they registered: the first two.
    await sim.waitFor(() => pd.ms.defaultKeyspaceGroup?.length === 2, 2000, 'the group allocated');
    expect(pd.ms.defaultKeyspaceGroup).toEqual([addr('demo-tso-0'), addr('demo-tso-1')]);
    expect(sim.members('tso').map((m) => m.inKeyspaceGroup)).toEqual([true, true, false]);
    const primary = await primaryOf(sim, 'tso');
    expect(['demo-tso-0', 'demo-tso-1']).toContain(primary);
    if (first === 'demo-tso-2') expect(sim.elections.map((e) => e.pod)).toEqual(['demo-tso-2', primary]);

    const notServed =
      '[PD:tso:ErrGetAllocatorManager]get allocator manager failed, requested keyspace group with id 0 is not served by this host/pod';
    expect(await call('GET', `${url('demo-tso-2')}/tso/api/v1/health`)).toMatchObject({ status: 500, text: notServed, type: TEXT });
    // Its redirector knows no primary.
    expect(await transfer('demo-tso-2', primary)).toMatchObject({ status: 503, text: '"[PD:server:ErrLeaderNil]leader is nil"' });
    // Out of the group, it cannot be chosen; the other member can.
    expect(await transfer(primary, 'demo-tso-2')).toMatchObject({
      status: 500,
      text: `"no valid secondary to transfer primary, from ${primary} to demo-tso-2"`,
    });
    const peer = primary === 'demo-tso-0' ? 'demo-tso-1' : 'demo-tso-0';
    expect((await transfer(primary, peer)).status).toBe(200);
    await sim.waitFor(() => sim.primary('tso')?.pod === peer, 1000, 'the peer primary');

    // A member leaves: PD gives its place to the remaining node.
    await sim.serverStop('demo-tso-0');
    await sim.waitFor(() => pd.ms.defaultKeyspaceGroup?.includes(addr('demo-tso-2')) === true, 2000, 'demo-tso-2 in the group');
    expect(pd.ms.defaultKeyspaceGroup).toEqual([addr('demo-tso-1'), addr('demo-tso-2')]);
    await primaryOf(sim, 'tso');
    expect(await call('GET', `${url('demo-tso-2')}/tso/api/v1/health`)).toMatchObject({ status: 200, text: '"ok"' });
  });

  test('MsRegistry.allocTick: keeps a full group, tops up one that lost a member, round-robin over registration order', () => {
    const ms = new MsRegistry();
    let changes = 0;
    ms.onKeyspaceGroupChange(() => changes++);
    ms.allocTick();
    expect(ms.defaultKeyspaceGroup).toEqual([]);
    ms.put('tso', 'a', '{}');
    ms.allocTick();
    expect(ms.defaultKeyspaceGroup).toEqual(['a']);
    ms.allocTick(); // all registered members are all the nodes
    expect(changes).toBe(1);
    ms.put('tso', 'b', '{}');
    ms.put('tso', 'c', '{}');
    ms.allocTick();
    // The balancer's counter had moved past 'a': b is next.
    expect(ms.defaultKeyspaceGroup).toEqual(['a', 'b']);
    ms.allocTick(); // 2 members registered: enough, though a node is left out
    expect(changes).toBe(2);
    ms.delete('tso', 'a');
    ms.allocTick();
    expect(ms.defaultKeyspaceGroup).toEqual(['b', 'c']);
    ms.put('scheduling', 'x', '{}'); // not a TSO node
    ms.delete('tso', 'b');
    ms.delete('tso', 'c');
    ms.allocTick();
    expect(ms.defaultKeyspaceGroup).toEqual(['b', 'c']); // no node at all: left as it is
  });
});

// ---- wire details ----

describe('wire', () => {
  test("gin-contrib/gzip: a client that accepts gzip gets gzipped bodies; gin's 404 then is an empty stream sniffed application/x-gzip", async () => {
    const pd = await startPd();
    const sim = startPdms(pd);
    await startServers(sim, ['demo-tso-0']);
    await primaryOf(sim, 'tso');
    const gz = { 'Accept-Encoding': 'gzip, deflate' };
    const health = await call('GET', `${url('demo-tso-0')}/tso/api/v1/health`, undefined, gz);
    expect(health).toMatchObject({
      status: 200,
      text: '"ok"',
      type: GIN_JSON,
      headers: { 'content-encoding': 'gzip', vary: 'Accept-Encoding' },
    });
    expect(health.raw.subarray(0, 2)).toEqual(Buffer.from([0x1f, 0x8b]));
    // (No release serves /nope; /status and /metrics are routes of the real servers, not modelled.)
    const missing = await call('GET', `${url('demo-tso-0')}/nope`, undefined, gz);
    expect(missing).toMatchObject({ status: 404, text: '', type: 'application/x-gzip', headers: { 'content-encoding': 'gzip' } });
    const bad = await call('POST', `${url('demo-tso-0')}/tso/api/v1/primary/transfer`, 'x', gz);
    expect(bad).toMatchObject({ status: 400, text: "invalid character 'x' looking for beginning of value", type: 'application/x-gzip' });
    // Without Accept-Encoding: plain.
    const plain = await call('GET', `${url('demo-tso-0')}/nope`);
    expect(plain).toMatchObject({ status: 404, text: '404 page not found', type: 'text/plain' });
    expect(plain.headers['content-encoding']).toBeUndefined();
    // fetch asks for gzip and inflates: the same texts.
    const viaFetch = await fetch(`${url('demo-tso-0')}/tso/api/v1/health`);
    expect([viaFetch.status, await viaFetch.text(), viaFetch.headers.get('content-encoding')]).toEqual([200, '"ok"', 'gzip']);
  });

  test('BindJSON into map[string]string: the first value only; null is a nil map', () => {
    expect(bindJsonStringMap(' \n')).toEqual({ error: 'EOF' });
    expect(bindJsonStringMap('{"new_primary":"a"} trailing')).toEqual({ value: { new_primary: 'a' } });
    expect(bindJsonStringMap('null')).toEqual({ value: null });
    expect(bindJsonStringMap('{"new_primary":null}')).toEqual({ value: { new_primary: '' } });
    expect(bindJsonStringMap('{"new_primary":"a",}')).toEqual({
      error: "invalid character '}' looking for beginning of object key string",
    });
    expect(bindJsonStringMap('"a"')).toEqual({ error: 'json: cannot unmarshal string into Go value of type map[string]string' });
    expect(bindJsonStringMap('{"a":true}')).toEqual({ error: 'json: cannot unmarshal bool into Go value of type string' });
  });

  test('registry values PD cannot decode are skipped; missing fields are zero', () => {
    expect(decodeRegistryEntry('not json')).toBeUndefined();
    expect(decodeRegistryEntry('[1]')).toBeUndefined();
    expect(decodeRegistryEntry('{"service-addr":"http://x:2379","start-timestamp":12}')).toEqual({
      name: '',
      'service-addr': 'http://x:2379',
      version: '',
      'git-hash': '',
      'deploy-path': '',
      'start-timestamp': 12,
    });
  });
});

// ---- the world ----

describe('World with PD micro-services', () => {
  test('tso and scheduling StatefulSets: PD in API mode, a server per Pod, Ready while it runs, a primary each', async () => {
    const cluster = simCluster({
      pd: { replicas: 1, requests: { storage: '1Gi' }, mode: 'ms' },
      pdms: [
        { name: 'tso', replicas: 2 },
        { name: 'scheduling', replicas: 1 },
      ],
    });
    const w = await World.start({ cluster, render, pd: { electionMs: 20, discoveryRetryMs: 10 }, pdms: { electionMs: 20, retryMs: 10 } });
    cleanups.push(() => w.close());
    w.pd.discoveryUrl = await startDiscoveryFor('c-pd-0');
    expect(w.pd.microservices).toBe(true);
    const pdms = w.pdms!;
    await w.waitFor(
      () =>
        w.pods('tso').length > 0 &&
        w.pods('scheduling').length > 0 &&
        [...w.pods('tso'), ...w.pods('scheduling')].every((p) => pdms.running(p.metadata.name)),
      10_000,
      'the micro-service servers',
    );
    await w.waitFor(() => pdms.primary('tso') !== undefined && pdms.primary('scheduling') !== undefined, 5000, 'the primaries');
    const pod = w.pods('tso')[0];
    expect(pdms.members('tso').map((m) => [m.pod, m.name, m.serviceAddr])).toContainEqual([
      pod.metadata.name,
      pod.metadata.name,
      `http://${pod.metadata.name}.c-tso-peer.ns.svc:2379`,
    ]);
    const ready = (name: string) =>
      (w.kube.get('Pod', 'ns', name)?.status?.conditions ?? []).some(
        (c: { type: string; status: string }) => c.type === 'Ready' && c.status === 'True',
      );
    await w.waitFor(() => ready(pod.metadata.name), 5000, 'the TSO Pod Ready');
    const members = JSON.parse((await call('GET', `${w.pd.url}/pd/api/v2/ms/members/scheduling`)).text);
    expect(members.map((m: { name: string }) => m.name)).toEqual(w.pods('scheduling').map((p) => p.metadata.name));
    // A stopped server: its Pod turns not Ready.
    await pdms.serverStop(pod.metadata.name);
    await w.waitFor(() => !ready(pod.metadata.name), 5000, 'the TSO Pod not Ready');
  }, 20_000);
});

/** The world's one PD pod asks this discovery (no controller runs here): it bootstraps. */
async function startDiscoveryFor(bootstrapPod: string): Promise<string> {
  const server = http.createServer((req, res) => {
    const peerHost = Buffer.from((req.url ?? '').replace(/^\/new\//, ''), 'base64')
      .toString('utf8')
      .replace(/:2380\n$/, '');
    const pod = peerHost.split('.')[0];
    if (pod === bootstrapPod) res.writeHead(200).end(`--initial-cluster=${pod}=http://${peerHost}:2380\n`);
    else res.writeHead(500).end('one PD member only');
  });
  return listenForTest(server);
}

// ---- the controller's client against these servers ----

describe("the controller's PD micro-service client (src/controller/clients/pd.ts)", () => {
  test('reads the registry and the primary; an empty registry is no server; PD not in API mode is an error with its answer', async () => {
    const pd = await startPd();
    const client = new PdClient(pd.url);
    expect(await client.msMembers('tso')).toEqual([]);
    const sim = startPdms(pd);
    await startServers(sim, ['demo-tso-0', 'demo-tso-1']);
    const primary = await primaryOf(sim, 'tso');
    expect(await client.msMembers('tso')).toEqual([
      { name: 'demo-tso-0', serviceAddr: addr('demo-tso-0') },
      { name: 'demo-tso-1', serviceAddr: addr('demo-tso-1') },
    ]);
    expect(await client.msPrimary('tso')).toBe(addr(primary));
    const plain = await startPd({ microservices: false, clientPort: PORT + 1 });
    const err = await new PdClient(plain.url).msMembers('tso').then(
      () => undefined,
      (e: PdError) => e,
    );
    expect(err).toBeInstanceOf(PdError);
    expect({ status: err!.status, detail: err!.detail }).toEqual({ status: 404, detail: 'not support micro service' });
  });

  test('PD v7.6-v8.1 before TiKV bootstraps: the registry answers 500 ErrNotBootstrapped, read as such (not as a registry that is down)', async () => {
    // server/apiv2/handlers/micro_service.go: `router.Use(middlewares.BootstrapChecker())` (v7.6.0-v8.1.2,
    // removed in v8.2.0 by tikv/pd#8122); middlewares/bootstrap_checker.go: `c.AbortWithStatusJSON(500,
    // errs.ErrNotBootstrapped.FastGenByArgs().Error())`, compact, gin's JSON content type. PdSim plays
    // v8.5 only, so this answer is served here byte for byte.
    const body = '"[PD:cluster:ErrNotBootstrapped]TiKV cluster not bootstrapped, please start TiKV first"';
    const base = await listenForTest(
      http.createServer((_req, res) => res.writeHead(500, { 'content-type': 'application/json; charset=utf-8' }).end(body)),
    );
    for (const ask of [(c: PdClient) => c.msMembers('tso'), (c: PdClient) => c.msPrimary('scheduling')]) {
      const err = await ask(new PdClient(base)).then(
        () => undefined,
        (e: PdError) => e,
      );
      expect(err).toBeInstanceOf(PdError);
      expect(err!.notBootstrapped).toBe(true);
    }
  });

  test("reads TSO's default keyspace group: not bootstrapped is a PdError that says so, then the two servers PD gave it", async () => {
    const pd = await startPd();
    const client = new PdClient(pd.url);
    const early = await client.tsoDefaultGroup().then(
      () => undefined,
      (e: PdError) => e,
    );
    expect(early?.notBootstrapped).toBe(true);
    const sim = startPdms(pd);
    await startServers(sim, ['demo-tso-0', 'demo-tso-1', 'demo-tso-2']);
    pd.tikvStart('demo-tikv-0');
    await sim.waitFor(() => pd.ms.defaultKeyspaceGroup?.length === 2, 2000, 'the group allocated');
    expect(await client.tsoDefaultGroup()).toEqual([addr('demo-tso-0'), addr('demo-tso-1')]);
  });

  test('transfers the primary by name; a refusal is a PdError with the server answer; an empty name lets the primary choose', async () => {
    const pd = await startPd();
    const sim = startPdms(pd);
    await startServers(sim, ['demo-scheduling-0', 'demo-scheduling-1']);
    const primary = await primaryOf(sim, 'scheduling');
    const other = primary === 'demo-scheduling-0' ? 'demo-scheduling-1' : 'demo-scheduling-0';
    // Asked at the primary's own address, which is what PD's registry gives (the test's DNS has no names).
    await transferMsPrimary(url(primary), 'scheduling', other);
    await sim.waitFor(() => sim.primary('scheduling')?.pod === other, 2000, 'the new primary');
    const refused = await transferMsPrimary(url(other), 'scheduling', 'no-such-server').then(
      () => undefined,
      (e: PdError) => e,
    );
    expect({ status: refused?.status, detail: refused?.detail }).toEqual({
      status: 500,
      detail: `no valid secondary to transfer primary, from ${other} to no-such-server`,
    });
    await transferMsPrimary(url(other), 'scheduling', '');
    await sim.waitFor(() => sim.primary('scheduling')?.pod === primary, 2000, 'the primary chosen by the server');
  });
});
