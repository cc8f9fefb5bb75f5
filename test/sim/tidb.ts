/**
 * TiDB servers' status port for scenario tests of the controller: one process per Pod, serving the two
 * routes the controller uses on `<ip>:10080` (a scenario gives every Pod its own loopback IP and maps
 * `<pod>.<cluster>-tidb-peer.<ns>` to it).
 *
 * What a tidb-server answers, as pingcap/tidb does (v8.5.x):
 * - `GET /info` (pkg/server/handler/tikvhandler/tikv_handler.go `ServerInfoHandler`): `is_owner`,
 *   `max_procs`, `gogc`, then the embedded ServerInfo (pkg/domain/serverinfo/info.go `StaticInfo`:
 *   `version`, `git_hash`, `ddl_id`, `ip`, `listening_port`, `status_port`, `lease`,
 *   `start_timestamp`, `server_id`; `DynamicInfo`: `labels`), written by `handler.WriteData`:
 *   `json.MarshalIndent(data, "", " ")`, 200, `application/json` (pkg/server/handler/util.go).
 * - `POST /labels` (tikv_handler_settings.go `LabelHandler`): the body decodes into a
 *   map[string]string; a non-empty one is merged over the labels the server has (keys of the body win,
 *   the others stay), stored in the global config and in the server info; the answer is the labels,
 *   by `WriteData`. Another method, or a body that is not such a map, gets `handler.WriteError`: 400
 *   with the error text. An empty map changes nothing.
 * - The labels live in memory: a restart starts again from the config file's `[labels]`.
 * - `POST /upgrade/{start,finish}` (pkg/server/handler/upgrade_handler.go `ClusterUpgradeHandler`,
 *   routed in pkg/server/http_status.go from v7.4.0 and from v7.1.2 on the 7.1 line, pingcap/tidb#45887
 *   and #46276; v7.1.0, v7.1.1, v7.2.0 and v7.3.0 answer gorilla/mux's 404): the cluster-wide upgrade state, which lives in
 *   the cluster (TiKV), not in one server, so it outlives TiDB restarts. `start` pauses DDL and answers
 *   `"success!"`, or, already paused, `"It's a duplicated operation and the cluster is already in
 *   upgrading state."`; `finish` resumes it (`"success!"`, or the duplicate's `"... already in normal
 *   state."`), all by `WriteData` (a JSON string). Releases before v7.5.0 (the tree before `pkg/`,
 *   server/handler/upgrade_handler.go) write "duplicated op" where later ones write "duplicated
 *   operation". Another method: 400 `This API only support POST method`; another operation: 400
 *   `wrong operation:<op>` (`show` is not modelled).
 * - `/metrics` (any method; pkg/server/http_status.go `startHTTPServer`: `router.Handle("/metrics",
 *   promhttp.Handler())`; server/http_status.go before v7.5): the default registry in the Prometheus
 *   text format, gzipped for a client that accepts it (see `metrics`).
 * - `/status` (any method; pkg/server/http_status.go `handleStatus`): 200 with `connections`,
 *   `version`, `git_hash` and `status.init_stats_percentage` (`json.Marshal`, `application/json`);
 *   500 with no body once the server is shutting down (`health` false), see `shutDown`.
 * - Other paths: gorilla/mux's not-found handler, 404 `404 page not found`.
 *
 * Records for tests: `requests` (method, path, pod), `unsimulated` (paths this model does not serve),
 * `upgradeOps` (each successful start or finish, with the time and whether it changed the state).
 */
import * as http from 'node:http';
import { randomUUID } from 'node:crypto';
import { goProcessFamilies, promhttpAnswer, promhttpFamilies, type PromEscaping, type PromFamily } from './prom-text';

export interface TidbSimOptions {
  /** The release, as in the image tag. @default 'v8.5.0' */
  version?: string;
  /** The status port. @default 10080 */
  port?: number;
  /** `[labels]` of the config file: what a server starts with. @default {} */
  configLabels?: Record<string, string>;
}

