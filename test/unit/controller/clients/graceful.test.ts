import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { captureAddressPrefix, captureMatches, drainCapture, gracefulUpgradeSupported } from '../../../../src/controller/clients/ticdc';
import { GracefulError } from '../../../../src/controller/clients/http';
import { takePumpOffline } from '../../../../src/controller/clients/pump';

/** A request as the fake server saw it. */
interface Seen {
  readonly method: string;
  readonly path: string;
  readonly body: string;
}

interface Answer {
  readonly status: number;
  readonly body?: unknown;
}

interface Fake {
  readonly base: string;
  readonly seen: Seen[];
}

const servers: http.Server[] = [];

/** A real HTTP server on 127.0.0.1 answering `route(method, path, body)`, recording every request. */
async function fake(route: (method: string, path: string, body: string) => Answer): Promise<Fake> {
  const seen: Seen[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const entry = { method: req.method ?? '', path: req.url ?? '', body };
      seen.push(entry);
      const a = route(entry.method, entry.path, body);
      const text = a.body === undefined ? '' : typeof a.body === 'string' ? a.body : JSON.stringify(a.body);
      res.writeHead(a.status, { 'content-type': 'application/json' });
      res.end(text);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { base: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, seen };
}

/** A base URL nothing listens on: a server's port, the server closed again. */
async function deadBase(): Promise<string> {
  const server = http.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  await new Promise<void>((resolve) => server.close(() => resolve()));
  return `http://127.0.0.1:${port}`;
}

afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => new Promise<void>((resolve) => s.close(() => resolve()))));
});

const notFound: Answer = { status: 404, body: '404 page not found' };

// ---------------------------------------------------------------------------------------------
// TiCDC

const SELF = 'demo-ticdc-1.demo-ticdc-peer.ns';
const self = (isOwner: boolean) => ({ id: 'c-1', is_owner: isOwner, address: `${SELF}.svc:8301`, cluster_id: 'default' });
const other = (isOwner: boolean) => ({
  id: 'c-0',
  is_owner: isOwner,
  address: 'demo-ticdc-0.demo-ticdc-peer.ns.svc:8301',
  cluster_id: 'default',
});

/** A TiCDC capture's OpenAPI: captures list, owner resign, drain; each answer overridable. */
function ticdc(opts: { captures?: Answer; resign?: Answer; drain?: Answer }) {
  return fake((method, path) => {
    if (method === 'GET' && path === '/api/v1/captures') return opts.captures ?? { status: 200, body: [other(true), self(false)] };
    if (method === 'POST' && path === '/api/v1/owner/resign') return opts.resign ?? { status: 202 };
    if (method === 'PUT' && path === '/api/v1/captures/drain') return opts.drain ?? { status: 202, body: { current_table_count: 0 } };
    return notFound;
  });
}

const calls = (f: Fake) => f.seen.map((s) => `${s.method} ${s.path}`);

