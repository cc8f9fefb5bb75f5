/**
 * What the controller asks a TiDB server itself, on its status port, at the address tidb-operator
 * uses: the DDL pause and resume of a smooth upgrade (pingcap/tidb
 * `pkg/server/handler/upgrade_handler.go`), and its server labels (`GET /info`, `POST /labels`).
 */
import { PORT } from '../../tidbcluster/names';
import { podHost, type ClusterInfo } from '../model/cluster';
import { httpRequest, type ClientTls, type ProbeResult } from './http';

type Labels = Record<string, string>;

/** `<pod>.<cluster>-tidb-peer.<ns>:10080`, https with tlsCluster (tidb-operator `TiDBControl.getBaseURL`). */
export function tidbStatusBase(c: ClusterInfo, pod: string): string {
  return `${c.tls ? 'https' : 'http'}://${podHost(c, 'tidb', pod)}:${PORT.tidbStatus}`;
}

/**
 * `GET <base>/status`: whether the server serves. pingcap/tidb `pkg/server/http_status.go`
 * `handleStatus` answers 200 with its connections and version, and 500 with no body once the server
 * is shutting down (`health` false).
 */
export async function tidbServing(base: string, tls?: ClientTls): Promise<ProbeResult> {
  try {
    const res = await httpRequest(`${base}/status`, { method: 'GET', tls, timeoutMs: 3_000 });
    return res.status === 200
      ? { ok: true, detail: 'serving' }
      : { ok: false, detail: `HTTP ${res.status}${res.status === 500 ? ' (shutting down)' : ''}` };
  } catch (e) {
    return { ok: false, detail: (e as Error).message };
  }
}

/** What TiDB answered to an upgrade op: whether it has the API, and its words. */
export interface UpgradeOpAnswer {
  /** false: no such route (HTTP 404), a TiDB without the DDL pause of a smooth upgrade. */
  readonly supported: boolean;
  /** The JSON strings of the body, joined with a space (or the body as it is). */
  readonly answer: string;
}

/**
 * The JSON strings of an answer body. Every success of the handler is `WriteData` of a JSON string;
 * some development trees wrote two in one body on a duplicate op ("Be upgrading." then "success!":
 * pingcap/tidb `server/handler/upgrade_handler.go` before the `pkg/` move, `ServeHTTP` without a
 * `return` after the first), so each value is read.
 */
function answerText(body: string): string {
  const values = body.match(/"(?:[^"\\]|\\.)*"/g);
  const rest = values ? body.replace(/"(?:[^"\\]|\\.)*"/g, '').trim() : body.trim();
  if (!values || rest !== '') return body.trim();
  return values.map((v) => JSON.parse(v) as string).join(' ');
}

/**
 * `POST <base>/upgrade/{start,finish}` (`base`: the Pod's status URL, `tidbStatusBase`). Any HTTP
 * 200 means the cluster is in the state asked for: TiDB writes 200 only on success (`success!`, a
 * duplicate's "It's a duplicated op[eration] and the cluster is already in ... state.", or in some
 * trees "Be upgrading." with "success!"), and errors through `WriteError` (400, with the error's text). A 404 is a TiDB
 * without the route, whatever its tag says: no pause to wait for, never a retry for ever. Other
 * answers reject (retried). TiDB's start waits up to 10 s for the DDL owner, so start gets 30 s, as
 * with the operator.
 */
export async function tidbUpgradeOp(base: string, op: 'start' | 'finish', tls?: ClientTls): Promise<UpgradeOpAnswer> {
  const url = `${base}/upgrade/${op}`;
  const res = await httpRequest(url, { method: 'POST', tls, timeoutMs: op === 'start' ? 30_000 : 5_000 });
  if (res.status === 200) return { supported: true, answer: answerText(res.body) };
  if (res.status === 404) return { supported: false, answer: answerText(res.body) };
  throw new Error(`POST ${url}: HTTP ${res.status} ${JSON.stringify(res.body.slice(0, 200))}`);
}

/** Options of the label requests. */
interface LabelOptions {
  readonly tls?: ClientTls;
  readonly timeoutMs: number;
}

/**
 * `GET <base>/info`: the server's version (`8.0.11-TiDB-v8.5.0`, as sent) and labels; what it
 * answered instead, in words, when not 200. Unreachable servers and bodies that are not JSON throw.
 */
export async function tidbServerInfo(
  base: string,
  opts: LabelOptions,
): Promise<{ readonly version: unknown; readonly labels: Labels } | string> {
  const info = await httpRequest(`${base}/info`, opts);
  if (info.status !== 200) return `GET ${base}/info: HTTP ${info.status} ${info.body.trim().slice(0, 120)}`;
  const parsed = JSON.parse(info.body) as { version?: unknown; labels?: unknown };
  return { version: parsed.version, labels: (typeof parsed.labels === 'object' && parsed.labels !== null ? parsed.labels : {}) as Labels };
}

/**
 * `POST <base>/labels`: sets the server's labels; the labels it holds now, or what it answered
 * instead, in words, when not 200. Unreachable servers and bodies that are not JSON throw.
 */
export async function setTidbServerLabels(base: string, labels: Labels, opts: LabelOptions): Promise<Labels | string> {
  const res = await httpRequest(`${base}/labels`, { ...opts, method: 'POST', body: JSON.stringify(labels) });
  if (res.status !== 200) return `POST ${base}/labels: HTTP ${res.status} ${res.body.trim().slice(0, 120)}`;
  return JSON.parse(res.body) as Labels;
}

/**
 * The tables of the cluster, from a TiDB server's schema API (pingcap/tidb `SchemaHandler`, no
 * login): `GET <base>/schema`, the databases (`db_name`), then `GET <base>/schema/<db>` for each one
 * `include` keeps, its tables (`name`; `id_name_only=true` asks newer servers for no more than that,
 * older ones ignore it). Any answer but 200 throws, with what TiDB said.
 */
export async function tidbTables(
  base: string,
  opts: LabelOptions,
  include: (schema: string) => boolean,
): Promise<{ readonly schema: string; readonly name: string }[]> {
  const get = async <T>(path: string): Promise<T> => {
    const res = await httpRequest(`${base}${path}`, opts);
    if (res.status !== 200) throw new Error(`GET ${base}${path}: HTTP ${res.status} ${res.body.trim().slice(0, 120)}`);
    return JSON.parse(res.body) as T;
  };
  type Named = { readonly O?: unknown };
  const dbs = (await get<{ db_name?: Named }[] | null>('/schema')) ?? [];
  const tables: { schema: string; name: string }[] = [];
  for (const db of dbs) {
    const schema = typeof db.db_name?.O === 'string' ? db.db_name.O : undefined;
    if (schema === undefined || !include(schema)) continue;
    const list = (await get<{ name?: Named }[] | null>(`/schema/${encodeURIComponent(schema)}?id_name_only=true`)) ?? [];
    for (const t of list) if (typeof t.name?.O === 'string') tables.push({ schema, name: t.name.O });
  }
  return tables;
}
