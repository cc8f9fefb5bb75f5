/**
 * PD's client HTTP API over the simulated cluster: routes, and the JSON shapes PD returns (those of
 * `pkg/pdapi/pdapi.go` in tidb-operator: pdpb.Member, metapb.Store, StoreStatus...).
 *
 * Errors are JSON strings, as PD writes them (`"scheduler existed"`). Before bootstrap every call
 * answers 503, and so does every call while the cluster has no leader (`"no leader"`).
 */
import type { PdMember, PdMembers } from './pd-members';
import type { PdProcesses } from './pd-process';
import type { StoreRefusal, TikvStore, TikvStores } from './pd-stores';

export interface ApiResponse {
  status: number;
  body: unknown;
}

/** What the API reads and changes. */
export interface ApiModel {
  members: PdMembers;
  processes: PdProcesses;
  stores: TikvStores;
  replication: Record<string, unknown>;
  /** List evict-leader schedulers as one `evict-leader-scheduler` entry (PD v4+), not one per store. */
  mergedEvictScheduler: boolean;
}

type Handler = (model: ApiModel, params: string[], query: URLSearchParams, body: unknown) => ApiResponse;

interface Route {
  method: string;
  pattern: RegExp;
  handler: Handler;
}

const EVICT = 'evict-leader-scheduler';
/** The schedulers a PD cluster runs by default, listed before any evict-leader scheduler. */
const DEFAULT_SCHEDULERS = ['balance-hot-region-scheduler', 'balance-leader-scheduler', 'balance-region-scheduler'];
/** metapb.StoreState numbers: Disconnected and Down are Up stores that stopped heartbeating. */
const STORE_STATE_NUMBER: Record<TikvStore['state'], number> = { Up: 0, Disconnected: 0, Down: 0, Offline: 1, Tombstone: 2 };

const ok = (body: unknown = null): ApiResponse => ({ status: 200, body });
const fail = (status: number, message: string): ApiResponse => ({ status, body: message });

const ROUTES: Route[] = [
  route('GET', '/pd/api/v1/health', (m) => ok(m.members.list().map(health))),
  route('GET', '/pd/api/v1/members', (m) => ok(membersInfo(m.members))),
  route('DELETE', '/pd/api/v1/members/name/([^/]+)', (m, [name]) => deleteMember(m, m.members.get(name))),
  route('DELETE', '/pd/api/v1/members/id/(\\d+)', (m, [id]) => deleteMember(m, m.members.byId(Number(id)))),
  route('GET', '/pd/api/v1/leader', (m) => ok(pdpbMember(m.members.leader as PdMember))),
  route('POST', '/pd/api/v1/leader/transfer/([^/]+)', (m, [name]) => {
    const refusal = m.members.transferLeader(name);
    return refusal === undefined ? ok('The transfer command is submitted.') : fail(500, refusal);
  }),
  route('GET', '/pd/api/v2/ready', () => ok()),
  route('GET', '/pd/api/v1/cluster', (m) => ok({ id: m.members.clusterId, max_peer_count: m.replication['max-replicas'] })),
  route('GET', '/pd/api/v1/config', (m) => ok({ replication: m.replication, schedule: { 'max-store-down-time': '30m0s' } })),
  route('GET', '/pd/api/v1/config/replicate', (m) => ok(m.replication)),
  route('POST', '/pd/api/v1/config/replicate', (m, _p, _q, body) => {
    if (!isObject(body)) return fail(400, 'expected a JSON object');
    Object.assign(m.replication, body);
    return ok('The config is updated.');
  }),
  route('GET', '/pd/api/v1/stores', (m, _p, query) => ok(storesInfo(m.stores.list(), query.getAll('state')))),
  route('GET', '/pd/api/v1/store/(\\d+)', (m, [id]) => {
    const store = m.stores.get(Number(id));
    return store === undefined ? fail(404, 'store not found') : ok(storeInfo(store));
  }),
  route('DELETE', '/pd/api/v1/store/(\\d+)', (m, [id]) => refusalOr(m.stores.delete(Number(id)), 'The store is set as Offline.')),
  route('POST', '/pd/api/v1/store/(\\d+)/label', (m, [id], _q, body) => {
    if (!isObject(body)) return fail(400, 'expected a JSON object');
    const labels = Object.fromEntries(Object.entries(body).map(([k, v]) => [k, String(v)]));
    return m.stores.setLabels(Number(id), labels) ? ok('The store\'s label is updated.') : fail(404, 'store not found');
  }),
  route('GET', '/pd/api/v1/schedulers', (m) => ok(schedulerNames(m))),
  route('POST', '/pd/api/v1/schedulers', (m, _p, _q, body) => {
    if (!isObject(body) || body.name !== EVICT || typeof body.store_id !== 'number') {
      return fail(400, `the simulator only adds ${EVICT} with a numeric store_id, got ${JSON.stringify(body)}`);
    }
    return refusalOr(m.stores.addEvictScheduler(body.store_id), 'The scheduler is created.');
  }),
  route('DELETE', `/pd/api/v1/schedulers/${EVICT}-(\\d+)`, (m, [id]) =>
    m.stores.removeEvictScheduler(Number(id)) ? ok('The scheduler is removed.') : fail(404, 'scheduler not found'),
  ),
  route('GET', `/pd/api/v1/scheduler-config/${EVICT}/list`, (m) => {
    const ids = m.stores.evictSchedulers();
    if (ids.length === 0) return fail(404, 'scheduler not found');
    return ok({ 'store-id-ranges': Object.fromEntries(ids.map((id) => [String(id), [{ 'start-key': '', 'end-key': '' }]])) });
  }),
];

