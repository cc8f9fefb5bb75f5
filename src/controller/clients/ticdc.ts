/**
 * Graceful retirement of a TiCDC capture and of a Pump node, one step per call, before the controller
 * lowers their StatefulSet's replicas (tidb-operator v1: `ticdc_scaler.go`, `ticdc_control.go`,
 * `pump_scaler.go`, `binlog.go`).
 *
 * Every function asks the servers once or twice and says whether the node may go now (`done`) or what
 * is awaited; the caller requeues until done. Timeouts of the whole procedure (the operator's
 * `gracefulShutdownTimeout` for TiCDC, the resync wait for an unregistered Pump) are the caller's:
 * these functions keep no state.
 *
 * Outcomes vs. errors: an answer the protocol knows (503, tables still there, state `closing`…) is an
 * outcome with `done: false`; a server that cannot be reached or answers something unexpected is a
 * thrown {@link GracefulError} naming the URL and what was expected.
 */
import { podHost, type ClusterInfo } from '../model/objects';
import { httpRequest, type ClientTls, type HttpResult } from './pd';

export interface StepOutcome {
  /** True when the node holds nothing any more and may be removed. */
  readonly done: boolean;
  /** What happened or what is awaited, in words for the status and logs. */
  readonly detail: string;
}

/** A request failed or was answered unexpectedly; the message carries the URL. */
export class GracefulError extends Error {
  constructor(
    message: string,
    readonly url: string,
    readonly status?: number,
  ) {
    super(message);
  }
}

export interface RequestOptions {
  /** Client certificate, used with `https:` bases. */
  readonly tls?: ClientTls;
  /** Per request. @default 5000 */
  readonly timeoutMs?: number;
}

// ---------------------------------------------------------------------------------------------
// Shared helpers

const trimSlash = (base: string): string => base.replace(/\/+$/, '');

/** The first 200 characters of a body, on one line, for messages. */
const snippet = (body: string): string => body.replace(/\s+/g, ' ').trim().slice(0, 200);

/** One request; connection errors and timeouts become a {@link GracefulError} with the URL. */
async function send(method: string, url: string, opts: RequestOptions, body?: string): Promise<HttpResult> {
  try {
    return await httpRequest(url, { method, body, timeoutMs: opts.timeoutMs, tls: opts.tls });
  } catch (e) {
    throw new GracefulError(`${method} ${url}: ${(e as Error).message}`, url);
  }
}

/** Parses a JSON body or throws saying what was expected. */
function parseJson(method: string, url: string, res: HttpResult, expected: string): unknown {
  try {
    return JSON.parse(res.body) as unknown;
  } catch {
    throw new GracefulError(`${method} ${url}: expected ${expected}, got HTTP ${res.status} "${snippet(res.body)}"`, url, res.status);
  }
}

const isObject = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

/** TiCDC's error body (`model.HTTPError`: `error_msg`, `error_code`), else the raw text. */
function cdcErrorText(body: string): string {
  try {
    const v = JSON.parse(body) as unknown;
    if (isObject(v) && typeof v.error_msg === 'string') return typeof v.error_code === 'string' && v.error_code ? `${v.error_msg} (${v.error_code})` : v.error_msg;
  } catch {
    // not JSON: fall through
  }
  return snippet(body);
}

// ---------------------------------------------------------------------------------------------
// TiCDC

/** A capture as TiCDC's `GET /api/v1/captures` lists it. */
export interface Capture {
  readonly id: string;
  readonly isOwner: boolean;
  /** The capture's advertised `host:port`. */
  readonly address: string;
}

/**
 * How the capture of a TiCDC Pod advertises itself, up to the port: `<pod>.<cluster>-ticdc-peer.<ns>`,
 * with `.svc.<clusterDomain>` when a cluster domain is set, which tells it from a namesake in another
 * Kubernetes cluster (tidb-operator `ticdc_control.go` getCaptureAdvertiseAddressPrefix).
 */
export function captureAddressPrefix(c: Pick<ClusterInfo, 'name' | 'namespace' | 'clusterDomain'>, pod: string): string {
  const host = podHost(c, 'ticdc', pod);
  return c.clusterDomain ? `${host}.svc.${c.clusterDomain}` : host;
}

/**
 * Is `address` the capture advertised by the Pod whose address starts with `prefix`? The operator
 * tests `strings.Contains(address, "<pod>.<peer>.<ns>[.svc.<domain>]")`; here the prefix must start
 * the address and end at a label or port boundary, so `demo-ticdc-1` never matches `demo-ticdc-10`.
 */
