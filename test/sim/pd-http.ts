/**
 * PD's client HTTP API over the simulated cluster, as one member's HTTP server answers it: the
 * redirector, the routes, and the bodies, status codes and content types PD v8.5.x writes.
 *
 * The layers are PD's (tikv/pd server/api/server.go: `negroni.New(serviceValidator, redirector,
 * router)`):
 * - the redirector (pkg/utils/apiutil/serverapi/middleware.go `redirector.ServeHTTP`): a member that
 *   is not the leader forwards the request to the leader (a reverse proxy: the client sees the
 *   leader's answer); with no leader it waits up to 3 s (`waitForLeader`, 100 ms doubling) and then
 *   answers 503 text/plain. From v8.5.5 `/health`, `/ping`, `/version`, `/status` and `GET /config`
 *   are answered by the member asked (`localOnlyPaths`).
 * - gorilla/mux v1.7.4 routing: an unknown path is `404 page not found` (text/plain), a known path
 *   with another method 405 with an empty body.
 * - the cluster middleware (server/api/middleware.go `clusterMiddleware`): the store routes answer
 *   500 ErrNotBootstrapped until TiKV bootstrapped the raft cluster. The scheduler routes are not
 *   behind it but need the RaftCluster too (500, or 406 for `/scheduler-config`).
 * - handlers writing with `h.rd.JSON` (unrolled/render, indented JSON plus "\n"; errors are JSON
 *   strings), `apiutil.ErrorResp` (400 errcode objects for bad ids and bodies) or `http.Error`.
 * `/pd/api/v2` is PD's gin router (server/apiv2/router.go), with its own redirector; its
 * micro-service routes (`/ms/members/{service}`, `/ms/primary/{service}`) answer from the registry the
 * TSO and scheduling servers write (pdms.ts) while PD runs in API mode (`services api`).
 * `GET /metrics` is not PD's own route but its embedded etcd's, on the same client port, answered by
 * the member asked (see `metrics`).
 */
import type { Member, PdMembers } from './pd-members';
import { MS_SERVICES, decodeRegistryEntry, type MsRegistry } from './pdms';
import { goProcessFamilies, promhttpAnswer, promhttpFamilies, type PromFamily } from './prom-text';
import type { PdProcesses } from './pd-process';
import { onlineConfigOf } from './pd-config';
import type { StoreLabel, TikvStore, TikvStores } from './pd-stores';
import {
  GIN_JSON_TYPE,
  GIN_PLAIN_TYPE,
  GoMap,
  HTTP_ERROR_TYPE,
  RENDER_JSON_TYPE,
  atoi,
  bytesSize,
  goDuration,
  goJson,
  jsonSyntaxError,
  parseUint64,
  renderJson,
  rfc3339Nano,
} from './pd-wire';

// ---- versions ----

/** The PD version the simulator plays, and what depends on it within v8.5.x. */
export interface PdVersion {
  /** "v8.5.0" */
  text: string;
  patch: number;
  /** The release's commit (`git rev-list -n1 <tag>` in tikv/pd): `git_hash` of the members. */
  gitHash: string;
  /** `GET /pd/api/v2/ready` exists (v8.5.2+, tikv/pd commit 4cd009c4db, server/apiv2/handlers/ready.go). */
  readyApi: boolean;
  /** The redirector answers `/health`, `/ping`... and `GET /config` locally (v8.5.5+, `localOnlyPaths`). */
  localOnlyPaths: boolean;
  /** The default schedulers (pkg/schedule/config/config.go `DefaultSchedulers`). */
  defaultSchedulers: string[];
}

/** tikv/pd release tags and their commits. */
const GIT_HASHES: Record<number, string> = {
  0: 'd190c0e9082de46128b756f93b1291768dda645a',
  1: '5036cc277fc8c0e7fa1219265ae407de80b950b7',
  2: '4cd009c4db3c15215341a96521dd53e53c55e5bd',
  3: '65e429d26e81db93c590890ddacf18c4b970f299',
  4: 'ab1848b1274bfef46e949b9056c98c57aaf3da34',
  5: '9c9a8c8a25684b3516e11bc92922df99302c9c46',
  6: '21bd0a379e5f9d2be11a92d17645a6ada19f02c1',
  7: '6dce4a68e3e93b523657bd05cba89a86d64de117',
};

/** Only the v8.5 family is modelled: anything else is refused rather than played wrongly. */
export function parsePdVersion(text: string): PdVersion {
  const m = /^v8\.5\.(\d+)$/.exec(text);
  if (m === null) throw new Error(`PdSim models PD v8.5.x only, not ${text}`);
  const patch = Number(m[1]);
  const defaults = ['balance-region-scheduler', 'balance-leader-scheduler', 'balance-hot-region-scheduler', 'evict-slow-store-scheduler'];
  // evict-stopping-store joined the defaults in v8.5.5 (pkg/schedule/config/config.go DefaultSchedulers).
  if (patch >= 5) defaults.push('evict-stopping-store-scheduler');
  return {
    text,
    patch,
    gitHash: GIT_HASHES[patch] ?? GIT_HASHES[7],
    readyApi: patch >= 2,
    localOnlyPaths: patch >= 5,
    defaultSchedulers: defaults,
  };
}

// ---- the model and the answers ----

/** `replication` (pkg/schedule/config/config.go `ReplicationConfig`). */
export interface ReplicationConfig {
  maxReplicas: number;
  locationLabels: string[];
  strictlyMatchLabel: boolean;
  enablePlacementRules: boolean;
  enablePlacementRulesCache: boolean;
  isolationLevel: string;
}

/** What the API reads and changes. */
export interface ApiModel {
  version: PdVersion;
  members: PdMembers;
  processes: PdProcesses;
  stores: TikvStores;
  replication: ReplicationConfig;
  /** Default schedulers removed through the API. */
  removedSchedulers: Set<string>;
  /** The evict-leader scheduler's `batch` (pkg/schedule/schedulers/evict_leader.go `EvictLeaderBatchSize`). */
  evictBatch: number;
  /** `schedule.max-store-down-time` as PD shows it (the simulator's Down delay is time-scaled). */
  maxStoreDownTime: string;
  /** PD runs as the micro-services' API server (`pd-server services api`: `IsAPIServiceMode`). */
  microservices: boolean;
  /** `pd-server.use-region-storage` (see `PdSimOptions.useRegionStorage`). */
  useRegionStorage: boolean;
  /** The micro-services' keys in etcd: registry, primaries, the TSO default keyspace group. */
  ms: MsRegistry;
  /** `GET /ms/primary`'s interval between looks (100 ms in PD, time-scaled: `PdSimOptions.msPrimaryRetryMs`). */
  msPrimaryRetryMs: number;
  /** Each PD pod's pd-server process as `/metrics` shows it, by pod name (pd-api sets it at every start). */
  metrics: Map<string, PdProcessMetrics>;
}

/** What a pd-server process's `/metrics` shows beyond the cluster model. */
export interface PdProcessMetrics {
  /** When the container's process started (epoch ms): `process_start_time_seconds`. */
  startMs: number;
  /** When `startServer` ran (unix seconds): `pd_server_info`'s value. */
  serverStart: number;
  /** Scrapes answered so far: `promhttp_metric_handler_requests_total{code="200"}`. */
  scrapes: number;
  /** `pd_cluster_status` as the leader's last metrics collection left it (key: the labels as JSON). */
  clusterStatus: Map<string, { labels: Record<string, string>; value: number }>;
}

export interface ApiRequest {
  method: string;
  /** Path and query, as sent. */
  url: string;
  body: string;
  /** The member that forwarded this request (`PD-Redirector` header). */
  redirectedFrom?: string;
  /** The request's headers, where an answer depends on them (`Accept-Encoding` for `/metrics`). */
  headers?: Readonly<Record<string, string | string[] | undefined>>;
}

export interface Reply {
  status: number;
  headers: Record<string, string>;
  /** Text, or bytes (a gzipped `/metrics`). */
  body: string | Buffer;
}