/** Answers one request; `rawBody` is the request body as sent. */
export function handle(model: ApiModel, method: string, url: string, rawBody: string): ApiResponse {
  if (!model.members.bootstrapped) return fail(503, 'cluster is not bootstrapped');
  if (model.members.leader === undefined) return fail(503, 'no leader');
  const parsed = new URL(url, 'http://pd');
  let body: unknown;
  if (rawBody.trim() !== '') {
    try {
      body = JSON.parse(rawBody);
    } catch {
      return fail(400, `invalid JSON body: ${rawBody}`);
    }
  }
  const matches = ROUTES.map((r) => ({ r, m: r.pattern.exec(parsed.pathname) })).filter((x) => x.m !== null);
  if (matches.length === 0) return { status: 404, body: '404 page not found' };
  const found = matches.find((x) => x.r.method === method);
  if (found === undefined) return fail(405, `method ${method} not allowed`);
  const params = (found.m as RegExpExecArray).slice(1).map(decodeURIComponent);
  return found.r.handler(model, params, parsed.searchParams, body);
}

function route(method: string, path: string, handler: Handler): Route {
  return { method, pattern: new RegExp(`^${path}/?$`), handler };
}

function deleteMember(model: ApiModel, member: PdMember | undefined): ApiResponse {
  if (member === undefined) return fail(404, 'member not found');
  model.members.remove(member);
  model.processes.memberRemoved(member);
  return ok(`removed, pd: ${member.name}`);
}

function refusalOr(refusal: StoreRefusal | undefined, success: string): ApiResponse {
  if (refusal === undefined) return ok(success);
  const status = refusal === 'store not found' ? 404 : refusal === 'store has been removed' ? 410 : 500;
  return fail(status, refusal);
}

/** pdpb.Member */
function pdpbMember(m: PdMember) {
  return { name: m.name, member_id: m.memberId, peer_urls: [m.peerUrl], client_urls: [m.clientUrl] };
}

function health(m: PdMember) {
  return { name: m.name, member_id: m.memberId, client_urls: [m.clientUrl], health: m.running };
}

function membersInfo(members: PdMembers) {
  const leader = pdpbMember(members.leader as PdMember);
  return {
    header: { cluster_id: members.clusterId },
    members: members.list().map(pdpbMember),
    leader,
    etcd_leader: leader,
  };
}

/** `?state=` takes metapb numbers (repeatable); without it PD lists every store but Tombstone ones. */
function storesInfo(stores: TikvStore[], states: string[]) {
  const wanted = states.length > 0 ? new Set(states.map(Number)) : new Set([0, 1]);
  const listed = stores.filter((s) => wanted.has(STORE_STATE_NUMBER[s.state]));
  return { count: listed.length, stores: listed.map(storeInfo) };
}

/** StoreInfo: metapb.Store plus `state_name`, and StoreStatus. Times are RFC 3339, as Go encodes them. */
function storeInfo(s: TikvStore) {
  return {
    store: {
      id: s.id,
      address: s.address,
      state: STORE_STATE_NUMBER[s.state],
      state_name: s.state,
      labels: Object.entries(s.labels).map(([key, value]) => ({ key, value })),
      status_address: s.statusAddress,
    },
    status: {
      leader_count: s.leaderCount,
      region_count: s.regionCount,
      start_ts: new Date(s.startTime).toISOString(),
      last_heartbeat_ts: new Date(s.lastHeartbeat).toISOString(),
    },
  };
}

function schedulerNames(model: ApiModel): string[] {
  const evicting = model.stores.evictSchedulers();
  if (model.mergedEvictScheduler) return evicting.length > 0 ? [...DEFAULT_SCHEDULERS, EVICT] : DEFAULT_SCHEDULERS;
  return [...DEFAULT_SCHEDULERS, ...evicting.map((id) => `${EVICT}-${id}`)];
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