export function captureMatches(address: string, prefix: string): boolean {
  if (!address.startsWith(prefix)) return false;
  const next = address.charAt(prefix.length);
  return next === '' || next === '.' || next === ':';
}

type CaptureList = { kind: 'list'; captures: Capture[] } | { kind: 'unsupported' } | { kind: 'unavailable'; text: string };

/**
 * `GET <base>/api/v1/captures`: 404 means a TiCDC without the API; 503 a server not ready yet; 500
 * what the capture answers while no owner is elected (`election: no leader`, as after a resign), since
 * it forwards the list to the owner (tiflow `cdc/api/middleware` ForwardToOwnerMiddleware).
 */
async function listCaptures(base: string, opts: RequestOptions): Promise<CaptureList> {
  const url = `${base}/api/v1/captures`;
  const res = await send('GET', url, opts);
  if (res.status === 404) return { kind: 'unsupported' };
  if (res.status === 503 || res.status === 500) return { kind: 'unavailable', text: `HTTP ${res.status} ${cdcErrorText(res.body)}` };
  if (res.status !== 200) {
    throw new GracefulError(`GET ${url}: expected HTTP 200 with the capture list, got HTTP ${res.status} ${cdcErrorText(res.body)}`, url, res.status);
  }
  const v = parseJson('GET', url, res, 'a JSON array of captures');
  if (!Array.isArray(v) || !v.every((c) => isObject(c) && typeof c.id === 'string')) {
    throw new GracefulError(`GET ${url}: expected a JSON array of captures ({id, is_owner, address}), got "${snippet(res.body)}"`, url, res.status);
  }
  return {
    kind: 'list',
    captures: (v as Record<string, unknown>[]).map((c) => ({
      id: c.id as string,
      isOwner: c.is_owner === true,
      address: typeof c.address === 'string' ? c.address : '',
    })),
  };
}

/** `POST <base>/api/v1/owner/resign` (TiCDC answers 202); returns what happened. */
async function resignOwner(base: string, capture: Capture, opts: RequestOptions): Promise<StepOutcome | 'unsupported'> {
  const url = `${base}/api/v1/owner/resign`;
  const res = await send('POST', url, opts);
  if (res.status === 404) return 'unsupported';
  if (res.status === 503) return { done: false, detail: `capture ${capture.id} (${capture.address}) is the owner and not ready to resign (HTTP 503); retrying` };
  if (res.status >= 200 && res.status < 300) {
    return { done: false, detail: `capture ${capture.id} (${capture.address}) was the owner; asked it to resign, waiting for another capture to take over` };
  }
  return { done: false, detail: `capture ${capture.id} (${capture.address}) is the owner; resign answered HTTP ${res.status} ${cdcErrorText(res.body)}; retrying` };
}

/** `PUT <base>/api/v1/captures/drain` with `{"capture_id"}`; TiCDC answers `{"current_table_count": n}`. */
async function requestDrain(base: string, capture: Capture, opts: RequestOptions): Promise<StepOutcome> {
  const url = `${base}/api/v1/captures/drain`;
  const res = await send('PUT', url, opts, JSON.stringify({ capture_id: capture.id }));
  const who = `capture ${capture.id} (${capture.address})`;
  if (res.status === 404) return { done: true, detail: `${who}: this TiCDC has no drain API (HTTP 404); nothing to wait for` };
  if (res.status === 503) return { done: false, detail: `${who}: drain not possible yet (HTTP 503 ${cdcErrorText(res.body)}); retrying` };
  if (res.status < 200 || res.status >= 300) {
    // The operator reads any JSON answer as a table count (an error body then counts as 0 tables);
    // an error is not a drained capture, so wait; the caller's graceful-shutdown timeout bounds this.
    return { done: false, detail: `${who}: drain answered HTTP ${res.status} ${cdcErrorText(res.body)}; retrying` };
  }
  const v = parseJson('PUT', url, res, '{"current_table_count": n}');
  if (!isObject(v) || typeof v.current_table_count !== 'number') {
    throw new GracefulError(`PUT ${url}: expected {"current_table_count": n}, got "${snippet(res.body)}"`, url, res.status);
  }
  const n = v.current_table_count;
  return n === 0
    ? { done: true, detail: `${who} is drained: no tables left` }
    : { done: false, detail: `${who} is draining: ${n} table${n === 1 ? '' : 's'} left` };
}