/** `h.rd.JSON(w, status, v)`. */
const rd = (status: number, v: unknown): Reply => ({ status, headers: { 'content-type': RENDER_JSON_TYPE }, body: renderJson(v) });
/** `http.Error(w, text, status)` (golang/go src/net/http/server.go). */
const httpError = (status: number, text: string): Reply => ({
  status,
  headers: { 'content-type': HTTP_ERROR_TYPE, 'x-content-type-options': 'nosniff' },
  body: `${text}\n`,
});
/** `http.NotFound`, what gorilla/mux and `http.ServeMux` answer for an unknown path. */
const notFound = (): Reply => httpError(404, '404 page not found');
/** A status without a body (gorilla/mux v1.7.4 `methodNotAllowed`, `/ping`, `/ready` without `verbose`). */
const bare = (status: number): Reply => ({ status, headers: {}, body: '' });
/** gin `c.JSON` / `c.AbortWithStatusJSON`: compact JSON, no newline (gin render/json.go `WriteJSON`). */
const ginJson = (status: number, v: unknown, indent?: string): Reply => ({
  status,
  headers: { 'content-type': GIN_JSON_TYPE },
  body: goJson(v, indent),
});
/**
 * `apiutil.ErrorResp(rd, w, errcode.NewInvalidInputErr(err))` (tikv/pd pkg/utils/apiutil/apiutil.go):
 * 400, header `TiDB-Error-Code: input`, body errcode `JSONFormat` {code, msg, data} (pingcap/errcode
 * error_code.go), `data` being the error value marshalled (`{}` for errors without exported fields).
 */
const inputError = (msg: string, data: unknown = {}): Reply => ({
  status: 400,
  headers: { 'content-type': RENDER_JSON_TYPE, 'tidb-error-code': 'input' },
  body: renderJson({ code: 'input', msg, data }),
});

const NOT_BOOTSTRAPPED = '[PD:cluster:ErrNotBootstrapped]TiKV cluster not bootstrapped, please start TiKV first';
const EVICT = 'evict-leader-scheduler';
const GRANT = 'grant-leader-scheduler';
/** Scheduler names PD knows (pkg/schedule/types/type.go `StringToSchedulerType`, v8.5.7). */
const KNOWN_SCHEDULERS = new Set([
  'balance-leader-scheduler',
  'balance-region-scheduler',
  'balance-witness-scheduler',
  'evict-leader-scheduler',
  'evict-slow-store-scheduler',
  'evict-slow-trend-scheduler',
  'evict-stopping-store-scheduler',
  'grant-leader-scheduler',
  'grant-hot-region-scheduler',
  'balance-hot-region-scheduler',
  'random-merge-scheduler',
  'scatter-range-scheduler',
  'scatter-range',
  'balance-range',
  'shuffle-hot-region-scheduler',
  'shuffle-leader-scheduler',
  'shuffle-region-scheduler',
  'split-bucket-scheduler',
  'transfer-witness-leader-scheduler',
  'label-scheduler',
  'balance-range-scheduler',
]);
/** metapb.StoreState numbers: Disconnected and Down are Up stores that stopped heartbeating. */
const STORE_STATE_NUMBER: Record<TikvStore['state'], number> = { Up: 0, Disconnected: 0, Down: 0, Offline: 1, Tombstone: 2 };
const NODE_STATE_NUMBER: Record<TikvStore['nodeState'], number> = { Preparing: 0, Serving: 1, Removing: 2, Removed: 3 };
/** redirector `waitForLeader`: backoffInterval 100 ms, backoffMaxDelay 3 s. */
const BACKOFF_INTERVAL_MS = 100;
const BACKOFF_MAX_DELAY_MS = 3000;
/** pkg/utils/apiutil/serverapi/middleware.go `localOnlyPaths` (v8.5.5+). */
const LOCAL_ONLY_PATHS = [
  '/pd/api/v1/admin/log',
  '/pd/api/v1/status',
  '/pd/api/v1/health',
  '/pd/api/v1/ping',
  '/pd/api/v1/version',
  '/pd/api/v1/debug/pprof',
];

/**
 * Answers one request that reached `member`'s HTTP server (its own client URL, or the Service that
 * picked it). The caller makes sure the member's process runs.
 */
export async function serve(model: ApiModel, member: Member, req: ApiRequest): Promise<Reply> {
  const parsed = new URL(req.url, 'http://pd');
  let path: string;
  try {
    path = decodeURIComponent(parsed.pathname);
  } catch {
    path = parsed.pathname;
  }
  if (path === '/pd/api/v1' || path.startsWith('/pd/api/v1/')) return v1(model, member, req, path, parsed.searchParams);
  if (path.startsWith('/pd/api/v2/')) return v2(model, member, req, path, parsed.searchParams);
  if (path === '/metrics') return metrics(model, member, req);
  return notFound();
}

// ---- /pd/api/v1: redirector, router ----

async function v1(model: ApiModel, member: Member, req: ApiRequest, path: string, query: URLSearchParams): Promise<Reply> {
  const local =
    model.version.localOnlyPaths &&
    ((path === '/pd/api/v1/config' && req.method === 'GET') || LOCAL_ONLY_PATHS.some((p) => path.startsWith(p)));
  if (!local && model.members.leader !== member) {
    if (req.redirectedFrom !== undefined) return httpError(500, '[PD:apiutil:ErrRedirectToNotLeader]redirect to not leader');
    const leader = await waitForLeader(model.members);
    if (leader === undefined) return httpError(503, '[PD:apiutil:ErrRedirectNoLeader]redirect finds no leader');
    if (leader !== member) return v1(model, leader, { ...req, redirectedFrom: member.name }, path, query);
  }
  return dispatch(model, member, req, path.slice('/pd/api/v1'.length), query);
}

/** The redirector's `waitForLeader`: looks at 0, 100, 300, 700, 1500 ms and gives up at 3 s. */
async function waitForLeader(members: PdMembers): Promise<Member | undefined> {
  let interval = BACKOFF_INTERVAL_MS;
  let waited = 0;
  for (;;) {
    const leader = members.leader;
    if (leader !== undefined) return leader;
    await sleep(interval);
    waited += interval;
    if (waited >= BACKOFF_MAX_DELAY_MS) return undefined;
    interval *= 2;
    if (waited + interval > BACKOFF_MAX_DELAY_MS) interval = BACKOFF_MAX_DELAY_MS - waited;
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms).unref());
}

interface Ctx {
  model: ApiModel;
  member: Member;
  req: ApiRequest;
  params: string[];
  query: URLSearchParams;
  /** `"<METHOD> <path>"` as received, for the scheduler log. */
  by: string;
}

type Handler = (ctx: Ctx) => Reply | Promise<Reply>;

interface Route {
  method: string;
  pattern: RegExp;
  /** Behind `clusterMiddleware`: 500 ErrNotBootstrapped until TiKV bootstrapped. */
  cluster: boolean;
  handler: Handler;
}

/** A gorilla/mux path template: `{name}` matches one path segment. */
function mux(method: string, template: string, handler: Handler, cluster = false): Route {
  const pattern = new RegExp(`^${template.replace(/\{[^}]+\}/g, '([^/]+)')}$`);
  return { method, pattern, cluster, handler };
}

