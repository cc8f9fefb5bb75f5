import * as http from 'node:http';
import { captureVersion, drainCapture, drainMeaning, resignOwnerOf } from '../../../src/controller/clients/ticdc';
import { GracefulError, type StepOutcome } from '../../../src/controller/clients/http';
import { pumpNodes, takePumpOffline } from '../../../src/controller/clients/pump';
import { PumpSim, type PumpSimOptions } from '../../sim/pump';
import { TicdcSim, type TicdcSimOptions } from '../../sim/ticdc';
import { Discovery } from '../../../src/controller/discovery/discovery';
import { parseClusterInfo } from '../../../src/controller/model/cluster';
import { PdClient } from '../../../src/controller/clients/pd';

// ---- helpers: a raw HTTP client, per-test loopback addresses, cleanup ----

interface Raw {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
}

function call(method: string, url: string, body?: string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, agent: false, timeout: 3000 }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end(body);
  });
}

// Parsed JSON of any shape: the tests check the servers' response shapes field by field.
const json = (r: Raw): any => JSON.parse(r.text);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let block = 0;
/** `n` loopback addresses of a /24 no other test uses (Linux routes all of 127/8 to lo). */
function addresses(prefix: '127.91' | '127.92', n: number): string[] {
  block++;
  return Array.from({ length: n }, (_, i) => `${prefix}.${block}.${i + 1}`);
}

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  await Promise.all(cleanups.splice(0).map((c) => c()));
});

// ---- TiCDC ----

const CDC_PODS = ['basic-ticdc-0', 'basic-ticdc-1', 'basic-ticdc-2'];

interface Cdc {
  sim: TicdcSim;
  ips: Map<string, string>;
  url: (pod: string, path: string) => string;
}

async function cdc(options: Partial<TicdcSimOptions> = {}, pods = CDC_PODS, versions: Record<string, string> = {}): Promise<Cdc> {
  const sim = await TicdcSim.start({ cluster: 'basic', namespace: 'ns', ...options });
  cleanups.push(() => sim.close());
  const list = addresses('127.91', pods.length);
  const ips = new Map(pods.map((p, i) => [p, list[i]] as const));
  for (const p of pods) await sim.captureStart(p, ips.get(p) as string, { version: versions[p] });
  return { sim, ips, url: (pod, path) => `http://${ips.get(pod)}:${sim.port}${path}` };
}

async function cdcReady(options: Partial<TicdcSimOptions> = {}, pods = CDC_PODS, versions: Record<string, string> = {}): Promise<Cdc> {
  const c = await cdc(options, pods, versions);
  await c.sim.waitFor(
    () => c.sim.owner() !== undefined && c.sim.captures().every((x) => x.state === 'running'),
    3000,
    'captures registered, owner elected',
  );
  if ((options.tables ?? 20) > 0) await c.sim.waitFor(() => c.sim.orphanTables() === 0, 3000, 'tables scheduled');
  return c;
}