describe('drainCapture', () => {
  test('asks the owner of a multi-capture cluster to resign and waits, without draining yet', async () => {
    const f = await ticdc({ captures: { status: 200, body: [self(true), other(false)] } });
    const out = await drainCapture(f.base, { captureAddress: SELF });
    expect(out.done).toBe(false);
    expect(out.detail).toMatch(/owner.*resign/);
    expect(calls(f)).toEqual(['GET /api/v1/captures', 'POST /api/v1/owner/resign']);
  });

  test('a 503 on resign is retried', async () => {
    const f = await ticdc({
      captures: { status: 200, body: [self(true), other(false)] },
      resign: { status: 503, body: { error_msg: 'not ready' } },
    });
    const out = await drainCapture(f.base, { captureAddress: SELF });
    expect(out.done).toBe(false);
    expect(out.detail).toMatch(/503/);
  });

  test('a TiCDC without the resign API (404) goes on to the drain', async () => {
    const f = await ticdc({ captures: { status: 200, body: [self(true), other(false)] }, resign: notFound, drain: notFound });
    const out = await drainCapture(f.base, { captureAddress: SELF });
    expect(calls(f)).toEqual(['GET /api/v1/captures', 'POST /api/v1/owner/resign', 'PUT /api/v1/captures/drain']);
    expect(out.done).toBe(true);
  });

  test('drains a non-owner capture by id: tables left means not done', async () => {
    const f = await ticdc({ drain: { status: 202, body: { current_table_count: 3 } } });
    const out = await drainCapture(f.base, { captureAddress: SELF });
    expect(out).toEqual({ done: false, detail: expect.stringContaining('3 tables left') });
    const put = f.seen.find((s) => s.method === 'PUT');
    expect(put?.path).toBe('/api/v1/captures/drain');
    expect(JSON.parse(put?.body ?? '')).toEqual({ capture_id: 'c-1' });
    expect(calls(f)).not.toContain('POST /api/v1/owner/resign');
  });

  test('no table left: done', async () => {
    const f = await ticdc({ drain: { status: 202, body: { current_table_count: 0 } } });
    expect(await drainCapture(f.base, { captureAddress: SELF })).toEqual({ done: true, detail: expect.stringContaining('drained') });
  });

  test('404 on drain: a version without the drain API, done', async () => {
    const f = await ticdc({ drain: notFound });
    const out = await drainCapture(f.base, { captureAddress: SELF });
    expect(out.done).toBe(true);
    expect(out.detail).toMatch(/no drain API/);
  });

  test('503 on drain: not done, retry', async () => {
    const f = await ticdc({ drain: { status: 503, body: { error_msg: 'owner not found', error_code: 'CDC:ErrOwnerNotFound' } } });
    const out = await drainCapture(f.base, { captureAddress: SELF });
    expect(out.done).toBe(false);
    expect(out.detail).toMatch(/503.*owner not found/);
  });

  test('an error answer to drain is not a drained capture', async () => {
    const f = await ticdc({
      drain: { status: 500, body: { error_msg: 'cannot drain the owner', error_code: 'CDC:ErrSchedulerRequestFailed' } },
    });
    const out = await drainCapture(f.base, { captureAddress: SELF });
    expect(out.done).toBe(false);
    expect(out.detail).toMatch(/HTTP 500 cannot drain the owner/);
  });

  test('a drain answer without a table count is an error naming the URL', async () => {
    const f = await ticdc({ drain: { status: 202, body: { something: 1 } } });
    await expect(drainCapture(f.base, { captureAddress: SELF })).rejects.toThrow(
      `PUT ${f.base}/api/v1/captures/drain: expected {"current_table_count": n}`,
    );
  });

  test('a single capture is neither resigned nor drained: done', async () => {
    const f = await ticdc({ captures: { status: 200, body: [self(true)] } });
    const out = await drainCapture(f.base, { captureAddress: SELF });
    expect(out.done).toBe(true);
    expect(out.detail).toMatch(/only one/);
    expect(calls(f)).toEqual(['GET /api/v1/captures']);
  });

  test('no captures API (404): done without further requests', async () => {
    const f = await ticdc({ captures: notFound });
    expect((await drainCapture(f.base, { captureAddress: SELF })).done).toBe(true);
    expect(calls(f)).toEqual(['GET /api/v1/captures']);
  });

  test('captures list 503: not done', async () => {
    const f = await ticdc({ captures: { status: 503, body: { error_msg: 'server is not ready' } } });
    const out = await drainCapture(f.base, { captureAddress: SELF });
    expect(out.done).toBe(false);
    expect(out.detail).toMatch(/not ready/);
  });

  test('capture not listed among several: not done, nothing asked of TiCDC', async () => {
    const f = await ticdc({
      captures: { status: 200, body: [other(true), { id: 'c-2', is_owner: false, address: 'demo-ticdc-2.demo-ticdc-peer.ns.svc:8301' }] },
    });
    const out = await drainCapture(f.base, { captureAddress: SELF });
    expect(out.done).toBe(false);
    expect(out.detail).toContain(`no capture advertises ${SELF}`);
    expect(calls(f)).toEqual(['GET /api/v1/captures']);
  });

  test('no owner listed: wait for the election', async () => {
    const f = await ticdc({ captures: { status: 200, body: [other(false), self(false)] } });
    const out = await drainCapture(f.base, { captureAddress: SELF });
    expect(out.done).toBe(false);
    expect(out.detail).toMatch(/no owner/);
    expect(calls(f)).toEqual(['GET /api/v1/captures']);
  });

  test('a captures list answered 500 (no owner elected yet, as after a resign) is a wait', async () => {
    const f = await ticdc({ captures: { status: 500, body: { error_msg: 'election: no leader', error_code: '' } } });
    expect(await drainCapture(f.base, { captureAddress: SELF })).toEqual({
      done: false,
      detail: `${f.base} cannot list captures yet (HTTP 500 election: no leader); retrying`,
    });
  });

  test('an unexpected captures answer is an error naming the URL', async () => {
    const f = await ticdc({ captures: { status: 400, body: { error_msg: 'bad request' } } });
    await expect(drainCapture(f.base, { captureAddress: SELF })).rejects.toThrow(`GET ${f.base}/api/v1/captures: expected HTTP 200`);
  });

  test('unreachable capture: GracefulError with the URL', async () => {
    const base = await deadBase();
    const err = await drainCapture(base, { captureAddress: SELF }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GracefulError);
    expect((err as GracefulError).url).toBe(`${base}/api/v1/captures`);
    expect((err as Error).message).toContain(`GET ${base}/api/v1/captures`);
  });

  test('without captureAddress the host name of the base identifies the capture', async () => {
    const f = await fake((method, path) => {
      if (path === '/api/v1/captures') {
        const port = new URL(f.base).port;
        return { status: 200, body: [other(true), { id: 'c-9', is_owner: false, address: `127.0.0.1:${port}` }] };
      }
      if (method === 'PUT') return { status: 202, body: { current_table_count: 0 } };
      return notFound;
    });
    expect((await drainCapture(f.base)).done).toBe(true);
    expect(JSON.parse(f.seen[1].body)).toEqual({ capture_id: 'c-9' });
  });

  test('captureMatches stops at a label or port boundary', () => {
    expect(captureMatches('demo-ticdc-1.demo-ticdc-peer.ns.svc:8301', 'demo-ticdc-1.demo-ticdc-peer.ns')).toBe(true);
    expect(captureMatches('demo-ticdc-1.demo-ticdc-peer.ns:8301', 'demo-ticdc-1.demo-ticdc-peer.ns')).toBe(true);
    expect(captureMatches('demo-ticdc-10.demo-ticdc-peer.ns.svc:8301', 'demo-ticdc-1')).toBe(false);
    expect(captureMatches('demo-ticdc-1.demo-ticdc-peer.nsx.svc:8301', 'demo-ticdc-1.demo-ticdc-peer.ns')).toBe(false);
  });

  test('across Kubernetes clusters, a cluster domain tells a capture from its namesake in the other cluster', () => {
    const here = captureAddressPrefix({ name: 'demo', namespace: 'ns', clusterDomain: 'east.local' }, 'demo-ticdc-1');
    expect(here).toBe('demo-ticdc-1.demo-ticdc-peer.ns.svc.east.local');
    expect(captureMatches('demo-ticdc-1.demo-ticdc-peer.ns.svc.west.local:8301', here)).toBe(false);
    expect(captureMatches('demo-ticdc-1.demo-ticdc-peer.ns.svc.east.local:8301', here)).toBe(true);
    expect(captureAddressPrefix({ name: 'demo', namespace: 'ns', clusterDomain: '' }, 'demo-ticdc-1')).toBe(
      'demo-ticdc-1.demo-ticdc-peer.ns',
    );
  });
});