/** tikv/pd server/api/router.go `createRouter` (v8.5.7): the routes the simulator models. */
const ROUTES: Route[] = [
  mux('GET', '/health', (c) => health(c)),
  mux('GET', '/ping', () => bare(200)),
  mux('GET', '/version', (c) => rd(200, { version: c.model.version.text })),
  mux('GET', '/members', (c) => rd(200, membersInfo(c.model))),
  mux('DELETE', '/members/name/{name}', (c) => deleteMemberByName(c)),
  mux('DELETE', '/members/id/{id}', (c) => deleteMemberById(c)),
  mux('GET', '/leader', (c) => rd(200, leaderMember(c.model.members.leader))),
  mux('POST', '/leader/transfer/{next_leader}', async (c) => {
    const refusal = await c.model.members.transferLeader(c.params[0]);
    return refusal === undefined ? rd(200, 'The transfer command is submitted.') : rd(500, refusal);
  }),
  mux('GET', '/cluster', (c) => rd(200, { id: c.model.members.clusterId, max_peer_count: c.model.replication.maxReplicas || undefined })),
  mux('GET', '/config', (c) => getConfig(c)),
  // server/api/config.go `SetConfig`: pd-config.ts.
  mux('POST', '/config', (c) => {
    const online = onlineConfigOf(c.model, c.model.version.text);
    const answer = online.set(c.req.body);
    online.syncReplication(c.model.replication);
    return rd(answer.status, answer.message);
  }),
  mux('GET', '/config/replicate', (c) => rd(200, replicationJson(c.model.replication))),
  mux('GET', '/config/pd-server', (c) => rd(200, pdServerJson(c.model))),
  mux('POST', '/config/replicate', (c) => setReplication(c)),
  mux('GET', '/schedulers', (c) => getSchedulers(c)),
  mux('POST', '/schedulers', (c) => createScheduler(c)),
  mux('DELETE', '/schedulers/{name}', (c) => deleteScheduler(c)),
  mux('GET', '/stores', (c) => getStores(c), true),
  mux('GET', '/store/{id}', (c) => withStoreId(c, (id, text) => getStore(c, id, text)), true),
  mux('DELETE', '/store/{id}', (c) => withStoreId(c, (id, text) => deleteStore(c, id, text)), true),
  mux('POST', '/store/{id}/label', (c) => withStoreId(c, (id, text) => setStoreLabel(c, id, text)), true),
  mux('GET', '/labels', (c) => getLabels(c), true),
];

const SCHEDULER_CONFIG = '/scheduler-config';
/** `registerPrefix(apiRouter, "/scheduler-config", ...)`: these methods, then the schedulers' own handlers. */
const SCHEDULER_CONFIG_METHODS = ['GET', 'POST', 'DELETE', 'PUT', 'PATCH'];

function dispatch(model: ApiModel, member: Member, req: ApiRequest, path: string, query: URLSearchParams): Reply | Promise<Reply> {
  const ctxBase = { model, member, req, query, by: `${req.method} /pd/api/v1${path}` };
  if (path.startsWith(SCHEDULER_CONFIG)) {
    if (!SCHEDULER_CONFIG_METHODS.includes(req.method)) return bare(405);
    return schedulerConfig({ ...ctxBase, params: [] }, `/pd/api/v1${path}`);
  }
  let pathMatched = false;
  for (const r of ROUTES) {
    const m = r.pattern.exec(path);
    if (m === null) continue;
    pathMatched = true;
    if (r.method !== req.method) continue;
    // clusterMiddleware: GetRaftCluster() is nil until TiKV bootstrapped.
    if (r.cluster && !model.stores.bootstrapped) return rd(500, NOT_BOOTSTRAPPED);
    return r.handler({ ...ctxBase, params: m.slice(1) });
  }
  return pathMatched ? bare(405) : notFound();
}

// ---- members, leader, health (server/api/member.go, health.go) ----

/** etcd lists members by id (etcd server/etcdserver/api/membership/cluster.go `Members`, sorted `MembersByID`). */
function etcdMembers(members: PdMembers): Member[] {
  return members.list().sort((a, b) => (a.memberId < b.memberId ? -1 : a.memberId > b.memberId ? 1 : 0));
}

/**
 * `GET /health` (health.go `GetHealthStatus`): every etcd member, healthy when its client URL answers
 * `/pd/api/v1/ping` with 200 (server/cluster/cluster.go `CheckHealth`), i.e. its process runs. (On
 * v8.5.0-v8.5.4 a follower's ping is forwarded to the leader, which answers, since this list is
 * only ever made while there is one.)
 */
function health(c: Ctx): Reply {
  return rd(
    200,
    // An unstarted member (no name, no client URLs) has nothing to ping: `client_urls` is null, unhealthy.
    etcdMembers(c.model.members).map((m) => ({
      name: m.name,
      member_id: m.memberId,
      client_urls: m.clientUrl === '' ? null : [m.clientUrl],
      health: m.running,
    })),
  );
}

/**
 * A pdpb.Member of `/members` (member.go `getMembers`): every field omitempty; the handler adds
 * `binary_version` and `deploy_path`, then (with an etcd leader) `leader_priority` (0: left out),
 * `git_hash`, and `dc_location` only for local TSO, which is off by default.
 */
function listedMember(model: ApiModel, m: Member) {
  const hasEtcdLeader = model.members.leader !== undefined;
  // A member added but never started (pd-members.ts `addUnstarted`): etcd lists its id and peer URLs
  // only (server/cluster/cluster.go `GetMembers`), and it never wrote its binary version, deploy path
  // or git hash (pkg/member/member.go `GetMemberBinaryVersion`: "no value", logged and left empty).
  if (m.name === '') return { member_id: m.memberId, peer_urls: [m.peerUrl] };
  return {
    name: m.name || undefined,
    member_id: m.memberId,
    peer_urls: [m.peerUrl],
    client_urls: [m.clientUrl],
    // The pingcap/pd image runs /pd-server: filepath.Dir(os.Executable()) (pkg/member/member.go SetMemberDeployPath).
    deploy_path: '/',
    binary_version: model.version.text,
    git_hash: hasEtcdLeader ? model.version.gitHash : undefined,
  };
}

/** `GET /members`: pdpb.GetMembersResponse; `leader` and `etcd_leader` point into `members` (server/grpc_service.go `GetMembers`). */
function membersInfo(model: ApiModel) {
  const list = etcdMembers(model.members).map((m) => ({ m, json: listedMember(model, m) }));
  const leader = list.find((x) => x.m === model.members.leader)?.json;
  return {
    header: { cluster_id: model.members.clusterId },
    members: list.length === 0 ? undefined : list.map((x) => x.json),
    leader,
    etcd_leader: leader,
  };
}

/** `GET /leader`: the pdpb.Member in the leader key, name/member_id/peer_urls/client_urls only (pkg/member/member.go `InitMemberInfo`); `null` without one. */
function leaderMember(m: Member | undefined) {
  if (m === undefined) return null;
  return { name: m.name, member_id: m.memberId, peer_urls: [m.peerUrl], client_urls: [m.clientUrl] };
}

/**
 * etcd's checks on `MemberRemove` with StrictReconfigCheck (PD enables it: server/config/config.go):
 * removing a member that is up must leave a quorum of up members (etcd server/etcdserver/server.go
 * `mayRemoveMember`: ErrUnhealthy); a member that is down is safe to remove. Returns etcd's error text.
 */
function etcdRemoveRefusal(members: PdMembers, m: Member): string | undefined {
  if (!m.running) return undefined;
  const all = members.list();
  const active = all.filter((x) => x.running).length;
  if (active - 1 < 1 + Math.floor((all.length - 1) / 2)) return 'etcdserver: unhealthy cluster';
  return undefined;
}

function removeMember(model: ApiModel, m: Member): string | undefined {
  const refusal = etcdRemoveRefusal(model.members, m);
  // RemoveEtcdMember: errs.ErrEtcdMemberRemove.Wrap(err).GenWithStackByCause() (pkg/utils/etcdutil/etcdutil.go).
  if (refusal !== undefined) return `[PD:etcd:ErrEtcdMemberRemove]${refusal}: ${refusal}`;
  model.members.remove(m);
  model.processes.memberRemoved(m);
  return undefined;
}

/** `DELETE /members/name/{name}` (member.go `DeleteMemberByName`, v8.5.7). */
function deleteMemberByName(c: Ctx): Reply {
  const name = c.params[0];
  const m = c.model.members.list().find((x) => x.name === name);
  if (m === undefined) return rd(404, `not found, pd: ${name}`);
  const refusal = removeMember(c.model, m);
  return refusal === undefined ? rd(200, `removed, pd: ${name}`) : rd(500, refusal);
}

