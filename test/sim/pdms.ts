/**
 * PD's micro-services for scenario tests (tidb-operator v1 `spec.pdms`): the TSO and scheduling
 * servers, one per Pod, each on the Pod's own loopback IP (port 2379), and the part of PD's etcd they
 * write, which PD in API mode (`pd-server services api`) reads back for `/pd/api/v2/ms/*` (pd-http).
 * Played as tikv/pd v8.5.7 has it, with the differences of earlier releases where a Pod runs one.
 *
 * Time is scaled: every real duration below runs `timeScale` (1/10) as long here, as PD's own
 * simulator scales its own (pd-api.ts: PD's 2.5 s wait in `GET /ms/primary` is 250 ms, shorter than
 * any lease, as in reality).
 *
 * Leases (per release): the primary key's (`DefaultLeaderLease`, pkg/mcs/utils/constant/constant.go;
 * pkg/mcs/utils/constant.go before v8.3.0; the default of the servers' `lease` config,
 * pkg/mcs/tso/server/config.go, pkg/mcs/scheduling/server/config/config.go `Adjust`), a transfer's
 * expected-primary flag's (pkg/mcs/utils/expected_primary.go `TransferPrimary`:
 * `client.Grant(DefaultLeaderLease)`) and the registry entry's (pkg/mcs/discovery/register.go
 * `DefaultLeaseInSeconds`) are 3 s up to v8.5.4 (and in v9.0.0-beta.1, cut from master before the
 * change), 5 s from v8.5.5: `leaderLeaseMs`/`registryTtlMs` here, 300/500 ms scaled.
 *
 * A server (`pd-server services tso|scheduling --name=<pod> --advertise-listen-addr=http://<pod>.
 * <cluster>-<svc>-peer.<ns>.svc:2379 --backend-endpoints=...`):
 * - from v8.3.0 waits for PD's cluster id as long as it takes (pkg/mcs/utils/util.go `InitClusterID`
 *   in v8.3-v8.4, pkg/storage/endpoint/cluster_id.go `InitClusterIDForMs` from v8.5.0: every `RetryInterval`,
 *   500 ms, pkg/mcs/utils/constant/constant.go), then registers under
 *   `/ms/<cluster-id>/<svc>/registry/<service-addr>` with its lease, kept alive (pkg/mcs/utils/util.go
 *   `Register`), then joins its service's primary election and listens.
 * - v7.5-v8.2 (pkg/mcs/tso/server/server.go, pkg/mcs/scheduling/server/server.go `Run`/`startServer`,
 *   pkg/mcs/utils/util.go at v8.1.0): first waits, every 500 ms and as long as it takes, for PD to answer
 *   `GetClusterInfo` in API mode (`WaitAPIServiceReady`: a PD member serving through the backend
 *   endpoint, `IsAPIServiceMode`); then reads the cluster id 5 times 1 s apart (`InitClusterID`,
 *   `maxRetryTimes`, `retryInterval`) and, without it, exits (`log.Fatal("run server failed")` in
 *   `CreateServerWrapper`): the process is gone, `serverStart` rejects, its Pod is not Ready (the
 *   container's restart is not modelled). It listens first and writes its registry entry after.
 * - The entry is what its own release serializes (pkg/mcs/discovery/registry_entry.go):
 *   `{"name","service-addr","version","git-hash","deploy-path","start-timestamp"}` from v8.3.0, no
 *   `name` in v8.0-v8.2, only `service-addr` in v7.5. `name` is `--name` (a flag from v8.3.0,
 *   cmd/pd-server/main.go `NewTSOServiceCommand`/`NewSchedulingServiceCommand`: the operator passes it
 *   from then on, pkg/manager/member/startscript/v2/pd_start_script.go; an older server given it exits
 *   at once: cobra's `unknown flag: --name`, printed by `main` before `os.Exit(1)`), else
 *   `<svc>-<hostname>` (pkg/mcs/tso/server/config.go, pkg/mcs/scheduling/server/config/config.go
 *   `Adjust`: `TSO-`/`Scheduling-` before v8.4.0). `version` is `versioninfo.PDReleaseVersion`
 *   (pkg/versioninfo/versioninfo.go, set by the Makefile's ldflags to `git describe --tags`: the tag),
 *   `git-hash` `PDGitHash` (`git rev-parse HEAD`), `deploy-path` the binary's directory
 *   (`filepath.Dir(os.Executable())`; the Dockerfile copies it to `/pd-server`: `/`), `start-timestamp`
 *   the process start in unix seconds.
 * - the primary (pkg/mcs/scheduling/server/server.go and pkg/tso/global_allocator.go
 *   `primaryElectionLoop`/`campaignLeader`): members whose election loop finds no primary key campaign
 *   for it with the leader lease; one wins. In reality that is one etcd transaction as soon as the key
 *   is gone; `electionMs` here, the time from the key going to the new primary, has no real counterpart
 *   (it leaves a window without a primary for tests). From v8.3.0 a member whose expected-primary flag
 *   (`GetExpectedPrimaryFlag`) names another skips the campaign and looks again 200 ms later
 *   (`time.Sleep(200 * time.Millisecond)`, scaled): once a flag expires, the others campaign at their
 *   next look. Before v8.3.0 there is no flag check: such a server campaigns whatever a flag says.
 *   A server stopped (SIGTERM: `Close`) revokes its leases at once: its primary key, own flag and
 *   registry entry go with it. A server killed (`serverKill`) leaves them until their leases expire:
 *   PD still names it primary, the others wait.
 * - TSO primaries serve the default keyspace group (pkg/tso/keyspace_group_manager.go): until PD
 *   allocated it, every TSO server counts itself its only member (`updateKeyspaceGroup`); PD in API
 *   mode allocates it 2 nodes once the raft cluster is bootstrapped (`MsRegistry.allocTick`), and a
 *   server left out quits the election (`exitElectionMembership`): with 3 TSO servers only 2 can be
 *   primary.
 *
 * HTTP (gin; every route behind gin-contrib/gzip v0.0.1: a request that accepts gzip gets a gzipped
 * body, `Content-Encoding: gzip`, `Vary: Accept-Encoding`). `multiservicesapi.ServiceRedirector`
 * (pkg/utils/apiutil/multiservicesapi/middleware.go, see `redirect`) sits, per release
 * (pkg/mcs/tso/server/apis/v1/api.go, pkg/mcs/scheduling/server/apis/v1/api.go `NewService`):
 * - v7.5: on the whole engine (`apiHandlerEngine.Use`), which gin also runs for a path with no route:
 *   a secondary forwards every request, an unknown path too, to the primary;
 * - v8.0 to v8.5.3 (TSO) / v8.5.4 (scheduling), and v9.0.0-beta.1: on the `/<svc>/api/v1` group
 *   (`root.Use`): every route of the group;
 * - v8.5.4+ (TSO) / v8.5.5+ (scheduling): on a few routes only, the transfer among them.
 * Routes modelled:
 * - `POST /{tso,scheduling}/api/v1/primary/transfer` (from v8.3.0; `transferPrimary`,
 *   pkg/mcs/utils/expected_primary.go `TransferPrimary`), behind the redirector in every release that
 *   has it: a secondary forwards it to the primary. Body `{"new_primary": "<name>"}`, see `transfer`.
 * - `GET /tso/api/v1/health` (from v8.0.0; pkg/mcs/tso/server/apis/v1/api.go `GetHealth`, see
 *   `health`): behind the redirector up to v8.5.3 and in v9.0.0-beta.1 (a secondary answers with the
 *   primary's health, or the redirector's errors), answered by the server asked from v8.5.4. v7.5 has
 *   no such route.
 * - `GET /metrics` (pkg/mcs/tso/server/apis/v1/api.go, pkg/mcs/scheduling/server/apis/v1/api.go
 *   `apiHandlerEngine.GET("metrics", utils.PromHandler())`, every release): the Prometheus text
 *   format on the engine, so behind the redirector in v7.5 only; see `metrics`.
 * - Any other path (and another method on these): gin's 404 (`404 page not found`, text/plain; with
 *   gzip, the middleware's empty gzip stream, sniffed `application/x-gzip`), from the primary in v7.5.
 *   The servers' other routes (`/status`, `/config`...) are not modelled; they are listed in
 *   `unsimulated`.
 *
 * Not modelled: TLS, PD (etcd) losing quorum under running servers (leases cannot be kept alive),
 * the tiny window between a transfer's lease revocation and its expected-primary flag in which
 * another secondary may win, the order in which a killed primary's key and its own flag (leases of
 * the same length, granted one after the other) expire (here the others campaign when the key goes),
 * the TSO keyspace-group priority checker (all priorities are 0), a container restart after a server
 * exited.
 *
 * Records for tests: `transfers`, `elections`, `requests`, `unsimulated`.
 */
