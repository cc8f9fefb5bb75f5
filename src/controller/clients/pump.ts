/**
 * What the controller asks a Pump node (tidb-binlog), one step per call: the node list every pump
 * keeps, and closing a node before its Pod is scaled in (tidb-operator `pump_scaler.go`, `binlog.go`).
 * As with TiCDC (`ticdc.ts`): an answer the protocol knows is an outcome, anything else a
 * {@link GracefulError} naming the URL.
 */
import { GracefulError, isObject, parseJson, send, snippet, trimSlash, type RequestOptions, type StepOutcome } from './http';
import { compareCodeUnits } from '../../base/order';

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
  if (res.status !== 200)
    throw new GracefulError(
      `GET ${url}: expected HTTP 200 with the pump nodes, got HTTP ${res.status} "${snippet(res.body)}"`,
      url,
      res.status,
    );
  const v = parseJson('GET', url, res, 'a JSON object {"status": {…}}');
  if (!isObject(v))
    throw new GracefulError(`GET ${url}: expected a JSON object {"status": {…}}, got "${snippet(res.body)}"`, url, res.status);
  if (typeof v.ErrMsg === 'string' && v.ErrMsg !== '')
    throw new GracefulError(`GET ${url}: the pump could not list its nodes: ${v.ErrMsg}`, url, res.status);
  const map = v.status ?? {};
  if (!isObject(map))
    throw new GracefulError(`GET ${url}: expected "status" to map node ids to nodes, got "${snippet(res.body)}"`, url, res.status);
  return Object.values(map)
    .filter(isObject)
    .map((n) => ({
      nodeId: typeof n.nodeId === 'string' ? n.nodeId : '',
      host: typeof n.host === 'string' ? n.host : '',
      state: typeof n.state === 'string' ? n.state : '',
      isAlive: n.isAlive === true,
    }))
    .sort((a, b) => compareCodeUnits(a.nodeId, b.nodeId));
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
    statusBases.length === 0
      ? 'no pump to ask for the node list (no status URLs given)'
      : `no pump listed its nodes: ${failures.join('; ')}`,
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
  if (!isObject(v) || typeof v.code !== 'number')
    throw new GracefulError(`PUT ${url}: expected {"code": 200, "message": …}, got "${snippet(res.body)}"`, url, res.status);
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
  if (pending.length === 0)
    return { done: true, detail: `pump node ${mine.map((n) => n.nodeId).join(', ')} (${advertiseAddr}) is offline` };

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