/** `DELETE /members/id/{id}` (member.go `DeleteMemberByID`, v8.5.7): an unknown id is etcd's "member not found", 500. */
function deleteMemberById(c: Ctx): Reply {
  const parsed = parseUint64(c.params[0]);
  if ('error' in parsed) return rd(400, parsed.error);
  const m = c.model.members.byId(parsed.value);
  if (m === undefined) return rd(500, '[PD:etcd:ErrEtcdMemberRemove]etcdserver: member not found: etcdserver: member not found');
  const refusal = removeMember(c.model, m);
  return refusal === undefined ? rd(200, `removed, pd: ${parsed.value}`) : rd(500, refusal);
}

// ---- config (server/api/config.go) ----

/** `replication` as JSON: `location-labels` is a comma-joined string (typeutil.StringSlice), the bools are `,string`. */
function replicationJson(r: ReplicationConfig) {
  return {
    'max-replicas': r.maxReplicas,
    'location-labels': r.locationLabels.join(','),
    'strictly-match-label': String(r.strictlyMatchLabel),
    'enable-placement-rules': String(r.enablePlacementRules),
    'enable-placement-rules-cache': String(r.enablePlacementRulesCache),
    'isolation-level': r.isolationLevel,
  };
}

/**
 * `GET /config/pd-server` (server/api/config.go `GetPDServerConfig`, the leader's persisted options):
 * server/config.PDServerConfig with its defaults, the bools `,string` (config.go, v8.5.x).
 */
function pdServerJson(model: ApiModel) {
  return {
    'use-region-storage': String(model.useRegionStorage),
    'max-gap-reset-ts': '24h0m0s',
    'key-type': 'table',
    'runtime-services': '',
    'metric-storage': '',
    'dashboard-address': 'auto',
    'flow-round-by-digit': 3,
    'min-resolved-ts-persistence-interval': '1s',
    'server-memory-limit': 0,
    'server-memory-limit-gc-trigger': 0.7,
    'enable-gogc-tuner': 'false',
    'gc-tuner-threshold': 0.6,
    'block-safe-point-v1': 'false',
  };
}

/**
 * `GET /config`: server/config.Config. The simulator writes the member's own fields and the
 * `schedule` and `replication` sections it models (a subset of PD's many fields, with PD's names and
 * types). On a follower (v8.5.5+, answered locally) the replication and schedule parts are the
 * leader's (`getLeaderConfig`), so a follower without a leader answers 500 ErrLeaderNil.
 */
function getConfig(c: Ctx): Reply {
  if (c.model.members.leader === undefined) return rd(500, '[PD:server:ErrLeaderNil]leader is nil');
  const m = c.member;
  const online = onlineConfigOf(c.model, c.model.version.text);
  return rd(
    200,
    online.view({
      'client-urls': 'http://0.0.0.0:2379',
      'peer-urls': 'http://0.0.0.0:2380',
      'advertise-client-urls': m.clientUrl,
      'advertise-peer-urls': m.peerUrl,
      name: m.name,
      'data-dir': '/var/lib/pd',
      schedule: { 'max-store-down-time': c.model.maxStoreDownTime },
      replication: replicationJson(c.model.replication),
    }),
  );
}

/**
 * `POST /config/replicate` (config.go `SetReplicationConfig` → server.go `SetReplicationConfig`):
 * the body overlays the current config; with placement rules on, the default rule is updated, which
 * needs the RaftCluster (500 ErrNotBootstrapped before TiKV bootstrapped).
 */
function setReplication(c: Ctx): Reply {
  const decoded = decodeBody(c.req.body, 'object', 'config.ReplicationConfig');
  if ('reply' in decoded) return decoded.reply;
  const input = (decoded.value ?? {}) as Record<string, unknown>;
  const next = { ...c.model.replication };
  if (typeof input['max-replicas'] === 'number') next.maxReplicas = input['max-replicas'];
  if (typeof input['location-labels'] === 'string')
    next.locationLabels = input['location-labels'] === '' ? [] : input['location-labels'].split(',');
  if (typeof input['isolation-level'] === 'string') next.isolationLevel = input['isolation-level'];
  for (const [key, field] of [
    ['strictly-match-label', 'strictlyMatchLabel'],
    ['enable-placement-rules', 'enablePlacementRules'],
    ['enable-placement-rules-cache', 'enablePlacementRulesCache'],
  ] as const) {
    if (input[key] === 'true' || input[key] === 'false') next[field] = input[key] === 'true';
  }
  if ((next.enablePlacementRules || c.model.replication.enablePlacementRules) && !c.model.stores.bootstrapped)
    return rd(500, NOT_BOOTSTRAPPED);
  c.model.replication = next;
  return rd(200, 'The config is updated.');
}

// ---- stores (server/api/store.go, label.go; pkg/response/store.go) ----

/** `apiutil.ParseUint64VarsField(vars, "id")`: a bad id is a 400 errcode object whose data is the FieldError (no exported fields). */
function withStoreId(c: Ctx, then: (id: number, text: string) => Reply): Reply {
  const parsed = parseUint64(c.params[0]);
  if ('error' in parsed) return inputError(parsed.error);
  // Store ids are small in this model; a larger one names no store.
  return then(parsed.value > BigInt(Number.MAX_SAFE_INTEGER) ? -1 : Number(parsed.value), parsed.value.toString());
}

const GIB = 1024 ** 3;
const MIB = 1024 ** 2;
/** Capacity of every simulated store's disk, and the size PD counts per (small, new) region. */
const CAPACITY = 100 * GIB;
const REGION_SIZE_MIB = 1;

/**
 * `response.StoreInfo` (pkg/response/store.go `BuildStoreInfo`, v8.5.7): metapb.Store (all fields
 * omitempty: `state` 0 = Up is left out, `last_heartbeat` in unix nanoseconds) plus `state_name`, and
 * StoreStatus with byte sizes as strings, times as RFC 3339 and the uptime as a Go duration.
 * Sizes and scores are the simulator's: one MiB per region, leader score = leader count.
 */
function storeInfo(s: TikvStore) {
  const regionSize = s.regionCount * REGION_SIZE_MIB;
  const leaderSize = s.leaderCount * REGION_SIZE_MIB;
  const startSeconds = Math.floor(s.startTime / 1000);
  const heartbeatNs = BigInt(s.lastHeartbeat) * 1_000_000n;
  const uptimeMs = s.lastHeartbeat - startSeconds * 1000;
  return {
    store: {
      id: s.id,
      address: s.address,
      state: STORE_STATE_NUMBER[s.state] || undefined,
      labels: s.labels.length === 0 ? undefined : s.labels.map((l) => ({ key: l.key || undefined, value: l.value || undefined })),
      version: s.version,
      peer_address: s.peerAddress || undefined,
      status_address: s.statusAddress,
      git_hash: gitHashOf(s),
      start_timestamp: startSeconds,
      deploy_path: s.engine === 'tikv' ? '/' : '/tiflash',
      last_heartbeat: heartbeatNs,
      physically_destroyed: s.physicallyDestroyed || undefined,
      node_state: NODE_STATE_NUMBER[s.nodeState] || undefined,
      state_name: s.state,
    },
    status: {
      capacity: bytesSize(CAPACITY),
      available: bytesSize(CAPACITY - regionSize * MIB),
      used_size: bytesSize(regionSize * MIB),
      leader_count: s.leaderCount,
      leader_weight: 1,
      leader_score: s.leaderCount,
      leader_size: leaderSize,
      region_count: s.regionCount,
      region_weight: 1,
      region_score: regionSize,
      region_size: regionSize,
      // The store's heartbeat reports a slow score of at least 1 (tikv components/health_controller).
      slow_score: 1,
      start_ts: rfc3339Nano(startSeconds * 1000),
      last_heartbeat_ts: rfc3339Nano(s.lastHeartbeat),
      uptime: uptimeMs > 0 ? goDuration(uptimeMs * 1e6) : undefined,
    },
  };
}

/** Something that looks like the build commit a store reports; the simulator has no real one. */
function gitHashOf(s: TikvStore): string {
  const seed = `${s.engine}-${s.version}`;
  let h = 0;
  for (const ch of seed) h = (h * 31 + ch.charCodeAt(0)) >>> 0;
  return h.toString(16).padStart(8, '0').repeat(5);
}