import * as http from 'node:http';
import { gzipSync } from 'node:zlib';
import type { PdSim } from './pd-api';
import { definedOnly, pollUntil, Timers } from './pd-runtime';
import { GIN_JSON_TYPE, GIN_PLAIN_TYPE, HTTP_ERROR_TYPE, goJson, jsonSyntaxError } from './pd-wire';
import { goProcessFamilies, promContentType, promhttpFamilies, promText, type PromEscaping, type PromFamily } from './prom-text';

export type PdmsService = 'tso' | 'scheduling';

/** The services PD knows (pkg/mcs/utils/constant: `tso`, `scheduling`, `resource_manager`). */
export const MS_SERVICES = ['tso', 'scheduling', 'resource_manager'] as const;

// ---- PD's side: the registry in etcd ----

/**
 * The keys of PD's etcd that the micro-services write and PD in API mode reads, with PD's TSO
 * keyspace-group allocation (the PD leader's part, played here where the TSO servers see it):
 * - `/ms/<cluster-id>/<svc>/registry/<service-addr>`: each server's entry, as its release serialized it;
 *   etcd lists them by key, i.e. by address (pkg/mcs/discovery/discover.go `GetMSMembers`).
 * - the service's primary key, as PD's primary watchers keep it (server/server.go
 *   `initServicePrimaryWatcher`: `servicePrimaryMap`, the primary's first listen URL).
 * - the default keyspace group's members (pkg/keyspace/tso_keyspace_group.go): saved without members
 *   when the raft cluster starts (`Bootstrap`), then given `DefaultKeyspaceGroupReplicaCount` (2)
 *   registered TSO nodes by the leader's `allocNodesToAllKeyspaceGroups` (every 1 s), picked round-robin
 *   over the nodes in the order they registered (pkg/balancer/round_robin.go).
 */
export class MsRegistry {
  private readonly registry = new Map<string, Map<string, string>>();
  private readonly primaries = new Map<string, string>();
  private group: string[] | undefined;
  /** PD's `nodesBalancer`: registered TSO addresses, in registration order. */
  private readonly tsoNodes: string[] = [];
  private roundRobin = 0;
  private readonly groupListeners = new Set<() => void>();

  /** A server's entry (the JSON its release wrote) under its address: a new lease replaces the key. */
  put(service: string, serviceAddr: string, value: string): void {
    let entries = this.registry.get(service);
    if (entries === undefined) this.registry.set(service, (entries = new Map()));
    entries.set(serviceAddr, value);
    // initTSONodesWatcher putFn: nodesBalancer.Put (kept where it was when already there).
    if (service === 'tso' && !this.tsoNodes.includes(serviceAddr)) this.tsoNodes.push(serviceAddr);
  }

  /** The key goes (deregistered, or its lease expired). */
  delete(service: string, serviceAddr: string): void {
    this.registry.get(service)?.delete(serviceAddr);
    if (service === 'tso') {
      const i = this.tsoNodes.indexOf(serviceAddr);
      if (i >= 0) this.tsoNodes.splice(i, 1);
    }
  }

  /** The stored values of a service's keys, in key order (etcd's range order: bytes). */
  entries(service: string): string[] {
    const entries = this.registry.get(service);
    if (entries === undefined) return [];
    return [...entries.entries()].sort(([a], [b]) => Buffer.compare(Buffer.from(a), Buffer.from(b))).map(([, v]) => v);
  }

  /** The primary's listen URL as PD's watcher has it; undefined while there is no primary key. */
  primary(service: string): string | undefined {
    return this.primaries.get(service);
  }

  setPrimary(service: string, listenUrl: string | undefined): void {
    if (listenUrl === undefined) this.primaries.delete(service);
    else this.primaries.set(service, listenUrl);
  }

  /** The default keyspace group's members (service addresses): undefined before PD saved the group, [] before it allocated nodes. */
  get defaultKeyspaceGroup(): readonly string[] | undefined {
    return this.group;
  }

  /** Called when the default keyspace group's members change (the TSO servers watch it). */
  onKeyspaceGroupChange(fn: () => void): () => void {
    this.groupListeners.add(fn);
    return () => this.groupListeners.delete(fn);
  }

  /**
   * One round of the PD leader's keyspace-group job, once the raft cluster is bootstrapped:
   * `GroupManager.Bootstrap` saves the default group without members, then
   * `allocNodesToAllKeyspaceGroups` leaves a group alone when all its members are registered and they
   * are all the nodes; otherwise, with fewer than 2 registered members, `AllocNodesForKeyspaceGroup`
   * keeps those and adds nodes from the round-robin balancer up to 2 (or up to the node count).
   */
  allocTick(): void {
    if (this.group === undefined) this.group = [];
    const nodes = this.tsoNodes;
    if (nodes.length === 0) return;
    const exist = [...new Set(this.group.filter((m) => nodes.includes(m)))];
    if (exist.length !== 0 && exist.length === this.group.length && exist.length === nodes.length) return;
    if (exist.length >= DEFAULT_KEYSPACE_GROUP_REPLICAS) return;
    const members = [...exist];
    while (members.length < DEFAULT_KEYSPACE_GROUP_REPLICAS && members.length !== nodes.length) {
      const next = nodes[this.roundRobin++ % nodes.length];
      if (!members.includes(next)) members.push(next);
    }
    this.group = members;
    for (const fn of this.groupListeners) fn();
  }
}

/** pkg/mcs/utils/constant `DefaultKeyspaceGroupReplicaCount`. */
export const DEFAULT_KEYSPACE_GROUP_REPLICAS = 2;

/**
 * `discovery.ServiceRegistryEntry` as PD v8.5 decodes a stored value (json.Unmarshal into the struct:
 * missing fields stay zero; a value that does not decode is skipped, `GetMSMembers`).
 */
export function decodeRegistryEntry(value: string): Record<string, string | number> | undefined {
  let v: unknown;
  try {
    v = JSON.parse(value);
  } catch {
    return undefined;
  }
  if (v === null || typeof v !== 'object' || Array.isArray(v)) return undefined;
  const o = v as Record<string, unknown>;
  const str = (k: string) => (typeof o[k] === 'string' ? (o[k] as string) : '');
  const ts = o['start-timestamp'];
  return {
    name: str('name'),
    'service-addr': str('service-addr'),
    version: str('version'),
    'git-hash': str('git-hash'),
    'deploy-path': str('deploy-path'),
    'start-timestamp': typeof ts === 'number' ? Math.trunc(ts) : 0,
  };
}

