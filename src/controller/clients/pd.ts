/**
 * A small client for the PD HTTP API endpoints the controller uses. Plain node:http(s), so TLS client
 * certificates work without extra dependencies. Every call has a timeout; errors carry the URL.
 */
import { httpRequest, type ClientTls, type HttpResult } from './http';
import { parseJsonExact } from './json';

export interface PdMember {
  readonly name: string;
  readonly memberId: string;
  readonly clientUrls: readonly string[];
  readonly healthy: boolean;
}

/** A member as `/pd/api/v1/members` lists it: with peer URLs, without health. */
export interface PdListedMember {
  readonly name: string;
  readonly memberId: string;
  readonly peerUrls: readonly string[];
}

export interface PdStore {
  readonly id: number;
  readonly address: string;
  /** Up, Disconnected, Down, Offline or Tombstone. */
  readonly state: string;
  readonly leaderCount: number;
  readonly regionCount: number;
  /** Epoch milliseconds of PD's last heartbeat from the store; undefined when PD does not say. */
  readonly lastHeartbeat?: number;
  readonly labels: Readonly<Record<string, string>>;
}

/** A PD micro-service server as PD's registry lists it (`/pd/api/v2/ms/members/{service}`). */
export interface MsMember {
  /** Its `--name` (the Pod name, as rendered from v8.3.0); "" for servers before v8.3.0, which register none. */
  readonly name: string;
  /** Its advertise-listen-addr, a URL such as `http://c-tso-0.c-tso-peer.ns.svc:2379`. */
  readonly serviceAddr: string;
}

export class PdError extends Error {
  constructor(
    message: string,
    readonly status?: number,
    /** The answer's text (PD writes errors as JSON strings; this is the string). */
    readonly detail = '',
    /** No answer came within the client's timeout: the server may still be working on the request. */
    readonly timedOut = false,
  ) {
    super(message);
  }

  /**
   * PD answers 500 `[PD:cluster:ErrNotBootstrapped]TiKV cluster not bootstrapped, please start TiKV
   * first` for stores and schedulers until the first TiKV store bootstraps the cluster (tikv/pd
   * `server/api/middleware.go` clusterMiddleware; the scheduler handlers likewise, 406 for
   * scheduler-config).
   */
  get notBootstrapped(): boolean {
    return (this.status === 500 || this.status === 406) && /ErrNotBootstrapped|not bootstrapped/.test(this.detail);
  }
}

/** The text of a PD answer: PD writes messages as JSON strings (`"The store is set as Offline."`). */
function answerText(body: string): string {
  const trimmed = body.trim();
  if (trimmed.startsWith('"')) {
    try {
      const v = JSON.parse(trimmed) as unknown;
      if (typeof v === 'string') return v;
    } catch {
      // not one JSON string: keep the raw text
    }
  }
  return trimmed;
}

/**
 * How long PD may take to answer `POST /pd/api/v1/leader/transfer/{name}`: the handler
 * (tikv/pd server/api/member.go `leaderHandler.TransferLeader` → pkg/member/member.go
 * `ResignEtcdLeader` → `MoveEtcdLeader`) waits up to `moveLeaderTimeout`, 5 s, for etcd's leader to
 * move, and a follower first waits up to 3 s for a leader to forward to (pkg/utils/apiutil/serverapi/
 * middleware.go `redirector.waitForLeader`, backoffMaxDelay), then proxies the request. Plus a margin
 * for the hop itself.
 */
export const PD_TRANSFER_TIMEOUT_MS = 5000 + 3000 + 2000;

/** A store id from PD's JSON: a uint64, small in practice; refused when a double cannot hold it. */
function storeIdOf(raw: unknown, url: string): number {
  const id = typeof raw === 'string' ? Number(raw) : raw;
  if (typeof id !== 'number' || !Number.isSafeInteger(id))
    throw new PdError(`GET ${url}: store id ${String(raw)} is not an integer below 2^53`);
  return id;
}

export class PdClient {
  /** Called after every request with its outcome ("200", "500", "error"), for metrics. */
  onRequest: (outcome: string) => void = () => {};