/**
 * One step of retiring the TiCDC capture of a Pod, as tidb-operator's `gracefulDrainTiCDC`:
 *
 * 1. List the captures on the Pod (`GET /api/v1/captures`; TiCDC forwards it to the owner). No such API
 *    (404): done. Not ready (503): wait. One capture or none: done, there is nobody to hand tables to.
 * 2. Find the Pod's capture by its advertised address. Not listed in a cluster of several: wait (the
 *    operator errors and requeues; the caller's graceful-shutdown timeout ends that).
 * 3. If it is the owner: `POST /api/v1/owner/resign` and wait for the next step (404: go on to drain).
 *    No owner listed: wait (an election is under way).
 * 4. `PUT /api/v1/captures/drain` `{"capture_id"}`: done when `current_table_count` is 0; 404
 *    (unsupported): done; 503: wait.
 *
 * @param base `<scheme>://<pod>.<cluster>-ticdc-peer.<ns>.svc:8301`.
 * @param opts.captureAddress How the capture's advertised address starts (`<pod>.<cluster>-ticdc-peer.<ns>`,
 *   with `.svc.<domain>` across Kubernetes clusters). Defaults to the host name of `base`.
 * @throws GracefulError when the Pod cannot be reached or answers something that is not TiCDC's.
 */
export async function drainCapture(base: string, opts: RequestOptions & { readonly captureAddress?: string } = {}): Promise<StepOutcome> {
  const root = trimSlash(base);
  const prefix = opts.captureAddress ?? new URL(root).hostname;
  const list = await listCaptures(root, opts);
  if (list.kind === 'unsupported') return { done: true, detail: `${root} has no captures API (HTTP 404); nothing to drain` };
  if (list.kind === 'unavailable') return { done: false, detail: `${root} cannot list captures yet (${list.text}); retrying` };
  const { captures } = list;
  if (captures.length === 0) return { done: true, detail: `${root} lists no captures; nothing to drain` };
  if (captures.length === 1) return { done: true, detail: `capture ${captures[0].id} (${captures[0].address}) is the only one; no other capture can take its tables` };

  const self = captures.find((c) => captureMatches(c.address, prefix));
  if (!self) {
    return { done: false, detail: `no capture advertises ${prefix} among ${captures.length} (${captures.map((c) => c.address).join(', ')}); waiting for it to register` };
  }
  const owner = captures.find((c) => c.isOwner);
  if (!owner) return { done: false, detail: `no owner among ${captures.length} captures; waiting for an owner to be elected` };
  if (owner.id === self.id) {
    const resigned = await resignOwner(root, self, opts);
    if (resigned !== 'unsupported') return resigned;
  }
  return requestDrain(root, self, opts);
}

/**
 * The version a TiCDC capture runs (`GET <base>/api/v1/status`: `{"version": "v8.5.0", ...}`), or
 * undefined for a TiCDC without that route (404). Not ready yet (503, 500): a GracefulError.
 */
export async function captureVersion(base: string, opts: RequestOptions = {}): Promise<string | undefined> {
  const url = `${trimSlash(base)}/api/v1/status`;
  const res = await send('GET', url, opts);
  if (res.status === 404) return undefined;
  if (res.status !== 200) throw new GracefulError(`GET ${url}: expected HTTP 200 with the capture's status, got HTTP ${res.status} ${cdcErrorText(res.body)}`, url, res.status);
  const v = parseJson('GET', url, res, 'a JSON object with "version"');
  if (!isObject(v) || typeof v.version !== 'string') throw new GracefulError(`GET ${url}: expected a JSON object with "version", got "${snippet(res.body)}"`, url, res.status);
  return v.version;
}

const semver = (v: string): [number, number, number] | undefined => {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(v);
  return m ? [Number(m[1]), Number(m[2]), Number(m[3])] : undefined;
};
const cmp = (a: readonly number[], b: readonly number[]): number => a[0] - b[0] || a[1] - b[1] || a[2] - b[2];

/**
 * Whether a capture at `running` can hand its tables over before restarting at `target`, by
 * tidb-operator's rules (`isTiCDCPodSupportGracefulUpgrade`): always within one version, and when a
 * version cannot be read; across versions only from v6.3.0 on and to less than two majors ahead.
 */
export function gracefulUpgradeSupported(running: string | undefined, target: string | undefined): boolean {
  if (running === undefined) return false;
  const r = semver(running);
  const t = target === undefined ? undefined : semver(target);
  if (!r || !t || cmp(r, t) === 0) return true;
  if (cmp(r, [6, 3, 0]) < 0) return false;
  return cmp(t, [r[0] + 2, 0, 0]) < 0;
}