interface TidbProcess {
  readonly pod: string;
  readonly ip: string;
  readonly server: http.Server;
  readonly ddlId: string;
  /** Unix seconds: `/info`'s `start_timestamp`. */
  readonly startedAt: number;
  /** Epoch ms: `process_start_time_seconds`. */
  readonly startedMs: number;
  labels: Record<string, string>;
  /** Set by `shutDown`: `/status` answers 500, as a server does once its shutdown began. */
  shuttingDown?: boolean;
  /** `/metrics` scrapes answered (`promhttp_metric_handler_requests_total{code="200"}`). */
  scrapes: number;
}

export interface TidbRequest {
  readonly pod: string;
  readonly method: string;
  readonly path: string;
  readonly body: string;
}

const json = (data: unknown) => JSON.stringify(data, null, ' ');

export class TidbSim {
  readonly requests: TidbRequest[] = [];
  /** Each `/upgrade/{op}` that succeeded, in order. */
  readonly upgradeOps: { pod: string; op: 'start' | 'finish'; time: number; changed: boolean }[] = [];
  /** DDL paused cluster-wide by `/upgrade/start` (kept in the cluster, so across TiDB restarts). */
  ddlPaused = false;
  readonly unsimulated: string[] = [];
  private readonly procs = new Map<string, TidbProcess>();
  private readonly o: Required<TidbSimOptions>;
  /** Version per Pod, for a rolling upgrade from an old release. */
  private readonly versions = new Map<string, string>();

  constructor(options: TidbSimOptions = {}) {
    this.o = { version: 'v8.5.0', port: 10080, configLabels: {}, ...options };
  }

  /** The release a Pod's next start runs (an image change). */
  setVersion(pod: string, version: string): void {
    this.versions.set(pod, version);
  }

  /** The Pod's tidb-server starts and serves on `ip` (running `version`, its image tag, when given); resolves once it listens. */
  async serverStart(pod: string, ip: string, version?: string): Promise<void> {
    await this.serverStop(pod);
    if (version !== undefined) this.versions.set(pod, version);
    const proc: TidbProcess = {
      pod,
      ip,
      server: http.createServer((req, res) => this.serve(proc, req, res)),
      ddlId: randomUUID(),
      startedAt: Math.floor(Date.now() / 1000),
      startedMs: Date.now(),
      labels: { ...this.o.configLabels },
      scrapes: 0,
    };
    this.procs.set(pod, proc);
    await new Promise<void>((resolve, reject) => {
      proc.server.once('error', reject);
      proc.server.listen(this.o.port, ip, () => resolve());
    });
  }

  /** The process ends; the labels set over HTTP go with it. */
  async serverStop(pod: string): Promise<void> {
    const proc = this.procs.get(pod);
    if (!proc) return;
    this.procs.delete(pod);
    proc.server.closeAllConnections();
    await new Promise<void>((resolve) => proc.server.close(() => resolve()));
  }

  /** The port the Pod's server listens on (the configured one, or the one the system gave for port 0). */
  port(pod: string): number | undefined {
    const a = this.procs.get(pod)?.server.address();
    return typeof a === 'object' && a !== null ? a.port : undefined;
  }

  /** The server begins to shut down (`graceful-wait-before-shutdown`): `/status` answers 500 from now on. */
  shutDown(pod: string): void {
    const proc = this.procs.get(pod);
    if (proc) proc.shuttingDown = true;
  }

  /** The labels the running server has (undefined when it does not run). */
  labels(pod: string): Record<string, string> | undefined {
    const p = this.procs.get(pod);
    return p && { ...p.labels };
  }

  async close(): Promise<void> {
    await Promise.all([...this.procs.keys()].map((p) => this.serverStop(p)));
  }

  private versionOf(pod: string): string {
    return this.versions.get(pod) ?? this.o.version;
  }

