/**
 * Reading and changing a running server's config without a restart, as PD and TiKV serve it:
 *
 * - PD (tikv/pd server/api/config.go, router.go `createRouter`, v8.5.x): `GET /pd/api/v1/config`
 *   answers the whole config as JSON (sizes and durations as strings: typeutil.ByteSize and
 *   typeutil.Duration `MarshalJSON`). `POST /pd/api/v1/config` takes a JSON object of dotted keys
 *   (`{"schedule.leader-schedule-limit": 8}`), applies them one by one (`SetConfig`) and answers 200
 *   `"The config is updated."`; a refused key ends it with 400 and a JSON string: `config item <name>
 *   not found`, `config prefix <prefix> not found`, `only support changing log level`, or Go's JSON
 *   error for a value of the wrong type (keys before it in Go's random map order may have been
 *   applied). PD's config is cluster-wide: the leader holds it (followers forward the POST,
 *   pkg/utils/apiutil/serverapi/middleware.go `redirector`), so one key at a time is sent.
 * - TiKV's status server (tikv/tikv src/server/status_server/mod.rs, v7.5 ... v8.5): `GET /config`
 *   answers the config as JSON; `POST /config?persist=false` takes a JSON object of dotted keys to
 *   bools, numbers or strings (`decode_json`; an array is refused) and answers 200 with no body, or
 *   500 `failed to update, error: "<why>"` (src/config/mod.rs `to_config_change`: `config <field> can
 *   not be changed` for a key that needs a restart, `unexpect fields: <field>` for an unknown one,
 *   `failed to parse: <value>`), or 500 `failed to decode, error: ...` for a body it cannot read.
 *   `persist=false` (`update_without_persist`, from v7.5) leaves the config file alone: the file is
 *   the ConfigMap, mounted read-only. v7.1 has no `persist` and always writes the file back; there the
 *   change is made and the write fails, 500 `config changed, but failed to persist change due to
 *   err: ...`, which is taken as applied (the member's report is checked after).
 *
 * Both over TLS with the cluster client certificate when the cluster has tlsCluster.
 */
import { PORT } from '../../tidbcluster/names';
import { podHost, type ClusterInfo } from '../model/cluster';
import { httpRequest, type ClientTls } from './http';

/** Why a server did not take a change: its own words. */
export class ConfigRefused extends Error {
  constructor(
    message: string,
    /** The server's answer, as it wrote it (PD's JSON string unquoted). */
    readonly words: string,
  ) {
    super(message);
  }
}

/** The text of an answer: PD writes its messages as JSON strings. */
function answerText(body: string): string {
  const t = body.trim();
  if (t.startsWith('"')) {
    try {
      const v = JSON.parse(t) as unknown;
      if (typeof v === 'string') return v;
    } catch {
      // not one JSON string
    }
  }
  return t;
}

function parseObject(method: string, url: string, body: string): Record<string, unknown> {
  let v: unknown;
  try {
    v = JSON.parse(body);
  } catch {
    throw new Error(`${method} ${url}: the answer is not JSON`);
  }
  if (typeof v !== 'object' || v === null || Array.isArray(v)) throw new Error(`${method} ${url}: the answer is not a JSON object`);
  return v as Record<string, unknown>;
}

export interface ConfigClientOptions {
  readonly tls?: ClientTls;
  /** Per request. @default 5000 */
  readonly timeoutMs?: number;
}

/** PD's config at a member's client URL (`http://<pod>.<cluster>-pd-peer.<ns>:2379`). */
export async function pdConfig(base: string, o: ConfigClientOptions = {}): Promise<Record<string, unknown>> {
  const url = `${base.replace(/\/+$/, '')}/pd/api/v1/config`;
  const res = await httpRequest(url, { tls: o.tls, timeoutMs: o.timeoutMs });
  if (res.status !== 200) throw new Error(`GET ${url}: HTTP ${res.status} ${answerText(res.body).slice(0, 200)}`);
  return parseObject('GET', url, res.body);
}

/** Sets one dotted key of PD's config; rejects with {@link ConfigRefused} when PD answers 400. */
export async function setPdConfig(base: string, key: string, value: unknown, o: ConfigClientOptions = {}): Promise<void> {
  const url = `${base.replace(/\/+$/, '')}/pd/api/v1/config`;
  const res = await httpRequest(url, { method: 'POST', body: JSON.stringify({ [key]: value }), tls: o.tls, timeoutMs: o.timeoutMs });
  if (res.status === 200) return;
  const words = answerText(res.body);
  if (res.status === 400) throw new ConfigRefused(`POST ${url} ${key}: ${words}`, words);
  throw new Error(`POST ${url}: HTTP ${res.status} ${words.slice(0, 200)}`);
}

/** `<scheme>://<pod>.<cluster>-tikv-peer.<ns>:20180`, a TiKV Pod's status server. */
export const tikvStatusBase = (c: ClusterInfo, pod: string): string =>
  `${c.tls ? 'https' : 'http'}://${podHost(c, 'tikv', pod)}:${PORT.tikvStatus}`;

/** A TiKV server's config (`GET /config`). */
export async function tikvConfig(base: string, o: ConfigClientOptions = {}): Promise<Record<string, unknown>> {
  const url = `${base}/config`;
  const res = await httpRequest(url, { tls: o.tls, timeoutMs: o.timeoutMs });
  if (res.status !== 200) throw new Error(`GET ${url}: HTTP ${res.status} ${res.body.trim().slice(0, 200)}`);
  return parseObject('GET', url, res.body);
}

/** The answer of a TiKV that made the change but could not write its config file (v7.1, no `persist`). */
const PERSIST_FAILED = /^config changed, but failed to persist change/;

/**
 * Changes dotted keys of one TiKV server, all in one request (TiKV parses and validates the whole
 * change before it hands any of it on: src/config/mod.rs `update_impl`). Rejects with
 * {@link ConfigRefused} when the server refuses it.
 */
export async function setTikvConfig(base: string, values: Readonly<Record<string, unknown>>, o: ConfigClientOptions = {}): Promise<void> {
  const url = `${base}/config?persist=false`;
  const res = await httpRequest(url, { method: 'POST', body: JSON.stringify(values), tls: o.tls, timeoutMs: o.timeoutMs });
  if (res.status === 200) return;
  const words = res.body.trim();
  if (res.status === 500 && PERSIST_FAILED.test(words)) return;
  if (res.status === 500 && /^failed to (update|decode)/.test(words)) throw new ConfigRefused(`POST ${url}: ${words}`, words);
  throw new Error(`POST ${url}: HTTP ${res.status} ${words.slice(0, 200)}`);
}