/**
 * Takes ownership from the capture of another Pod (the next to restart), as tidb-operator's
 * `gracefulResignOwnerTiCDC`: done when that capture is not the owner and an owner is elected;
 * otherwise asks the owner to resign (`POST /api/v1/owner/resign`, which TiCDC forwards to the owner)
 * and waits.
 */
export async function resignOwnerOf(base: string, prefix: string, opts: RequestOptions = {}): Promise<StepOutcome> {
  const root = trimSlash(base);
  const list = await listCaptures(root, opts);
  if (list.kind === 'unsupported') return { done: true, detail: `${root} has no captures API (HTTP 404); no owner to move` };
  if (list.kind === 'unavailable') return { done: false, detail: `${root} cannot list captures yet (${list.text}); retrying` };
  const owner = list.captures.find((c) => c.isOwner);
  if (!owner) return { done: false, detail: `no owner among ${list.captures.length} captures; waiting for an owner to be elected` };
  if (!captureMatches(owner.address, prefix) || list.captures.length === 1) return { done: true, detail: `the owner is capture ${owner.id} (${owner.address})` };
  const resigned = await resignOwner(root, owner, opts);
  return resigned === 'unsupported' ? { done: true, detail: `${root} has no resign API (HTTP 404)` } : resigned;
}

// ---------------------------------------------------------------------------------------------
// Pump

/** A node as a pump's `GET /status` lists it (tidb-binlog `node.Status`). */
export interface PumpNode {
  readonly nodeId: string;
  /** The node's advertised `host:port`. */
  readonly host: string;
  /** online, pausing, paused, closing or offline. */
  readonly state: string;
  readonly isAlive: boolean;
}

/**
 * `GET <base>/status` of a pump: `{"status": {<nodeId>: {nodeId, host, state, isAlive, …}},
 * "CommitTS", "Checkpoint", "ErrMsg"}`. A non-empty `ErrMsg` (the pump could not read etcd or PD,
 * still HTTP 200) is an error.
 */
export async function pumpNodes(base: string, opts: RequestOptions = {}): Promise<PumpNode[]> {
  const url = `${trimSlash(base)}/status`;
  const res = await send('GET', url, opts);
  if (res.status !== 200) throw new GracefulError(`GET ${url}: expected HTTP 200 with the pump nodes, got HTTP ${res.status} "${snippet(res.body)}"`, url, res.status);
  const v = parseJson('GET', url, res, 'a JSON object {"status": {…}}');
  if (!isObject(v)) throw new GracefulError(`GET ${url}: expected a JSON object {"status": {…}}, got "${snippet(res.body)}"`, url, res.status);
  if (typeof v.ErrMsg === 'string' && v.ErrMsg !== '') throw new GracefulError(`GET ${url}: the pump could not list its nodes: ${v.ErrMsg}`, url, res.status);
  const map = v.status ?? {};
  if (!isObject(map)) throw new GracefulError(`GET ${url}: expected "status" to map node ids to nodes, got "${snippet(res.body)}"`, url, res.status);
  return Object.values(map)
    .filter(isObject)
    .map((n) => ({
      nodeId: typeof n.nodeId === 'string' ? n.nodeId : '',
      host: typeof n.host === 'string' ? n.host : '',
      state: typeof n.state === 'string' ? n.state : '',
      isAlive: n.isAlive === true,
    }))
    .sort((a, b) => a.nodeId.localeCompare(b.nodeId));
}

/** The node list from the first pump that gives one; throws with every URL's failure when none does. */
async function firstNodeList(statusBases: readonly string[], opts: RequestOptions): Promise<{ base: string; nodes: PumpNode[] }> {
  const failures: string[] = [];
  for (const base of statusBases) {
    try {
      return { base: trimSlash(base), nodes: await pumpNodes(base, opts) };
    } catch (e) {
      if (!(e instanceof GracefulError)) throw e;
      failures.push(e.message);
    }
  }
  const url = statusBases.length > 0 ? `${trimSlash(statusBases[0])}/status` : '';
  throw new GracefulError(
    statusBases.length === 0 ? 'no pump to ask for the node list (no status URLs given)' : `no pump listed its nodes: ${failures.join('; ')}`,
    url,
  );
}

/** A node id in a path segment; `:` (ids are `<hostname>:<port>`) kept as the operator sends it. */
const nodeIdSegment = (id: string): string => encodeURIComponent(id).replace(/%3A/gi, ':');

/**
 * `PUT <podBase>/state/<nodeId>/close`. Pump answers HTTP 200 with `{"code", "message", "data"}`,
 * code 200 on success; otherwise (wrong node id, state not online) the code is not 200.
 */