// ---------------------------------------------------------------------------------------------
// Pump

const HOST = 'demo-pump-1.demo-pump:8250';
const node = (id: string, host: string, state: string) => ({
  nodeId: id,
  host,
  state,
  isAlive: state !== 'offline',
  score: 0,
  label: null,
  updateTS: 1,
});

/** Pump's `/status` body: nodes keyed by id, plus CommitTS, Checkpoint and ErrMsg. */
const statusBody = (nodes: ReturnType<typeof node>[], errMsg = '') => ({
  status: Object.fromEntries(nodes.map((n) => [n.nodeId, n])),
  CommitTS: 123,
  Checkpoint: { suffix: 0, offset: 0 },
  ErrMsg: errMsg,
});

/** A pump: `/status` lists `nodes`; `/state/{id}/{action}` answers `close`. */
function pump(
  nodes: ReturnType<typeof node>[],
  close: Answer = { status: 200, body: { message: 'apply action close success!', code: 200, data: null } },
  errMsg = '',
) {
  return fake((method, path) => {
    if (method === 'GET' && path === '/status') return { status: 200, body: statusBody(nodes, errMsg) };
    if (method === 'PUT' && path.startsWith('/state/')) return close;
    return notFound;
  });
}

const CLUSTER = [node('demo-pump-0:8250', 'demo-pump-0.demo-pump:8250', 'online')];

