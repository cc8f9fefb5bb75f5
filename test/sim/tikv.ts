/**
 * The two ports of a TiKV server the controller talks to directly, one pair per Pod, for scenario
 * tests: the status port 20180 (`GET /metrics`) and the gRPC server port 20160 (log backup's
 * `FlushNow`). The store itself (registration, leaders, heartbeats) is PD's side, in the PD simulator;
 * this one reads the leaders a store holds from there.
 *
 * What a tikv-server answers, as tikv/tikv does (v8.5.x; FlushNow per release, below):
 * - `GET /metrics` (src/server/status_server/mod.rs `handle_get_metrics`): the Prometheus text format,
 *   content type `prometheus::TEXT_FORMAT` (`text/plain; version=0.0.4`); gzip only when the request
 *   accepts it, which the controller's client never says, so not modelled. The gauge
 *   `tikv_raftstore_region_count` with label `type` = `region`, `leader`, `buckets`
 *   (components/raftstore/src/coprocessor/metrics.rs) is set by the region collector's timer every
 *   10 s (components/raftstore/src/coprocessor/region_info_accessor.rs `on_timeout`,
 *   METRICS_FLUSH_INTERVAL): until its first tick after
 *   the start the family is absent, and between ticks it shows the count of the last one.
 * - `GET /config`, `POST /config`: the process's config (its Pod's config file, then what was
 *   changed online), answered as tikv-config.ts says.
 * - Any other method or path: `make_response(StatusCode::NOT_FOUND, "path not found")`, a 404 with
 *   that body and no content type (the real server has more routes than this model: `/status`, ...).
 * - gRPC `/logbackup.LogBackup/FlushNow` (kvproto proto/logbackuppb.proto;
 *   components/backup-stream/src/service.rs `flush_now`): flushes every log backup task and answers
 *   `FlushNowResponse { repeated FlushResult results = 1 }`, one `{task_name, success,
 *   error_message}` per task, none when there is no task. The service exists only while
 *   `log-backup.enable` is on (components/server/src/server.rs registers `create_log_backup` only
 *   when the backup-stream scheduler exists); otherwise the
 *   call ends with UNIMPLEMENTED, as for any unknown method.
 *   FlushNow itself came with tikv/tikv#18027 (commit 222019fb, kvproto pingcap/kvproto#1285): the
 *   tags v8.5.6, v8.5.7, v9.0.0-beta.1 and master have `fn flush_now` in service.rs; v7.5.x, v8.1.x,
 *   v8.2.0 ... v8.4.0 and v8.5.0 ... v8.5.5 do not (their LogBackup service has only
 *   GetLastFlushTSOfRegion and SubscribeFlushEvent). There grpcio answers the unregistered method
 *   with UNIMPLEMENTED and no message (grpcio `execute_unimplemented`), even while a task runs: the
 *   simulator plays that by the Pod's image tag (`version`), as it does with the service off.
 *
 * Records for tests: `flushes` (which Pod, when, and the leaders its store held then), `requests`.
 */
import * as http from 'node:http';
import { Server, ServerCredentials, status, type ServerUnaryCall, type sendUnaryData } from '@grpc/grpc-js';
import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import type { PdSim } from './pd-api';
import { TikvConfig } from './tikv-config';

export interface TikvSimOptions {
  /** The status port. @default 20180 */
  statusPort?: number;
  /** The gRPC server port. @default 20160 */
  grpcPort?: number;
  /** How often the region collector refreshes the gauge (TiKV: 10 s). @default 10000 */
  metricsRefreshMs?: number;
  /** `log-backup.enable`: the LogBackup service is registered. @default true */
  logBackup?: boolean;
  /** The log backup tasks; one with `error` fails to flush with that message. @default [] */
  logBackupTasks?: { name: string; error?: string }[];
  /** The TiKV release played when `serverStart` is given none (a Pod's image tag). @default 'v8.5.7' */
  version?: string;
  /** The config file a Pod's server reads when it starts (its ConfigMap's `config-file`). @default none */
  configFile?: (pod: string) => string | undefined;
}