  constructor(
    readonly baseUrl: string,
    private readonly tls?: ClientTls,
    private readonly timeoutMs = 5000,
  ) {}

  /** A client for one member, at its own client URL (for per-member checks such as readiness). */
  forMember(clientUrl: string): PdClient {
    const client = new PdClient(clientUrl.replace(/\/+$/, ''), this.tls, this.timeoutMs);
    client.onRequest = this.onRequest;
    return client;
  }

  private async send(method: string, path: string, body?: unknown, timeoutMs = this.timeoutMs): Promise<HttpResult> {
    const url = `${this.baseUrl}${path}`;
    try {
      const res = await httpRequest(url, { method, body: body === undefined ? undefined : JSON.stringify(body), timeoutMs, tls: this.tls });
      this.onRequest(String(res.status));
      return res;
    } catch (e) {
      this.onRequest('error');
      throw new PdError(`${method} ${url}: ${(e as Error).message}`, undefined, '', /^timed out after/.test((e as Error).message));
    }
  }

  private async call(
    method: string,
    path: string,
    body?: unknown,
    okStatus: readonly number[] = [200],
    timeoutMs?: number,
  ): Promise<string> {
    const res = await this.send(method, path, body, timeoutMs);
    if (!okStatus.includes(res.status)) {
      const text = answerText(res.body);
      throw new PdError(`${method} ${this.baseUrl}${path}: HTTP ${res.status} ${text.slice(0, 200)}`, res.status, text);
    }
    return res.body;
  }

  private async json<T>(path: string): Promise<T> {
    const text = await this.call('GET', path);
    try {
      return parseJsonExact(text) as T;
    } catch {
      throw new PdError(`GET ${this.baseUrl}${path}: answer is not JSON`);
    }
  }

  /** Members with their health (`/pd/api/v1/health`); ids as decimal strings, exactly. */
  async health(): Promise<PdMember[]> {
    const list =
      await this.json<{ name: string; member_id: number | string; client_urls?: string[] | null; health: boolean }[]>('/pd/api/v1/health');
    return list.map((m) => ({ name: m.name, memberId: String(m.member_id), clientUrls: m.client_urls ?? [], healthy: m.health === true }));
  }

  /** Members as PD lists them (`/pd/api/v1/members`); ids as decimal strings, exactly. */
  async members(): Promise<PdListedMember[]> {
    const r = await this.json<{ members?: { name?: string; member_id?: number | string; peer_urls?: string[] }[] }>('/pd/api/v1/members');
    return (r.members ?? []).map((m) => ({ name: m.name ?? '', memberId: String(m.member_id ?? '0'), peerUrls: m.peer_urls ?? [] }));
  }

  async leader(): Promise<string | undefined> {
    const r = await this.json<{ name?: string } | null>('/pd/api/v1/leader');
    return r?.name || undefined;
  }

  /**
   * Asks PD to move its leadership to `to`. 'submitted': etcd's leader moved. 'unsettled': PD gave up
   * waiting (500 `ErrEtcdMoveLeader`, etcd's "leader transfer took too long") or did not answer in
   * time; the move may still complete, since PD runs it under its own context, not the request's
   * (`ResignEtcdLeader(h.svr.Context(), ...)`), and etcd's `MoveLeader` only stops waiting at its
   * deadline, leaving raft's transfer under way (etcd server/etcdserver/server.go). Other refusals throw.
   */
  async transferLeader(to: string): Promise<'submitted' | 'unsettled'> {
    try {
      await this.call(
        'POST',
        `/pd/api/v1/leader/transfer/${encodeURIComponent(to)}`,
        undefined,
        [200, 404],
        Math.max(this.timeoutMs, PD_TRANSFER_TIMEOUT_MS),
      );
      return 'submitted';
    } catch (e) {
      if (e instanceof PdError && (e.timedOut || (e.status === 500 && /ErrEtcdMoveLeader|leader transfer took too long/.test(e.detail))))
        return 'unsettled';
      throw e;
    }
  }

  /** Removes a member by name; PD answers 404 for a name it does not know, which counts as done. */
  async deleteMemberByName(name: string): Promise<void> {
    await this.call('DELETE', `/pd/api/v1/members/name/${encodeURIComponent(name)}`, undefined, [200, 404]);
  }

