import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { PdSim, type PdSimOptions } from '../../sim/pd-api';
import { DUPLICATED_JOIN, newClusterId, randomMemberId } from '../../sim/pd-members';
import {
  GoMap,
  atoi,
  bytesSize,
  goDuration,
  goJson,
  goQuote,
  jsonSyntaxError,
  parseUint64,
  renderJson,
  rfc3339Nano,
} from '../../sim/pd-wire';
import { World, simCluster } from '../../sim/world';
import { render } from '../../support/render';
import { pdActions } from '../../../src/controller/actions/pd';
import type { ActionContext } from '../../../src/controller/actions/context';
import { PdClient } from '../../../src/controller/clients/pd';
import { Logger } from '../../../src/controller/runtime/log';

// ---- helpers: an HTTP client, a discovery stub, cleanup ----

interface Reply {
  status: number;
  /** The body parsed as JSON (integers beyond 2^53 as bigint), or undefined when it is not JSON. */
  // Parsed JSON of any shape: the tests check PD's response shapes field by field.
  body: any;
  /** The body as sent. */
  text: string;
  type?: string;
  headers: http.IncomingHttpHeaders;
}

/** JSON.parse that keeps integers a double cannot hold as bigint (PD's uint64 ids). */
function parseExact(text: string): unknown {
  const marked = text.replace(/"(?:[^"\\]|\\.)*"|-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/g, (tok) =>
    tok.startsWith('"') || /[.eE]/.test(tok) || Number.isSafeInteger(Number(tok)) ? tok : `"__bigint__${tok}"`,
  );
  return JSON.parse(marked, (_k, v) => (typeof v === 'string' && v.startsWith('__bigint__') ? BigInt(v.slice(10)) : v));
}

function call(method: string, url: string, body?: unknown, localAddress?: string): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, agent: false, ...(localAddress ? { localAddress } : {}) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let parsed: unknown;
        try {
          parsed = text === '' ? undefined : parseExact(text);
        } catch {
          parsed = undefined;
        }
        resolve({ status: res.statusCode ?? 0, body: parsed, text, type: res.headers['content-type'], headers: res.headers });
      });
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body));
  });
}

/** The body `h.rd.JSON` writes for a string: quoted, indented JSON, newline. */
const pdText = (s: string) => `${JSON.stringify(s)}\n`;
const JSON_TYPE = 'application/json; charset=UTF-8';
const NOT_BOOTSTRAPPED = '[PD:cluster:ErrNotBootstrapped]TiKV cluster not bootstrapped, please start TiKV first';

type DiscoveryAnswer = { status: number; body: string };

interface Discovery {
  url: string;
  /** Request paths as received (`/new/<base64>`). */
  paths: string[];
  /** The address each request came from. */
  from: string[];
  close(): Promise<void>;
}