// ---- the servers ----

export interface PdmsSimOptions {
  /** The TidbCluster's name: the advertise address is `<pod>.<cluster>-<svc>-peer.<ns>.svc`. */
  cluster: string;
  namespace: string;
  /** `spec.clusterDomain`: appended to the advertise address, and the name the operator passes. @default '' */
  clusterDomain?: string;
  /** The port each server listens on, and advertises. @default 2379 */
  port?: number;
  /** The release a server runs when `serverStart` is given none. @default 'v8.5.0' */
  version?: string;
  /** Simulated time per real time: every real duration of the servers is multiplied by it. @default 0.1 */
  timeScale?: number;
  /**
   * Time from the primary key going to a new primary. No real counterpart (the campaign is one etcd
   * transaction, as soon as the key is gone): it leaves a window without a primary. @default 50
   */
  electionMs?: number;
  /**
   * The primary key's and a transfer's expected-primary flag's lease, for every release. By default each
   * server's own release's `DefaultLeaderLease` (3 s up to v8.5.4, 5 s from v8.5.5) × `timeScale`.
   */
  leaseMs?: number;
  /** A registry entry's lease, for every release. By default the release's `DefaultLeaseInSeconds` (3 s / 5 s, as `leaseMs`) × `timeScale`. */
  registryTtlMs?: number;
  /** How often a starting server looks for PD (`RetryInterval`/`RetryIntervalWaitAPIService`, 500 ms). @default 500 × timeScale */
  retryMs?: number;
}

/** The defaults of `PdmsSimOptions`, in one place (the leases and `retryMs` derive from `timeScale` and the release). */
export const PDMS_SIM_DEFAULTS = {
  clusterDomain: '',
  port: 2379,
  version: 'v8.5.0',
  timeScale: 0.1,
  electionMs: 50,
} as const;

type ResolvedOptions = Required<Pick<PdmsSimOptions, 'cluster' | 'namespace' | keyof typeof PDMS_SIM_DEFAULTS>> &
  Pick<PdmsSimOptions, 'leaseMs' | 'registryTtlMs' | 'retryMs'>;

/** Real durations, in ms (scaled by `timeScale`). */
const REAL_MS = {
  /** pkg/mcs/utils/constant/constant.go `RetryInterval` (v8.3.0+), pkg/mcs/utils/constant.go `RetryIntervalWaitAPIService` (before). */
  retry: 500,
  /** pkg/mcs/utils/util.go (v7.5-v8.2) `retryInterval` of `InitClusterID`. */
  clusterIdRetry: 1000,
  /** `primaryElectionLoop`: a member held back by the expected-primary flag looks again this much later. */
  flagRecheck: 200,
} as const;
/** pkg/mcs/utils/util.go (v7.5-v8.2) `maxRetryTimes` of `InitClusterID`. */
const CLUSTER_ID_TRIES = 5;

/** A server as the accessors give it. */
export interface PdmsMember {
  pod: string;
  service: PdmsService;
  /** `svr.Name()`: `--name`, or `<svc>-<hostname>`. */
  name: string;
  /** The advertise listen address (a URL), the registry key and the primary's listen URL. */
  serviceAddr: string;
  version: string;
  /** `waiting`: for PD's cluster id (before v8.3.0 first for PD in API mode), not registered nor listening yet. */
  state: 'waiting' | 'running';
  primary: boolean;
  /** TSO: the server takes part in the default keyspace group's election (always true for scheduling). */
  inKeyspaceGroup: boolean;
}

export interface PdmsTransfer {
  service: PdmsService;
  /** The server that carried the transfer out. */
  pod: string;
  /** `svr.Name()` of that server: the old primary as `TransferPrimary` sees it. */
  from: string;
  /** The registry name of the member chosen (`""` for a server before v8.3.0). */
  to: string;
  /** Its service address: the expected-primary flag. */
  toAddr: string;
  /** `new_primary` as asked (`""` for any). */
  asked: string;
  time: number;
}

export interface PdmsElection {
  service: PdmsService;
  pod: string;
  name: string;
  time: number;
}

export interface PdmsRequest {
  pod: string;
  method: string;
  path: string;
  status: number;
  time: number;
  /** The pod that forwarded this request to this one (ServiceRedirector), if any. */
  redirectedFrom?: string;
}

interface MsVersion {
  text: string;
  /** [major, minor, patch]; a tag that is not a release (nightly, latest) plays the newest modelled one. */
  n: readonly [number, number, number];
}

interface PdmsProcess {
  readonly pod: string;
  readonly ip: string;
  readonly service: PdmsService;
  readonly version: MsVersion;
  readonly name: string;
  /** The `name` field of its registry entry; undefined when its release writes none. */
  readonly registryName: string | undefined;
  readonly addr: string;
  readonly startTimestamp: number;
  state: 'waiting' | 'running' | 'stopped';
  /** Its registry key was written (and not yet revoked). */
  registered: boolean;
  server?: http.Server;
  /** `GetExpectedPrimaryLease()` is set: a v8.3.0+ server that became primary at least once (never reset while it runs, but by leaving the keyspace group). */
  leaseHeld: boolean;
  /** Since when its election loop skips the campaign for an expected-primary flag naming another (it looks again every 200 ms). */
  heldSince?: number;
  /** Process start (epoch ms): `process_start_time_seconds`. */
  readonly startMs: number;
  /** When `startServer` ran (unix seconds), the value of `pd_server_info` (v8.0.0+): here, when it began to listen. */
  servingSince?: number;
  /** `service_member_role` as this process last set it: 1 while primary, 0 once it stepped down, unset before it ever was. */
  role?: 0 | 1;
  /** Scrapes of `/metrics` this process answered (`promhttp_metric_handler_requests_total{code="200"}`). */
  scrapes: number;
}

interface ServiceState {
  /** The primary key's holder; `dead` once its process was killed (the key waits for its lease). */
  primary?: { proc: PdmsProcess; dead: boolean };
  /** The expected-primary flag a transfer wrote (a service address), until a v8.3.0+ server wins (its own flag replaces it) or its lease expires. */
  flag?: { addr: string; timer?: NodeJS.Timeout };
  election?: NodeJS.Timeout;
}

interface MsRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
}

interface MsReply {
  status: number;
  headers: Record<string, string>;
  body: string;
  /** The status line went out before the content type was set (gin's `AbortWithError`): Go sniffs it from the body. */
  sniffed?: boolean;
  /** gin's no-route answer, whose text the gzip middleware's own stream pre-empts. */
  noRoute?: boolean;
}

/** tikv/pd release tags and their commits (`git rev-list -n1 <tag>`): `git-hash` of the entries. */
const GIT_HASHES: Record<string, string> = {
  'v8.0.0': 'afa9e5d1daf198fcb3d9c4114a5db13db4416032',
  'v8.1.0': 'fca469ca33eb5d8b5e0891b507c87709a00b0e81',
  'v8.1.1': 'f3dd0b62857ba0da97842349808aa4d4d4eefb34',
  'v8.1.2': 'c1ee9cf28f6dfd2afce205d75974dc0e964075f2',
  'v8.2.0': 'c0ee2cd6c2eea7ad9372cc5bd00f6774abad6834',
  'v8.3.0': '8b35fcdb1e12d29204d4f130c2169fdd5478fd33',
  'v8.4.0': 'fc6e45cc348da147e90fbac6cc665366b11db8cd',
  'v8.5.0': 'd190c0e9082de46128b756f93b1291768dda645a',
  'v8.5.1': '5036cc277fc8c0e7fa1219265ae407de80b950b7',
  'v8.5.2': '4cd009c4db3c15215341a96521dd53e53c55e5bd',
  'v8.5.3': '65e429d26e81db93c590890ddacf18c4b970f299',
  'v8.5.4': 'ab1848b1274bfef46e949b9056c98c57aaf3da34',
  'v8.5.5': '9c9a8c8a25684b3516e11bc92922df99302c9c46',
  'v8.5.6': '21bd0a379e5f9d2be11a92d17645a6ada19f02c1',
  'v8.5.7': '6dce4a68e3e93b523657bd05cba89a86d64de117',
};
/** For a tag not in the table: something shaped like a commit (the simulator has no real one). */
const UNKNOWN_GIT_HASH = '0000000000000000000000000000000000000000';