describe('takePumpOffline', () => {
  test('an online node is asked to close on its own pod: PUT /state/<nodeId>/close', async () => {
    const p = await pump([...CLUSTER, node('demo-pump-1:8250', HOST, 'online')]);
    const out = await takePumpOffline(p.base, [p.base], HOST);
    expect(out.done).toBe(false);
    expect(out.detail).toMatch(/asked pump node demo-pump-1:8250 .* to close/);
    expect(p.seen.map((s) => `${s.method} ${s.path}`)).toEqual(['GET /status', 'PUT /state/demo-pump-1:8250/close']);
  });

  test('an offline node is done, nothing sent', async () => {
    const p = await pump([...CLUSTER, node('demo-pump-1:8250', HOST, 'offline')]);
    const out = await takePumpOffline(p.base, [p.base], HOST);
    expect(out).toEqual({ done: true, detail: expect.stringContaining('offline') });
    expect(p.seen.map((s) => s.method)).toEqual(['GET']);
  });

  test('a closing node is awaited without another request', async () => {
    const p = await pump([node('demo-pump-1:8250', HOST, 'closing')]);
    const out = await takePumpOffline(p.base, [p.base], HOST);
    expect(out.done).toBe(false);
    expect(out.detail).toMatch(/is closing; waiting/);
    expect(p.seen).toHaveLength(1);
  });

  test('the pod unreachable (its pump closed): a peer lists the node offline', async () => {
    const pod = await deadBase();
    const peer = await pump([...CLUSTER, node('demo-pump-1:8250', HOST, 'offline')]);
    const out = await takePumpOffline(pod, [pod, peer.base], HOST);
    expect(out.done).toBe(true);
    expect(out.detail).toContain(HOST);
    expect(peer.seen.map((s) => `${s.method} ${s.path}`)).toEqual(['GET /status']);
  });

  test('a pump whose status carries ErrMsg is skipped for the next', async () => {
    const broken = await pump([], undefined, 'context deadline exceeded');
    const peer = await pump([node('demo-pump-1:8250', HOST, 'offline')]);
    expect((await takePumpOffline(broken.base, [broken.base, peer.base], HOST)).done).toBe(true);
  });

  test('the host must match exactly: a node listed under another address does not count', async () => {
    const p = await pump([...CLUSTER, node('demo-pump-1:8250', 'demo-pump-1.demo-pump.ns.svc:8250', 'offline')]);
    const out = await takePumpOffline(p.base, [p.base], HOST);
    expect(out.done).toBe(false);
    expect(out.detail).toContain(`no pump node advertises ${HOST}`);
  });

  test('not registered: waits unless the caller says the pod never joined', async () => {
    const p = await pump(CLUSTER);
    expect((await takePumpOffline(p.base, [p.base], HOST)).done).toBe(false);
    const out = await takePumpOffline(p.base, [p.base], HOST, { unregisteredIsDone: true });
    expect(out.done).toBe(true);
    expect(out.detail).toMatch(/never joined/);
    expect(p.seen.every((s) => s.method === 'GET')).toBe(true);
  });

  test('a refused close (code not 200) is not done and says why', async () => {
    const p = await pump([node('demo-pump-1:8250', HOST, 'online')], {
      status: 200,
      body: { message: "invalide nodeID demo-pump-1:8250, this pump's nodeID is x:8250", code: 3, data: null },
    });
    const out = await takePumpOffline(p.base, [p.base], HOST);
    expect(out.done).toBe(false);
    expect(out.detail).toMatch(/refused to close node demo-pump-1:8250 \(code 3\): invalide nodeID/);
  });

  test('a close already under way (code 3, state is closing) is a wait', async () => {
    const p = await pump([node('demo-pump-1:8250', HOST, 'online')], {
      status: 200,
      body: { message: "this pump's state is closing, apply close failed!", code: 3, data: null },
    });
    expect(await takePumpOffline(p.base, [p.base], HOST)).toEqual({
      done: false,
      detail: 'pump node demo-pump-1:8250 is closing; waiting for it to go offline',
    });
  });

  test('a close answered with an HTTP error is a GracefulError naming the URL', async () => {
    const p = await pump([node('demo-pump-1:8250', HOST, 'online')], { status: 500, body: 'boom' });
    await expect(takePumpOffline(p.base, [p.base], HOST)).rejects.toThrow(`PUT ${p.base}/state/demo-pump-1:8250/close: expected HTTP 200`);
  });

  test('no pump answers: GracefulError naming every URL tried', async () => {
    const a = await deadBase();
    const b = await fake(() => ({ status: 200, body: 'not json' }));
    const err = await takePumpOffline(a, [a, b.base], HOST).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(GracefulError);
    expect((err as Error).message).toContain(`GET ${a}/status`);
    expect((err as Error).message).toContain(`GET ${b.base}/status: expected a JSON object`);
  });
});

describe('gracefulUpgradeSupported: when a TiCDC capture hands its tables over before an upgrade (tidb-operator rules)', () => {
  test.each([
    ['v8.5.0', 'v8.5.0', true],
    ['v8.5.0', 'v8.5.1', true],
    ['v6.3.0', 'v7.5.0', true],
    ['v6.5.0', 'v8.0.0', false],
    ['v6.2.0', 'v6.5.0', false],
    ['v6.2.0', 'v6.2.0', true],
    ['v8.5.0', 'latest', true],
    [undefined, 'v8.5.0', false],
  ] as const)('%s -> %s: %s', (running, target, expected) => {
    expect(gracefulUpgradeSupported(running, target)).toBe(expected);
  });
});