/** A discovery service: decodes `/new/<base64(host:2380\n)>` and lets the test answer for the host. */
async function startDiscovery(answer: (peerHost: string) => Promise<DiscoveryAnswer> | DiscoveryAnswer): Promise<Discovery> {
  const paths: string[] = [];
  const from: string[] = [];
  const server = http.createServer(async (req, res) => {
    paths.push(req.url ?? '');
    from.push(req.socket.remoteAddress ?? '');
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
    from,
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
    const members = await call('GET', `${sim.url}/pd/api/v1/members`).catch(() => undefined);
    if (members?.status !== 200) return { status: 500, body: 'PD is not ready' };
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
  const sim = await PdSim.start({
    cluster: 'demo',
    namespace: 'ns',
    electionMs: 20,
    transferMs: 10,
    discoveryRetryMs: 10,
    regionLoadMs: 50,
    ...options,
  });
  cleanups.push(() => sim.close());
  return sim;
}

/** Starts `n` PD pods against an operator-like discovery and waits for them all to run under a leader. */
async function formPdCluster(sim: PdSim, n: number, ips?: string[]): Promise<Discovery> {
  const discovery = await startDiscovery(operatorLikeDiscovery(sim, 'demo-pd-0'));
  cleanups.push(() => discovery.close());
  sim.discoveryUrl = discovery.url;
  for (let i = 0; i < n; i++) sim.pdStart(`demo-pd-${i}`, undefined, ips?.[i]);
  await sim.waitFor(
    () => sim.members().filter((m) => m.running).length === n && sim.leader() !== undefined,
    3000,
    `${n} running PD members`,
  );
  return discovery;
}

/** A PD cluster and TiKV stores with the leaders spread evenly (rounds run by hand). */
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
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Loopback addresses for member listeners (Linux routes all of 127/8 to lo), and a port unlikely to be taken. */
const CLIENT_PORT = 20000 + Math.floor(Math.random() * 20000);
const evictBody = (storeId: unknown) => ({ name: 'evict-leader-scheduler', store_id: storeId });

// ---- Go's formats ----

describe('wire formats', () => {
  test('JSON as Go writes it: exact 64-bit integers, indentation, HTML escaping, sorted maps, omitted fields', () => {
    expect(goJson({ id: 18446744073709551615n, n: 1.5, s: '<a&b>\u2028', list: [], obj: {}, gone: undefined })).toBe(
      '{"id":18446744073709551615,"n":1.5,"s":"\\u003ca\\u0026b\\u003e\\u2028","list":[],"obj":{}}',
    );
    expect(
      renderJson({
        a: [1, { b: null }],
        m: new GoMap([
          ['10', 1],
          ['2', 2],
        ]),
      }),
    ).toBe('{\n  "a": [\n    1,\n    {\n      "b": null\n    }\n  ],\n  "m": {\n    "10": 1,\n    "2": 2\n  }\n}\n');
    expect(renderJson('store "7"\n')).toBe('"store \\"7\\"\\n"\n');
    expect(renderJson(null)).toBe('null\n');
  });

  test('durations, sizes, times and number parsing', () => {
    expect([0, 999, 1500, 2_500_000, 3.5e9, 65e9, 3723.5e9].map(goDuration)).toEqual([
      '0s',
      '999ns',
      '1.5µs',
      '2.5ms',
      '3.5s',
      '1m5s',
      '1h2m3.5s',
    ]);
    expect([0, 1023, 1024, 100 * 1024 ** 3, 1.5 * 1024 ** 2, 123456789].map(bytesSize)).toEqual([
      '0B',
      '1023B',
      '1KiB',
      '100GiB',
      '1.5MiB',
      '117.7MiB',
    ]);
    expect(rfc3339Nano(Date.UTC(2024, 0, 2, 3, 4, 5, 600))).toBe('2024-01-02T03:04:05.6Z');
    expect(rfc3339Nano(Date.UTC(2024, 0, 2, 3, 4, 5))).toBe('2024-01-02T03:04:05Z');
    expect(parseUint64('18446744073709551615')).toEqual({ value: 18446744073709551615n });
    expect(parseUint64('18446744073709551616')).toEqual({ error: 'strconv.ParseUint: parsing "18446744073709551616": value out of range' });
    expect(parseUint64('-1')).toEqual({ error: 'strconv.ParseUint: parsing "-1": invalid syntax' });
    expect(atoi('Up')).toEqual({ error: 'strconv.Atoi: parsing "Up": invalid syntax' });
    expect(atoi('+2')).toEqual({ value: 2 });
    expect(goQuote('a"b\\')).toBe('"a\\"b\\\\"');
  });

  test("encoding/json's syntax errors", () => {
    expect(jsonSyntaxError('{"a": 1}')).toBeUndefined();
    expect(jsonSyntaxError(' [1, 2.5e3, true, null, "x\\u00e9"] ')).toBeUndefined();
    expect(jsonSyntaxError('')).toEqual({ message: 'unexpected end of JSON input', offset: 0 });
    expect(jsonSyntaxError('{"a": 1')).toEqual({ message: 'unexpected end of JSON input', offset: 7 });
    expect(jsonSyntaxError('x')).toEqual({ message: "invalid character 'x' looking for beginning of value", offset: 1 });
    expect(jsonSyntaxError('{"a" 1}')).toEqual({ message: "invalid character '1' after object key", offset: 6 });
    expect(jsonSyntaxError('{"a":1,}')).toEqual({ message: "invalid character '}' looking for beginning of object key string", offset: 8 });
    expect(jsonSyntaxError('[1 2]')).toEqual({ message: "invalid character '2' after array element", offset: 4 });
    expect(jsonSyntaxError('tru')).toEqual({ message: 'unexpected end of JSON input', offset: 3 });
    expect(jsonSyntaxError('nul!')).toEqual({ message: "invalid character '!' in literal null (expecting 'l')", offset: 4 });
    expect(jsonSyntaxError('{} x')).toEqual({ message: "invalid character 'x' after top-level value", offset: 4 });
  });

  test('member ids are uint64 values above 2^53; the cluster id is (unix seconds << 32) + a uint32', () => {
    for (let i = 0; i < 50; i++) {
      const id = randomMemberId();
      expect(id >= 2n ** 53n && id < 2n ** 64n).toBe(true);
    }
    const now = Date.UTC(2026, 0, 1);
    const cluster = newClusterId(now);
    expect(cluster >> 32n).toBe(BigInt(now / 1000));
  });
});

// ---- PD members ----

describe('PD members', () => {
  test('while no PD member runs, the Service refuses connections', async () => {
    const sim = await startSim();
    await expect(call('GET', `${sim.url}/pd/api/v1/health`)).rejects.toThrow();
    expect(sim.requests).toEqual([]);
  });

  test('one pod bootstraps through discovery, the others join: ids on the wire are exact uint64 numbers', async () => {
    const sim = await startSim();
    const discovery = await formPdCluster(sim, 3);

    expect(discovery.paths).toContain(`/new/${Buffer.from('demo-pd-0.demo-pd-peer.ns.svc:2380\n').toString('base64')}`);
    expect(sim.leader()).toBe('demo-pd-0');
    expect(['demo-pd-0', 'demo-pd-1', 'demo-pd-2'].map((p) => sim.pdState(p))).toEqual(['running', 'running', 'running']);
    expect(sim.splitBrain).toEqual([]);
    const ids = Object.fromEntries(sim.members().map((m) => [m.name, BigInt(m.memberId)]));
    for (const id of Object.values(ids)) expect(id >= 2n ** 53n).toBe(true);
    // etcd lists members by id.
    const byId = Object.entries(ids)
      .sort(([, a], [, b]) => (a < b ? -1 : 1))
      .map(([name]) => name);

    const health = await call('GET', `${sim.url}/pd/api/v1/health`);
    expect(health).toMatchObject({ status: 200, type: JSON_TYPE });
    expect(health.body.map((h: { name: string }) => h.name)).toEqual(byId);
    expect(health.body.find((h: { name: string }) => h.name === 'demo-pd-1')).toEqual({
      name: 'demo-pd-1',
      member_id: ids['demo-pd-1'],
      client_urls: ['http://demo-pd-1.demo-pd-peer.ns.svc:2379'],
      health: true,
    });
    expect(health.text).toContain(`"member_id": ${ids['demo-pd-1']},`);
    expect(health.text.endsWith('}\n]\n')).toBe(true);

    const members = await call('GET', `${sim.url}/pd/api/v1/members`);
    expect(members.body.header).toEqual({ cluster_id: BigInt(sim.clusterId()!) });
    expect(members.body.members.map((m: { name: string }) => m.name)).toEqual(byId);
    const leader = {
      name: 'demo-pd-0',
      member_id: ids['demo-pd-0'],
      peer_urls: ['http://demo-pd-0.demo-pd-peer.ns.svc:2380'],
      client_urls: ['http://demo-pd-0.demo-pd-peer.ns.svc:2379'],
      deploy_path: '/',
      binary_version: 'v8.5.0',
      git_hash: 'd190c0e9082de46128b756f93b1291768dda645a',
    };
    expect(members.body.leader).toEqual(leader);
    expect(members.body.etcd_leader).toEqual(leader);
    expect(Object.keys(members.body)).toEqual(['header', 'members', 'leader', 'etcd_leader']);
    // The cluster id: unix seconds in the high 32 bits.
    expect(Number(BigInt(sim.clusterId()!) >> 32n)).toBeGreaterThan(Date.now() / 1000 - 60);

    // /leader is the leader key's member: four fields only.
    expect((await call('GET', `${sim.url}/pd/api/v1/leader`)).body).toEqual({
      name: 'demo-pd-0',
      member_id: ids['demo-pd-0'],
      peer_urls: leader.peer_urls,
      client_urls: leader.client_urls,
    });
    expect((await call('GET', `${sim.url}/pd/api/v1/cluster`)).body).toEqual({ id: BigInt(sim.clusterId()!), max_peer_count: 3 });
    expect((await call('GET', `${sim.url}/pd/api/v1/config`)).body.replication).toMatchObject({ 'max-replicas': 3, 'location-labels': '' });
    expect(await call('GET', `${sim.url}/pd/api/v1/ping`)).toMatchObject({ status: 200, text: '', type: undefined });
  });

  test('the Service reaches any running member; a follower forwards to the leader', async () => {
    const sim = await startSim();
    await formPdCluster(sim, 3);
    const answers = new Set<string>();
    for (let i = 0; i < 30; i++) answers.add((await call('GET', `${sim.url}/pd/api/v1/leader`)).body.name);
    expect([...answers]).toEqual(['demo-pd-0']);
    const answeredBy = new Set(sim.requests.filter((r) => r.path === '/pd/api/v1/leader').map((r) => r.member));
    expect(answeredBy.size).toBeGreaterThan(1);
    expect(sim.requests.every((r) => r.via === 'service')).toBe(true);
  });

  test('before TiKV bootstraps the cluster: members answer, store and scheduler APIs refuse as PD does', async () => {
    const sim = await startSim();
    await formPdCluster(sim, 1);
    expect(sim.tikvBootstrapped()).toBe(false);
    for (const path of ['/health', '/members', '/leader', '/config', '/config/replicate']) {
      expect((await call('GET', `${sim.url}/pd/api/v1${path}`)).status).toBe(200);
    }
    expect(await call('GET', `${sim.url}/pd/api/v1/config/replicate`)).toMatchObject({
      text: '{\n  "max-replicas": 3,\n  "location-labels": "",\n  "strictly-match-label": "false",\n  "enable-placement-rules": "true",\n  "enable-placement-rules-cache": "false",\n  "isolation-level": ""\n}\n',
    });
    for (const path of ['/stores', '/store/1', '/labels']) {
      expect(await call('GET', `${sim.url}/pd/api/v1${path}`)).toMatchObject({
        status: 500,
        text: pdText(NOT_BOOTSTRAPPED),
        type: JSON_TYPE,
      });
    }
    expect(await call('GET', `${sim.url}/pd/api/v1/schedulers`)).toMatchObject({ status: 500, text: pdText(NOT_BOOTSTRAPPED) });
    expect(await call('POST', `${sim.url}/pd/api/v1/schedulers`, evictBody(1))).toMatchObject({
      status: 500,
      text: pdText(NOT_BOOTSTRAPPED),
    });
    expect(await call('GET', `${sim.url}/pd/api/v1/scheduler-config/evict-leader-scheduler/list`)).toMatchObject({
      status: 406,
      text: pdText(NOT_BOOTSTRAPPED),
    });
    expect(await call('DELETE', `${sim.url}/pd/api/v1/schedulers/evict-leader-scheduler-1`)).toMatchObject({ status: 406, text: 'null\n' });
    // Input is checked before the cluster is.
    expect(await call('POST', `${sim.url}/pd/api/v1/schedulers`, { name: 'evict-leader-scheduler' })).toMatchObject({
      status: 400,
      text: pdText('missing store id'),
    });

    sim.tikvStart('demo-tikv-0');
    expect(sim.tikvBootstrapped()).toBe(true);
    expect((await call('GET', `${sim.url}/pd/api/v1/stores`)).body.count).toBe(1);
  });

  test('routing: unknown paths are 404 text, known paths with another method 405 with no body', async () => {
    const sim = await startSim();
    await formPdCluster(sim, 1);
    expect(await call('GET', `${sim.url}/pd/api/v1/nothing`)).toMatchObject({
      status: 404,
      text: '404 page not found\n',
      type: 'text/plain; charset=utf-8',
    });
    expect(await call('PUT', `${sim.url}/pd/api/v1/members`)).toMatchObject({ status: 405, text: '' });
    expect(await call('GET', `${sim.url}/pd/api/v1/members/`)).toMatchObject({ status: 404 });
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
    const oldId = sim.members().find((m) => m.name === 'demo-pd-2')!.memberId;

    sim.pdStop('demo-pd-2');
    sim.wipeData('demo-pd-2');
    sim.pdStart('demo-pd-2');
    await sim.waitFor(() => sim.processFailures.some((f) => f.pod === 'demo-pd-2'), 3000, 'a failed join');
    expect(sim.processFailures.find((f) => f.pod === 'demo-pd-2')?.reason).toBe(DUPLICATED_JOIN);
    expect(sim.pdState('demo-pd-2')).toBe('discovering');

    expect(await call('DELETE', `${sim.url}/pd/api/v1/members/name/demo-pd-2`)).toMatchObject({
      status: 200,
      text: pdText('removed, pd: demo-pd-2'),
    });
    await sim.waitFor(() => sim.members().some((m) => m.name === 'demo-pd-2' && m.running), 3000, 'demo-pd-2 joined again');
    expect(sim.members().find((m) => m.name === 'demo-pd-2')?.memberId).not.toBe(oldId);

    expect(await call('DELETE', `${sim.url}/pd/api/v1/members/name/nobody`)).toMatchObject({
      status: 404,
      text: pdText('not found, pd: nobody'),
      type: JSON_TYPE,
    });
  });

  test('a member added but never started: no name in the lists, every join refused, removed by id only', async () => {
    const sim = await startSim();
    await formPdCluster(sim, 3);
    sim.pdStop('demo-pd-2');
    await call('DELETE', `${sim.url}/pd/api/v1/members/name/demo-pd-2`);
    sim.wipeData('demo-pd-2');
    sim.pdDiesAfterMemberAdd('demo-pd-2');
    sim.pdStart('demo-pd-2');
    await sim.waitFor(() => sim.members().some((m) => m.name === ''), 3000, 'the unstarted member');
    const unstarted = sim.members().find((m) => m.name === '')!;
    expect(unstarted).toMatchObject({ peerUrl: 'http://demo-pd-2.demo-pd-peer.ns.svc:2380', running: false });

    // server/cluster/cluster.go GetMembers: id and peer URLs only; health.go: no client URL, unhealthy.
    const listed = JSON.parse(
      (await call('GET', `${sim.url}/pd/api/v1/members`)).text.replace(/"member_id":\s*(\d+)/g, '"member_id":"$1"'),
    );
    expect(listed.members.find((m: { member_id: string }) => m.member_id === unstarted.memberId)).toEqual({
      member_id: unstarted.memberId,
      peer_urls: ['http://demo-pd-2.demo-pd-peer.ns.svc:2380'],
    });
    const health = JSON.parse((await call('GET', `${sim.url}/pd/api/v1/health`)).text.replace(/"member_id":\s*(\d+)/g, '"member_id":"$1"'));
    expect(health.find((m: { member_id: string }) => m.member_id === unstarted.memberId)).toEqual({
      name: '',
      member_id: unstarted.memberId,
      client_urls: null,
      health: false,
    });

    // PD v8.5.x (server/join/join.go) refuses every join while it exists, the same Pod's included.
    const refusal = `there is a member ${unstarted.memberId} that has not joined successfully`;
    await sim.waitFor(() => sim.processFailures.some((f) => f.pod === 'demo-pd-2' && f.reason === refusal), 3000, 'a refused join');
    expect(sim.pdState('demo-pd-2')).toBe('discovering');

    expect(await call('DELETE', `${sim.url}/pd/api/v1/members/id/${unstarted.memberId}`)).toMatchObject({
      status: 200,
      text: pdText(`removed, pd: ${unstarted.memberId}`),
    });
    await sim.waitFor(() => sim.members().some((m) => m.name === 'demo-pd-2' && m.running), 3000, 'demo-pd-2 joined');
    expect(
      sim
        .members()
        .map((m) => m.name)
        .sort(),
    ).toEqual(['demo-pd-0', 'demo-pd-1', 'demo-pd-2']);
  });

  test("member deletion by id: bad ids 400, unknown ids 500 with etcd's error, known ids removed", async () => {
    const sim = await startSim();
    await formPdCluster(sim, 3);
    expect(await call('DELETE', `${sim.url}/pd/api/v1/members/id/abc`)).toMatchObject({
      status: 400,
      text: pdText('strconv.ParseUint: parsing "abc": invalid syntax'),
    });
    expect(await call('DELETE', `${sim.url}/pd/api/v1/members/id/18446744073709551616`)).toMatchObject({
      status: 400,
      text: pdText('strconv.ParseUint: parsing "18446744073709551616": value out of range'),
    });
    expect(await call('DELETE', `${sim.url}/pd/api/v1/members/id/12345`)).toMatchObject({
      status: 500,
      text: pdText('[PD:etcd:ErrEtcdMemberRemove]etcdserver: member not found: etcdserver: member not found'),
    });
    // An id rounded as a double would be: not the member.
    const id = sim.members().find((m) => m.name === 'demo-pd-2')!.memberId;
    const rounded = BigInt(Number(id)).toString();
    if (rounded !== id) expect((await call('DELETE', `${sim.url}/pd/api/v1/members/id/${rounded}`)).status).toBe(500);

    expect(await call('DELETE', `${sim.url}/pd/api/v1/members/id/${id}`)).toMatchObject({
      status: 200,
      text: pdText(`removed, pd: ${id}`),
    });
    expect(sim.pdState('demo-pd-2')).toBe('crashed');
    expect(
      sim
        .members()
        .map((m) => m.name)
        .sort(),
    ).toEqual(['demo-pd-0', 'demo-pd-1']);

    sim.pdStop('demo-pd-2');
    sim.pdStart('demo-pd-2');
    expect(sim.pdState('demo-pd-2')).toBe('crashed');

    sim.pdStop('demo-pd-2');
    sim.wipeData('demo-pd-2');
    sim.pdStart('demo-pd-2');
    await sim.waitFor(() => sim.pdState('demo-pd-2') === 'running', 3000, 'demo-pd-2 running');
    expect(sim.members()).toHaveLength(3);
  });

  test('etcd refuses to remove a live member when that would break the quorum of live members', async () => {
    const sim = await startSim();
    await formPdCluster(sim, 3);
    sim.pdStop('demo-pd-2');
    expect(await call('DELETE', `${sim.url}/pd/api/v1/members/name/demo-pd-1`)).toMatchObject({
      status: 500,
      text: pdText('[PD:etcd:ErrEtcdMemberRemove]etcdserver: unhealthy cluster: etcdserver: unhealthy cluster'),
    });
    expect((await call('DELETE', `${sim.url}/pd/api/v1/members/name/demo-pd-2`)).status).toBe(200);
    expect(
      sim
        .members()
        .map((m) => m.name)
        .sort(),
    ).toEqual(['demo-pd-0', 'demo-pd-1']);
  });

  test('records a split brain when discovery tells a second pod to bootstrap', async () => {
    const sim = await startSim();
    const discovery = await startDiscovery((host) => ({
      status: 200,
      body: `--initial-cluster=${host.split('.')[0]}=http://${host}:2380`,
    }));
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

  test('transfers the leader once etcd moved it; an unknown target is refused at once, a stopped one after the 5 s move timeout', async () => {
    const sim = await startSim();
    await formPdCluster(sim, 3);

    expect(await call('POST', `${sim.url}/pd/api/v1/leader/transfer/demo-pd-2`)).toMatchObject({
      status: 200,
      text: pdText('The transfer command is submitted.'),
    });
    expect(sim.leader()).toBe('demo-pd-2');
    expect(sim.transfers).toEqual([{ from: 'demo-pd-0', to: 'demo-pd-2', time: expect.any(Number) }]);
    expect((await call('GET', `${sim.url}/pd/api/v1/leader`)).body.name).toBe('demo-pd-2');

    expect(await call('POST', `${sim.url}/pd/api/v1/leader/transfer/nobody`)).toMatchObject({
      status: 500,
      text: pdText('no valid pd to transfer etcd leader'),
    });
    sim.pdStop('demo-pd-1');
    const started = Date.now();
    const cause = 'etcdserver: request timed out, leader transfer took too long';
    expect(await call('POST', `${sim.url}/pd/api/v1/leader/transfer/demo-pd-1`)).toMatchObject({
      status: 500,
      text: pdText(`[PD:etcd:ErrEtcdMoveLeader]${cause}: ${cause}`),
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(4900);
    expect(sim.leader()).toBe('demo-pd-2');
  }, 10_000);

  test('a transfer that outlasts the 5 s move timeout answers 500 and still lands; a second ask for it joins it', async () => {
    const sim = await startSim({ transferMs: 6000 });
    await formPdCluster(sim, 3);
    const cause = 'etcdserver: request timed out, leader transfer took too long';

    const started = Date.now();
    const first = call('POST', `${sim.url}/pd/api/v1/leader/transfer/demo-pd-2`);
    await new Promise((r) => setTimeout(r, 3000));
    const second = call('POST', `${sim.url}/pd/api/v1/leader/transfer/demo-pd-2`);
    expect(await first).toMatchObject({ status: 500, text: pdText(`[PD:etcd:ErrEtcdMoveLeader]${cause}: ${cause}`) });
    expect(Date.now() - started).toBeGreaterThanOrEqual(4900);
    expect(sim.leader()).toBe('demo-pd-0');
    // The second ask did not restart the transfer (raft ignores a request to the same transferee).
    expect(await second).toMatchObject({ status: 200, text: pdText('The transfer command is submitted.') });
    expect(Date.now() - started).toBeLessThan(6900);
    expect(sim.leader()).toBe('demo-pd-2');
    expect(sim.transfers).toEqual([{ from: 'demo-pd-0', to: 'demo-pd-2', time: expect.any(Number) }]);
  }, 15_000);

  test("the controller's transfer-leader asks a transfer that outlasts PD's answer once, and sees the leader move", async () => {
    const sim = await startSim({ transferMs: 6000 });
    await formPdCluster(sim, 3);
    const pd = new PdClient(sim.url);
    const handlers = pdActions();
    const action = { type: 'transfer-leader', pod: 'demo-pd-0', from: 'demo-pd-0', to: 'demo-pd-2' } as const;
    const started = Date.now();
    // Reconcile passes as the controller makes them: each reads PD's leader and, while it has not
    // moved, runs the action; a thrown error is tried again on the next pass.
    while ((await pd.leader()) === 'demo-pd-0' && Date.now() - started < 12_000) {
      const ctx = { pd, now: Date.now(), reason: 'test', log: new Logger('error', {}, () => {}) } as unknown as ActionContext;
      await handlers['transfer-leader'](action, ctx).catch(() => false);
      await new Promise((r) => setTimeout(r, 200));
    }
    expect(await pd.leader()).toBe('demo-pd-2');
    expect(
      sim.requests.filter((r) => r.method === 'POST' && r.path.startsWith('/pd/api/v1/leader/transfer/')).map((r) => r.status),
    ).toEqual([500]);
  }, 20_000);

  test("without a leader, requests wait up to 3 s for one and then get the redirector's 503 text (v8.5.0-v8.5.4)", async () => {
    const sim = await startSim();
    await formPdCluster(sim, 3);

    sim.pdStop('demo-pd-0');
    expect(sim.stopsWhileLeader).toEqual([{ pod: 'demo-pd-0', time: expect.any(Number) }]);
    expect(sim.leader()).toBeUndefined();
    await sim.waitFor(() => sim.leader() === 'demo-pd-1', 3000, 'leader demo-pd-1');
    const health = (await call('GET', `${sim.url}/pd/api/v1/health`)).body;
    expect(Object.fromEntries(health.map((h: { name: string; health: boolean }) => [h.name, h.health]))).toEqual({
      'demo-pd-0': false,
      'demo-pd-1': true,
      'demo-pd-2': true,
    });

    // A follower stop that loses the majority drops the leader but is no leader stop.
    sim.pdStop('demo-pd-2');
    expect(sim.leader()).toBeUndefined();
    const started = Date.now();
    expect(await call('GET', `${sim.url}/pd/api/v1/health`)).toMatchObject({
      status: 503,
      text: '[PD:apiutil:ErrRedirectNoLeader]redirect finds no leader\n',
      type: 'text/plain; charset=utf-8',
    });
    expect(Date.now() - started).toBeGreaterThanOrEqual(2900);
    expect(sim.stopsWhileLeader).toHaveLength(1);

    // A leader elected while a request waits answers it.
    const pending = call('GET', `${sim.url}/pd/api/v1/members`);
    await sleep(200);
    sim.pdStart('demo-pd-2');
    const answered = await pending;
    expect(answered.status).toBe(200);
    expect(sim.leader()).toBe('demo-pd-1');

    sim.pdStop('demo-pd-1');
    sim.pdStop('demo-pd-2');
    sim.pdStart('demo-pd-2');
    sim.pdStart('demo-pd-0');
    await sim.waitFor(() => sim.leader() === 'demo-pd-0', 3000, 'leader demo-pd-0 with data');
  }, 15_000);

  test('v8.5.5+: /health and /ping are answered by the member asked, even without a leader', async () => {
    const sim = await startSim({ version: 'v8.5.5' });
    await formPdCluster(sim, 3);
    sim.pdStop('demo-pd-1');
    sim.pdStop('demo-pd-2');
    expect(sim.leader()).toBeUndefined();
    const health = await call('GET', `${sim.url}/pd/api/v1/health`);
    expect(health.status).toBe(200);
    expect(Object.fromEntries(health.body.map((h: { name: string; health: boolean }) => [h.name, h.health]))).toEqual({
      'demo-pd-0': true,
      'demo-pd-1': false,
      'demo-pd-2': false,
    });
    expect((await call('GET', `${sim.url}/pd/api/v1/ping`)).status).toBe(200);
    // GET /config is local too, but merges the leader's config: none.
    expect(await call('GET', `${sim.url}/pd/api/v1/config`)).toMatchObject({
      status: 500,
      text: pdText('[PD:server:ErrLeaderNil]leader is nil'),
    });
  });
});

// ---- a member's own listener, /pd/api/v2/ready ----

describe('member listeners and readiness', () => {
  const ips = ['127.0.3.1', '127.0.3.2', '127.0.3.3'];
  const memberUrl = (i: number) => `http://${ips[i]}:${CLIENT_PORT}`;

  test('a member started with an IP answers on ip:clientPort while it runs; its discovery requests leave from that IP', async () => {
    const sim = await startSim({ clientPort: CLIENT_PORT });
    const discovery = await formPdCluster(sim, 3, ips);
    expect(new Set(discovery.from)).toEqual(new Set(ips));
    await sleep(20); // the listeners bind
    expect(await call('GET', `${memberUrl(1)}/pd/api/v1/ping`)).toMatchObject({ status: 200, text: '' });
    // Anything else a follower forwards to the leader.
    expect((await call('GET', `${memberUrl(1)}/pd/api/v1/leader`)).body.name).toBe('demo-pd-0');
    expect(sim.requests.slice(-2).map((r) => [r.member, r.via])).toEqual([
      ['demo-pd-1', 'member'],
      ['demo-pd-1', 'member'],
    ]);

    sim.pdStop('demo-pd-1');
    await expect(call('GET', `${memberUrl(1)}/pd/api/v1/ping`)).rejects.toThrow();
    sim.pdStart('demo-pd-1', undefined, ips[1]);
    await sleep(20);
    expect((await call('GET', `${memberUrl(1)}/pd/api/v1/ping`)).status).toBe(200);
  });

  test("a member asked to remove itself relays the leader's answer, then exits and stops listening", async () => {
    const sim = await startSim({ clientPort: CLIENT_PORT });
    await formPdCluster(sim, 3, ips);
    await sleep(20);
    expect(await call('DELETE', `${memberUrl(2)}/pd/api/v1/members/name/demo-pd-2`)).toMatchObject({
      status: 200,
      text: pdText('removed, pd: demo-pd-2'),
    });
    expect(sim.pdState('demo-pd-2')).toBe('crashed');
    await expect(call('GET', `${memberUrl(2)}/pd/api/v1/ping`)).rejects.toThrow();
  });

  test("v8.5.0: no ready route: a follower forwards to the leader, which answers gin's 404; without a leader 503", async () => {
    const sim = await startSim({ clientPort: CLIENT_PORT });
    await formPdCluster(sim, 3, ips);
    await sleep(20);
    expect(await call('GET', `${memberUrl(2)}/pd/api/v2/ready`)).toMatchObject({
      status: 404,
      text: '404 page not found',
      type: 'text/plain',
    });
    sim.pdStop('demo-pd-0');
    sim.pdStop('demo-pd-1');
    expect(await call('GET', `${memberUrl(2)}/pd/api/v2/ready`)).toMatchObject({
      status: 503,
      text: '"[PD:server:ErrLeaderNil]leader is nil"',
      type: 'application/json; charset=utf-8',
    });
  });

  test("v8.5.2+: /pd/api/v2/ready is the asked member's own: 500 until it loaded its regions, then 200", async () => {
    const sim = await startSim({ version: 'v8.5.2', clientPort: CLIENT_PORT, regionLoadMs: 400 });
    await formPdCluster(sim, 2, ips);
    await sleep(20);
    // The leader loads regions only once TiKV bootstrapped; the follower since it follows.
    expect(await call('GET', `${memberUrl(0)}/pd/api/v2/ready`)).toMatchObject({ status: 500, text: '' });
    expect(await call('GET', `${memberUrl(1)}/pd/api/v2/ready?verbose`)).toMatchObject({
      status: 500,
      text: '{"region_loaded":false}',
      type: 'application/json; charset=utf-8',
    });
    await sim.waitFor(() => sim.pdRegionsLoaded('demo-pd-1'), 2000, 'demo-pd-1 loaded');
    expect(await call('GET', `${memberUrl(1)}/pd/api/v2/ready`)).toMatchObject({ status: 200, text: '' });
    expect(await call('GET', `${memberUrl(1)}/pd/api/v2/ready?verbose`)).toMatchObject({
      status: 200,
      text: '{\n    "region_loaded": true\n}',
    });
    expect(sim.pdRegionsLoaded('demo-pd-0')).toBe(false);

    sim.tikvStart('demo-tikv-0');
    await sim.waitFor(() => sim.pdRegionsLoaded('demo-pd-0'), 2000, 'demo-pd-0 loaded');
    expect((await call('GET', `${memberUrl(0)}/pd/api/v2/ready`)).status).toBe(200);
    // A restart loads them again.
    sim.pdStop('demo-pd-1');
    sim.pdStart('demo-pd-1', undefined, ips[1]);
    await sleep(20);
    expect((await call('GET', `${memberUrl(1)}/pd/api/v2/ready`)).status).toBe(500);
    expect(sim.requests.filter((r) => r.path.startsWith('/pd/api/v2/ready')).every((r) => r.via === 'member')).toBe(true);
  });

  test('use-region-storage = false: a follower never loads regions (500 until it leads); /config/pd-server says so as a string', async () => {
    const sim = await startSim({ version: 'v8.5.2', clientPort: CLIENT_PORT, regionLoadMs: 50, useRegionStorage: false });
    await formPdCluster(sim, 2, ips);
    sim.tikvStart('demo-tikv-0');
    await sim.waitFor(() => sim.pdRegionsLoaded('demo-pd-0'), 2000, 'the leader loaded');
    await sleep(200);
    expect(sim.pdRegionsLoaded('demo-pd-1')).toBe(false);
    expect(await call('GET', `${memberUrl(1)}/pd/api/v2/ready`)).toMatchObject({ status: 500, text: '' });
    const cfg = await call('GET', `${memberUrl(1)}/pd/api/v1/config/pd-server`);
    expect(cfg.status).toBe(200);
    expect(cfg.body).toMatchObject({ 'use-region-storage': 'false', 'key-type': 'table', 'max-gap-reset-ts': '24h0m0s' });
    // Leading, it loads them from etcd; stepping down, it keeps them for the life of its process.
    await call('POST', `${memberUrl(0)}/pd/api/v1/leader/transfer/demo-pd-1`);
    await sim.waitFor(() => sim.pdRegionsLoaded('demo-pd-1'), 3000, 'demo-pd-1 loaded as leader');
    expect((await call('GET', `${memberUrl(1)}/pd/api/v2/ready`)).status).toBe(200);
  });
});

// ---- TiKV stores ----

describe('TiKV stores', () => {
  test('stores register with ids from 1, shown as PD shows them; the leaders spread evenly', async () => {
    const sim = await withStores();
    expect(sim.stores().map((s) => [s.id, s.pod, s.state])).toEqual([
      [1, 'demo-tikv-0', 'Up'],
      [2, 'demo-tikv-1', 'Up'],
      [3, 'demo-tikv-2', 'Up'],
    ]);
    expect(leaders(sim)).toEqual([100, 100, 100]);

    const res = await call('GET', `${sim.url}/pd/api/v1/stores`);
    expect(res.body.count).toBe(3);
    const two = res.body.stores.find((s: { store: { id: number } }) => s.store.id === 2);
    const model = sim.stores()[1];
    const startSeconds = Math.floor(model.startTime / 1000);
    expect(two.store).toEqual({
      id: 2,
      address: 'demo-tikv-1.demo-tikv-peer.ns.svc:20160',
      version: '8.5.0',
      status_address: 'demo-tikv-1.demo-tikv-peer.ns.svc:20180',
      git_hash: expect.stringMatching(/^[0-9a-f]{40}$/),
      start_timestamp: startSeconds,
      deploy_path: '/',
      last_heartbeat: BigInt(model.lastHeartbeat) * 1_000_000n,
      node_state: 1,
      state_name: 'Up',
    });
    expect(Object.keys(two.status)).toEqual([
      'capacity',
      'available',
      'used_size',
      'leader_count',
      'leader_weight',
      'leader_score',
      'leader_size',
      'region_count',
      'region_weight',
      'region_score',
      'region_size',
      'slow_score',
      'start_ts',
      'last_heartbeat_ts',
      'uptime',
    ]);
    expect(two.status).toMatchObject({
      capacity: '100GiB',
      leader_count: 100,
      region_count: 300,
      leader_weight: 1,
      start_ts: rfc3339Nano(startSeconds * 1000),
    });
    expect(two.status.uptime).toMatch(/^\d+(\.\d+)?(ms|s)$/);
    expect(Date.parse(two.status.last_heartbeat_ts)).toBe(model.lastHeartbeat);

    expect((await call('GET', `${sim.url}/pd/api/v1/store/3`)).body.store.address).toBe(sim.tikvAddress('demo-tikv-2'));
    expect(await call('GET', `${sim.url}/pd/api/v1/store/9`)).toMatchObject({
      status: 404,
      text: pdText('[PD:core:ErrStoreNotFound]store 9 not found'),
    });
    const bad = await call('GET', `${sim.url}/pd/api/v1/store/abc`);
    expect(bad).toMatchObject({
      status: 400,
      text: '{\n  "code": "input",\n  "msg": "strconv.ParseUint: parsing \\"abc\\": invalid syntax",\n  "data": {}\n}\n',
    });
    expect(bad.headers['tidb-error-code']).toBe('input');
  });

  test('?state= filters by metapb state number; non-numbers are 500', async () => {
    const sim = await withStores();
    expect((await call('GET', `${sim.url}/pd/api/v1/stores?state=0&state=1`)).body.count).toBe(3);
    expect((await call('GET', `${sim.url}/pd/api/v1/stores?state=2`)).body).toEqual({ count: 0, stores: [] });
    expect(await call('GET', `${sim.url}/pd/api/v1/stores?state=Up`)).toMatchObject({
      status: 500,
      text: pdText('strconv.Atoi: parsing "Up": invalid syntax'),
    });
    expect(await call('GET', `${sim.url}/pd/api/v1/stores?state=5`)).toMatchObject({ status: 500, text: pdText('unknown StoreState: 5') });
  });

  test('stopping a TiKV that holds leaders is recorded; the store turns Disconnected, Down, and Up again', async () => {
    const sim = await withStores({ tickMs: 5, storeDownMs: 50 });
    sim.tikvStop('demo-tikv-1');
    expect(sim.stopsWithLeaders).toEqual([{ pod: 'demo-tikv-1', storeId: 2, leaderCount: 100, time: expect.any(Number) }]);
    expect(sim.store('demo-tikv-1')).toMatchObject({ state: 'Disconnected', leaderCount: 0 });
    expect(sum(leaders(sim))).toBe(300);
    await sim.waitFor(() => sim.store('demo-tikv-1')?.state === 'Down', 3000, 'store 2 Down');
    const stores = (await call('GET', `${sim.url}/pd/api/v1/stores`)).body.stores;
    const two = stores.find((s: { store: { id: number } }) => s.store.id === 2).store;
    expect(two.state).toBeUndefined();
    expect(two.state_name).toBe('Down');

    sim.tikvStart('demo-tikv-1');
    expect(sim.store('demo-tikv-1')).toMatchObject({ id: 2, state: 'Up' });
    await sim.waitFor(() => sim.store('demo-tikv-1')?.leaderCount === 100, 3000, 'leaders back on store 2');

    // Drained first, then stopped: nothing to record.
    await call('POST', `${sim.url}/pd/api/v1/schedulers`, evictBody(2));
    await sim.waitFor(() => sim.store('demo-tikv-1')?.leaderCount === 0, 3000, 'store 2 drained');
    sim.tikvStop('demo-tikv-1');
    expect(sim.stopsWithLeaders).toHaveLength(1);
  });

  test('DELETE /store: Offline and Tombstone once drained; 404 unknown, 410 Tombstone, 400 when too few Up stores would remain', async () => {
    const sim = await withStores({}, 4);
    expect(await call('DELETE', `${sim.url}/pd/api/v1/store/4`)).toMatchObject({
      status: 200,
      text: pdText('The store is set as Offline.'),
    });
    expect((await call('GET', `${sim.url}/pd/api/v1/store/4`)).body.store).toMatchObject({
      state: 1,
      state_name: 'Offline',
      node_state: 2,
    });
    expect((await call('DELETE', `${sim.url}/pd/api/v1/store/4`)).status).toBe(200);
    ticks(sim, 20);
    expect(sim.store('demo-tikv-3')).toMatchObject({ state: 'Tombstone', nodeState: 'Removed', leaderCount: 0, regionCount: 0 });
    expect((await call('GET', `${sim.url}/pd/api/v1/stores`)).body.count).toBe(3);
    const tombstones = (await call('GET', `${sim.url}/pd/api/v1/stores?state=2`)).body;
    expect(
      tombstones.stores.map((s: { store: { id: number; state: number; node_state: number } }) => [
        s.store.id,
        s.store.state,
        s.store.node_state,
      ]),
    ).toEqual([[4, 2, 3]]);
    expect(await call('DELETE', `${sim.url}/pd/api/v1/store/4`)).toMatchObject({
      status: 410,
      text: pdText('[PD:core:ErrStoreRemoved]store 4 has been removed'),
    });
    expect(await call('DELETE', `${sim.url}/pd/api/v1/store/9`)).toMatchObject({
      status: 404,
      text: pdText('[PD:core:ErrStoreNotFound]store 9 not found'),
    });

    // Three Up stores for three replicas: PD refuses; a Disconnected store still counts as Up.
    sim.tikvStop('demo-tikv-2');
    expect(await call('DELETE', `${sim.url}/pd/api/v1/store/3`)).toMatchObject({
      status: 400,
      text: pdText('[PD:core:ErrStoresNotEnough]can not remove store 3 since the number of up stores would be 2 while need 3'),
    });
    expect(sim.store('demo-tikv-2')?.state).toBe('Disconnected');
    // ?force (any value) skips the check: the store is physically destroyed.
    expect((await call('DELETE', `${sim.url}/pd/api/v1/store/3?force=false`)).status).toBe(200);
    expect(sim.store('demo-tikv-2')).toMatchObject({ state: 'Offline', physicallyDestroyed: true });
    expect(await call('DELETE', `${sim.url}/pd/api/v1/store/3`)).toMatchObject({
      status: 400,
      text: pdText('[PD:core:ErrStoreDestroyed]store 3 has been physically destroyed'),
    });
  });

  test('DELETE /store refuses when every remaining Up store is in the evict-leader scheduler', async () => {
    const sim = await withStores({ maxReplicas: 2 }, 3);
    for (const id of [1, 2]) await call('POST', `${sim.url}/pd/api/v1/schedulers`, evictBody(id));
    expect(await call('DELETE', `${sim.url}/pd/api/v1/store/3`)).toMatchObject({
      status: 400,
      text: pdText('[PD:core:ErrNoStoreForRegionLeader]can not remove store 3 since there are no extra up store to store the leader'),
    });
    expect((await call('DELETE', `${sim.url}/pd/api/v1/store/1`)).status).toBe(200);
  });

  test('store labels: merged, or replaced with ?force; validated; /labels lists them once', async () => {
    const sim = await withStores();
    expect(await call('GET', `${sim.url}/pd/api/v1/labels`)).toMatchObject({ status: 200, text: 'null\n' });
    expect(await call('POST', `${sim.url}/pd/api/v1/store/1/label`, { zone: 'z1' })).toMatchObject({
      status: 200,
      text: pdText("The store's label is updated."),
    });
    await call('POST', `${sim.url}/pd/api/v1/store/1/label`, { host: 'h1' });
    expect(sim.store('demo-tikv-0')?.labels).toEqual([
      { key: 'zone', value: 'z1' },
      { key: 'host', value: 'h1' },
    ]);
    await call('POST', `${sim.url}/pd/api/v1/store/1/label?force`, { rack: 'r1' });
    expect(sim.store('demo-tikv-0')?.labels).toEqual([{ key: 'rack', value: 'r1' }]);
    await call('POST', `${sim.url}/pd/api/v1/store/2/label`, { rack: 'r1' });
    expect((await call('GET', `${sim.url}/pd/api/v1/labels`)).body).toEqual([{ key: 'rack', value: 'r1' }]);
    expect(await call('POST', `${sim.url}/pd/api/v1/store/9/label`, { zone: 'z1' })).toMatchObject({
      status: 500,
      text: pdText('[PD:cluster:ErrInvalidStoreID]invalid store id 9, not found'),
    });
    expect((await call('POST', `${sim.url}/pd/api/v1/store/1/label`, { 'bad key': 'x' })).body).toEqual({
      code: 'input',
      msg: 'bad key does not match format "^[$]?[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?$"',
      data: {},
    });
    expect((await call('POST', `${sim.url}/pd/api/v1/store/1/label`, '{"zone":')).body).toEqual({
      code: 'input',
      msg: 'unexpected end of JSON input',
      data: { Offset: 8 },
    });
  });
});

// ---- the evict-leader scheduler ----

describe('evict-leader scheduler', () => {
  test('one merged scheduler: created, then stores added; listed once, with its stores in its config', async () => {
    const sim = await withStores({ stuckEviction: [1, 2, 3] });
    const post = (id: unknown) => call('POST', `${sim.url}/pd/api/v1/schedulers`, evictBody(id));
    expect(await post(3)).toMatchObject({ status: 200, text: pdText('The scheduler is created.') });
    expect(await post(3)).toMatchObject({ status: 200, text: pdText('The scheduler has been applied to the store.') });
    expect(await post(1)).toMatchObject({ status: 200, text: pdText('The scheduler has been applied to the store.') });
    // Unknown store with the scheduler in place: the inner answer's body is quoted again.
    expect(await post(99)).toMatchObject({ status: 500, text: pdText(pdText('[PD:core:ErrStoreNotFound]store 99 not found')) });
    expect(await post('3')).toMatchObject({ status: 400, text: pdText('missing store id') });
    expect(await call('POST', `${sim.url}/pd/api/v1/schedulers`, { store_id: 3 })).toMatchObject({
      status: 400,
      text: pdText('missing scheduler name'),
    });
    expect(await call('POST', `${sim.url}/pd/api/v1/schedulers`, { name: 'no-such-scheduler' })).toMatchObject({
      status: 400,
      text: pdText('unknown scheduler'),
    });
    expect((await call('POST', `${sim.url}/pd/api/v1/schedulers`, 'nope')).body).toEqual({
      code: 'input',
      msg: "invalid character 'o' in literal null (expecting 'u')",
      data: { Offset: 2 },
    });
    expect(sim.evictSchedulers()).toEqual([3, 1]);

    const names = (await call('GET', `${sim.url}/pd/api/v1/schedulers`)).body as string[];
    expect([...names].sort()).toEqual(
      [
        'balance-hot-region-scheduler',
        'balance-leader-scheduler',
        'balance-region-scheduler',
        'evict-leader-scheduler',
        'evict-slow-store-scheduler',
      ].sort(),
    );
    // Go map order: not the same every time.
    const orders = new Set<string>();
    for (let i = 0; i < 20; i++) orders.add(((await call('GET', `${sim.url}/pd/api/v1/schedulers`)).body as string[]).join());
    expect(orders.size).toBeGreaterThan(1);

    expect(await call('GET', `${sim.url}/pd/api/v1/scheduler-config/evict-leader-scheduler/list`)).toMatchObject({
      status: 200,
      text:
        '{\n  "store-id-ranges": {\n    "1": [\n      {\n        "end-key": "",\n        "start-key": ""\n      }\n    ],\n' +
        '    "3": [\n      {\n        "end-key": "",\n        "start-key": ""\n      }\n    ]\n  },\n  "batch": 3\n}\n',
    });

    expect(await call('DELETE', `${sim.url}/pd/api/v1/schedulers/evict-leader-scheduler-3`)).toMatchObject({ status: 200, text: 'null\n' });
    expect(await call('DELETE', `${sim.url}/pd/api/v1/schedulers/evict-leader-scheduler-3`)).toMatchObject({ status: 404, text: 'null\n' });
    expect(await call('DELETE', `${sim.url}/pd/api/v1/schedulers/evict-leader-scheduler-x`)).toMatchObject({ status: 400, text: 'null\n' });
    // The last store takes the scheduler with it.
    expect(await call('DELETE', `${sim.url}/pd/api/v1/schedulers/evict-leader-scheduler-1`)).toMatchObject({ status: 200, text: 'null\n' });
    expect(sim.evictSchedulers()).toEqual([]);
    expect((await call('GET', `${sim.url}/pd/api/v1/schedulers`)).body).not.toContain('evict-leader-scheduler');
    expect(await call('GET', `${sim.url}/pd/api/v1/scheduler-config/evict-leader-scheduler/list`)).toMatchObject({
      status: 404,
      text: '404 page not found\n',
      type: 'text/plain; charset=utf-8',
    });
    expect(await call('DELETE', `${sim.url}/pd/api/v1/schedulers/evict-leader-scheduler-1`)).toMatchObject({ status: 404, text: 'null\n' });
    // Absent scheduler, unknown store: created fails as AddScheduler does.
    expect(await post(99)).toMatchObject({ status: 500, text: pdText('[PD:core:ErrStoreNotFound]store 99 not found') });
    expect(await call('DELETE', `${sim.url}/pd/api/v1/schedulers/evict-leader-scheduler`)).toMatchObject({
      status: 404,
      text: pdText('[PD:scheduler:ErrSchedulerNotFound]scheduler not found'),
    });

    expect(sim.schedulerLog.map((c) => [c.op, c.storeId, c.by])).toEqual([
      ['add', 3, 'POST /pd/api/v1/schedulers'],
      ['add', 1, 'POST /pd/api/v1/schedulers'],
      ['remove', 3, 'DELETE /pd/api/v1/schedulers/evict-leader-scheduler-3'],
      ['remove', 1, 'DELETE /pd/api/v1/schedulers/evict-leader-scheduler-1'],
    ]);
  });

  test('a scheduler an administrator added with pd-ctl shows in the log, and so does who removed it', async () => {
    const sim = await withStores();
    sim.addEvictLeaderScheduler(2);
    expect(() => sim.addEvictLeaderScheduler(9)).toThrow('store 9 not found');
    expect((await call('DELETE', `${sim.url}/pd/api/v1/schedulers/evict-leader-scheduler-2`)).status).toBe(200);
    expect(sim.schedulerLog.map((c) => [c.op, c.storeId, c.scheduler, c.by])).toEqual([
      ['add', 2, 'evict-leader-scheduler', 'pd-ctl'],
      ['remove', 2, 'evict-leader-scheduler', 'DELETE /pd/api/v1/schedulers/evict-leader-scheduler-2'],
    ]);
  });

  test('the default schedulers depend on the version', async () => {
    const sim = await withStores({ version: 'v8.5.5' });
    expect(((await call('GET', `${sim.url}/pd/api/v1/schedulers`)).body as string[]).sort()).toEqual(
      [
        'balance-hot-region-scheduler',
        'balance-leader-scheduler',
        'balance-region-scheduler',
        'evict-slow-store-scheduler',
        'evict-stopping-store-scheduler',
      ].sort(),
    );
    await expect(PdSim.start({ cluster: 'x', namespace: 'y', version: 'v7.5.0' })).rejects.toThrow('v8.5.x only');
  });

  test('the scheduler drains its stores by evictRate leaders per round; the balancer brings them back', async () => {
    const sim = await withStores();
    await call('POST', `${sim.url}/pd/api/v1/schedulers`, evictBody(3));
    const drained: number[] = [];
    for (let i = 0; i < 5; i++) {
      sim.tick();
      drained.push(sim.stores()[2].leaderCount);
      expect(sum(leaders(sim))).toBe(300);
    }
    expect(drained).toEqual([70, 40, 10, 0, 0]);
    expect(leaders(sim)).toEqual([150, 150, 0]);
    await call('DELETE', `${sim.url}/pd/api/v1/schedulers/evict-leader-scheduler-3`);
    ticks(sim, 20);
    expect(leaders(sim)).toEqual([100, 100, 100]);
  });

  test('a stuck eviction does not progress until released; with no store to take leaders none move', async () => {
    const sim = await withStores({ stuckEviction: [2] });
    await call('POST', `${sim.url}/pd/api/v1/schedulers`, evictBody(2));
    ticks(sim, 10);
    expect(sim.store('demo-tikv-1')?.leaderCount).toBe(100);
    sim.setEvictionStuck(2, false);
    sim.tick();
    expect(sim.store('demo-tikv-1')?.leaderCount).toBe(70);

    for (const id of [1, 3]) await call('POST', `${sim.url}/pd/api/v1/schedulers`, evictBody(id));
    const before = leaders(sim);
    ticks(sim, 10);
    expect(leaders(sim)).toEqual(before);
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
    const sim = await withStores({}, 4);
    expect(['demo-tikv-0', 'demo-tikv-1', 'demo-tikv-2', 'demo-tikv-3'].map((p) => sim.tikvDataStoreId(p))).toEqual([1, 2, 3, 4]);
    expect(sim.tikvState('demo-tikv-2')).toBe('running');
    sim.tikvStop('demo-tikv-2');
    expect(sim.tikvState('demo-tikv-2')).toBe('stopped');
    expect(sim.tikvDataStoreId('demo-tikv-2')).toBe(3);
    sim.tikvStart('demo-tikv-2');
    expect(sim.store('demo-tikv-2')).toMatchObject({ id: 3, state: 'Up' });

    // With one of the other three stopped, an Offline store cannot drain, and a restart keeps it Offline.
    sim.tikvStop('demo-tikv-3');
    expect((await call('DELETE', `${sim.url}/pd/api/v1/store/3`)).status).toBe(200);
    sim.tikvStop('demo-tikv-2');
    sim.tikvStart('demo-tikv-2');
    ticks(sim, 5);
    expect(sim.store('demo-tikv-2')).toMatchObject({ id: 3, state: 'Offline' });
    expect(sim.tikvState('demo-tikv-2')).toBe('running');
    expect(sim.stores()).toHaveLength(4);
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
    // The container keeps restarting it; the same failure is recorded once.
    ticks(sim, 5);
    expect(sim.processFailures).toHaveLength(2);
    expect(sim.stores().map((s) => [s.id, s.state])).toEqual([
      [1, 'Up'],
      [2, 'Up'],
      [3, 'Up'],
      [4, 'Tombstone'],
    ]);

    // The volume is lost: the next restart registers a new store.
    sim.tikvWipe('demo-tikv-3');
    expect(sim.tikvDataStoreId('demo-tikv-3')).toBeUndefined();
    sim.tick();
    expect(sim.tikvState('demo-tikv-3')).toBe('running');
    expect(sim.store('demo-tikv-3')).toMatchObject({ id: 5, state: 'Up', address: sim.tikvAddress('demo-tikv-3') });
    ticks(sim, 50);
    expect(sum(leaders(sim))).toBe(300);
    expect(sim.store('demo-tikv-3')!.leaderCount).toBe(75);
    expect(sim.processFailures).toHaveLength(2);
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

// ---- TiFlash ----

describe('TiFlash', () => {
  const ip = '127.0.4.1';
  const status = () => call('GET', `http://${ip}:20292/tiflash/store-status`);

  test('serves its store status on ip:20292, Idle, Ready, then Running, as bare text; its store carries engine=tiflash', async () => {
    const sim = await withStores({ tiflashStartMs: 400 });
    sim.tiflashStart('demo-tiflash-0', undefined, ip);
    await sleep(30);
    expect(await status()).toMatchObject({ status: 200, text: 'Idle', type: undefined });
    await sim.waitFor(() => sim.tiflashStoreStatus('demo-tiflash-0') === 'Ready', 2000, 'Ready');
    expect((await status()).text).toBe('Ready');
    sim.tick();
    await sim.waitFor(() => sim.tiflashStoreStatus('demo-tiflash-0') === 'Running', 2000, 'Running');
    expect((await status()).text).toBe('Running');
    expect(await call('GET', `http://${ip}:20292/nothing`)).toMatchObject({
      status: 404,
      text: expect.stringMatching(/^path not found, Request \{ method: GET, uri: \/nothing/),
    });

    const store = sim.store('demo-tiflash-0')!;
    expect(store).toMatchObject({
      id: 4,
      engine: 'tiflash',
      address: 'demo-tiflash-0.demo-tiflash-peer.ns.svc:3930',
      peerAddress: 'demo-tiflash-0.demo-tiflash-peer.ns.svc:20170',
      statusAddress: 'demo-tiflash-0.demo-tiflash-peer.ns.svc:20292',
      labels: [{ key: 'engine', value: 'tiflash' }],
      version: 'v8.5.0',
      leaderCount: 0,
    });
    const json = (await call('GET', `${sim.url}/pd/api/v1/store/4`)).body.store;
    expect(json).toMatchObject({ labels: [{ key: 'engine', value: 'tiflash' }], peer_address: store.peerAddress, state_name: 'Up' });
    ticks(sim, 20);
    expect(sim.store('demo-tiflash-0')?.leaderCount).toBe(0);

    // TiFlash counts among the Up stores PD requires (v8.5): three TiKV plus one TiFlash allow one removal.
    expect((await call('DELETE', `${sim.url}/pd/api/v1/store/1`)).status).toBe(200);

    sim.tiflashStop('demo-tiflash-0');
    await expect(status()).rejects.toThrow();
    expect(sim.store('demo-tiflash-0')?.state).toBe('Disconnected');
    expect(sim.tiflashState('demo-tiflash-0')).toBe('stopped');
  });

  test('registers its store even when its timer fires before Date.now() says the KVStore is restored', async () => {
    const sim = await startSim({ tickMs: 0, tiflashStartMs: 200 });
    await formPdCluster(sim, 1);
    sim.tikvStart('demo-tikv-0');
    sim.tiflashStart('demo-tiflash-0');
    // A timer counts from the event loop's clock, which lags Date.now() on a loaded machine: here
    // Date.now() runs 50 ms behind, so the 100 ms timer finds the KVStore not restored yet.
    const realNow = Date.now.bind(Date);
    const lagging = jest.spyOn(Date, 'now').mockImplementation(() => realNow() - 50);
    try {
      await sim.waitFor(() => sim.store('demo-tiflash-0') !== undefined, 2000, 'the TiFlash store');
    } finally {
      lagging.mockRestore();
    }
    expect(sim.store('demo-tiflash-0')).toMatchObject({ state: 'Up', engine: 'tiflash' });
  });

  test('waits for TiKV to bootstrap the cluster, asking PD every 3 s', async () => {
    const sim = await startSim({ tickMs: 0, tiflashStartMs: 20 });
    await formPdCluster(sim, 1);
    sim.tiflashStart('demo-tiflash-0');
    await sleep(100);
    sim.tick();
    expect(sim.stores()).toEqual([]);
    expect(sim.tiflashStoreStatus('demo-tiflash-0')).toBe('Ready');
    sim.tikvStart('demo-tikv-0');
    expect(sim.stores().map((s) => s.engine)).toEqual(['tikv']);
    await sim.waitFor(() => sim.store('demo-tiflash-0') !== undefined, 3500, 'the TiFlash store');
    expect(sim.store('demo-tiflash-0')).toMatchObject({ id: 2, state: 'Up' });
  }, 10_000);
});

// ---- the world: both simulators around rendered manifests ----

describe('World', () => {
  // Each test starts a world and waits on it with bounds of its own (10 s for the Pods, then seconds
  // more): it says how long it may take, above their sum, rather than Jest's default 5 s cutting it
  // off first (the first took near 3 s on a loaded machine).
  const WORLD_TEST_MS = 60_000;
  /**
   * A world with one Pod per component (no controller sets replicas), PD formed through a stub
   * discovery. Without budgets, so without the readiness gate no controller would set here: a Pod is
   * Ready as its containers are.
   */
  async function startWorld(): Promise<World> {
    const cluster = simCluster({}, { annotations: { 'tidb-gitops.io/disruption-budgets': 'none' } });
    const w = await World.start({ cluster, render, pd: { electionMs: 20, discoveryRetryMs: 10 } });
    cleanups.push(() => w.close());
    const discovery = await startDiscovery(operatorLikeDiscovery(w.pd, 'c-pd-0'));
    cleanups.push(() => discovery.close());
    w.pd.discoveryUrl = discovery.url;
    // TiKV's container is Ready once it runs (no readiness probe), its store Up in PD a little later.
    await w.waitFor(
      () => ['pd', 'tikv', 'tidb'].every((c) => w.pods(c).length === 1 && ready(w.pods(c)[0])) && w.pd.store('c-tikv-0')?.state === 'Up',
      10_000,
      'one Ready Pod per component, the store Up',
    );
    return w;
  }
  const ready = (pod: Record<string, any>): boolean =>
    (pod.status?.conditions ?? []).some((c: { type: string; status: string }) => c.type === 'Ready' && c.status === 'True');
  const podReady = (w: World, name: string) => ready(w.kube.get('Pod', 'ns', name)!);

  test(
    'stopping a process inside its Pod turns the Pod not Ready; starting it again, Ready',
    async () => {
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
    },
    WORLD_TEST_MS,
  );

  test(
    'lists claims per component; a deleted claim wipes the data of its Pod',
    async () => {
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

      // A claim in use stays (kubernetes.io/pvc-protection) and keeps its data until its Pod is gone.
      const res = await fetch(`${w.kube.url}/api/v1/namespaces/ns/persistentvolumeclaims/tikv-c-tikv-0`, { method: 'DELETE' });
      expect(res.status).toBe(200);
      expect(w.pd.tikvDataStoreId('c-tikv-0')).toBe(1);
      const wiped: string[] = [];
      w.kube.onDeleted('PersistentVolumeClaim', (c) => wiped.push(`${c.metadata.name} ${w.pd.tikvDataStoreId('c-tikv-0')}`));
      w.kube.delete('Pod', 'ns', 'c-tikv-0');
      await w.waitFor(() => wiped.length > 0, 5000, 'the claim to go with its Pod');
      expect(wiped).toEqual(['tikv-c-tikv-0 undefined']);
    },
    WORLD_TEST_MS,
  );

  test(
    'records a Pod created while a claim of its is marked for deletion',
    async () => {
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
    },
    WORLD_TEST_MS,
  );
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
    sim.tikvStart('demo-tikv-0');
    sim.failNext('GET /pd/api/v1/stores', 500, 2);
    sim.failNext(/^POST .*schedulers/, 503);
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await call('GET', `${sim.url}/pd/api/v1/stores`)).status);
    expect(statuses).toEqual([500, 500, 200]);
    expect(await call('POST', `${sim.url}/pd/api/v1/schedulers`, {})).toMatchObject({ status: 503, text: pdText('injected failure') });
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