  /**
   * `/metrics`: `promhttp.Handler()` on the default registry. Families modelled (pkg/metrics/server.go,
   * registered by pkg/metrics/metrics.go `RegisterMetrics`):
   * - `tidb_server_info{hash,version}` = the server's start in unix seconds (`/info`'s
   *   `start_timestamp`), set with it (pkg/domain/infosync/info.go `getServerInfo`):
   *   `mysql.TiDBReleaseVersion` (the tag) and the git hash `/info` shows.
   * - `tidb_monitor_time_jump_back_total` 0.
   * - promhttp's own, and client_golang's `go_goroutines`, `go_threads`, `process_start_time_seconds`.
   * `tidb_server_connections{resource_group}` exists only once a MySQL client connected (the gauge
   * vector's child is made on the first connection, pkg/server/conn.go), which this model has none of.
   */
  private metrics(proc: TidbProcess, acceptEncoding: string | string[] | undefined) {
    const release = this.versionOf(proc.pod);
    const families: PromFamily[] = [
      ...goProcessFamilies(proc.startedMs, 640, 30),
      ...promhttpFamilies(proc.scrapes),
      {
        name: 'tidb_server_info',
        help: 'Indicate the tidb server info, and the value is the start timestamp (s).',
        type: 'gauge',
        samples: [{ labels: { version: release, hash: '0000000000000000000000000000000000000000' }, value: proc.startedAt }],
      },
      {
        name: 'tidb_monitor_time_jump_back_total',
        help: 'Counter of system time jumps backward.',
        type: 'counter',
        samples: [{ value: 0 }],
      },
    ];
    proc.scrapes++;
    return promhttpAnswer(families, tidbEscaping(release), acceptEncoding);
  }

  private serve(proc: TidbProcess, req: http.IncomingMessage, res: http.ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const path = (req.url ?? '/').split('?')[0];
      const method = req.method ?? 'GET';
      this.requests.push({ pod: proc.pod, method, path, body });
      const send = (status: number, text: string, type = 'text/plain; charset=utf-8') => {
        res.writeHead(status, { 'content-type': type });
        res.end(text);
      };
      const data = (d: unknown) => send(200, json(d), 'application/json');
      if (path === '/metrics') {
        const a = this.metrics(proc, req.headers['accept-encoding']);
        res.writeHead(a.status, a.headers);
        res.end(a.body);
        return;
      }
      if (path === '/status') {
        // Any method (mux's HandleFunc without Methods); 500 with no body once shutting down.
        if (proc.shuttingDown) return send(500, '', 'application/json');
        return send(
          200,
          JSON.stringify({
            connections: 0,
            version: `8.0.11-TiDB-${this.versionOf(proc.pod)}`,
            git_hash: '0000000000000000000000000000000000000000',
            status: { init_stats_percentage: 100 },
          }),
          'application/json',
        );
      }
      if (path === '/info') {
        const release = this.versionOf(proc.pod);
        return data({
          is_owner: false,
          max_procs: 2,
          gogc: 100,
          version: `8.0.11-TiDB-${release}`,
          git_hash: '0000000000000000000000000000000000000000',
          ddl_id: proc.ddlId,
          ip: proc.ip,
          listening_port: 4000,
          status_port: this.o.port,
          lease: '45s',
          start_timestamp: proc.startedAt,
          server_id: 0,
          labels: proc.labels,
        });
      }
      if (path === '/labels') {
        // The labels route came with v6.3.0 (tidb-operator gates on it: `tidbSupportLabelsMinVersin`); older servers answer mux's 404.
        if (!/^v(\d+)\.(\d+)/.test(this.versionOf(proc.pod)) || olderThan(this.versionOf(proc.pod), [6, 3]))
          return send(404, '404 page not found\n');
        if (method !== 'POST') return send(400, 'This api only support POST method');
        let parsed: unknown;
        try {
          parsed = JSON.parse(body);
        } catch {
          const first = body.trim()[0];
          return send(400, first === undefined ? 'EOF' : `invalid character '${first}' looking for beginning of value`);
        }
        if (parsed === null) return data(proc.labels);
        if (typeof parsed !== 'object' || Array.isArray(parsed)) {
          return send(
            400,
            `json: cannot unmarshal ${Array.isArray(parsed) ? 'array' : typeof parsed} into Go value of type map[string]string`,
          );
        }
        const bad = Object.values(parsed as object).find((v) => typeof v !== 'string');
        if (bad !== undefined)
          return send(
            400,
            `json: cannot unmarshal ${bad === null ? 'null' : Array.isArray(bad) ? 'array' : typeof bad} into Go value of type string`,
          );
        const labels = parsed as Record<string, string>;
        if (Object.keys(labels).length > 0) proc.labels = { ...proc.labels, ...labels };
        return data(proc.labels);
      }
      const upgrade = /^\/upgrade\/([^/]+)$/.exec(path);
      if (upgrade && hasUpgradeApi(this.versionOf(proc.pod))) {
        if (method !== 'POST') return send(400, 'This API only support POST method');
        const op = upgrade[1];
        if (op !== 'start' && op !== 'finish') return send(400, `wrong operation:${op}`);
        const already = op === 'start' ? this.ddlPaused : !this.ddlPaused;
        this.ddlPaused = op === 'start';
        this.upgradeOps.push({ pod: proc.pod, op, time: Date.now(), changed: !already });
        if (!already) return data('success!');
        const word = olderThan(this.versionOf(proc.pod), [7, 5]) ? 'op' : 'operation';
        return data(`It's a duplicated ${word} and the cluster is already in ${op === 'start' ? 'upgrading' : 'normal'} state.`);
      }
      this.unsimulated.push(`${method} ${path}`);
      send(404, '404 page not found\n');
    });
  }
}