describe('TicdcSim: capture processes', () => {
  test('until the capture is initialised, /status answers 500 and /api/v1 503 ErrServerIsNotReady (v6.2+)', async () => {
    const { sim, url } = await cdc({ initMs: 300 }, ['basic-ticdc-0']);
    const status = await call('GET', url('basic-ticdc-0', '/status'));
    expect(status.status).toBe(500);
    expect(status.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(status.text).toBe('[CDC:ErrCaptureNotInitialized]capture has not been initialized yet');
    for (const path of ['/api/v1/captures', '/api/v1/status', '/api/v1/health']) {
      const r = await call('GET', url('basic-ticdc-0', path));
      expect(r.status).toBe(503);
      expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(r.text).toBe(
        '{\n    "error_msg": "[CDC:ErrServerIsNotReady]cdc server is not ready",\n    "error_code": "CDC:ErrServerIsNotReady"\n}',
      );
    }
    const drain = await call('PUT', url('basic-ticdc-0', '/api/v1/captures/drain'), '{"capture_id":"x"}');
    expect(drain.status).toBe(503);

    await sim.waitFor(() => sim.owner() === 'basic-ticdc-0', 2000, 'owner');
    const ready = await call('GET', url('basic-ticdc-0', '/status'));
    expect(ready.status).toBe(200);
    expect(ready.headers['content-type']).toBe('application/json');
    expect(ready.text.startsWith('{\n "version": "v8.5.0",\n "git_hash": "')).toBe(true);
    const body = json(ready);
    expect(Object.keys(body)).toEqual(['version', 'git_hash', 'id', 'pid', 'is_owner']);
    expect(body.id).toMatch(UUID);
    expect(body.id).toBe(sim.captures()[0].id);
    expect(typeof body.pid).toBe('number');
    expect(body.is_owner).toBe(true);

    const v1 = await call('GET', url('basic-ticdc-0', '/api/v1/status'));
    expect(v1.status).toBe(200);
    expect(Object.keys(json(v1))).toEqual(['version', 'git_hash', 'id', 'cluster_id', 'pid', 'is_owner', 'liveness']);
    expect(json(v1)).toMatchObject({ version: 'v8.5.0', id: body.id, cluster_id: 'default', is_owner: true, liveness: 0 });
  });

  test('every capture lists the same captures, forwarded to the owner, with the advertised addresses', async () => {
    const { sim, url } = await cdcReady();
    const owner = sim.owner() as string;
    const lists = [];
    for (const pod of CDC_PODS) {
      const r = await call('GET', url(pod, '/api/v1/captures'));
      expect(r.status).toBe(200);
      expect(r.headers['content-type']).toBe('application/json; charset=utf-8');
      expect(r.text.startsWith('[\n    {\n        "id": ')).toBe(true);
      lists.push(json(r));
    }
    expect(lists[1]).toEqual(lists[0]);
    expect(lists[2]).toEqual(lists[0]);
    const list = lists[0] as { id: string; is_owner: boolean; address: string; cluster_id: string }[];
    expect(list.map((c) => Object.keys(c))).toEqual([0, 1, 2].map(() => ['id', 'is_owner', 'address', 'cluster_id']));
    expect(list.map((c) => c.address).sort()).toEqual(CDC_PODS.map((p) => `${p}.basic-ticdc-peer.ns.svc:8301`));
    expect(list.filter((c) => c.is_owner).map((c) => c.address)).toEqual([sim.advertiseAddress(owner)]);
    expect(new Set(list.map((c) => c.cluster_id))).toEqual(new Set(['default']));
    // the non-owners forwarded to the owner
    const forwarded = sim.requests.filter((r) => r.path === '/api/v1/captures');
    expect(forwarded.map((r) => r.answeredBy ?? r.pod)).toEqual([owner, owner, owner]);
  });

  test('with a cluster domain the captures advertise <pod>.<peer>.<ns>.svc.<domain>:8301', async () => {
    const { sim, url } = await cdcReady({ clusterDomain: 'cluster.local' }, ['basic-ticdc-0', 'basic-ticdc-1']);
    const list = json(await call('GET', url('basic-ticdc-1', '/api/v1/captures'))) as { address: string }[];
    expect(list.map((c) => c.address).sort()).toEqual([
      'basic-ticdc-0.basic-ticdc-peer.ns.svc.cluster.local:8301',
      'basic-ticdc-1.basic-ticdc-peer.ns.svc.cluster.local:8301',
    ]);
    expect(sim.addressPrefix('basic-ticdc-1')).toBe('basic-ticdc-1.basic-ticdc-peer.ns.svc.cluster.local');
  });

  test('gin: another method is a 404, a trailing slash is redirected, unknown paths 404, unsimulated routes are flagged', async () => {
    const { sim, url } = await cdcReady({ tables: 0 }, ['basic-ticdc-0']);
    const get = await call('GET', url('basic-ticdc-0', '/api/v1/owner/resign'));
    expect(get).toMatchObject({ status: 404, text: '404 page not found' });
    expect(get.headers['content-type']).toBe('text/plain');
    const slash = await call('GET', url('basic-ticdc-0', '/api/v1/captures/'));
    expect(slash.status).toBe(301);
    expect(slash.headers.location).toBe('/api/v1/captures');
    expect(slash.text).toBe('<a href="/api/v1/captures">Moved Permanently</a>.\n\n');
    const put = await call('PUT', url('basic-ticdc-0', '/api/v1/captures/drain/'), '{}');
    expect(put.status).toBe(307);
    expect(put.headers.location).toBe('/api/v1/captures/drain');
    expect(await call('GET', url('basic-ticdc-0', '/nope'))).toMatchObject({ status: 404, text: '404 page not found' });
    expect((await call('GET', url('basic-ticdc-0', '/api/v1/changefeeds'))).status).toBe(500);
    expect(sim.unsimulated).toEqual(['GET /api/v1/changefeeds (v8.5.0)']);
  });

  test('version gates: routes and fields per TiCDC version', async () => {
    const pods = ['v515', 'v617', 'v620', 'v630', 'v640'];
    const versions: Record<string, string> = { v515: 'v5.1.5', v617: 'v6.1.7', v620: 'v6.2.0', v630: 'v6.3.0', v640: 'v6.4.0' };
    // one cluster per version, two captures each (drain needs two)
    for (const pod of pods) {
      const { sim, url } = await cdcReady({ version: versions[pod], tables: 4 }, [`${pod}-0`, `${pod}-1`]);
      const u = (path: string) => url(`${pod}-1`, path);
      const status = await call('GET', u('/status'));
      expect(Object.keys(json(status))).toEqual(['version', 'git_hash', 'id', 'pid', 'is_owner']);
      expect(json(status).version).toBe(versions[pod]);
      const captures = await call('GET', u('/api/v1/captures'));
      const v1status = await call('GET', u('/api/v1/status'));
      const drain = await call('PUT', u('/api/v1/captures/drain'), '{"capture_id":"nope"}');
      const health = await call('GET', u('/api/v1/health'));
      const resign = await call('POST', u('/api/v1/owner/resign'));
      if (pod === 'v515') {
        // net/http ServeMux: no /api/v1/captures, /api/v1/status, /api/v1/owner/resign
        for (const r of [captures, v1status, drain, resign]) {
          expect(r).toMatchObject({ status: 404, text: '404 page not found\n' });
          expect(r.headers['content-type']).toBe('text/plain; charset=utf-8');
        }
        expect(health).toMatchObject({ status: 200, text: '' });
        continue;
      }
      expect(captures.status).toBe(200);
      const captureKeys = pod === 'v640' ? ['id', 'is_owner', 'address', 'cluster_id'] : ['id', 'is_owner', 'address'];
      expect((json(captures) as object[]).map((c) => Object.keys(c))).toEqual([captureKeys, captureKeys]);
      const statusKeys = {
        v617: ['version', 'git_hash', 'id', 'pid', 'is_owner'],
        v620: ['version', 'git_hash', 'id', 'pid', 'is_owner', 'liveness'],
        v630: ['version', 'git_hash', 'id', 'cluster_id', 'pid', 'is_owner', 'liveness'],
        v640: ['version', 'git_hash', 'id', 'cluster_id', 'pid', 'is_owner', 'liveness'],
      }[pod];
      expect(Object.keys(json(v1status))).toEqual(statusKeys);
      if (pod === 'v617') {
        expect(drain).toMatchObject({ status: 404, text: '404 page not found' });
      } else {
        expect(drain.status).toBe(400);
        expect(json(drain).error_code).toBe('CDC:ErrCaptureNotExist');
      }
      expect(resign).toMatchObject({ status: 202, text: '' });
      expect(health.status).toBe(200);
      await sim.close();
    }
  });

  test('before v6.2 there is no ready check: v6.1.7 answers ErrCaptureNotInitialized, v5.4.3 drops the connection', async () => {
    const a = await cdc({ version: 'v6.1.7', initMs: 400 }, ['a-0']);
    const captures = await call('GET', a.url('a-0', '/api/v1/captures'));
    expect(captures.status).toBe(500);
    expect(json(captures)).toEqual({
      error_msg: '[CDC:ErrCaptureNotInitialized]capture has not been initialized yet',
      error_code: 'CDC:ErrCaptureNotInitialized',
    });
    expect(await call('GET', a.url('a-0', '/status'))).toMatchObject({
      status: 500,
      text: '[CDC:ErrCaptureNotInitialized]capture has not been initialized yet',
    });

    const b = await cdc({ version: 'v5.4.3', initMs: 400 }, ['b-0']);
    await expect(call('GET', b.url('b-0', '/status'))).rejects.toThrow(/socket hang up|ECONNRESET/);
    await expect(call('GET', b.url('b-0', '/api/v1/captures'))).rejects.toThrow(/socket hang up|ECONNRESET/);
    // /api/v1/health only asks etcd for the owner
    const health = await call('GET', b.url('b-0', '/api/v1/health'));
    expect(health.status).toBe(500);
    expect(json(health)).toEqual({ error_msg: 'election: no leader', error_code: '' });
  });
});

describe('TicdcSim: owner', () => {
  test('resign (from any capture) answers 202; meanwhile forwarded requests fail with 500 until another capture is elected', async () => {
    const { sim, url } = await cdcReady({ electionMs: 200 });
    const old = sim.owner() as string;
    const other = CDC_PODS.find((p) => p !== old) as string;
    const r = await call('POST', url(other, '/api/v1/owner/resign'));
    expect(r).toMatchObject({ status: 202, text: '' });
    expect(sim.owner()).toBeUndefined();
    const during = await call('GET', url(other, '/api/v1/captures'));
    expect(during.status).toBe(500);
    expect(during.text).toBe('{\n    "error_msg": "election: no leader",\n    "error_code": ""\n}');
    await sim.waitFor(() => sim.owner() !== undefined, 2000, 'new owner');
    expect(sim.owner()).not.toBe(old);
    expect(sim.ownerChanges.at(-1)).toMatchObject({ from: old, to: sim.owner() });
    const list = json(await call('GET', url(old, '/api/v1/captures'))) as { address: string; is_owner: boolean }[];
    expect(list.find((c) => c.is_owner)?.address).toBe(sim.advertiseAddress(sim.owner() as string));
  });

  test('a lone capture that resigns is elected again', async () => {
    const { sim, url } = await cdcReady({ campaignRetryMs: 50 }, ['basic-ticdc-0']);
    expect((await call('POST', url('basic-ticdc-0', '/api/v1/owner/resign'))).status).toBe(202);
    await sim.waitFor(() => sim.owner() === 'basic-ticdc-0', 2000, 'same owner again');
    expect(sim.ownerChanges.map((c) => c.to)).toEqual(['basic-ticdc-0', 'basic-ticdc-0']);
  });

  test('rigNextElection: the resigned owner can win again', async () => {
    const { sim, url } = await cdcReady({ campaignRetryMs: 40 });
    const old = sim.owner() as string;
    sim.rigNextElection(old);
    expect((await call('POST', url(old, '/api/v1/owner/resign'))).status).toBe(202);
    await sim.waitFor(() => sim.owner() !== undefined, 2000, 'owner');
    expect(sim.owner()).toBe(old);
  });

  test('stopping a capture with tables, or the owner, is recorded; the tables move to the others', async () => {
    const { sim, url, ips } = await cdcReady();
    const owner = sim.owner() as string;
    const victim = CDC_PODS.find((p) => p !== owner) as string;
    const held = sim.tablesOf(victim);
    expect(held).toBeGreaterThan(0);
    await sim.captureStop(victim);
    expect(sim.stopsWithTables).toEqual([expect.objectContaining({ pod: victim, tables: held })]);
    expect(sim.orphanTables()).toBe(held);
    await expect(call('GET', url(victim, '/status'))).rejects.toThrow(/ECONNREFUSED/);
    await sim.waitFor(() => sim.orphanTables() === 0, 2000, 'tables re-added');
    expect(CDC_PODS.filter((p) => p !== victim).reduce((n, p) => n + sim.tablesOf(p), 0)).toBe(20);

    await sim.captureStop(owner);
    expect(sim.stopsWhileOwner).toEqual([expect.objectContaining({ pod: owner })]);
    const last = CDC_PODS.find((p) => p !== owner && p !== victim) as string;
    await sim.waitFor(() => sim.owner() === last && sim.tablesOf(last) === 20, 2000, 'last capture owns everything');
    // a restarted capture registers with a new ID
    const oldId = sim.captures().find((c) => c.pod === victim)?.id;
    await sim.captureStart(victim, ips.get(victim) as string);
    await sim.waitFor(() => sim.captures().find((c) => c.pod === victim)?.state === 'running', 2000, 'restart');
    expect(sim.captures().find((c) => c.pod === victim)?.id).not.toBe(oldId);
  });

  test('health: 200 from the owner; 500 ErrClusterIsUnhealthy when unhealthy or with 3 versions (v6.3+)', async () => {
    const { sim, url } = await cdcReady({ tables: 4 });
    const ok = await call('GET', url('basic-ticdc-1', '/api/v1/health'));
    expect(ok).toMatchObject({ status: 200, text: '' });
    sim.unhealthy = true;
    const bad = await call('GET', url('basic-ticdc-1', '/api/v1/health'));
    expect(bad.status).toBe(500);
    expect(json(bad)).toEqual({
      error_msg: '[CDC:ErrClusterIsUnhealthy]TiCDC cluster is unhealthy',
      error_code: 'CDC:ErrClusterIsUnhealthy',
    });

    const mixed = await cdcReady({ tables: 4 }, ['m-0', 'm-1', 'm-2'], { 'm-0': 'v8.5.0', 'm-1': 'v8.1.2', 'm-2': 'v7.5.7' });
    expect((await call('GET', mixed.url('m-0', '/api/v1/health'))).status).toBe(500);
  });

  test('failNext answers injected errors, status 0 drops the connection', async () => {
    const { sim, url } = await cdcReady({ tables: 0 }, ['basic-ticdc-0']);
    sim.failNext('GET /api/v1/captures', 503, 1, 'boom');
    const r = await call('GET', url('basic-ticdc-0', '/api/v1/captures'));
    expect(r.status).toBe(503);
    expect(json(r)).toEqual({ error_msg: 'boom', error_code: '' });
    expect((await call('GET', url('basic-ticdc-0', '/api/v1/captures'))).status).toBe(200);
    sim.failNext((m, p, pod) => m === 'GET' && p === '/status' && pod === 'basic-ticdc-0', 0);
    await expect(call('GET', url('basic-ticdc-0', '/status'))).rejects.toThrow(/socket hang up|ECONNRESET/);
    expect(sim.requests.map((x) => x.status)).toEqual([503, 200, 0]);
  });
});

describe('TicdcSim: drain', () => {
  test('refusals: invalid body, unknown capture, the owner, a lone capture', async () => {
    const { sim, url } = await cdcReady();
    const owner = sim.owner() as string;
    const ownerId = sim.captures().find((c) => c.pod === owner)?.id;
    const put = (body: string) => call('PUT', url('basic-ticdc-2', '/api/v1/captures/drain'), body);
    const cases: [string, string, string][] = [
      ['', 'CDC:ErrAPIInvalidParam', '[CDC:ErrAPIInvalidParam]invalid api parameter: EOF'],
      ['{}', 'CDC:ErrCaptureNotExist', '[CDC:ErrCaptureNotExist]capture not exists, '],
      ['{"capture_id":"nope"}', 'CDC:ErrCaptureNotExist', '[CDC:ErrCaptureNotExist]capture not exists, nope'],
      [
        '{"capture_id":5}',
        'CDC:ErrAPIInvalidParam',
        '[CDC:ErrAPIInvalidParam]invalid api parameter: json: cannot unmarshal number into Go struct field DrainCaptureRequest.capture_id of type string',
      ],
      [
        `{"capture_id":"${ownerId}"}`,
        'CDC:ErrSchedulerRequestFailed',
        '[CDC:ErrSchedulerRequestFailed]scheduler request failed, cannot drain the owner',
      ],
    ];
    for (const [body, code, msg] of cases) {
      const r = await put(body);
      expect(r.status).toBe(400);
      expect(json(r)).toEqual({ error_msg: msg, error_code: code });
    }
    expect(sim.drainTarget()).toBeUndefined();

    const lone = await cdcReady({}, ['lone-0']);
    const r = await call('PUT', lone.url('lone-0', '/api/v1/captures/drain'), `{"capture_id":"${lone.sim.captures()[0].id}"}`);
    expect(r.status).toBe(400);
    expect(json(r).error_msg).toBe('[CDC:ErrSchedulerRequestFailed]scheduler request failed, only one capture alive');
  });

  test('the first call starts the drain and reports the tables before any moved; later calls count down to 0', async () => {
    const { sim, url } = await cdcReady({ drainRate: 2, tickMs: 30 });
    const owner = sim.owner() as string;
    const target = CDC_PODS.find((p) => p !== owner) as string;
    const id = sim.captures().find((c) => c.pod === target)?.id;
    const before = sim.tablesOf(target);
    expect(before).toBeGreaterThan(2);
    const first = await call('PUT', url(target, '/api/v1/captures/drain'), `{"capture_id":"${id}"}`);
    expect(first.status).toBe(202);
    expect(first.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(first.text).toBe(`{"current_table_count":${before}}`);
    expect(sim.drainTarget()).toBe(target);
    const counts = [before];
    for (let i = 0; i < 100 && counts.at(-1) !== 0; i++) {
      await sleep(15);
      counts.push(json(await call('PUT', url(owner, '/api/v1/captures/drain'), `{"capture_id":"${id}"}`)).current_table_count);
    }
    expect(counts.at(-1)).toBe(0);
    expect(counts.length).toBeGreaterThan(2);
    expect(counts).toEqual([...counts].sort((a, b) => b - a));
    expect(sim.tablesOf(target)).toBe(0);
    expect(CDC_PODS.filter((p) => p !== target).reduce((n, p) => n + sim.tablesOf(p), 0)).toBe(20);
    await sim.waitFor(() => sim.drainTarget() === undefined, 1000, 'drain finished');
  });

  test('a new owner without its scheduler counts 1; uninitialised captures: 503 before v7.5.2, count 1 from v7.5.2/v8.1', async () => {
    for (const [version, expectCountOne] of [
      ['v6.5.12', false],
      ['v7.5.1', false],
      ['v7.5.2', true],
      ['v8.0.0', false],
      ['v8.5.0', true],
    ] as const) {
      const { sim, url } = await cdcReady({ version, tables: 6, captureInitMs: 10 });
      const owner = sim.owner() as string;
      const target = CDC_PODS.find((p) => p !== owner) as string;
      const body = `{"capture_id":"${sim.captures().find((c) => c.pod === target)?.id}"}`;
      // a fourth capture joins: the owner's scheduler sees it uninitialised for a while
      sim.setTimings({ captureInitMs: 400 });
      const extra = addresses('127.91', 1)[0];
      await sim.captureStart('late-0', extra);
      await sim.waitFor(() => sim.captures().find((c) => c.pod === 'late-0')?.state === 'running', 2000, 'late capture');
      const r = await call('PUT', url(target, '/api/v1/captures/drain'), body);
      if (expectCountOne) {
        expect(r).toMatchObject({ status: 202, text: '{"current_table_count":1}' });
      } else {
        expect(r.status).toBe(503);
        expect(r.headers['content-type']).toBe('text/plain; charset=utf-8');
        expect(json(r)).toEqual({
          error_msg: '[CDC:ErrSchedulerRequestFailed]not all captures initialized',
          error_code: 'CDC:ErrSchedulerRequestFailed',
        });
      }
      expect(sim.drainTarget()).toBeUndefined();
      await sim.close();
    }

    // an owner just elected has no changefeed scheduler yet: +1 whatever the version
    const { sim, url } = await cdcReady({ tables: 6, ownerInitMs: 10 });
    sim.setTimings({ ownerInitMs: 400 });
    const old = sim.owner() as string;
    await call('POST', url(old, '/api/v1/owner/resign'));
    await sim.waitFor(() => sim.owner() !== undefined, 2000, 'new owner');
    const target = CDC_PODS.find((p) => p !== sim.owner()) as string;
    const r = await call(
      'PUT',
      url(target, '/api/v1/captures/drain'),
      `{"capture_id":"${sim.captures().find((c) => c.pod === target)?.id}"}`,
    );
    expect(r).toMatchObject({ status: 202, text: '{"current_table_count":1}' });
  });

  test('the drain state lives in the owner: a new owner forgets it', async () => {
    const { sim, url } = await cdcReady({ drainRate: 1, tickMs: 200 });
    const owner = sim.owner() as string;
    const target = CDC_PODS.find((p) => p !== owner) as string;
    await call('PUT', url(target, '/api/v1/captures/drain'), `{"capture_id":"${sim.captures().find((c) => c.pod === target)?.id}"}`);
    expect(sim.drainTarget()).toBe(target);
    await call('POST', url(owner, '/api/v1/owner/resign'));
    expect(sim.drainTarget()).toBeUndefined();
  });
});

describe('drainCapture (src/controller/clients/ticdc.ts) against TicdcSim', () => {
  /** Calls drainCapture until done, as the controller's requeues would; GracefulErrors are collected. */
  async function untilDone(
    base: string,
    captureAddress: string,
    maxCalls = 200,
  ): Promise<{ outcomes: StepOutcome[]; errors: GracefulError[] }> {
    const outcomes: StepOutcome[] = [];
    const errors: GracefulError[] = [];
    for (let i = 0; i < maxCalls; i++) {
      try {
        const o = await drainCapture(base, { captureAddress, timeoutMs: 2000 });
        outcomes.push(o);
        if (o.done) return { outcomes, errors };
      } catch (e) {
        if (!(e instanceof GracefulError)) throw e;
        errors.push(e);
      }
      await sleep(15);
    }
    throw new Error(`drainCapture not done after ${maxCalls} calls: ${outcomes.map((o) => o.detail).join(' | ')}`);
  }

  test('3 captures (v8.5.0): the owner resigns, is drained to 0 tables, and stops holding nothing', async () => {
    const { sim, ips } = await cdcReady({ drainRate: 2, tickMs: 25 });
    const pod = sim.owner() as string;
    const base = `http://${ips.get(pod)}:${sim.port}`;
    const { outcomes, errors } = await untilDone(base, sim.addressPrefix(pod));
    // TiCDC's answer while no owner is elected after the resign is a wait, not an error
    expect(errors).toEqual([]);
    const details = outcomes.map((o) => o.detail);
    expect(details.some((d) => d.includes('asked it to resign'))).toBe(true);
    expect(details.some((d) => /is draining: \d+ tables? left/.test(d))).toBe(true);
    expect(outcomes.at(-1)?.detail).toMatch(/is drained: no tables left/);
    expect(sim.owner()).not.toBe(pod);
    expect(sim.tablesOf(pod)).toBe(0);
    await sim.captureStop(pod);
    expect(sim.stopsWithTables).toEqual([]);
    expect(sim.stopsWhileOwner).toEqual([]);
    expect(CDC_PODS.filter((p) => p !== pod).reduce((n, p) => n + sim.tablesOf(p), 0)).toBe(20);
  });

  test("a deleted capture's preStop request (the owner's) drains it and is answered once it holds no tables", async () => {
    const { sim, ips } = await cdcReady({ drainRate: 2, tickMs: 25 });
    const pod = sim.owner() as string;
    const pods = CDC_PODS.map((name) => ({
      metadata: {
        name,
        labels: { 'app.kubernetes.io/component': 'ticdc', 'app.kubernetes.io/instance': 'basic' },
        ...(name === pod && { deletionTimestamp: new Date() }),
      },
      spec: { terminationGracePeriodSeconds: 60 },
      status: { podIP: ips.get(name) },
    }));
    const discovery = new Discovery({
      cluster: parseClusterInfo(
        JSON.stringify({
          name: 'basic',
          clusterDomain: '',
          acrossK8s: false,
          tls: false,
          discoveryMtls: false,
          pdAddresses: [],
          cluster: null,
          components: ['pd', 'tikv', 'tidb', 'ticdc'],
        }),
        'ns',
      ),
      pods: () => pods,
      pdReplicas: () => 3,
      pdStatefulSet: () => undefined,
      pdClients: [new PdClient('http://127.0.0.1:9', undefined, 500)],
      checkSource: true,
      note: () => {},
      preStop: { pollMs: 20, ticdcUrl: (p) => `http://${ips.get(p)}:${sim.port}` },
    });
    const answer = await discovery.handle('GET', `/prestop/${pod}`, ips.get(pod));
    expect(answer.status).toBe(200);
    expect(answer.body).toMatch(/is drained: no tables left/);
    expect(sim.owner()).not.toBe(pod);
    expect(sim.tablesOf(pod)).toBe(0);
    await sim.captureStop(pod);
    expect(sim.stopsWithTables).toEqual([]);
    expect(sim.stopsWhileOwner).toEqual([]);
  });

  test('a non-owner on v6.5.12 while a capture is uninitialised: waits on 503, then drains', async () => {
    const { sim, ips } = await cdcReady({ version: 'v6.5.12', drainRate: 3 });
    const pod = CDC_PODS.find((p) => p !== sim.owner()) as string;
    sim.setTimings({ captureInitMs: 150 });
    await sim.captureStart('late-0', addresses('127.91', 1)[0]);
    await sim.waitFor(() => sim.captures().find((c) => c.pod === 'late-0')?.state === 'running', 2000, 'late capture');
    const { outcomes } = await untilDone(`http://${ips.get(pod)}:${sim.port}`, sim.addressPrefix(pod));
    expect(outcomes[0]).toMatchObject({ done: false });
    expect(outcomes[0].detail).toContain('HTTP 503 [CDC:ErrSchedulerRequestFailed]not all captures initialized');
    expect(outcomes.at(-1)?.done).toBe(true);
    expect(sim.tablesOf(pod)).toBe(0);
  });

  test('TiCDC without the drain API (v6.1.7) or without the captures API (v5.1.5): done at once', async () => {
    const a = await cdcReady({ version: 'v6.1.7' });
    const podA = CDC_PODS.find((p) => p !== a.sim.owner()) as string;
    const outA = await drainCapture(`http://${a.ips.get(podA)}:${a.sim.port}`, { captureAddress: a.sim.addressPrefix(podA) });
    expect(outA.done).toBe(true);
    expect(outA.detail).toContain('no drain API (HTTP 404)');
    expect(a.sim.tablesOf(podA)).toBeGreaterThan(0);

    const b = await cdcReady({ version: 'v5.1.5' }, ['old-0', 'old-1']);
    const outB = await drainCapture(`http://${b.ips.get('old-1')}:${b.sim.port}`, { captureAddress: b.sim.addressPrefix('old-1') });
    expect(outB).toMatchObject({ done: true });
    expect(outB.detail).toContain('no captures API (HTTP 404)');
  });

  test('while no owner is elected TiCDC answers 500 "election: no leader": drainCapture waits', async () => {
    const { sim, ips } = await cdcReady({ electionMs: 300 });
    const pod = CDC_PODS.find((p) => p !== sim.owner()) as string;
    await call('POST', `http://${ips.get(pod)}:${sim.port}/api/v1/owner/resign`);
    const out = await drainCapture(`http://${ips.get(pod)}:${sim.port}`, { captureAddress: sim.addressPrefix(pod) });
    expect(out.done).toBe(false);
    expect(out.detail).toMatch(/cannot list captures yet \(HTTP 500 election: no leader\); retrying/);
  });

  test('an upgrade: the capture version, then ownership taken from the next Pod to restart', async () => {
    const { sim, ips } = await cdcReady({}, CDC_PODS, { 'basic-ticdc-0': 'v8.5.0' });
    const base = (p: string) => `http://${ips.get(p)}:${sim.port}`;
    expect(await captureVersion(base('basic-ticdc-0'))).toBe('v8.5.0');
    const owner = sim.owner() as string;
    const other = CDC_PODS.find((p) => p !== owner) as string;
    // Not the owner: nothing to do.
    expect(await resignOwnerOf(base(other), sim.addressPrefix(other))).toMatchObject({ done: true });
    // The owner: asked to resign, done once another capture leads.
    const first = await resignOwnerOf(base(owner), sim.addressPrefix(owner));
    expect(first).toMatchObject({ done: false });
    expect(first.detail).toContain('asked it to resign');
    await sim.waitFor(() => sim.owner() !== undefined && sim.owner() !== owner, 3000, 'another owner');
    let next = await resignOwnerOf(base(owner), sim.addressPrefix(owner));
    for (let i = 0; !next.done && i < 100; i++) {
      await sleep(20);
      next = await resignOwnerOf(base(owner), sim.addressPrefix(owner));
    }
    expect(next).toMatchObject({ done: true, detail: expect.stringContaining('TiCDC is healthy') });
  });

  test("ownership taken from the next Pod: done only once the new owner's /api/v1/health answers 200 (the operator's IsHealthy)", async () => {
    const { sim, ips } = await cdcReady({ ownerInitMs: 400 });
    const base = (p: string) => `http://${ips.get(p)}:${sim.port}`;
    const owner = sim.owner() as string;
    await resignOwnerOf(base(owner), sim.addressPrefix(owner));
    await sim.waitFor(() => sim.owner() !== undefined && sim.owner() !== owner, 3000, 'another owner');
    const early = await resignOwnerOf(base(owner), sim.addressPrefix(owner));
    expect(early).toEqual({
      done: false,
      detail: expect.stringContaining('waiting for TiCDC to be healthy (HTTP 500 [CDC:ErrClusterIsUnhealthy]TiCDC cluster is unhealthy'),
    });
    let next = early;
    for (let i = 0; !next.done && i < 200; i++) {
      await sleep(20);
      next = await resignOwnerOf(base(owner), sim.addressPrefix(owner));
    }
    expect(next).toMatchObject({ done: true });
    expect(sim.requests.filter((r) => r.path === '/api/v1/health').at(-1)?.status).toBe(200);
  });
});

describe("TiCDC's new architecture (pingcap/ticdc): what a drain answer means, by release", () => {
  const newArch = (version: string, extra: Partial<TicdcSimOptions> = {}) =>
    cdcReady({ architecture: 'new', version, drainRate: 2, tickMs: 25, ...extra });
  const put = (url: string, id: string) => call('PUT', url, JSON.stringify({ capture_id: id }));

  test('TicdcSim v8.5.6: the drain handler answers a counter (0, and 10 on every tenth call) and moves nothing (api/v1/api.go drainCapture)', async () => {
    const { sim, url } = await newArch('v8.5.6');
    const pod = CDC_PODS.find((p) => p !== sim.owner()) as string;
    const id = sim.captures().find((c) => c.pod === pod)!.id as string;
    const held = sim.tablesOf(pod);
    expect(held).toBeGreaterThan(0);
    const counts: number[] = [];
    for (let i = 0; i < 10; i++) counts.push(json(await put(url(pod, '/api/v1/captures/drain'), id)).current_table_count);
    expect(counts).toEqual([0, 0, 0, 0, 0, 0, 0, 0, 0, 10]);
    await sleep(100);
    expect(sim.tablesOf(pod)).toBe(held);
    // Health is the coordinator's liveness: 200 with {} (api/v2/health.go), resign answers {} with 202.
    const health = await call('GET', url(pod, '/api/v1/health'));
    expect([health.status, health.text]).toEqual([200, '{}']);
    const resign = await call('POST', url(pod, '/api/v1/owner/resign'));
    expect([resign.status, resign.text]).toEqual([202, '{}']);
  });

  test('TicdcSim v8.5.7: the coordinator cannot be drained (400); another capture drains to 0; a v8.5.6 peer makes it 0 at once (controller_drain.go)', async () => {
    const { sim, url } = await newArch('v8.5.7');
    const owner = sim.owner() as string;
    const ownerId = sim.captures().find((c) => c.pod === owner)!.id as string;
    const refused = await put(url(owner, '/api/v1/captures/drain'), ownerId);
    expect(refused.status).toBe(400);
    expect(json(refused)).toEqual({
      error_msg: '[CDC:ErrSchedulerRequestFailed]scheduler request failed, cannot drain the owner',
      error_code: 'CDC:ErrSchedulerRequestFailed',
    });
    const pod = CDC_PODS.find((p) => p !== owner) as string;
    const id = sim.captures().find((c) => c.pod === pod)!.id as string;
    const first = json(await put(url(pod, '/api/v1/captures/drain'), id)).current_table_count as number;
    expect(first).toBeGreaterThan(0);
    await sim.waitFor(() => sim.tablesOf(pod) === 0, 3000, 'drained');
    expect(json(await put(url(pod, '/api/v1/captures/drain'), id)).current_table_count).toBe(0);

    // basic-ticdc-0 registers first and is elected; basic-ticdc-2 runs a release without the drain protocol.
    const mixed = await cdcReady({ architecture: 'new', version: 'v8.5.7' }, CDC_PODS, { 'basic-ticdc-2': 'v8.5.6' });
    expect(mixed.sim.owner()).toBe('basic-ticdc-0');
    const tid = mixed.sim.captures().find((c) => c.pod === 'basic-ticdc-1')!.id as string;
    expect(json(await put(mixed.url('basic-ticdc-1', '/api/v1/captures/drain'), tid)).current_table_count).toBe(0);
    await sleep(100);
    expect(mixed.sim.tablesOf('basic-ticdc-1')).toBeGreaterThan(0);
  });

  test('drainCapture on v8.5.6: never takes the counter for a drain; the owner resigns first, then the capture goes once the new owner is healthy, saying its tables go with it', async () => {
    const { sim, ips } = await newArch('v8.5.6');
    const pod = sim.owner() as string;
    const base = `http://${ips.get(pod)}:${sim.port}`;
    const outcomes: StepOutcome[] = [];
    for (let i = 0; i < 100; i++) {
      const o = await drainCapture(base, { captureAddress: sim.addressPrefix(pod), newArchitecture: true, imageTag: 'v8.5.6' });
      outcomes.push(o);
      if (o.done) break;
      await sleep(15);
    }
    expect(outcomes[0].detail).toContain('asked it to resign');
    const last = outcomes.at(-1)!;
    expect(last.done).toBe(true);
    expect(last.detail).toContain('runs TiCDC v8.5.6 in its new architecture, whose drain API moves no table');
    expect(outcomes.some((o) => /is drained/.test(o.detail))).toBe(false);
    expect(sim.requests.filter((r) => r.path === '/api/v1/captures/drain')).toEqual([]);
    expect(sim.owner()).not.toBe(pod);
    await sim.captureStop(pod);
    expect(sim.stopsWhileOwner).toEqual([]);
  });

  test('drainCapture on v8.5.7: resigns, then drains the capture to 0 tables before it goes', async () => {
    const { sim, ips } = await newArch('v8.5.7');
    const pod = sim.owner() as string;
    const base = `http://${ips.get(pod)}:${sim.port}`;
    let last: StepOutcome = { done: false, detail: '' };
    for (let i = 0; i < 200 && !last.done; i++) {
      last = await drainCapture(base, { captureAddress: sim.addressPrefix(pod), newArchitecture: true, imageTag: 'v8.5.7' });
      if (!last.done) await sleep(15);
    }
    expect(last.detail).toContain('is drained, or TiCDC chose a plain restart');
    expect(sim.tablesOf(pod)).toBe(0);
    await sim.captureStop(pod);
    expect(sim.stopsWithTables).toEqual([]);
    expect(sim.stopsWhileOwner).toEqual([]);
  });

  test('TicdcSim: a suffixed v8.5.7 (v8.5.7-release.1, the hotfix v8.5.7-20260728-c8d4d68) still answers the counter and moves nothing', async () => {
    for (const version of ['v8.5.7-release.1', 'v8.5.7-20260728-c8d4d68']) {
      const { sim, url } = await newArch(version);
      const pod = CDC_PODS.find((p) => p !== sim.owner()) as string;
      const id = sim.captures().find((c) => c.pod === pod)!.id as string;
      const held = sim.tablesOf(pod);
      expect(json(await put(url(pod, '/api/v1/captures/drain'), id)).current_table_count).toBe(0);
      await sleep(100);
      expect(sim.tablesOf(pod)).toBe(held);
    }
  });

  test('drainMeaning: a suffixed tag is below its release; later releases and their suffixes are not', () => {
    expect(drainMeaning('v8.5.7', true)).toBe('best-effort');
    expect(drainMeaning('v8.5.7-release.1', true)).toBe('none');
    expect(drainMeaning('v8.5.7-20260728-c8d4d68', true)).toBe('none');
    expect(drainMeaning('v8.5.4-nextgen.202510.1', true)).toBe('none');
    expect(drainMeaning('v8.5.8-release.1', true)).toBe('best-effort');
    expect(drainMeaning('v26.3.5-release.1', true)).toBe('none');
    expect(drainMeaning('v26.3.5', true)).toBe('best-effort');
    expect(drainMeaning('v8.5.7-release.1', false)).toBe('tables');
  });

  test('drainCapture on v8.5.7-release.1: the counter is never taken for a drain; the capture goes once the owner is healthy', async () => {
    const { sim, ips } = await newArch('v8.5.7-release.1');
    const pod = CDC_PODS.find((p) => p !== sim.owner()) as string;
    const base = `http://${ips.get(pod)}:${sim.port}`;
    const o = await drainCapture(base, { captureAddress: sim.addressPrefix(pod), newArchitecture: true, imageTag: 'v8.5.7-release.1' });
    expect(o.done).toBe(true);
    expect(o.detail).toContain('runs TiCDC v8.5.7-release.1 in its new architecture, whose drain API moves no table');
    expect(sim.requests.filter((r) => r.path === '/api/v1/captures/drain')).toEqual([]);
  });

  test('TicdcSim v8.5.7 with security.client-user-required: the drain without a user is 401 ErrCredentialNotFound (authenticate_middleware.go)', async () => {
    const { sim, url } = await newArch('v8.5.7', { clientUserRequired: true });
    const pod = CDC_PODS.find((p) => p !== sim.owner()) as string;
    const id = sim.captures().find((c) => c.pod === pod)!.id as string;
    const refused = await put(url(pod, '/api/v1/captures/drain'), id);
    expect(refused.status).toBe(401);
    expect(refused.text).toBe(
      '{\n    "error_msg": "[CDC:ErrCredentialNotFound]credential not found: please specify the user and password via authorization header",\n    "error_code": "CDC:ErrCredentialNotFound"\n}',
    );
    // v8.5.6 has no authenticateMiddleware on the drain route.
    const older = await newArch('v8.5.6', { clientUserRequired: true });
    const other = CDC_PODS.find((p) => p !== older.sim.owner()) as string;
    expect(
      (await put(older.url(other, '/api/v1/captures/drain'), older.sim.captures().find((c) => c.pod === other)!.id as string)).status,
    ).toBe(202);
  });

  test('drainCapture on v8.5.7 with security.client-user-required: no retries to the timeout; the capture goes once the owner is healthy, saying why', async () => {
    const { sim, ips } = await newArch('v8.5.7', { clientUserRequired: true });
    const pod = CDC_PODS.find((p) => p !== sim.owner()) as string;
    const base = `http://${ips.get(pod)}:${sim.port}`;
    const o = await drainCapture(base, { captureAddress: sim.addressPrefix(pod), newArchitecture: true, imageTag: 'v8.5.7' });
    expect(o.done).toBe(true);
    expect(o.detail).toContain('TiCDC refuses the drain without a client user (HTTP 401 [CDC:ErrCredentialNotFound]credential not found');
    expect(o.detail).toContain('it goes with its tables');
    expect(sim.requests.filter((r) => r.path === '/api/v1/captures/drain').map((r) => r.status)).toEqual([401]);
  });
});

// ---- Pump ----

const PUMP_PODS = ['basic-pump-0', 'basic-pump-1', 'basic-pump-2'];

interface Pumps {
  sim: PumpSim;
  ips: Map<string, string>;
  base: (pod: string) => string;
}

async function pumps(options: Partial<PumpSimOptions> = {}, pods = PUMP_PODS): Promise<Pumps> {
  const sim = await PumpSim.start({ cluster: 'basic', namespace: 'ns', ...options });
  cleanups.push(() => sim.close());
  const list = addresses('127.92', pods.length);
  const ips = new Map(pods.map((p, i) => [p, list[i]] as const));
  for (const p of pods) await sim.pumpStart(p, ips.get(p) as string);
  await sim.waitFor(() => pods.every((p) => sim.stateOf(p) === 'online'), 2000, 'pumps online');
  return { sim, ips, base: (pod) => `http://${ips.get(pod)}:${sim.port}` };
}

const statusOf = async (base: string) => call('GET', `${base}/status`);

describe('PumpSim', () => {
  test('GET /status on any pump lists every node as Go encodes it (compact, sorted keys, int64 TSOs, trailing newline)', async () => {
    const { sim, base } = await pumps();
    const r = await statusOf(base('basic-pump-1'));
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(r.text.endsWith('}\n')).toBe(true);
    expect(r.text.slice(0, -1)).not.toMatch(/\n| /);
    expect(r.text).toMatch(
      /^\{"status":\{"basic-pump-0:8250":\{"nodeId":"basic-pump-0:8250","host":"basic-pump-0\.basic-pump:8250","state":"online","isAlive":false,"score":0,"label":null,"maxCommitTS":\d{17,},"updateTS":\d{17,}\},"basic-pump-1:8250":/,
    );
    expect(r.text).toMatch(/\},"CommitTS":\d{17,},"Checkpoint":\{\},"ErrMsg":""\}\n$/);
    const body = json(r);
    expect(Object.keys(body)).toEqual(['status', 'CommitTS', 'Checkpoint', 'ErrMsg']);
    expect(Object.keys(body.status)).toEqual(['basic-pump-0:8250', 'basic-pump-1:8250', 'basic-pump-2:8250']);
    for (const pod of PUMP_PODS) {
      expect(Object.keys(body.status[`${pod}:8250`])).toEqual([
        'nodeId',
        'host',
        'state',
        'isAlive',
        'score',
        'label',
        'maxCommitTS',
        'updateTS',
      ]);
      expect(body.status[`${pod}:8250`]).toMatchObject({
        nodeId: `${pod}:8250`,
        host: `${pod}.basic-pump:8250`,
        state: 'online',
        isAlive: false,
        score: 0,
        label: null,
      });
    }
    expect(sim.nodes().map((n) => n.nodeId)).toEqual(PUMP_PODS.map((p) => `${p}:8250`));
  });

  test('host: <pod>.<cluster>-pump.<ns>.svc[.<domain>]:8250 across Kubernetes or with a cluster domain', async () => {
    const a = await pumps({ acrossK8s: true }, ['basic-pump-0']);
    expect(a.sim.nodes()[0].host).toBe('basic-pump-0.basic-pump.ns.svc:8250');
    const b = await pumps({ clusterDomain: 'cluster.local', acrossK8s: true }, ['basic-pump-0']);
    expect(b.sim.nodes()[0].host).toBe('basic-pump-0.basic-pump.ns.svc.cluster.local:8250');
  });

  test('PUT /state refusals (HTTP 200, code 3), routing: 405 for another method, 404 for unknown paths', async () => {
    const { sim, base } = await pumps({}, ['basic-pump-0']);
    const wrong = await call('PUT', `${base('basic-pump-0')}/state/basic-pump-1:8250/close`);
    expect(wrong.status).toBe(200);
    expect(wrong.headers['content-type']).toBe('application/json; charset=UTF-8');
    expect(wrong.text).toBe(
      '{\n  "message": "invalide nodeID basic-pump-1:8250, this pump\'s nodeID is basic-pump-0:8250",\n  "code": 3,\n  "data": null\n}\n',
    );
    const bogus = await call('PUT', `${base('basic-pump-0')}/state/basic-pump-0:8250/bogus`);
    expect(json(bogus)).toEqual({ message: 'invalide action bogus', code: 3, data: null });
    expect(sim.processState('basic-pump-0')).toBe('serving');
    expect(await call('GET', `${base('basic-pump-0')}/state/basic-pump-0:8250/close`)).toMatchObject({ status: 405, text: '' });
    expect(await call('POST', `${base('basic-pump-0')}/status`)).toMatchObject({ status: 405, text: '' });
    expect(await call('GET', `${base('basic-pump-0')}/status/`)).toMatchObject({ status: 404, text: '404 page not found\n' });
    expect(await call('GET', `${base('basic-pump-0')}/nope`)).toMatchObject({ status: 404, text: '404 page not found\n' });
    expect((await call('GET', `${base('basic-pump-0')}/drainers`)).status).toBe(500);
    expect(sim.unsimulated).toEqual(['GET /drainers']);
    // the node ID may be percent-encoded: mux matches the decoded path
    const pause = await call('PUT', `${base('basic-pump-0')}/state/basic-pump-0%3A8250/pause`);
    expect(json(pause)).toEqual({ message: 'apply action pause success!', code: 200, data: null });
    await sim.waitFor(() => sim.stateOf('basic-pump-0') === 'paused' && sim.processState('basic-pump-0') === 'stopped', 2000, 'paused');
    expect(sim.exits).toEqual([expect.objectContaining({ pod: 'basic-pump-0', code: 0, state: 'paused' })]);
  });

  test('close: success, the own /status fails with "context canceled", offline once the drainers caught up, then exit', async () => {
    const exits: [string, number][] = [];
    const { sim, base } = await pumps({ drainersLagging: true, onExit: (pod, code) => exits.push([pod, code]) });
    const ok = await call('PUT', `${base('basic-pump-0')}/state/basic-pump-0:8250/close`);
    expect(ok.text).toBe('{\n  "message": "apply action close success!",\n  "code": 200,\n  "data": null\n}\n');
    const own = await statusOf(base('basic-pump-0'));
    expect(own).toMatchObject({ status: 200, text: '{"status":null,"CommitTS":0,"Checkpoint":{},"ErrMsg":"context canceled"}\n' });
    expect(json(await statusOf(base('basic-pump-1'))).status['basic-pump-0:8250'].state).toBe('online');
    const again = await call('PUT', `${base('basic-pump-0')}/state/basic-pump-0:8250/close`);
    expect(json(again)).toEqual({ message: "this pump's state is closing, apply close failed!", code: 3, data: null });
    await sleep(250);
    expect(sim.stateOf('basic-pump-0')).toBe('online');
    expect(sim.processState('basic-pump-0')).toBe('closing');
    sim.drainersLagging = false;
    await sim.waitFor(() => sim.stateOf('basic-pump-0') === 'offline', 2000, 'offline');
    await sim.waitFor(() => exits.length === 1, 2000, 'exit');
    expect(exits).toEqual([['basic-pump-0', 0]]);
    expect(sim.exits).toEqual([expect.objectContaining({ pod: 'basic-pump-0', nodeId: 'basic-pump-0:8250', code: 0, state: 'offline' })]);
    await expect(statusOf(base('basic-pump-0'))).rejects.toThrow(/ECONNREFUSED/);
    expect(json(await statusOf(base('basic-pump-2'))).status['basic-pump-0:8250'].state).toBe('offline');
    expect(sim.stopsWhileOnline).toEqual([]);
    // restarted (the container restarts after exit 0), the same node registers online again
    await sim.pumpStart('basic-pump-0', new URL(base('basic-pump-0')).hostname);
    await sim.waitFor(() => sim.stateOf('basic-pump-0') === 'online', 2000, 'online again');
  });

  test('SIGTERM of an online pump writes paused (recorded); a restart with the same data comes back online', async () => {
    const { sim, base } = await pumps({}, ['basic-pump-0', 'basic-pump-1']);
    await sim.pumpStop('basic-pump-0');
    expect(sim.stateOf('basic-pump-0')).toBe('paused');
    expect(sim.stopsWhileOnline).toEqual([expect.objectContaining({ pod: 'basic-pump-0', how: 'SIGTERM' })]);
    expect(sim.exits).toEqual([expect.objectContaining({ pod: 'basic-pump-0', code: 0, state: 'paused' })]);
    const paused = json(await statusOf(base('basic-pump-1'))).status['basic-pump-0:8250'];
    expect(paused.state).toBe('paused');
    await sim.pumpStart('basic-pump-0', new URL(base('basic-pump-0')).hostname);
    await sim.waitFor(() => sim.stateOf('basic-pump-0') === 'online', 2000, 'online again');
    expect(sim.nodes().map((n) => n.nodeId)).toEqual(['basic-pump-0:8250', 'basic-pump-1:8250']);
  });

  test('SIGTERM during a close changes nothing (Close runs once); SIGKILL leaves the registry as it was', async () => {
    const { sim, base } = await pumps({ drainersLagging: true }, ['basic-pump-0', 'basic-pump-1']);
    await call('PUT', `${base('basic-pump-0')}/state/basic-pump-0:8250/close`);
    const stopping = sim.pumpStop('basic-pump-0');
    await sleep(100);
    expect(sim.processState('basic-pump-0')).toBe('closing');
    sim.drainersLagging = false;
    await stopping;
    expect(sim.stateOf('basic-pump-0')).toBe('offline');
    expect(sim.stopsWhileOnline).toEqual([]);

    await sim.pumpKill('basic-pump-1');
    expect(sim.stateOf('basic-pump-1')).toBe('online');
    expect(sim.stopsWhileOnline).toEqual([expect.objectContaining({ pod: 'basic-pump-1', how: 'SIGKILL' })]);
    expect(sim.exits.map((e) => [e.pod, e.code])).toEqual([
      ['basic-pump-0', 0],
      ['basic-pump-1', 137],
    ]);
  });

  test('node ID: the .node file wins over --node-id; --node-id is not saved; pumpWipe removes the file', async () => {
    const { sim, ips } = await pumps({}, ['basic-pump-0']);
    const ip = ips.get('basic-pump-0') as string;
    expect(sim.nodeIdOf('basic-pump-0')).toBe('basic-pump-0:8250');
    await sim.pumpStop('basic-pump-0');
    await sim.pumpStart('basic-pump-0', ip, { nodeId: 'custom-id' });
    expect(sim.nodeIdOf('basic-pump-0')).toBe('basic-pump-0:8250');
    await sim.waitFor(() => sim.stateOf('basic-pump-0') === 'online', 2000, 'online');
    await sim.pumpStop('basic-pump-0');
    sim.pumpWipe('basic-pump-0');
    await sim.pumpStart('basic-pump-0', ip, { nodeId: 'custom-id' });
    expect(sim.nodeIdOf('basic-pump-0')).toBe('custom-id');
    await sim.waitFor(() => sim.stateOf('basic-pump-0') === 'online', 2000, 'online');
    await sim.pumpStop('basic-pump-0');
    await sim.pumpStart('basic-pump-0', ip);
    expect(sim.nodeIdOf('basic-pump-0')).toBe('basic-pump-0:8250');
    await sim.waitFor(() => sim.stateOf('basic-pump-0') === 'online', 2000, 'online');
    expect(sim.nodes().map((n) => [n.nodeId, n.state])).toEqual([
      ['basic-pump-0:8250', 'online'],
      ['custom-id', 'paused'],
    ]);
  });

  test('requests that arrive before the node registered are answered once it did', async () => {
    const sim = await PumpSim.start({ cluster: 'basic', namespace: 'ns', registerMs: 150 });
    cleanups.push(() => sim.close());
    const [ip] = addresses('127.92', 1);
    await sim.pumpStart('basic-pump-0', ip);
    const started = Date.now();
    const r = await call('GET', `http://${ip}:8250/status`);
    expect(Date.now() - started).toBeGreaterThanOrEqual(100);
    expect(json(r).status['basic-pump-0:8250'].state).toBe('online');
  });

  test('failNext answers injected errors, status 0 drops the connection', async () => {
    const { sim, base } = await pumps({}, ['basic-pump-0']);
    sim.failNext('GET /status', 500, 1, 'boom');
    expect(await statusOf(base('basic-pump-0'))).toMatchObject({ status: 500, text: 'boom\n' });
    sim.failNext(/^PUT /, 0);
    await expect(call('PUT', `${base('basic-pump-0')}/state/basic-pump-0:8250/close`)).rejects.toThrow(/socket hang up|ECONNRESET/);
    expect(sim.stateOf('basic-pump-0')).toBe('online');
  });
});

describe('pumpNodes / takePumpOffline (src/controller/clients/pump.ts) against PumpSim', () => {
  test('pumpNodes lists the nodes; a closing pump errs with its ErrMsg', async () => {
    const { sim, base } = await pumps({ drainersLagging: true });
    const nodes = await pumpNodes(base('basic-pump-2'));
    expect(nodes).toEqual(PUMP_PODS.map((p) => ({ nodeId: `${p}:8250`, host: `${p}.basic-pump:8250`, state: 'online', isAlive: false })));
    await call('PUT', `${base('basic-pump-2')}/state/basic-pump-2:8250/close`);
    const thrown = await pumpNodes(base('basic-pump-2')).catch((e: unknown) => e);
    expect(thrown).toBeInstanceOf(GracefulError);
    expect((thrown as Error).message).toContain('context canceled');
    sim.drainersLagging = false;
  });

  test("3 pumps: takePumpOffline closes the Pod's node and is done once it is offline", async () => {
    const { sim, base } = await pumps({ offlineMs: 150 });
    const pod = 'basic-pump-2';
    const bases = [pod, 'basic-pump-0', 'basic-pump-1'].map(base);
    const outcomes: StepOutcome[] = [];
    const errors: GracefulError[] = [];
    for (let i = 0; i < 200; i++) {
      try {
        const o = await takePumpOffline(base(pod), bases, sim.advertiseAddress(pod), { timeoutMs: 2000 });
        outcomes.push(o);
        if (o.done) break;
      } catch (e) {
        if (!(e instanceof GracefulError)) throw e;
        errors.push(e);
      }
      await sleep(20);
    }
    expect(outcomes.at(-1)).toMatchObject({ done: true });
    expect(outcomes[0].detail).toContain('asked pump node basic-pump-2:8250');
    // until offline is written, the peers still list the node online: a second close finds it closing (code 3), a wait
    expect(outcomes.some((o) => o.detail.includes('pump node basic-pump-2:8250 is closing; waiting for it to go offline'))).toBe(true);
    // a close sent while the pump writes offline and exits finds no listener any more: a wait too
    expect(errors).toEqual([]);
    expect(sim.stateOf(pod)).toBe('offline');
    expect(sim.exits).toEqual([expect.objectContaining({ pod, code: 0, state: 'offline' })]);
    expect(sim.stopsWhileOnline).toEqual([]);
    const closes = sim.requests.filter((r) => r.method === 'PUT');
    expect(new Set(closes.map((r) => `${r.pod} ${r.path}`))).toEqual(new Set([`${pod} /state/basic-pump-2:8250/close`]));
    // every close that was answered got HTTP 200 (the code in the body says the rest)
    expect(closes.filter((r) => r.status !== 0).every((r) => r.status === 200)).toBe(true);
  });

  test('a pump paused by SIGTERM is never closed: takePumpOffline waits', async () => {
    const { sim, base } = await pumps({}, ['basic-pump-0', 'basic-pump-1']);
    await sim.pumpStop('basic-pump-1');
    const o = await takePumpOffline(
      base('basic-pump-1'),
      [base('basic-pump-1'), base('basic-pump-0')],
      sim.advertiseAddress('basic-pump-1'),
    );
    expect(o.done).toBe(false);
    expect(o.detail).toContain('is paused (only an online node accepts close)');
  });
});
