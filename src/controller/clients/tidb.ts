/**
 * What the controller asks a TiDB server itself, on its status port, at the address tidb-operator
 * uses: the DDL pause and resume of a smooth upgrade (pingcap/tidb
 * `pkg/server/handler/upgrade_handler.go`), and its server labels (`GET /info`, `POST /labels`).
 */
import { PORT } from '../../tidbcluster/names';
import { podHost, type ClusterInfo } from '../model/cluster';
import { httpRequest, type ClientTls } from './http';

type Labels = Record<string, string>;

/** `<pod>.<cluster>-tidb-peer.<ns>:10080`, https with tlsCluster (tidb-operator `TiDBControl.getBaseURL`). */
export function tidbStatusBase(c: ClusterInfo, pod: string): string {
  return `${c.tls ? 'https' : 'http'}://${podHost(c, 'tidb', pod)}:${PORT.tidbStatus}`;
}

/**
 * TiDB's answers that mean the cluster is where it was asked to go (pingcap/tidb `upgrade_handler.go`;
 * releases before v7.5.0 say "duplicated op", later ones "duplicated operation").
 */
const DONE: Record<'start' | 'finish', RegExp> = {
  start: /^(success!|It's a duplicated op(eration)? and the cluster is already in upgrading state\.)$/,
  finish: /^(success!|It's a duplicated op(eration)? and the cluster is already in normal state\.)$/,
};

/**
 * `POST <base>/upgrade/{start,finish}` (`base`: the Pod's status URL, `tidbStatusBase`); resolves
 * when TiDB says the cluster is in the state asked for (a JSON string body, the new state or a
 * duplicate), rejects otherwise. TiDB's start waits up to 10 s for the DDL owner, so start gets
 * 30 s, as with the operator.
 */
export async function tidbUpgradeOp(base: string, op: 'start' | 'finish', tls?: ClientTls): Promise<void> {
  const url = `${base}/upgrade/${op}`;
  const res = await httpRequest(url, { method: 'POST', tls, timeoutMs: op === 'start' ? 30_000 : 5_000 });
  let text = res.body.trim();
  try {
    const parsed: unknown = JSON.parse(text);
    if (typeof parsed === 'string') text = parsed;
  } catch {
    // Not JSON: compared as it is.
  }
  if (res.status !== 200 || !DONE[op].test(text)) throw new Error(`POST ${url}: HTTP ${res.status} ${JSON.stringify(res.body.slice(0, 200))}`);
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
export async function tidbServerInfo(base: string, opts: LabelOptions): Promise<{ readonly version: unknown; readonly labels: Labels } | string> {
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