function parseMsVersion(text: string): MsVersion {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(text);
  if (m === null) return { text, n: [8, 5, 7] };
  const n = [Number(m[1]), Number(m[2]), Number(m[3])] as const;
  if (n[0] < 7 || (n[0] === 7 && n[1] < 5)) throw new Error(`PdmsSim models PD micro-services from v7.5.0, not ${text}`);
  return { text, n };
}

function atLeast(v: MsVersion, major: number, minor: number, patch: number): boolean {
  const [a, b, c] = v.n;
  return a !== major ? a > major : b !== minor ? b > minor : c >= patch;
}

/**
 * Where `ServiceRedirector` sits in the release's gin engine (pkg/mcs/tso/server/apis/v1/api.go,
 * pkg/mcs/scheduling/server/apis/v1/api.go `NewService` and the `Register*Router`s):
 * - `engine`: v7.5, `apiHandlerEngine.Use`: every request, one with no route too;
 * - `group`: v8.0 up to v8.5.3 (TSO) / v8.5.4 (scheduling), and v9.0.0-beta.1 (cut from master before
 *   the v8.5 branch narrowed it): `root.Use` on the `/<svc>/api/v1` group, every route of it;
 * - `routes`: v8.5.4+ (TSO, #9804) / v8.5.5+ (scheduling, #9990): a few routes, `primary/transfer`
 *   among them (TSO: `router.POST("transfer", multiservicesapi.ServiceRedirector(), transferPrimary)`),
 *   not the TSO health.
 */
function redirectorScope(service: PdmsService, v: MsVersion): 'engine' | 'group' | 'routes' {
  if (!atLeast(v, 8, 0, 0)) return 'engine';
  const [a, b, c] = v.n;
  return a === 8 && b === 5 && c >= (service === 'tso' ? 4 : 5) ? 'routes' : 'group';
}

/**
 * `DefaultLeaderLease` (pkg/mcs/utils/constant/constant.go; pkg/mcs/utils/constant.go before v8.3.0)
 * and `DefaultLeaseInSeconds` (pkg/mcs/discovery/register.go), in seconds: 5 from v8.5.5 on the v8.5
 * branch, 3 before it and in v9.0.0-beta.1.
 */
function leaseSeconds(v: MsVersion): number {
  const [a, b, c] = v.n;
  return a === 8 && b === 5 && c >= 5 ? 5 : 3;
}

/** pingcap/errors `Normalize` texts (pkg/errs/errno.go). */
const ERR_LEADER_NIL = '[PD:server:ErrLeaderNil]leader is nil';
const ERR_REDIRECT_TO_NOT_PRIMARY = '[PD:apiutil:ErrRedirectToNotPrimary]redirect to not primary';
const ERR_REDIRECT = '[PD:apiutil:ErrRedirect]redirect failed';
/** pkg/tso/keyspace_group_manager.go `genNotServedErr(errs.ErrGetAllocatorManager, 0)`. */
const ERR_NOT_SERVED =
  '[PD:tso:ErrGetAllocatorManager]get allocator manager failed, requested keyspace group with id 0 is not served by this host/pod';
/** multiservicesapi: the header a forwarded request carries, and the one that asks for direct handling. */
const REDIRECTOR_HEADER = 'service-redirector';
const ALLOW_DIRECT_HEADER = 'service-allow-direct-handle';

/** gin `c.JSON` (compact) / `c.IndentedJSON` (4 spaces): no trailing newline. */
const ginJson = (status: number, v: unknown, indented = false): MsReply => ({
  status,
  headers: { 'content-type': GIN_JSON_TYPE },
  body: goJson(v, indented ? '    ' : undefined),
});
/** gin `c.String`. */
const ginString = (status: number, text: string): MsReply => ({
  status,
  headers: { 'content-type': 'text/plain; charset=utf-8' },
  body: text,
});
const NO_ROUTE: MsReply = { status: 404, headers: { 'content-type': GIN_PLAIN_TYPE }, body: '404 page not found', noRoute: true };

export class PdmsSim {
  readonly transfers: PdmsTransfer[] = [];
  readonly elections: PdmsElection[] = [];
  readonly requests: PdmsRequest[] = [];
  /** `<pod> <METHOD> <path>` of requests this model does not serve (answered 404). */
  readonly unsimulated: string[] = [];
  private readonly procs = new Map<string, PdmsProcess>();
  private readonly services: Record<PdmsService, ServiceState> = { tso: {}, scheduling: {} };
  /** Registry keys of killed servers, until their lease expires. */
  private readonly registryExpiry = new Map<string, NodeJS.Timeout>();
  private readonly timers = new Timers();
  private readonly o: ResolvedOptions;
  private readonly unwatch: () => void;

  constructor(
    private readonly pd: PdSim,
    options: PdmsSimOptions,
  ) {
    this.o = { ...PDMS_SIM_DEFAULTS, ...definedOnly(options) } as ResolvedOptions;
    this.unwatch = pd.ms.onKeyspaceGroupChange(() => this.keyspaceGroupChanged());
  }

  /** A real duration (ms) as the simulator runs it. */
  private scaled(realMs: number): number {
    return realMs * this.o.timeScale;
  }

  /** The leader lease of a server of release `v`: its primary key's, and the flag a transfer it carries out writes. */
  leaderLeaseMs(v: string | MsVersion): number {
    return this.o.leaseMs ?? this.scaled(leaseSeconds(typeof v === 'string' ? parseMsVersion(v) : v) * 1000);
  }

  /** The lease of a registry entry a server of release `v` writes. */
  registryTtlMs(v: string | MsVersion): number {
    return this.o.registryTtlMs ?? this.scaled(leaseSeconds(typeof v === 'string' ? parseMsVersion(v) : v) * 1000);
  }

  private get retryMs(): number {
    return this.o.retryMs ?? this.scaled(REAL_MS.retry);
  }