/** The first release with FlushNow (tikv/tikv#18027; tags v8.5.6, v8.5.7, v9.0.0-beta.1, master). */
export const FLUSH_NOW_SINCE = [8, 5, 6] as const;

/** Whether a TiKV release serves FlushNow: v8.5.6 and later (`nightly`/`latest` as master). */
export function hasFlushNow(version: string): boolean {
  if (/^(nightly|latest)$/.test(version)) return true;
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(version);
  if (!m) throw new Error(`TiKV simulator: not a version: ${version}`);
  for (let i = 0; i < 3; i++) {
    const d = Number(m[i + 1]) - FLUSH_NOW_SINCE[i];
    if (d !== 0) return d > 0;
  }
  return true;
}

export interface TikvFlush {
  readonly pod: string;
  /** The release the Pod ran: one without FlushNow answered UNIMPLEMENTED and flushed nothing. */
  readonly version: string;
  readonly answered: 'flushed' | 'unimplemented';
  readonly time: number;
  /** Leaders the store held when the flush was asked for. */
  readonly leaders: number;
}

interface TikvProcess {
  readonly pod: string;
  readonly status: http.Server;
  readonly grpc: Server;
  readonly timer: NodeJS.Timeout;
  /** Its config: the file as it started, then online changes. */
  readonly config: TikvConfig;
  /** The gauge as of the collector's last tick; undefined before the first. */
  gauge?: { region: number; leader: number };
}

export const FLUSH_NOW_PATH = '/logbackup.LogBackup/FlushNow';

/** `FlushNowResponse` in protobuf's wire format. */
function encodeFlushNowResponse(results: readonly { taskName: string; success: boolean; errorMessage: string }[]): Buffer {
  const w = new BinaryWriter();
  for (const r of results) {
    w.tag(1, WireType.LengthDelimited).fork();
    // proto3 leaves default values out, as the Rust encoder does.
    if (r.taskName) w.tag(1, WireType.LengthDelimited).string(r.taskName);
    if (r.success) w.tag(2, WireType.Varint).bool(true);
    if (r.errorMessage) w.tag(3, WireType.LengthDelimited).string(r.errorMessage);
    w.join();
  }
  return Buffer.from(w.finish());
}

export class TikvSim {
  readonly flushes: TikvFlush[] = [];
  readonly requests: { pod: string; path: string }[] = [];
  private readonly procs = new Map<string, TikvProcess>();
  private readonly o: Required<TikvSimOptions>;

  constructor(
    private readonly pd: PdSim,
    options: TikvSimOptions = {},
  ) {
    this.o = {
      statusPort: 20180,
      grpcPort: 20160,
      metricsRefreshMs: 10_000,
      logBackup: true,
      logBackupTasks: [],
      version: 'v8.5.7',
      configFile: () => undefined,
      ...options,
    };
  }

  /** The Pod's tikv-server (release `version`, its image tag) listens on `ip`; resolves once both ports do. */
  async serverStart(pod: string, ip: string, version = this.o.version): Promise<void> {
    await this.serverStop(pod);
    const flushes = hasFlushNow(version);
    const grpc = new Server();
    if (this.o.logBackup) {
      grpc.addService(
        {
          FlushNow: {
            path: FLUSH_NOW_PATH,
            requestStream: false,
            responseStream: false,
            requestSerialize: () => Buffer.alloc(0),
            requestDeserialize: () => ({}),
            responseSerialize: (v: Parameters<typeof encodeFlushNowResponse>[0]) => encodeFlushNowResponse(v),
            responseDeserialize: () => [],
          },
        },
        {
          FlushNow: (_call: ServerUnaryCall<unknown, unknown>, done: sendUnaryData<unknown>) => this.flushNow(pod, version, flushes, done),
        },
      );
    }
    const proc: TikvProcess = {
      pod,
      status: http.createServer((req, res) => this.serveStatus(proc, req, res)),
      grpc,
      timer: setInterval(() => this.collect(proc), this.o.metricsRefreshMs),
      config: new TikvConfig(version, this.o.configFile(pod)),
    };
    this.procs.set(pod, proc);
    await new Promise<void>((resolve, reject) => {
      proc.status.once('error', reject);
      proc.status.listen(this.o.statusPort, ip, () => resolve());
    });
    await new Promise<void>((resolve, reject) =>
      grpc.bindAsync(`${ip}:${this.o.grpcPort}`, ServerCredentials.createInsecure(), (err) => (err ? reject(err) : resolve())),
    );
  }