  /**
   * Removes a member by id. PD answers 500 (not 404) for an id it does not know (tikv/pd
   * `server/api/member.go` DeleteMemberByID: etcd's "member not found"), so, as tidb-operator's
   * `pdapi.DeleteMemberByID` does, the members are listed first and an absent member counts as done:
   * a retry after a crash between the delete and what follows it then succeeds.
   */
  async deleteMemberById(memberId: string): Promise<'deleted' | 'absent'> {
    if (!(await this.members()).some((m) => m.memberId === memberId)) return 'absent';
    try {
      await this.call('DELETE', `/pd/api/v1/members/id/${memberId}`, undefined, [200, 404]);
      return 'deleted';
    } catch (e) {
      if (e instanceof PdError && e.status === 500 && /member not found/.test(e.detail)) return 'absent';
      throw e;
    }
  }

  /** Up, Disconnected, Down and Offline stores; throws a PdError with `notBootstrapped` before TiKV bootstraps. */
  async stores(): Promise<PdStore[]> {
    return this.storeList('/pd/api/v1/stores');
  }

  /** Tombstone stores (metapb state 2), which PD leaves out of the plain list. */
  async tombstones(): Promise<PdStore[]> {
    return (await this.storeList('/pd/api/v1/stores?state=2')).map((s) => ({ ...s, state: 'Tombstone' }));
  }

  private async storeList(path: string): Promise<PdStore[]> {
    const r = await this.json<{
      stores?: {
        store: { id: number | string; address: string; state_name?: string; labels?: { key: string; value: string }[] };
        status?: { leader_count?: number; region_count?: number; last_heartbeat_ts?: string };
      }[];
    }>(path);
    return (r.stores ?? []).map((s) => {
      const heartbeat = s.status?.last_heartbeat_ts === undefined ? NaN : Date.parse(s.status.last_heartbeat_ts);
      return {
        id: storeIdOf(s.store.id, `${this.baseUrl}${path}`),
        address: s.store.address,
        state: s.store.state_name ?? 'Up',
        leaderCount: s.status?.leader_count ?? 0,
        regionCount: s.status?.region_count ?? 0,
        lastHeartbeat: Number.isNaN(heartbeat) ? undefined : heartbeat,
        labels: Object.fromEntries((s.store.labels ?? []).map((l) => [l.key, l.value])),
      };
    });
  }

  /**
   * Takes a store offline; PD moves its regions away and then marks it Tombstone. Unknown (404) and
   * already Tombstone (410) count as done; PD refuses with 400 a removal that would leave fewer Up
   * stores than max-replicas (tikv/pd `server/api/store.go` DeleteStore, `responseStoreErr`).
   */
  async deleteStore(storeId: number): Promise<void> {
    await this.call('DELETE', `/pd/api/v1/store/${storeId}`, undefined, [200, 404, 410]);
  }

  /**
   * The cluster's ID (`GET /pd/api/v1/cluster`, metapb.Cluster `id`), as a decimal string, exactly: PD
   * draws it when its first member starts on empty data and keeps it for as long as that data lives, so
   * a cluster made anew under the same name has another.
   */
  async clusterId(): Promise<string> {
    const r = await this.json<{ id?: number | string } | null>('/pd/api/v1/cluster');
    const id = r?.id === undefined ? '' : String(r.id);
    if (!/^[1-9]\d*$/.test(id)) throw new PdError(`GET ${this.baseUrl}/pd/api/v1/cluster: no cluster id in the answer`);
    return id;
  }

  /** `replication.max-replicas`: how many copies PD keeps of each region. */
  async maxReplicas(): Promise<number> {
    const r = await this.json<{ 'max-replicas'?: number }>('/pd/api/v1/config/replicate');
    if (typeof r['max-replicas'] !== 'number')
      throw new PdError(`GET ${this.baseUrl}/pd/api/v1/config/replicate: no max-replicas in the answer`);
    return r['max-replicas'];
  }