  private sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      if (this.timers.after(ms, resolve) === undefined) resolve();
    });
  }

  /** PD's cluster id can be read from its etcd: it has one, and etcd answers (PD has a leader, and is reachable). */
  private clusterIdReadable(): boolean {
    return !this.pd.down && this.pd.clusterId() !== undefined && this.pd.leader() !== undefined;
  }

  /**
   * pkg/mcs/utils/util.go (v7.5-v8.2) `isAPIServiceReady`: `GetClusterInfo` through the first backend
   * endpoint (the PD Service) answers, from a member that serves (server/grpc_service.go: not
   * `IsClosed`), with `API_SVC_MODE` first (PD runs `services api`).
   */
  private apiServiceReady(): boolean {
    return !this.pd.down && this.pd.microservices && this.pd.members().some((m) => m.running);
  }

  /** `http://<pod>.<cluster>-<svc>-peer.<ns>.svc[.<domain>]:<port>`, the `--advertise-listen-addr`. */
  serviceAddr(pod: string, service: PdmsService): string {
    const domain = this.o.clusterDomain ? `.${this.o.clusterDomain}` : '';
    return `http://${pod}.${this.o.cluster}-${service}-peer.${this.o.namespace}.svc${domain}:${this.o.port}`;
  }

  /**
   * The Pod's server starts: `version` is its image tag. `flags.name` is `--name`: by default what the
   * operator passes (the pod name, or its peer FQDN with a cluster domain) from v8.3.0 and nothing
   * before; `null` starts it without. Resolves once it listens (after PD has a cluster id); rejects
   * when the process exits (`--name` before v8.3.0, at once; before v8.3.0 too, no cluster id within
   * 5 tries once PD answered) or cannot listen.
   */
  async serverStart(
    pod: string,
    ip: string,
    service: PdmsService,
    version: string = this.o.version,
    flags: { name?: string | null } = {},
  ): Promise<void> {
    await this.serverStop(pod);
    const v = parseMsVersion(version);
    const takesName = atLeast(v, 8, 3, 0);
    const domain = this.o.clusterDomain ? `${pod}.${this.o.cluster}-${service}-peer.${this.o.namespace}.svc.${this.o.clusterDomain}` : pod;
    const flag = flags.name === undefined ? (takesName ? domain : undefined) : (flags.name ?? undefined);
    // cmd/pd-server/main.go: no `name` flag before v8.3.0 (`NewTSOServiceCommand`/`NewSchedulingServiceCommand`);
    // cobra refuses a flag the command does not define, `main` prints the error and exits 1.
    if (flag !== undefined && !takesName) throw new Error('unknown flag: --name');
    const prefix = atLeast(v, 8, 4, 0) ? service : service === 'tso' ? 'TSO' : 'Scheduling';
    // An empty --name is no name: `Adjust` fills in the default.
    const name = flag || `${prefix}-${pod}`;
    const proc: PdmsProcess = {
      pod,
      ip,
      service,
      version: v,
      name,
      registryName: takesName ? name : undefined,
      addr: this.serviceAddr(pod, service),
      startTimestamp: Math.floor(Date.now() / 1000),
      state: 'waiting',
      registered: false,
      leaseHeld: false,
      startMs: Date.now(),
      scrapes: 0,
    };
    this.procs.set(pod, proc);
    const waiting = () => proc.state === 'waiting' && !this.timers.closed;
    const registersFirst = atLeast(v, 8, 3, 0);
    if (registersFirst) {
      // v8.3.0+ `Register` (pkg/mcs/utils/util.go): `InitClusterID`/`InitClusterIDForMs` reads PD's
      // cluster id from etcd every `RetryInterval`, for as long as it takes; then the entry is written.
      while (waiting() && !this.clusterIdReadable()) await this.sleep(this.retryMs);
      if (!waiting()) return;
      this.register(proc);
    } else {
      // v7.5-v8.2 `Run`: `WaitAPIServiceReady` (forever), then `startServer`'s `InitClusterID`: 5 reads
      // 1 s apart, then the error that `CreateServerWrapper` makes a `log.Fatal`.
      while (waiting() && !this.apiServiceReady()) await this.sleep(this.retryMs);
      let found = false;
      for (let i = 0; i < CLUSTER_ID_TRIES && waiting() && !found; i++) {
        found = this.clusterIdReadable();
        if (!found) await this.sleep(this.scaled(REAL_MS.clusterIdRetry));
      }
      if (!waiting()) return;
      if (!found) {
        this.procs.delete(pod);
        proc.state = 'stopped';
        throw new Error(`run server failed: failed to init cluster ID after retrying ${CLUSTER_ID_TRIES} times`);
      }
    }
    const server = http.createServer((req, res) => this.serve(proc, req, res));
    proc.server = server;
    try {
      await new Promise<void>((resolve, reject) => {
        server.once('error', reject);
        server.listen(this.o.port, ip, () => resolve());
      });
    } catch (err) {
      if (this.procs.get(pod) === proc) this.procs.delete(pod);
      proc.state = 'stopped';
      this.deregister(proc);
      throw err;
    }
    if (proc.state !== 'waiting') {
      await closeServer(server);
      return;
    }
    // v7.5-v8.2 `startServer`: the entry is written once the servers listen.
    if (!registersFirst) this.register(proc);
    proc.state = 'running';
    proc.servingSince = Math.floor(Date.now() / 1000);
    this.schedule(service);
  }

  /**
   * SIGTERM (the Pod stops): `Close` revokes the primary's leases (its primary key and expected-primary
   * flag go at once), deregisters, stops listening. Another member campaigns `electionMs` later.
   */
  async serverStop(pod: string): Promise<void> {
    const proc = this.procs.get(pod);
    if (proc === undefined) return;
    this.procs.delete(pod);
    proc.state = 'stopped';
    const st = this.services[proc.service];
    if (st.primary?.proc === proc) this.stepDown(proc.service);
    this.deregister(proc);
    this.schedule(proc.service);
    if (proc.server !== undefined) await closeServer(proc.server);
  }

  /**
   * The process dies without `Close` (SIGKILL, OOM): connections are refused at once, but its registry
   * entry stays for its release's `registryTtlMs` and, if it was primary, its primary key for its
   * release's `leaderLeaseMs` (PD keeps naming it; the others campaign only once the key expired).
   */
  async serverKill(pod: string): Promise<void> {
    const proc = this.procs.get(pod);
    if (proc === undefined) return;
    this.procs.delete(pod);
    proc.state = 'stopped';
    const st = this.services[proc.service];
    if (st.primary?.proc === proc) {
      st.primary.dead = true;
      this.timers.after(this.leaderLeaseMs(proc.version), () => {
        if (st.primary?.proc === proc) this.stepDown(proc.service);
      });
    }
    if (proc.registered) {
      const key = `${proc.service} ${proc.addr}`;
      const timer = this.timers.after(this.registryTtlMs(proc.version), () => {
        this.registryExpiry.delete(key);
        this.pd.ms.delete(proc.service, proc.addr);
      });
      if (timer !== undefined) this.registryExpiry.set(key, timer);
    }
    if (proc.server !== undefined) await closeServer(proc.server);
  }

  async close(): Promise<void> {
    this.unwatch();
    this.timers.close();
    const servers = [...this.procs.values()].map((p) => p.server).filter((s): s is http.Server => s !== undefined);
    for (const p of this.procs.values()) p.state = 'stopped';
    this.procs.clear();
    await Promise.all(servers.map((s) => closeServer(s)));
  }

  // ---- accessors ----

  /** Whether the Pod's server runs (registered and listening): what its readiness says. */
  running(pod: string): boolean {
    return this.procs.get(pod)?.state === 'running';
  }

  /** The service's primary: the holder of the primary key (a killed one until its lease expires). */
  primary(service: PdmsService): { pod: string; name: string; serviceAddr: string; alive: boolean } | undefined {
    const p = this.services[service].primary;
    return p && { pod: p.proc.pod, name: p.proc.name, serviceAddr: p.proc.addr, alive: !p.dead };
  }

  /** The service's servers that run or wait to start, by pod name. */
  members(service: PdmsService): PdmsMember[] {
    return [...this.procs.values()]
      .filter((p) => p.service === service && p.state !== 'stopped')
      .sort((a, b) => a.pod.localeCompare(b.pod))
      .map((p) => ({
        pod: p.pod,
        service: p.service,
        name: p.name,
        serviceAddr: p.addr,
        version: p.version.text,
        state: p.state === 'running' ? 'running' : 'waiting',
        primary: this.services[service].primary?.proc === p,
        inKeyspaceGroup: this.inGroup(p),
      }));
  }

  /** Resolves once `pred` holds; rejects after `timeoutMs` with the model's state. */
  waitFor(pred: () => boolean, timeoutMs = 3000, message = 'condition'): Promise<void> {
    return pollUntil(pred, timeoutMs, message, () => this.describe());
  }

  describe(): string {
    const lines: string[] = [];
    for (const service of ['tso', 'scheduling'] as const) {
      const p = this.primary(service);
      const flag = this.services[service].flag?.addr;
      lines.push(
        `${service}: primary ${p ? `${p.name}${p.alive ? '' : ' (killed, lease pending)'}` : '(none)'}${flag ? `, expected ${flag}` : ''}`,
      );
      for (const m of this.members(service))
        lines.push(`  ${m.pod} ${m.name} ${m.version} ${m.state}${m.inKeyspaceGroup ? '' : ' out-of-keyspace-group'}`);
    }
    if (this.pd.ms.defaultKeyspaceGroup !== undefined)
      lines.push(`default keyspace group: [${this.pd.ms.defaultKeyspaceGroup.join(', ')}]`);
    return lines.join('\n');
  }

  // ---- the election ----

  /** The entry the server's release writes (Go `json.Marshal` of its ServiceRegistryEntry). */
  private register(proc: PdmsProcess): void {
    const key = `${proc.service} ${proc.addr}`;
    this.timers.cancel(this.registryExpiry.get(key));
    this.registryExpiry.delete(key);
    const v = proc.version;
    const entry: Record<string, unknown> = {};
    if (atLeast(v, 8, 3, 0)) entry.name = proc.registryName;
    entry['service-addr'] = proc.addr;
    if (atLeast(v, 8, 0, 0)) {
      // pkg/versioninfo/versioninfo.go `PDReleaseVersion`/`PDGitHash`, set by the Makefile's ldflags
      // (`git describe --tags --dirty --always`, `git rev-parse HEAD`): the release tag and its commit.
      entry.version = v.text;
      entry['git-hash'] = GIT_HASHES[v.text] ?? UNKNOWN_GIT_HASH;
      // filepath.Dir(os.Executable()) (pkg/mcs/utils/util.go `Register`; `startServer` before v8.3.0):
      // the image's binary is /pd-server (Dockerfile `COPY ... /pd-server`, `ENTRYPOINT ["/pd-server"]`).
      entry['deploy-path'] = '/';
      entry['start-timestamp'] = proc.startTimestamp;
    }
    this.pd.ms.put(proc.service, proc.addr, goJson(entry));
    proc.registered = true;
  }

  /** `Deregister`: the key is deleted (unless a newer process of the Pod wrote it again). */
  private deregister(proc: PdmsProcess): void {
    if (!proc.registered) return;
    proc.registered = false;
    const again = [...this.procs.values()].some((p) => p !== proc && p.registered && p.service === proc.service && p.addr === proc.addr);
    if (!again) this.pd.ms.delete(proc.service, proc.addr);
  }

  /** TSO: the server is a member of the default keyspace group as it sees it (itself alone until PD allocated it). */
  private inGroup(p: PdmsProcess): boolean {
    if (p.service !== 'tso') return true;
    const group = this.pd.ms.defaultKeyspaceGroup;
    return group === undefined || group.length === 0 || group.includes(p.addr);
  }

  private candidates(service: PdmsService): PdmsProcess[] {
    return [...this.procs.values()].filter((p) => p.service === service && p.state === 'running' && this.inGroup(p));
  }

  /** With no primary key and someone to campaign, an election `electionMs` (plus `delayMs`) from now. */
  private schedule(service: PdmsService, delayMs = 0): void {
    const st = this.services[service];
    if (st.primary !== undefined || st.election !== undefined || this.candidates(service).length === 0) return;
    st.election = this.timers.after(delayMs + this.o.electionMs, () => {
      st.election = undefined;
      this.elect(service);
    });
  }

  /**
   * `primaryElectionLoop` (pkg/mcs/scheduling/server/server.go, pkg/tso/global_allocator.go): from
   * v8.3.0 a member skips the campaign while the expected-primary flag names another
   * (pkg/mcs/utils/expected_primary.go `GetExpectedPrimaryFlag`, `strings.Contains(MemberValue(), flag)`)
   * and looks again 200 ms later; before v8.3.0 the loop has no such check. Of those that campaign one
   * wins the key. A v8.3.0+ winner then writes its own flag, naming itself (`KeepExpectedPrimaryAlive`),
   * which replaces a transfer's; an older one leaves the transfer's flag to its lease.
   */
  private elect(service: PdmsService): void {
    const st = this.services[service];
    if (st.primary !== undefined) return;
    const flag = st.flag?.addr;
    const running = this.candidates(service);
    const cands = running.filter((p) => flag === undefined || p.addr === flag || !atLeast(p.version, 8, 3, 0));
    // Their loops looked when the key went, `electionMs` ago (the campaign time this model adds).
    const since = Date.now() - this.o.electionMs;
    for (const p of running) if (!cands.includes(p)) p.heldSince ??= since;
    if (cands.length === 0) return; // the flag's expiry, a start or a group change schedules again
    const winner = cands[Math.floor(Math.random() * cands.length)];
    st.primary = { proc: winner, dead: false };
    winner.role = 1;
    for (const p of this.procs.values()) if (p.service === service) p.heldSince = undefined;
    if (atLeast(winner.version, 8, 3, 0)) {
      this.timers.cancel(st.flag?.timer);
      st.flag = undefined;
      // `SetExpectedPrimaryLease`: what its transfers revoke.
      winner.leaseHeld = true;
    }
    this.pd.ms.setPrimary(service, winner.addr);
    this.elections.push({ service, pod: winner.pod, name: winner.name, time: Date.now() });
  }

  /** The expected-primary flag expired: members held back by it campaign at their next look (every 200 ms since they were held). */
  private flagExpired(service: PdmsService): void {
    const period = this.scaled(REAL_MS.flagRecheck);
    const now = Date.now();
    const held = this.candidates(service).filter((p) => p.heldSince !== undefined);
    if (held.length === 0 || period <= 0) return this.schedule(service);
    const next = Math.min(...held.map((p) => p.heldSince! + Math.max(1, Math.ceil((now - p.heldSince!) / period)) * period));
    this.schedule(service, Math.max(0, next - now));
  }

  private stepDown(service: PdmsService): void {
    const st = this.services[service];
    // The primary's deferred `resetLeaderOnce`: `ServiceMemberGauge.WithLabelValues(...).Set(0)`.
    if (st.primary !== undefined) st.primary.proc.role = 0;
    st.primary = undefined;
    this.pd.ms.setPrimary(service, undefined);
    this.schedule(service);
  }

  /** PD changed the default keyspace group: a TSO server left out quits the election (and loses its allocator, lease and all). */
  private keyspaceGroupChanged(): void {
    for (const p of this.procs.values()) if (p.service === 'tso' && !this.inGroup(p)) p.leaseHeld = false;
    const primary = this.services.tso.primary;
    if (primary !== undefined && !primary.dead && !this.inGroup(primary.proc)) this.stepDown('tso');
    this.schedule('tso');
  }

  // ---- HTTP ----

  private serve(proc: PdmsProcess, req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      void (async () => {
        const parsed = new URL(req.url ?? '/', 'http://pdms');
        let path: string;
        try {
          path = decodeURIComponent(parsed.pathname);
        } catch {
          path = parsed.pathname;
        }
        const ms: MsRequest = { method: req.method ?? 'GET', path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') };
        const reply = await this.handle(proc, ms);
        if (proc.state !== 'running') {
          req.socket.destroy();
          return;
        }
        const out = encodeReply(reply, req);
        res.writeHead(out.status, out.headers);
        res.end(out.body);
      })();
    });
  }

  /** One request on `proc`'s gin engine (recorded); a forwarded one comes with `redirectedFrom`. */
  private async handle(proc: PdmsProcess, req: MsRequest, redirectedFrom?: string): Promise<MsReply> {
    const reply = await this.route(proc, req);
    this.requests.push({
      pod: proc.pod,
      method: req.method,
      path: req.path,
      status: reply.status,
      time: Date.now(),
      ...(redirectedFrom ? { redirectedFrom } : {}),
    });
    return reply;
  }

  /** The release's routes, behind the redirector where it puts it (`redirectorScope`). */
  private route(proc: PdmsProcess, req: MsRequest): MsReply | Promise<MsReply> {
    const prefix = `/${proc.service}/api/v1`;
    const v = proc.version;
    const scope = redirectorScope(proc.service, v);
    // pkg/mcs/tso/server/apis/v1/api.go `RegisterHealthRouter` (from v8.0.0).
    if (proc.service === 'tso' && req.path === `${prefix}/health` && req.method === 'GET' && atLeast(v, 8, 0, 0)) {
      return scope === 'group' ? this.redirect(proc, req, () => this.health(proc)) : this.health(proc);
    }
    // `RegisterPrimaryRouter` (from v8.3.0): behind the redirector in every release.
    if (req.path === `${prefix}/primary/transfer` && req.method === 'POST' && atLeast(v, 8, 3, 0)) {
      return this.redirect(proc, req, () => this.transfer(proc, req));
    }
    // `apiHandlerEngine.GET("metrics", utils.PromHandler())`, on the engine: behind the redirector only
    // where that is on the engine too (v7.5: a secondary answers with the primary's metrics).
    if (req.path === '/metrics' && req.method === 'GET') {
      return scope === 'engine' ? this.redirect(proc, req, () => this.metrics(proc)) : this.metrics(proc);
    }
    const noRoute = (): MsReply => {
      this.unsimulated.push(`${proc.pod} ${req.method} ${req.path}`);
      return NO_ROUTE;
    };
    // v7.5: gin runs the engine's middleware, the redirector among them, for a path with no route too.
    return scope === 'engine' ? this.redirect(proc, req, noRoute) : noRoute();
  }

  /**
   * pkg/utils/apiutil/multiservicesapi/middleware.go `ServiceRedirector`: the primary (`IsServing`), or
   * a request with `Service-Allow-Direct-Handle`, handles it; a request already forwarded is refused
   * (500, `ErrRedirectToNotPrimary` from v8.1.1, `ErrRedirect` before, as a JSON string); without a
   * known primary (`GetLeaderListenUrls` nil) 503 ErrLeaderNil (a TSO server out of the default
   * keyspace group knows none: `GetElectionMember` fails); otherwise the primary's answer, as a reverse
   * proxy (pkg/utils/apiutil/apiutil.go `customReverseProxies`: headers but the encoding and length,
   * status, body; a primary that does not answer is `http.Error` 500 ErrRedirect).
   */
  private async redirect(proc: PdmsProcess, req: MsRequest, next: () => MsReply): Promise<MsReply> {
    const st = this.services[proc.service];
    const serving = st.primary?.proc === proc && !st.primary.dead;
    if (req.headers[ALLOW_DIRECT_HEADER] || serving) return next();
    if (req.headers[REDIRECTOR_HEADER]) return ginJson(500, atLeast(proc.version, 8, 1, 1) ? ERR_REDIRECT_TO_NOT_PRIMARY : ERR_REDIRECT);
    if (st.primary === undefined || !this.inGroup(proc)) return ginJson(503, ERR_LEADER_NIL);
    const target = st.primary.proc;
    if (st.primary.dead || target.state !== 'running') {
      return { status: 500, headers: { 'content-type': HTTP_ERROR_TYPE, 'x-content-type-options': 'nosniff' }, body: `${ERR_REDIRECT}\n` };
    }
    return this.handle(target, { ...req, headers: { ...req.headers, [REDIRECTOR_HEADER]: proc.name } }, proc.pod);
  }

  /**
   * `transferPrimary` (pkg/mcs/tso/server/apis/v1/api.go, pkg/mcs/scheduling/server/apis/v1/api.go):
   * `c.BindJSON` into map[string]string (a bad body: 400 with the decoder's error), then (TSO) the
   * default keyspace group's allocator (`GetTSOAllocatorManager`: out of the group, its error) and, from
   * v8.4.0, its members as this server sees them (`GetKeyspaceGroups`: `tsoMembersMap`; v8.3.0 has no
   * such filter), then pkg/mcs/utils/expected_primary.go `TransferPrimary`:
   * - no expected-primary lease on this server: "current lease is nil, please check leadership";
   * - one registry entry: "no valid secondary to transfer primary, the only member is <name>";
   * - candidates (from v8.4.0 for TSO: of the group's members): entries named `new_primary`, or with it
   *   empty, any but this server's name; none: "no valid secondary to transfer primary, from <this
   *   server> to <new_primary>";
   * - one picked at random; this server's lease is revoked (a primary steps down: the primary key goes)
   *   and the expected-primary flag names the pick (lease `DefaultLeaderLease` of this server's
   *   release): a v8.3.0+ primary still in place sees the flag change and steps down too, and only the
   *   pick (and servers before v8.3.0) campaigns until the flag expires. At v8.3.0 a TSO pick may be
   *   out of the keyspace group: it never campaigns, so there is no primary until the flag expires.
   * Errors are `AbortWithStatusJSON(500, err.Error())`; success `IndentedJSON(200, "success")`.
   */
  private transfer(proc: PdmsProcess, req: MsRequest): MsReply {
    const input = bindJsonStringMap(req.body);
    if ('error' in input) return { status: 400, headers: {}, body: input.error, sniffed: true };
    const asked = input.value?.new_primary ?? '';
    const service = proc.service;
    const st = this.services[service];
    if (service === 'tso' && !this.inGroup(proc)) return ginJson(500, ERR_NOT_SERVED);
    if (!proc.leaseHeld) return ginJson(500, 'current lease is nil, please check leadership');
    const entries = this.pd.ms
      .entries(service)
      .map((v) => decodeRegistryEntry(v))
      .filter((e): e is Record<string, string | number> => e !== undefined);
    if (entries.length === 1) return ginJson(500, `no valid secondary to transfer primary, the only member is ${entries[0].name}`);
    const group = this.pd.ms.defaultKeyspaceGroup;
    const memberMap =
      service !== 'tso' || !atLeast(proc.version, 8, 4, 0) ? undefined : group === undefined || group.length === 0 ? [proc.addr] : group;
    const candidates = entries.filter(
      (e) =>
        (memberMap === undefined || memberMap.includes(e['service-addr'] as string)) &&
        (asked === '' ? e.name !== proc.name : e.name === asked),
    );
    if (candidates.length === 0) return ginJson(500, `no valid secondary to transfer primary, from ${proc.name} to ${asked}`);
    const chosen = candidates[Math.floor(Math.random() * candidates.length)];
    const toAddr = chosen['service-addr'] as string;
    // lease.Close(): the primary's watch of its flag (`watchExpectedPrimary`, v8.3.0+) sees the DELETE
    // and it steps down; a stale lease (a former primary's) revokes nothing, but the flag's PUT below
    // has the same effect on the primary. A primary before v8.3.0 watches no flag.
    if (st.primary !== undefined && !st.primary.dead && atLeast(st.primary.proc.version, 8, 3, 0)) this.stepDown(service);
    this.timers.cancel(st.flag?.timer);
    const flag: ServiceState['flag'] = { addr: toAddr };
    flag.timer = this.timers.after(this.leaderLeaseMs(proc.version), () => {
      if (st.flag !== flag) return;
      st.flag = undefined;
      this.flagExpired(service);
    });
    st.flag = flag;
    this.transfers.push({ service, pod: proc.pod, from: proc.name, to: chosen.name as string, toAddr, asked, time: Date.now() });
    this.schedule(service);
    return ginJson(200, 'success', true);
  }

  /**
   * `GET /metrics`: pkg/mcs/utils/util.go `PromHandler` (`promhttp.InstrumentMetricHandler(
   * prometheus.DefaultRegisterer, promhttp.HandlerFor(prometheus.DefaultGatherer, {DisableCompression:
   * true}))`; gin's gzip middleware still compresses, see `encodeReply`). The content type's `escaping`
   * term follows the release's prometheus/common (go.mod: v0.26.0 in v7.5.0, v0.46.0 in v8.0.0, none;
   * v0.51.1 from v8.1.0, v0.55.0 from v8.5.3 and in v9.0.0-beta.1: `values`). Families:
   * - `service_member_role{service}` (pkg/member/metrics.go `ServiceMemberGauge`): 1 from the moment
   *   the server became primary, 0 once it stepped down (pkg/tso/global_allocator.go
   *   `campaignLeader`, label `TSO Service Group 0` for the default keyspace group;
   *   pkg/mcs/scheduling/server/server.go `primaryElectionLoop`, `Scheduling Service`), absent before.
   * - `pd_server_info{hash,version}` (pkg/basicserver/metrics.go `ServerInfoGauge`, set by the
   *   servers' `startServer` from v8.0.0): the start in unix seconds; the tag and its commit.
   * - promhttp's own, and the Go and process collectors' `go_goroutines`, `go_threads`,
   *   `process_start_time_seconds`.
   * The many other families a pd-server binary registers are not modelled.
   */
  private metrics(proc: PdmsProcess): MsReply {
    const v = proc.version;
    const families: PromFamily[] = [
      ...goProcessFamilies(proc.startMs, proc.service === 'tso' ? 180 : 260, 14),
      ...promhttpFamilies(proc.scrapes),
    ];
    if (proc.role !== undefined) {
      const service = proc.service === 'tso' ? 'TSO Service Group 0' : 'Scheduling Service';
      families.push({
        name: 'service_member_role',
        help: 'The leader/primary of services',
        type: 'gauge',
        samples: [{ labels: { service }, value: proc.role }],
      });
    }
    if (atLeast(v, 8, 0, 0) && proc.servingSince !== undefined) {
      families.push({
        name: 'pd_server_info',
        help: 'Indicate the pd server info, and the value is the start timestamp (s).',
        type: 'gauge',
        samples: [{ labels: { version: v.text, hash: GIT_HASHES[v.text] ?? UNKNOWN_GIT_HASH }, value: proc.servingSince }],
      });
    }
    proc.scrapes++;
    const escaping: PromEscaping = atLeast(v, 8, 1, 0) ? 'values' : 'none';
    return { status: 200, headers: { 'content-type': promContentType(escaping) }, body: promText(families) };
  }

  /**
   * `GetHealth` (pkg/mcs/tso/server/apis/v1/api.go, v8.0.0+): the default keyspace group's allocator
   * manager (its error as text when this server is out of the group), then 200 `"ok"` (IndentedJSON)
   * while its member knows a primary (`IsLeaderElected`: the primary key exists, even a killed
   * primary's), else 500 text. Behind the redirector up to v8.5.3 (`route`).
   */
  private health(proc: PdmsProcess): MsReply {
    if (!this.inGroup(proc)) return ginString(500, ERR_NOT_SERVED);
    if (this.services.tso.primary !== undefined) return ginJson(200, 'ok', true);
    return ginString(500, 'no leader elected');
  }
}