async function closePump(podBase: string, node: PumpNode, opts: RequestOptions): Promise<string | undefined> {
  const url = `${podBase}/state/${nodeIdSegment(node.nodeId)}/close`;
  const res = await send('PUT', url, opts);
  if (res.status < 200 || res.status >= 300) {
    throw new GracefulError(`PUT ${url}: expected HTTP 200 {"code": 200}, got HTTP ${res.status} "${snippet(res.body)}"`, url, res.status);
  }
  const v = parseJson('PUT', url, res, '{"code": 200, "message": …}');
  if (!isObject(v) || typeof v.code !== 'number') throw new GracefulError(`PUT ${url}: expected {"code": 200, "message": …}, got "${snippet(res.body)}"`, url, res.status);
  if (v.code === 200) return undefined;
  const message = typeof v.message === 'string' ? v.message : '';
  // A close already under way: the peers list the node online until the pump writes offline
  // (tidb-binlog `pump/server.go` ApplyAction: "this pump's state is closing, apply close failed!").
  if (/state is closing/.test(message)) return `pump node ${node.nodeId} is closing; waiting for it to go offline`;
  return `pump refused to close node ${node.nodeId} (code ${v.code}): ${message}`;
}

/**
 * One step of taking a Pump node offline, as tidb-operator's `pumpScaler.ScaleIn`:
 *
 * 1. Get the node list from the first of `statusBases` that answers (every pump lists all pumps from
 *    etcd, so a peer serves when the Pod itself is down, as it is once its pump has closed).
 * 2. Pick the nodes whose `host` equals `advertiseAddr` exactly (the operator compares the node's
 *    host with the Pod's `-advertise-addr`, pod name substituted).
 * 3. All of them `offline`: done. Any `online`: `PUT <podBase>/state/<nodeId>/close`, then wait.
 *    `closing`, `pausing`, `paused`: wait (only an online node accepts close).
 * 4. None: the operator scales in only when the Pod is not Ready and older than five resync periods
 *    (it never joined); otherwise it errors and waits. The caller knows the Pod: it passes
 *    `unregisteredIsDone` when that holds.
 *
 * @param podBase `<scheme>://<pod>.<cluster>-pump.<ns>.svc:8250`: where the close request goes.
 * @param statusBases Pump base URLs to ask for the node list, the Pod's own first, then its peers.
 * @param advertiseAddr The Pod's advertised `host:port` (`<pod>.<cluster>-pump[.<ns>.svc[.<domain>]]:8250`).
 * @throws GracefulError when no pump lists the nodes, or the close request fails or is not understood.
 */
export async function takePumpOffline(
  podBase: string,
  statusBases: readonly string[],
  advertiseAddr: string,
  opts: RequestOptions & { readonly unregisteredIsDone?: boolean } = {},
): Promise<StepOutcome> {
  const { base, nodes } = await firstNodeList(statusBases, opts);
  const mine = nodes.filter((n) => n.host === advertiseAddr);
  if (mine.length === 0) {
    const listed = nodes.map((n) => n.host).join(', ') || 'none';
    return opts.unregisteredIsDone
      ? { done: true, detail: `no pump node advertises ${advertiseAddr} (${base} lists ${listed}); it never joined` }
      : { done: false, detail: `no pump node advertises ${advertiseAddr} (${base} lists ${listed}); waiting for it to register` };
  }
  const pending = mine.filter((n) => n.state !== 'offline');
  if (pending.length === 0) return { done: true, detail: `pump node ${mine.map((n) => n.nodeId).join(', ')} (${advertiseAddr}) is offline` };

  const root = trimSlash(podBase);
  const words: string[] = [];
  for (const n of pending) {
    if (n.state === 'online') {
      let refused: string | undefined;
      try {
        refused = await closePump(root, n, opts);
      } catch (e) {
        // The pump writes offline and exits, closing its listener: a close sent then finds nobody.
        if (!(e instanceof GracefulError) || e.status !== undefined) throw e;
        refused = `pump node ${n.nodeId} did not answer the close (${e.message}); it may be going offline; asking again`;
      }
      words.push(refused ?? `asked pump node ${n.nodeId} (${advertiseAddr}) to close; waiting for it to go offline`);
    } else {
      const hint = n.state === 'paused' || n.state === 'pausing' ? ' (only an online node accepts close)' : '';
      words.push(`pump node ${n.nodeId} (${advertiseAddr}) is ${n.state || 'in no state'}${hint}; waiting for offline`);
    }
  }
  return { done: false, detail: words.join('; ') };
}