  /**
   * `pd-server.use-region-storage` as persisted, the leader's view (`GET /pd/api/v1/config/pd-server`;
   * the bool is written as a string, `json:"use-region-storage,string"`). A member applies it when it
   * starts following a leader (tikv/pd server/server.go `reloadConfigFromKV`).
   */
  async useRegionStorage(): Promise<boolean> {
    const r = await this.json<{ 'use-region-storage'?: unknown }>('/pd/api/v1/config/pd-server');
    const v = r['use-region-storage'];
    if (v !== 'true' && v !== 'false')
      throw new PdError(
        `GET ${this.baseUrl}/pd/api/v1/config/pd-server: expected "use-region-storage" of "true" or "false", got ${JSON.stringify(v)}`,
      );
    return v === 'true';
  }

  /**
   * `replication.location-labels`: the label keys PD spreads a region's replicas over, in order. PD
   * writes them as one comma-joined string (tikv/pd `pkg/utils/typeutil/string_slice.go`).
   */
  async locationLabels(): Promise<string[]> {
    const r = await this.json<{ 'location-labels'?: unknown }>('/pd/api/v1/config/replicate');
    const v = r['location-labels'];
    if (typeof v !== 'string') throw new PdError(`GET ${this.baseUrl}/pd/api/v1/config/replicate: no location-labels in the answer`);
    return v === '' ? [] : v.split(',');
  }

  /**
   * Sets labels on a store, merged into the ones it has (tikv/pd `server/api/store.go` SetStoreLabel,
   * `server/cluster/cluster.go` UpdateStoreLabels without `force`): 200, or 400 for a key or value PD
   * refuses, 500 for an unknown store.
   */
  async setStoreLabels(storeId: number, labels: Readonly<Record<string, string>>): Promise<void> {
    await this.call('POST', `/pd/api/v1/store/${storeId}/label`, labels);
  }

  /** Names of the schedulers running in PD. */
  async schedulers(): Promise<string[]> {
    return this.json<string[]>('/pd/api/v1/schedulers');
  }

  /**
   * Stores with an evict-leader scheduler. PD since v3.1 runs one merged `evict-leader-scheduler`
   * whose config lists the stores (`/scheduler-config/evict-leader-scheduler/list`, 404 once it is
   * gone); PD v3.0 ran one `evict-leader-scheduler-<id>` per store.
   */
  async evictingStores(): Promise<Set<number>> {
    const names = await this.schedulers();
    const ids = new Set<number>();
    for (const n of names) {
      const m = /^evict-leader-scheduler-(\d+)$/.exec(n);
      if (m) ids.add(Number(m[1]));
    }
    if (names.includes('evict-leader-scheduler')) {
      const path = '/pd/api/v1/scheduler-config/evict-leader-scheduler/list';
      const res = await this.send('GET', path);
      if (res.status === 404) return ids; // removed since the list was read
      if (res.status !== 200) {
        const text = answerText(res.body);
        throw new PdError(`GET ${this.baseUrl}${path}: HTTP ${res.status} ${text.slice(0, 200)}`, res.status, text);
      }
      const cfg = parseJsonExact(res.body) as { 'store-id-ranges'?: Record<string, unknown> };
      for (const id of Object.keys(cfg['store-id-ranges'] ?? {})) ids.add(storeIdOf(id, `${this.baseUrl}${path}`));
    }
    return ids;
  }

  /**
   * Adds the evict-leader scheduler for a store. PD answers 200 when the scheduler already exists
   * (it adds the store); older versions answered an error, so on any error the schedulers are read
   * again and a scheduler in place counts as success (tidb-operator `pdapi.BeginEvictLeader`).
   */
  async addEvictLeader(storeId: number): Promise<void> {
    try {
      await this.call('POST', '/pd/api/v1/schedulers', { name: 'evict-leader-scheduler', store_id: storeId });
    } catch (e) {
      if (e instanceof PdError && e.status !== undefined && (await this.evictingStores().catch(() => new Set<number>())).has(storeId))
        return;
      throw e;
    }
  }