/**
 * gin `c.BindJSON(&map[string]string)` (binding/json.go `decodeJSON`): a `json.Decoder` reads the first
 * value only (what follows it is ignored); an empty body is `EOF`, a cut one `unexpected EOF`, a
 * syntax error the scanner's text; a value of another kind `json: cannot unmarshal <kind> into Go value
 * of type ...`. `null` is a nil map.
 */
export function bindJsonStringMap(body: string): { value: Record<string, string> | null } | { error: string } {
  if (/^[ \t\r\n]*$/.test(body)) return { error: 'EOF' };
  let text = body;
  const syntax = jsonSyntaxError(body);
  if (syntax !== undefined) {
    if (syntax.message === 'unexpected end of JSON input') return { error: 'unexpected EOF' };
    if (!syntax.message.endsWith('after top-level value')) return { error: syntax.message };
    text = Buffer.from(body, 'utf8')
      .subarray(0, syntax.offset - 1)
      .toString('utf8');
  }
  const v: unknown = JSON.parse(text);
  if (v === null) return { value: null };
  const kind = (x: unknown) => (Array.isArray(x) ? 'array' : x === null ? 'null' : typeof x === 'boolean' ? 'bool' : typeof x);
  if (typeof v !== 'object' || Array.isArray(v))
    return { error: `json: cannot unmarshal ${kind(v)} into Go value of type map[string]string` };
  const out: Record<string, string> = {};
  for (const [k, x] of Object.entries(v as Record<string, unknown>)) {
    if (x !== null && typeof x !== 'string') return { error: `json: cannot unmarshal ${kind(x)} into Go value of type string` };
    out[k] = x ?? '';
  }
  return { value: out };
}