  async serverStop(pod: string): Promise<void> {
    const proc = this.procs.get(pod);
    if (!proc) return;
    this.procs.delete(pod);
    clearInterval(proc.timer);
    proc.grpc.forceShutdown();
    proc.status.closeAllConnections();
    await new Promise<void>((resolve) => proc.status.close(() => resolve()));
  }

  async close(): Promise<void> {
    await Promise.all([...this.procs.keys()].map((p) => this.serverStop(p)));
  }

  /** The region collector's tick: the gauge takes the store's counts now. */
  private collect(proc: TikvProcess): void {
    const store = this.pd.store(proc.pod);
    proc.gauge = { region: store?.regionCount ?? 0, leader: store?.leaderCount ?? 0 };
  }

  private flushNow(pod: string, version: string, served: boolean, done: sendUnaryData<unknown>): void {
    const leaders = this.pd.store(pod)?.leaderCount ?? 0;
    if (!served) {
      // The method is not registered in this release: grpcio's `execute_unimplemented`, no message.
      this.flushes.push({ pod, version, answered: 'unimplemented', time: Date.now(), leaders });
      done({ code: status.UNIMPLEMENTED, details: '' });
      return;
    }
    this.flushes.push({ pod, version, answered: 'flushed', time: Date.now(), leaders });
    const results = this.o.logBackupTasks.map((t) => ({ taskName: t.name, success: t.error === undefined, errorMessage: t.error ?? '' }));
    done(null, results);
  }

  private serveStatus(proc: TikvProcess, req: http.IncomingMessage, res: http.ServerResponse): void {
    const path = (req.url ?? '/').split('?')[0];
    this.requests.push({ pod: proc.pod, path });
    if (path === '/config' && (req.method === 'GET' || req.method === 'POST')) {
      this.serveConfig(proc, req, res);
      return;
    }
    if (req.method !== 'GET' || path !== '/metrics') {
      res.writeHead(404);
      res.end('path not found');
      return;
    }
    const lines: string[] = [];
    if (proc.gauge) {
      lines.push(
        '# HELP tikv_raftstore_region_count Number of regions collected in region_collector',
        '# TYPE tikv_raftstore_region_count gauge',
        'tikv_raftstore_region_count{type="buckets"} 0',
        `tikv_raftstore_region_count{type="leader"} ${proc.gauge.leader}`,
        `tikv_raftstore_region_count{type="region"} ${proc.gauge.region}`,
      );
    }
    lines.push(
      '# HELP tikv_server_cpu_cores_quota Total CPU cores quota for TiKV server',
      '# TYPE tikv_server_cpu_cores_quota gauge',
      'tikv_server_cpu_cores_quota 2',
    );
    res.writeHead(200, { 'content-type': 'text/plain; version=0.0.4' });
    res.end(`${lines.join('\n')}\n`);
  }

  /** The value a running Pod's server holds for a dotted config key; undefined when it does not run or holds none. */
  configValue(pod: string, key: string): string | number | boolean | undefined {
    return this.procs.get(pod)?.config.get(key);
  }

  /** `GET /config` (src/server/status_server/mod.rs `get_config`) and `POST /config` (`update_config`). */
  private serveConfig(proc: TikvProcess, req: http.IncomingMessage, res: http.ServerResponse): void {
    if (req.method === 'GET') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify(proc.config.json()));
      return;
    }
    const persist = new URL(req.url ?? '/', 'http://tikv').searchParams.get('persist') !== 'false';
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const answer = proc.config.update(Buffer.concat(chunks).toString('utf8'), persist);
      res.writeHead(answer.status);
      res.end(answer.body);
    });
  }
}