  /** Removes a store's evict-leader scheduler; not there (404) counts as done. */
  async removeEvictLeader(storeId: number): Promise<void> {
    try {
      await this.call('DELETE', `/pd/api/v1/schedulers/${evictSchedulerName(storeId)}`, undefined, [200, 404]);
    } catch (e) {
      if (e instanceof PdError && e.status !== undefined && !(await this.evictingStores().catch(() => new Set([storeId]))).has(storeId))
        return;
      throw e;
    }
  }

  /**
   * Whether this member has loaded its regions (`GET /pd/api/v2/ready`, PD v8.5.2+: 200 ready, 500
   * not yet). Older PD has no such route and answers 404, which counts as ready, as tidb-operator's
   * `pdapi.GetReady` does. Ask a client made with `forMember`: the route is answered by the member asked.
   */
  async ready(): Promise<boolean> {
    const res = await this.send('GET', '/pd/api/v2/ready');
    if (res.status === 200 || res.status === 404) return true;
    if (res.status === 500) return false;
    throw new PdError(`GET ${this.baseUrl}/pd/api/v2/ready: HTTP ${res.status} ${answerText(res.body).slice(0, 200)}`, res.status);
  }

  /**
   * The servers of a PD micro-service registered with PD (tikv/pd `server/apiv2/handlers/micro_service.go`
   * `GetMembers`: a JSON list, `null` when none; 404 "not support micro service" unless PD runs as
   * the API server).
   */
  async msMembers(service: string): Promise<MsMember[]> {
    const list = await this.json<{ name?: string; 'service-addr'?: string }[] | null>(
      `/pd/api/v2/ms/members/${encodeURIComponent(service)}`,
    );
    return (list ?? []).map((m) => ({ name: m.name ?? '', serviceAddr: m['service-addr'] ?? '' }));
  }

  /**
   * The service addresses of the TSO servers in TSO's default keyspace group, the only ones that may
   * be its primary (`GET /pd/api/v2/tso/keyspace-groups/0`, tikv/pd server/apiv2/handlers/
   * tso_keyspace_group.go; PD gives the group two servers once TiKV bootstrapped). `[]` while the
   * group is not saved or has no members yet (each TSO server then serves the group alone). PD
   * answers 500 ErrNotBootstrapped before TiKV bootstraps (`PdError.notBootstrapped`).
   */
  async tsoDefaultGroup(): Promise<string[]> {
    const group = await this.json<{ members?: { address?: unknown }[] | null } | null>('/pd/api/v2/tso/keyspace-groups/0');
    return (group?.members ?? []).map((m) => m.address).filter((a): a is string => typeof a === 'string');
  }

  /** The primary of a PD micro-service: its service address, or "" while none is elected (`GetPrimary`). */
  async msPrimary(service: string): Promise<string> {
    const addr = await this.json<string>(`/pd/api/v2/ms/primary/${encodeURIComponent(service)}`);
    if (typeof addr !== 'string') throw new PdError(`GET ${this.baseUrl}/pd/api/v2/ms/primary/${service}: expected a JSON string`);
    return addr;
  }
}

/**
 * Asks the primary of a PD micro-service to hand over to the server named `to`
 * (`POST <primary>/<service>/api/v1/primary/transfer`, pd-server v8.3.0 and later; a server that is
 * not the primary forwards it there). The server answers 500 with a JSON string when it cannot.
 */
export async function transferMsPrimary(
  primaryAddr: string,
  service: string,
  to: string,
  tls?: ClientTls,
  timeoutMs = 5000,
): Promise<void> {
  const url = `${primaryAddr.replace(/\/+$/, '')}/${service}/api/v1/primary/transfer`;
  let res: HttpResult;
  try {
    res = await httpRequest(url, { method: 'POST', body: JSON.stringify({ new_primary: to }), timeoutMs, tls });
  } catch (e) {
    throw new PdError(`POST ${url}: ${(e as Error).message}`);
  }
  if (res.status !== 200) {
    const text = answerText(res.body);
    throw new PdError(`POST ${url}: HTTP ${res.status} ${text.slice(0, 200)}`, res.status, text);
  }
}

export const evictSchedulerName = (storeId: number): string => `evict-leader-scheduler-${storeId}`;