/**
 * The content type's `escaping` term (see pdms `PromEscaping`) by release, from the prometheus/common
 * the release's go.mod selects. TiDB's go.mod at its tags was not at hand; pingcap/tiflow's is, and
 * it requires TiDB of the same branch, so it selects at least TiDB's version, and the commits that
 * moved its TiDB dependency moved prometheus/common with it: v0.46.0 with TiDB of 2024-02 (v8.0),
 * v0.52.2 with TiDB of 2024-04-15 (v8.1), v0.55.0 with 2024-07, v0.57.0 with 2024-09-20 (client_golang
 * v1.19.1 to v1.20.2 in the same commit) and TiDB release-8.5 up to 2025-04, v0.65.0 with release-8.5
 * of 2026-03 (tiflow v8.5.6); pingcap/ticdc's moves of its TiDB release-8.5 dependency place that last
 * change between 2025-11-21 and 2026-01-30. So: none before v8.1, `values` in v8.1 to v8.5.5 (v8.5.5,
 * released 2025-12-23, is not pinned down), `underscores` from v8.5.6.
 */
function tidbEscaping(version: string): PromEscaping {
  const m = /^v(\d+)\.(\d+)\.(\d+)/.exec(version);
  // nightly, latest: master, ahead of release-8.5 (v0.65.0).
  if (!m) return 'underscores';
  const [a, b, c] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (a < 8 || (a === 8 && b < 1)) return 'none';
  if (a === 8 && b === 5 && c >= 6) return 'underscores';
  return a > 8 ? 'underscores' : 'values';
}

/** `/upgrade/{op}` is routed from v7.4.0, and on the 7.1 line from v7.1.2 (pingcap/tidb#46276). */
function hasUpgradeApi(version: string): boolean {
  const m = /^v(\d+)\.(\d+)\.(\d+)/.exec(version);
  if (!m) return true;
  const [major, minor, patch] = [Number(m[1]), Number(m[2]), Number(m[3])];
  if (major !== 7) return major > 7;
  return minor >= 4 || (minor === 1 && patch >= 2);
}

function olderThan(version: string, than: readonly number[]): boolean {
  const m = /^v(\d+)\.(\d+)/.exec(version);
  if (!m) return false;
  const v = [Number(m[1]), Number(m[2])];
  return v[0] !== than[0] ? v[0] < than[0] : v[1] < than[1];
}