/**
 * What goes on the wire, through gin-contrib/gzip v0.0.1 (`shouldCompress`: the request accepts gzip,
 * is no upgrade nor event stream, and the path's extension is not an image's). Go's net/http sniffs
 * the content type of a body written without one: the plain texts here are `text/plain;
 * charset=utf-8`, a gzip stream `application/x-gzip`. gin's no-route answer never gets written under
 * the middleware: its deferred `gz.Close()` writes an empty stream first (gin.go `serveError` then
 * sees the response written).
 */
function encodeReply(reply: MsReply, req: http.IncomingMessage): { status: number; headers: Record<string, string>; body: Buffer } {
  const path = new URL(req.url ?? '/', 'http://pdms').pathname;
  const slash = path.lastIndexOf('/');
  const dot = path.lastIndexOf('.');
  const ext = dot > slash ? path.slice(dot) : '';
  const gzip =
    (req.headers['accept-encoding'] ?? '').includes('gzip') &&
    !(req.headers.connection ?? '').includes('Upgrade') &&
    !(req.headers['content-type'] ?? '').includes('text/event-stream') &&
    !['.png', '.gif', '.jpeg', '.jpg'].includes(ext);
  if (!gzip) {
    const headers = reply.sniffed ? { 'content-type': 'text/plain; charset=utf-8' } : reply.headers;
    return { status: reply.status, headers, body: Buffer.from(reply.body, 'utf8') };
  }
  const body = gzipSync(Buffer.from(reply.noRoute ? '' : reply.body, 'utf8'));
  const type = reply.sniffed || reply.noRoute ? { 'content-type': 'application/x-gzip' } : reply.headers;
  return { status: reply.status, headers: { ...type, 'content-encoding': 'gzip', vary: 'Accept-Encoding' }, body };
}

function closeServer(server: http.Server): Promise<void> {
  if (!server.listening) return Promise.resolve();
  const closed = new Promise<void>((resolve) => server.close(() => resolve()));
  server.closeAllConnections();
  return closed;
}