/** Go map iteration order: random. */
function shuffled<T>(xs: T[]): T[] {
  const out = [...xs];
  for (let i = out.length - 1; i > 0; i--) {
    const j = Math.floor(Math.random() * (i + 1));
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}

/**
 * `GET /stores[?state=N...]` (store.go `GetAllStores`, `newStoreStateFilter`): `state` taken with
 * `strconv.Atoi`, only 0/1/2; Up and Offline by default. In map order, i.e. any order.
 */
function getStores(c: Ctx): Reply {
  const raw = c.query.getAll('state');
  let wanted = new Set([0, 1]);
  if (c.query.has('state')) {
    wanted = new Set();
    for (const s of raw) {
      const n = atoi(s);
      if ('error' in n) return rd(500, n.error);
      if (n.value !== 0 && n.value !== 1 && n.value !== 2) return rd(500, `unknown StoreState: ${n.value}`);
      wanted.add(n.value);
    }
  }
  const listed = shuffled(c.model.stores.list().filter((s) => wanted.has(STORE_STATE_NUMBER[s.state])));
  return rd(200, { count: listed.length, stores: listed.map((s) => storeInfo(s)) });
}

function getStore(c: Ctx, id: number, text: string): Reply {
  const s = c.model.stores.get(id);
  if (s === undefined) return rd(404, `[PD:core:ErrStoreNotFound]store ${text} not found`);
  return rd(200, storeInfo(s));
}

/** `DELETE /store/{id}[?force]`: `force` counts by presence (`_, force := r.URL.Query()["force"]`). */
function deleteStore(c: Ctx, id: number, text: string): Reply {
  const refusal =
    id < 0
      ? { status: 404, message: `[PD:core:ErrStoreNotFound]store ${text} not found` }
      : c.model.stores.removeStore(id, c.query.has('force'));
  if (refusal !== undefined) return rd(refusal.status, refusal.message);
  return rd(200, 'The store is set as Offline.');
}

/** pkg/schedule/config/util.go `keyFormat` / `valueFormat`. */
const LABEL_KEY_FORMAT = '^[$]?[A-Za-z0-9]([-A-Za-z0-9_./]*[A-Za-z0-9])?$';
const LABEL_VALUE_FORMAT = '^[-A-Za-z0-9_./]*$';

/** `POST /store/{id}/label[?force]` (store.go `SetStoreLabel`, v8.5.7): a flat JSON object of strings. */
function setStoreLabel(c: Ctx, id: number, text: string): Reply {
  const decoded = decodeBody(c.req.body, 'object', 'map[string]string');
  if ('reply' in decoded) return decoded.reply;
  const input = (decoded.value ?? {}) as Record<string, unknown>;
  const labels: StoreLabel[] = [];
  for (const [key, value] of Object.entries(input)) {
    if (typeof value !== 'string')
      return inputError(
        `json: cannot unmarshal ${jsonKind(value)} into Go value of type string`,
        unmarshalTypeData(jsonKind(value), 'string'),
      );
    labels.push({ key, value });
  }
  for (const l of labels) {
    // sc.ValidateLabels: errors.Errorf("%s does not match format %q", s, format).
    if (!new RegExp(LABEL_KEY_FORMAT).test(l.key)) return inputError(`${l.key} does not match format "${LABEL_KEY_FORMAT}"`);
    if (!new RegExp(LABEL_VALUE_FORMAT).test(l.value)) return inputError(`${l.value} does not match format "${LABEL_VALUE_FORMAT}"`);
  }
  if (id < 0 || !c.model.stores.setLabels(id, labels, c.query.has('force'))) {
    return rd(500, `[PD:cluster:ErrInvalidStoreID]invalid store id ${text}, not found`);
  }
  return rd(200, "The store's label is updated.");
}

/** `GET /labels` (label.go `GetLabels`): each key/value once; `null` when no store has labels. */
function getLabels(c: Ctx): Reply {
  const seen = new Set<string>();
  const labels: StoreLabel[] = [];
  for (const s of c.model.stores.list()) {
    for (const l of s.labels) {
      const k = (l.key + l.value).toLowerCase();
      if (seen.has(k)) continue;
      seen.add(k);
      labels.push(l);
    }
  }
  return rd(200, labels.length === 0 ? null : labels.map((l) => ({ key: l.key || undefined, value: l.value || undefined })));
}

// ---- schedulers (server/api/scheduler.go; pkg/schedule/schedulers/evict_leader.go) ----

function schedulerNames(model: ApiModel): string[] {
  const names = model.version.defaultSchedulers.filter((n) => !model.removedSchedulers.has(n));
  if (model.stores.evictSchedulers().length > 0) names.push(EVICT);
  return names;
}

/** `GET /schedulers[?status=paused|disabled]` (`GetSchedulerByStatus`): names in map order. Nothing is paused or disabled here. */
function getSchedulers(c: Ctx): Reply {
  if (!c.model.stores.bootstrapped) return rd(500, NOT_BOOTSTRAPPED);
  const status = c.query.get('status') ?? '';
  if (status === 'paused' || status === 'disabled') return rd(200, []);
  return rd(200, shuffled(schedulerNames(c.model)));
}

/**
 * `POST /schedulers` (scheduler.go `CreateScheduler`, v8.5.7). For `evict-leader-scheduler`: an
 * existing scheduler gets the store through its own config handler (`RedirectSchedulerUpdate`, a
 * POST to `/scheduler-config/evict-leader-scheduler/config`); otherwise the scheduler is created,
 * which pauses leader transfer on the store (`PrepareConfig` → `PauseLeaderTransfer`: ErrStoreNotFound).
 */
function createScheduler(c: Ctx): Reply {
  const decoded = decodeBody(c.req.body, 'object', 'map[string]interface {}');
  if ('reply' in decoded) return decoded.reply;
  const input = (decoded.value ?? {}) as Record<string, unknown>;
  const name = input.name;
  if (typeof name !== 'string') return rd(400, 'missing scheduler name');
  if (!KNOWN_SCHEDULERS.has(name)) return rd(400, 'unknown scheduler');
  const { model } = c;
  if (name === EVICT) {
    if (typeof input.store_id !== 'number') return rd(400, 'missing store id');
    if (!model.stores.bootstrapped) return rd(500, NOT_BOOTSTRAPPED); // IsSchedulerExisted → GetRaftCluster
    const storeId = Math.trunc(input.store_id); // uint64(storeID)
    if (model.stores.evictSchedulers().length > 0) {
      const inner = updateEvictConfig(model, storeId, undefined, c.by);
      // apiutil.PostJSONIgnoreResp: a non-200 answer becomes errors.New(<its body>), rendered again.
      if (inner.status !== 200) return rd(500, inner.body);
      return rd(200, 'The scheduler has been applied to the store.');
    }
    if (storeId < 0 || !model.stores.hasStore(storeId)) return rd(500, `[PD:core:ErrStoreNotFound]store ${storeId} not found`);
    model.stores.addEvictLeader(storeId, c.by);
    return rd(200, 'The scheduler is created.');
  }
  if (!model.stores.bootstrapped) return rd(500, NOT_BOOTSTRAPPED); // AddScheduler → GetRaftCluster
  if (model.version.defaultSchedulers.includes(name)) {
    if (!model.removedSchedulers.delete(name)) return rd(500, '[PD:scheduler:ErrSchedulerExisted]scheduler existed');
    return rd(200, 'The scheduler is created.');
  }
  return rd(500, `simulator: PdSim does not model ${name}`);
}

/**
 * `DELETE /schedulers/{name}` (scheduler.go `DeleteScheduler`): `evict-leader-scheduler-<id>` goes to
 * the scheduler's config handler (`redirectSchedulerDelete`, DELETE `.../delete/<last "-" part>`) and
 * answers that answer's status with the body `null`; other names remove the whole scheduler.
 */
function deleteScheduler(c: Ctx): Reply {
  const name = c.params[0];
  const { model } = c;
  for (const prefix of [EVICT, GRANT]) {
    if (name.startsWith(prefix) && name !== prefix) {
      const parts = name.split('-');
      const inner = schedulerConfig(c, `/pd/api/v1/scheduler-config/${prefix}/delete/${parts[parts.length - 1]}`, 'DELETE');
      return rd(inner.status, null);
    }
  }
  if (!model.stores.bootstrapped) return rd(500, NOT_BOOTSTRAPPED);
  if (name === EVICT && model.stores.deleteEvictScheduler(c.by)) return rd(200, 'The scheduler is removed.');
  if (model.version.defaultSchedulers.includes(name) && !model.removedSchedulers.has(name)) {
    model.removedSchedulers.add(name);
    return rd(200, 'The scheduler is removed.');
  }
  return rd(404, '[PD:scheduler:ErrSchedulerNotFound]scheduler not found');
}

/**
 * `/scheduler-config/...` (scheduler.go `handleSchedulerConfig` → server/handler.go
 * `GetSchedulerConfigHandler`): 406 before TiKV bootstrapped; then an `http.ServeMux` with one prefix
 * per existing scheduler, so a scheduler that does not exist is `404 page not found` (text/plain).
 * Only the evict-leader scheduler's handler is modelled.
 */
function schedulerConfig(c: Ctx, fullPath: string, method = c.req.method): Reply {
  const { model } = c;
  if (!model.stores.bootstrapped) return rd(406, NOT_BOOTSTRAPPED);
  const prefix = `/pd/api/v1/scheduler-config/${EVICT}`;
  const existing = schedulerNames(model).filter((n) => n !== EVICT);
  if (existing.some((n) => fullPath.startsWith(`/pd/api/v1/scheduler-config/${n}/`)))
    return rd(500, 'simulator: PdSim models only the evict-leader scheduler config');
  if (model.stores.evictSchedulers().length === 0 || !(fullPath === prefix || fullPath.startsWith(`${prefix}/`))) return notFound();
  if (fullPath === prefix) {
    // ServeMux redirects a subtree root without its slash (golang/go src/net/http/server.go).
    const location = `${prefix}/`;
    return {
      status: 301,
      headers: { location, 'content-type': 'text/html; charset=utf-8' },
      body: method === 'GET' ? `<a href="${location}">Moved Permanently</a>.\n\n` : '',
    };
  }
  // The scheduler's own gorilla/mux router (evict_leader.go `newEvictLeaderHandler`).
  const sub = fullPath.slice(prefix.length);
  if (sub === '/config') return method === 'POST' ? evictConfigPost(c) : bare(405);
  if (sub === '/list') return method === 'GET' ? rd(200, evictList(model)) : bare(405);
  const del = /^\/delete\/([^/]+)$/.exec(sub);
  if (del !== null) return method === 'DELETE' ? evictDelete(c, del[1]) : bare(405);
  return notFound();
}

/** `listConfig`: store ids (a Go map: sorted keys) to key ranges, and the batch (v8.3+). KeyRange marshals from a map: keys sorted. */
function evictList(model: ApiModel) {
  return {
    'store-id-ranges': new GoMap(
      model.stores.evictSchedulers().map(
        (id) =>
          [
            String(id),
            [
              new GoMap([
                ['start-key', ''],
                ['end-key', ''],
              ]),
            ],
          ] as const,
      ),
    ),
    batch: model.evictBatch,
  };
}

/** `deleteConfig`: 200 `null`, or "The last store has been deleted" when the scheduler goes with it. */
function evictDelete(c: Ctx, idText: string): Reply {
  const parsed = parseUint64(idText);
  if ('error' in parsed) return rd(400, parsed.error);
  const id = parsed.value > BigInt(Number.MAX_SAFE_INTEGER) ? -1 : Number(parsed.value);
  const result = c.model.stores.removeEvictLeader(id, c.by);
  if (result === 'absent') return rd(404, '[PD:scheduler:ErrScheduleConfigNotExist]the config does not exist');
  return rd(200, result === 'last' ? 'The last store has been deleted' : null);
}

/** `POST .../evict-leader-scheduler/config` from a client: the body's `store_id` and `batch`. */
function evictConfigPost(c: Ctx): Reply {
  const decoded = decodeBody(c.req.body, 'object', 'map[string]interface {}');
  if ('reply' in decoded) return decoded.reply;
  const input = (decoded.value ?? {}) as Record<string, unknown>;
  return updateEvictConfig(c.model, typeof input.store_id === 'number' ? Math.trunc(input.store_id) : undefined, input.batch, c.by);
}

/** evict_leader.go `updateConfig`: pauses leader transfer on a store new to the scheduler (ErrStoreNotFound), checks `batch`. */
function updateEvictConfig(model: ApiModel, storeId: number | undefined, batch: unknown, by: string): Reply {
  const evicting = new Set(model.stores.evictSchedulers());
  if (storeId !== undefined && !evicting.has(storeId) && (storeId < 0 || !model.stores.hasStore(storeId))) {
    return rd(500, `[PD:core:ErrStoreNotFound]store ${storeId} not found`);
  }
  if (typeof batch === 'number') {
    if (batch < 1 || batch > 10) return rd(400, 'batch is invalid, it should be in [1, 10]');
    model.evictBatch = Math.trunc(batch);
  }
  if (storeId !== undefined) model.stores.addEvictLeader(storeId, by);
  return rd(200, 'The scheduler has been applied to the store.');
}

// ---- request bodies (apiutil.ReadJSONRespondError) ----

type Decoded = { value: unknown } | { reply: Reply };

/**
 * `apiutil.ReadJSONRespondError`: `json.Unmarshal` into the handler's type; a syntax error or a
 * value of another JSON kind than the type takes is a 400 errcode object whose data is the Go error
 * value (`SyntaxError{Offset}`, `UnmarshalTypeError{Value, Type, Offset, Struct, Field}`).
 */
function decodeBody(body: string, want: 'object', goType: string): Decoded {
  const syntax = jsonSyntaxError(body);
  if (syntax !== undefined) return { reply: inputError(syntax.message, { Offset: syntax.offset }) };
  const value: unknown = JSON.parse(body);
  if (value === null) return { value: undefined };
  const kind = jsonKind(value);
  if (kind !== want) {
    const offset = kind === 'array' || kind === 'object' ? body.indexOf(kind === 'array' ? '[' : '{') + 1 : body.trimEnd().length;
    return { reply: inputError(`json: cannot unmarshal ${kind} into Go value of type ${goType}`, unmarshalTypeData(kind, goType, offset)) };
  }
  return { value };
}

/** The kind names encoding/json's UnmarshalTypeError uses. */
function jsonKind(v: unknown): string {
  if (Array.isArray(v)) return 'array';
  if (v === null) return 'null';
  if (typeof v === 'object') return 'object';
  if (typeof v === 'boolean') return 'bool';
  return typeof v; // "string", "number"
}

function unmarshalTypeData(kind: string, _goType: string, offset = 0) {
  // reflect.Type has no exported fields: it marshals as {}.
  return { Value: kind, Type: {}, Offset: offset, Struct: '', Field: '' };
}

// ---- /pd/api/v2 (gin: server/apiv2/router.go) ----

/**
 * `GetPrimary`'s wait for the primary (server/server.go `GetServicePrimaryAddr`): 25 looks
 * (`maxRetryTimesGetServicePrimary`), 100 ms apart (`retryIntervalGetServicePrimary`), i.e. 2.5 s,
 * shorter than the micro-services' leases (3 s / 5 s). The interval is `model.msPrimaryRetryMs`, scaled
 * as those leases are (pdms.ts), so that the wait stays the shorter here too.
 */
const MS_PRIMARY_RETRIES = 25;

type V2Handler = (model: ApiModel, param: string) => Reply | Promise<Reply>;

/** The v2 routes modelled behind the redirector (server/apiv2/handlers/micro_service.go `RegisterMicroService`). */
function v2Route(method: string, path: string): { handler: V2Handler; param: string } | undefined {
  if (method !== 'GET') return undefined;
  const members = /^\/pd\/api\/v2\/ms\/members\/([^/]+)$/.exec(path);
  if (members !== null) return { handler: msMembers, param: members[1] };
  const primary = /^\/pd\/api\/v2\/ms\/primary\/([^/]+)$/.exec(path);
  if (primary !== null) return { handler: msPrimary, param: primary[1] };
  const group = /^\/pd\/api\/v2\/tso\/keyspace-groups\/([^/]+)$/.exec(path);
  if (group !== null) return { handler: keyspaceGroup, param: group[1] };
  return undefined;
}

/**
 * `GET /pd/api/v2/tso/keyspace-groups/{id}` (server/apiv2/handlers/tso_keyspace_group.go
 * `GetKeyspaceGroupByID`, the same from v8.0.0 to v8.5.7), behind `BootstrapChecker`: 500
 * ErrNotBootstrapped first; an id that is not 0 to 4096, 400; PD not in API mode (no group manager),
 * 500 `"keyspace group manager is not initialized"`; a group not saved, 200 `null`; else the group
 * (pkg/storage/endpoint/tso_keyspace_group.go `KeyspaceGroup`) by `c.IndentedJSON`. Only the default
 * group (0, which `GroupManager.Bootstrap` saves with keyspace 0) is modelled.
 */
function keyspaceGroup(model: ApiModel, param: string): Reply {
  if (!model.stores.bootstrapped) return ginJson(500, NOT_BOOTSTRAPPED);
  if (!/^\d+$/.test(param) || Number(param) > 4096) return ginJson(400, 'invalid keyspace group id');
  if (!model.microservices) return ginJson(500, 'keyspace group manager is not initialized');
  const members = model.ms.defaultKeyspaceGroup;
  if (Number(param) !== 0 || members === undefined) return ginJson(200, null, '    ');
  return ginJson(
    200,
    {
      id: 0,
      'user-kind': 'basic',
      members: members.length === 0 ? null : members.map((address) => ({ address, priority: 0 })),
      keyspaces: [0],
    },
    '    ',
  );
}

/**
 * v8.5.2+: `GET /pd/api/v2/ready` is registered before the group's redirector, so the member asked
 * answers; the `/ms/*` routes come after it (a follower forwards them to the leader: with none, 503
 * `"[PD:server:ErrLeaderNil]leader is nil"`, no wait); other paths are no route at all: gin's 404 from
 * the member asked. Before v8.5.2 the redirector is an engine middleware and there is no ready route:
 * every request goes to the leader, which answers the `/ms/*` routes or gin's 404.
 */
async function v2(model: ApiModel, member: Member, req: ApiRequest, path: string, query: URLSearchParams): Promise<Reply> {
  const gin404: Reply = { status: 404, headers: { 'content-type': GIN_PLAIN_TYPE }, body: '404 page not found' };
  if (model.version.readyApi && path === '/pd/api/v2/ready' && req.method === 'GET') return ready(model, member, query);
  const route = v2Route(req.method, path);
  if ((!model.version.readyApi || route !== undefined) && model.members.leader !== member) {
    if (req.redirectedFrom !== undefined) return ginJson(500, '[PD:apiutil:ErrRedirectToNotLeader]redirect to not leader');
    const leader = model.members.leader;
    if (leader === undefined) return ginJson(503, '[PD:server:ErrLeaderNil]leader is nil');
    return v2(model, leader, { ...req, redirectedFrom: member.name }, path, query);
  }
  return route === undefined ? gin404 : route.handler(model, route.param);
}

/**
 * `GetMembers` (v8.5.7): 404 `"not support micro service"` unless PD runs in API mode; for `tso`,
 * `scheduling`, `resource_manager` the registry entries (pkg/mcs/discovery/discover.go `GetMSMembers`,
 * decoded into v8.5's ServiceRegistryEntry: fields a server's release does not write are zero), by
 * `c.IndentedJSON` (4 spaces), `null` when there are none (a nil slice); another name 500
 * `"unknown service name <name>"` (`errors.Errorf`, compact by `AbortWithStatusJSON`).
 */
function msMembers(model: ApiModel, service: string): Reply {
  if (!model.microservices) return ginJson(404, 'not support micro service');
  if (!(MS_SERVICES as readonly string[]).includes(service)) return ginJson(500, `unknown service name ${service}`);
  const entries = model.ms
    .entries(service)
    .map((v) => decodeRegistryEntry(v))
    .filter((e) => e !== undefined);
  return ginJson(200, entries.length === 0 ? null : entries, '    ');
}

/**
 * `GetPrimary` (v8.5.7): 404 unless in API mode; otherwise 200 with the primary's listen URL as a JSON
 * string (IndentedJSON), waiting up to 2.5 s (scaled) for one (`GetServicePrimaryAddr`: while a primary is being
 * replaced the answer is the next one), `""` when none came (any name: an unknown service never has one).
 */
async function msPrimary(model: ApiModel, service: string): Promise<Reply> {
  if (!model.microservices) return ginJson(404, 'not support micro service');
  for (let i = 0; i < MS_PRIMARY_RETRIES; i++) {
    const addr = model.ms.primary(service);
    if (addr !== undefined) return ginJson(200, addr, '    ');
    await sleep(model.msPrimaryRetryMs);
  }
  return ginJson(200, '', '    ');
}

/**
 * server/apiv2/handlers/ready.go `Ready` (v8.5.2 to v8.5.7, the same at every tag): 200 once the
 * member loaded its regions, else 500, also before TiKV bootstrapped the cluster, when the leader has
 * none to load (server/cluster/cluster.go `LoadClusterInfo` returns early): a leader that was not a
 * follower in this run answers 500 until TiKV comes. (Commit a1d89da952, in v26.3.0 and the
 * v8.5.6-20260422-6b14078 hotfix but not in v8.5.7, answers 200 with `is_bootstrapped` then; the
 * simulator plays v8.5.x releases only, see `parsePdVersion`.)
 * no body unless `?verbose`: then `c.IndentedJSON` (4 spaces) when ready, `c.AbortWithStatusJSON`
 * (compact) when not.
 */
function ready(model: ApiModel, member: Member, query: URLSearchParams): Reply {
  const loaded = model.members.regionsLoaded(member);
  if (!query.has('verbose')) return bare(loaded ? 200 : 500);
  return loaded ? ginJson(200, { region_loaded: true }, '    ') : ginJson(500, { region_loaded: false });
}

// ---- /metrics (etcd's, on PD's client port) ----

/**
 * `GET /metrics` (any method): PD registers no such route itself; its embedded etcd does. PD hands its
 * API to etcd as `UserHandlers` (server/server.go `startEtcd`), etcd's client mux sends every other
 * path to its own `http.ServeMux` (go.etcd.io/etcd/server/v3 v3.5.15 embed/serve.go `createMux`:
 * `httpmux.Handle("/", handler)`), where embed/etcd.go `serveClients` registered
 * `etcdhttp.HandleMetrics(mux)`: `mux.Handle("/metrics", promhttp.Handler())`
 * (server/etcdserver/api/etcdhttp/metrics.go). So the member asked answers, no redirector, leader or
 * not; the default registry holds everything the pd-server binary registers. promhttp.Handler gzips
 * for a client that accepts it; PD v8.5's prometheus/common (go.mod: v0.51.1, v0.55.0 from v8.5.3)
 * adds `; escaping=values` to the content type. Families modelled:
 * - `etcd_server_has_leader`, `etcd_server_is_leader`, `etcd_server_id{server_id}` (etcd
 *   server/etcdserver/metrics.go; set in raft.go at every leader change and in server.go `NewServer`:
 *   the member id in hex). The simulator's etcd leader is always the PD leader (pd-members.ts).
 * - `pd_cluster_metadata{type="cluster<id>"} 0` and `pd_server_info{hash,version}` = the start in unix
 *   seconds, both set by server/server.go `startServer` (server/metrics.go `metadataGauge`,
 *   pkg/basicserver/metrics.go `ServerInfoGauge`).
 * - `pd_monitor_time_jump_back_total` (server/metrics.go), 0: no clock jumps here.
 * - `pd_cluster_status` (pkg/statistics/metrics.go `clusterStatusGauge`), see `collectClusterStatus`.
 * - promhttp's own (`InstrumentMetricHandler`), and client_golang's `go_goroutines`, `go_threads`,
 *   `process_start_time_seconds`.
 * The many other families PD registers are not modelled.
 */
function metrics(model: ApiModel, member: Member, req: ApiRequest): Reply {
  const proc = processMetrics(model, member.pod);
  const leader = model.members.leader;
  const families: PromFamily[] = [
    ...goProcessFamilies(proc.startMs, 420, 24),
    ...promhttpFamilies(proc.scrapes),
    {
      name: 'etcd_server_has_leader',
      help: 'Whether or not a leader exists. 1 is existence, 0 is not.',
      type: 'gauge',
      samples: [{ value: leader ? 1 : 0 }],
    },
    {
      name: 'etcd_server_is_leader',
      help: 'Whether or not this member is a leader. 1 if is, 0 otherwise.',
      type: 'gauge',
      samples: [{ value: leader === member ? 1 : 0 }],
    },
    {
      name: 'etcd_server_id',
      help: "Server or member ID in hexadecimal format. 1 for 'server_id' label with current ID.",
      type: 'gauge',
      samples: [{ labels: { server_id: member.memberId.toString(16) }, value: 1 }],
    },
    {
      name: 'pd_server_info',
      help: 'Indicate the pd server info, and the value is the start timestamp (s).',
      type: 'gauge',
      samples: [{ labels: { version: model.version.text, hash: model.version.gitHash }, value: proc.serverStart }],
    },
    { name: 'pd_monitor_time_jump_back_total', help: 'Counter of system time jumps backward.', type: 'counter', samples: [{ value: 0 }] },
  ];
  if (model.members.clusterId !== undefined) {
    families.push({
      name: 'pd_cluster_metadata',
      help: 'Record critical metadata.',
      type: 'gauge',
      samples: [{ labels: { type: `cluster${model.members.clusterId}` }, value: 0 }],
    });
  }
  // Jobs that stopped (leadership lost, a scheduling server registered) emptied the gauge then.
  if (!clusterStatusCollected(model, member)) proc.clusterStatus.clear();
  families.push({ name: 'pd_cluster_status', help: 'Status of the cluster.', type: 'gauge', samples: [...proc.clusterStatus.values()] });
  proc.scrapes++;
  return promhttpAnswer(families, 'values', req.headers?.['accept-encoding']);
}

function processMetrics(model: ApiModel, pod: string): PdProcessMetrics {
  let m = model.metrics.get(pod);
  if (m === undefined) {
    const now = Date.now();
    m = { startMs: now, serverStart: Math.floor(now / 1000), scrapes: 0, clusterStatus: new Map() };
    model.metrics.set(pod, m);
  }
  return m;
}

/**
 * The member's RaftCluster runs its scheduling jobs, which collect `pd_cluster_status`
 * (server/cluster/scheduling_controller.go `runSchedulingMetricsCollectionJob`): it is the leader, TiKV
 * bootstrapped the cluster (the leader's `createRaftCluster` starts it then), and, in API mode, no
 * scheduling server is registered (server/cluster/cluster.go `checkSchedulingService`: with
 * `enable-scheduling-fallback`, true by default, PD schedules itself only while none is). Jobs that
 * stop empty the gauge (`resetSchedulingMetrics` → pkg/statistics `Reset`).
 */
function clusterStatusCollected(model: ApiModel, member: Member): boolean {
  if (model.members.leader !== member || !member.running || !model.stores.bootstrapped) return false;
  return !(model.microservices && model.ms.entries('scheduling').length > 0);
}

const STORE_STATUS_TYPES = [
  'store_up_count',
  'store_disconnected_count',
  'store_slow_count',
  'store_down_count',
  'store_unhealth_count',
  'store_offline_count',
  'store_tombstone_count',
  'store_low_space_count',
  'store_preparing_count',
  'store_serving_count',
  'store_removing_count',
  'store_removed_count',
] as const;
type StoreStatusType = (typeof STORE_STATUS_TYPES)[number];

/**
 * One store's status counts (pkg/statistics/store_collection.go `observe`; `observeStoreStatus` from
 * v8.5.5): by node state; a Preparing or Serving store counts as down (Down here: past
 * `max-store-down-time`), else disconnected (Disconnected here, which also stands for PD's unhealthy,
 * 10 min without a heartbeat, not told apart in this model), else up. Slow and low-space stores are not
 * modelled.
 */
function storeStatusCounts(s: TikvStore): Record<StoreStatusType, number> {
  const r = Object.fromEntries(STORE_STATUS_TYPES.map((t) => [t, 0])) as Record<StoreStatusType, number>;
  switch (s.nodeState) {
    case 'Preparing':
    case 'Serving':
      if (s.state === 'Down') r.store_down_count++;
      else if (s.state === 'Disconnected') r.store_disconnected_count++;
      else r.store_up_count++;
      if (s.nodeState === 'Preparing') r.store_preparing_count++;
      else r.store_serving_count++;
      break;
    case 'Removing':
      r.store_offline_count++;
      r.store_removing_count++;
      break;
    case 'Removed':
      r.store_tombstone_count++;
      r.store_removed_count++;
      break;
  }
  return r;
}

/** A store's size figures as the model has them (as `storeInfo` shows them): used bytes, capacity, counts. */
function storeSizes(s: Pick<TikvStore, 'regionCount' | 'leaderCount'>): Record<string, number> {
  return {
    storage_size: s.regionCount * REGION_SIZE_MIB * MIB,
    storage_capacity: CAPACITY,
    region_count: s.regionCount,
    leader_count: s.leaderCount,
    witness_count: 0,
    learner_count: 0,
  };
}

/**
 * One run of the leader's metrics collection (server/cluster/scheduling_controller.go
 * `collectSchedulingMetrics`, every `metricsCollectionJobInterval`, 10 s, server/cluster/cluster.go):
 * `pd_cluster_status` as pkg/statistics/store_collection.go sets it, in two shapes:
 * - v8.5.0 to v8.5.4, label `type`: the status counts summed over the stores, the size figures summed
 *   over the stores that are not Tombstone (`storeStatistics.collect`: all 18 types every time).
 * - v8.5.5+, labels `type`, `engine` (`tikv`/`tiflash`), `store` (the id): per store, the 12 status
 *   counts, and the 6 size figures of stores that are not Tombstone (a Tombstone store's keep the values
 *   they last had: only the jobs' stop resets the gauge).
 * Every other member's gauge is emptied (it was, when its jobs stopped). The simulator runs one
 * collection for all members at once (`PdSimOptions.metricsCollectMs`): the first one after a member
 * became leader comes at the next round, where PD's comes one interval after its RaftCluster started.
 */
export function collectClusterStatus(model: ApiModel): void {
  for (const [pod, m] of model.metrics) {
    const member = model.processes.servingMember(pod);
    if (member === undefined || !clusterStatusCollected(model, member)) {
      m.clusterStatus.clear();
      continue;
    }
    const set = (labels: Record<string, string>, value: number) =>
      m.clusterStatus.set(JSON.stringify(Object.entries(labels).sort()), { labels, value });
    const stores = model.stores.list();
    if (model.version.patch < 5) {
      const totals: Record<string, number> = {
        ...storeStatusCounts({ nodeState: 'Removed' } as TikvStore),
        ...storeSizes({ regionCount: 0, leaderCount: 0 }),
      };
      for (const t of Object.keys(totals)) totals[t] = 0;
      for (const s of stores) {
        for (const [t, v] of Object.entries(storeStatusCounts(s))) totals[t] += v;
        if (s.nodeState === 'Removed') continue;
        for (const [t, v] of Object.entries(storeSizes(s))) totals[t] += v;
      }
      for (const [type, value] of Object.entries(totals)) set({ type }, value);
      continue;
    }
    for (const s of stores) {
      const base = { engine: s.engine === 'tiflash' ? 'tiflash' : 'tikv', store: String(s.id) };
      for (const [type, value] of Object.entries(storeStatusCounts(s))) set({ type, ...base }, value);
      if (s.nodeState === 'Removed') continue;
      for (const [type, value] of Object.entries(storeSizes(s))) set({ type, ...base }, value);
    }
  }
}
