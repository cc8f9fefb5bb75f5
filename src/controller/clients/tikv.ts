/**
 * What the controller asks a TiKV server itself, before the restart of its Pod in a rolling upgrade,
 * at the addresses tidb-operator uses (`pkg/tikvapi/tikv_control.go`):
 *
 * - its region leader count, from the status port's Prometheus text
 *   (`<pod>.<cluster>-tikv-peer.<ns>:20180/metrics`, gauge `tikv_raftstore_region_count{type="leader"}`,
 *   which TiKV refreshes every 10 s: tikv `components/raftstore/src/coprocessor/region_info_accessor.rs`);
 * - a log backup flush, gRPC `logbackup.LogBackup/FlushNow` on the server port 20160 (kvproto
 *   `proto/logbackuppb.proto`; tikv `components/backup-stream/src/service.rs`), so the restart loses
 *   no more than what was written since. FlushNow exists from TiKV v8.5.6 (tikv/tikv#18027, in the
 *   tags v8.5.6, v8.5.7, v9.0.0-beta.1 and master; not in v7.5.x, v8.1.x, v8.5.0 ... v8.5.5): older
 *   releases answer UNIMPLEMENTED even while a log backup task runs, as any TiKV does with
 *   `log-backup.enable` off.
 *
 * Both go over TLS with the cluster client certificate when the cluster has tlsCluster.
 */
import { BinaryReader, WireType } from '@bufbuild/protobuf/wire';
import type { ServiceError } from '@grpc/grpc-js';
import { PORT } from '../../tidbcluster/names';
import { podHost, type ClusterInfo } from '../model/cluster';
import { httpRequest, type ClientTls } from './http';

/** `<scheme>://<pod>.<cluster>-tikv-peer.<ns>:20180/metrics`. */
export const tikvMetricsUrl = (c: ClusterInfo, pod: string): string =>
  `${c.tls ? 'https' : 'http'}://${podHost(c, 'tikv', pod)}:${PORT.tikvStatus}/metrics`;

/** `<pod>.<cluster>-tikv-peer.<ns>:20160`, the gRPC target. */
export const tikvGrpcTarget = (c: ClusterInfo, pod: string): string => `${podHost(c, 'tikv', pod)}:${PORT.tikvServer}`;

const LEADER_SAMPLE = 'tikv_raftstore_region_count';

/**
 * The value of `tikv_raftstore_region_count{type="leader"}` in a Prometheus text exposition;
 * undefined when the sample is not there. Other labels on the sample are allowed.
 */
export function leaderCountFromMetrics(text: string): number | undefined {
  for (const raw of text.split('\n')) {
    const line = raw.trim();
    if (!line.startsWith(LEADER_SAMPLE)) continue;
    const m = /^tikv_raftstore_region_count\{([^}]*)\}\s+(\S+)/.exec(line);
    if (!m) continue;
    const labels = new Map<string, string>();
    for (const l of m[1].matchAll(/([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"/g)) labels.set(l[1], l[2]);
    if (labels.get('type') !== 'leader') continue;
    const value = Number(m[2]);
    return Number.isFinite(value) ? value : undefined;
  }
  return undefined;
}

/** The leaders a TiKV server says it holds; rejects when it cannot be asked or does not say. */
export async function tikvLeaderCount(url: string, tls?: ClientTls, timeoutMs = 5000): Promise<number> {
  const res = await httpRequest(url, { tls, timeoutMs });
  if (res.status !== 200) throw new Error(`GET ${url}: HTTP ${res.status}`);
  const count = leaderCountFromMetrics(res.body);
  if (count === undefined) throw new Error(`GET ${url}: no ${LEADER_SAMPLE}{type="leader"} sample`);
  return count;
}

/** One log backup task's answer to FlushNow (`logbackuppb.FlushResult`). */
export interface FlushResult {
  readonly taskName: string;
  readonly success: boolean;
  readonly errorMessage: string;
}

/** Decodes `logbackuppb.FlushNowResponse { repeated FlushResult results = 1; }`. */
export function decodeFlushNowResponse(bytes: Uint8Array): FlushResult[] {
  const r = new BinaryReader(bytes);
  const results: FlushResult[] = [];
  while (r.pos < r.len) {
    const [field, wire] = r.tag();
    if (field === 1 && wire === WireType.LengthDelimited) results.push(decodeFlushResult(r.bytes()));
    else r.skip(wire, field);
  }
  return results;
}

/** `FlushResult { string task_name = 1; bool success = 2; string error_message = 3; }` */
function decodeFlushResult(bytes: Uint8Array): FlushResult {
  const r = new BinaryReader(bytes);
  let taskName = '';
  let success = false;
  let errorMessage = '';
  while (r.pos < r.len) {
    const [field, wire] = r.tag();
    if (field === 1 && wire === WireType.LengthDelimited) taskName = r.string();
    else if (field === 2 && wire === WireType.Varint) success = r.bool();
    else if (field === 3 && wire === WireType.LengthDelimited) errorMessage = r.string();
    else r.skip(wire, field);
  }
  return { taskName, success, errorMessage };
}

/** The outcome of asking a TiKV to flush its log backup tasks. */
export interface FlushOutcome {
  /** True when every task flushed (or there was none); false with `detail` saying why not. */
  readonly ok: boolean;
  /**
   * False when the server answers UNIMPLEMENTED: log backup is off, or (before {@link FLUSH_NOW_SINCE})
   * the release has no FlushNow. Only the release tells the two apart.
   */
  readonly supported: boolean;
  readonly tasks: readonly string[];
  readonly detail: string;
}

export const FLUSH_NOW_METHOD = '/logbackup.LogBackup/FlushNow';

/** The first TiKV release with FlushNow (tikv/tikv#18027; `fn flush_now` in the v8.5.6 tag's service.rs, not in v8.5.5's). */
export const FLUSH_NOW_SINCE = 'v8.5.6';

/**
 * Calls FlushNow and waits for the answer, at most `timeoutMs` (tidb-operator gives it 3 minutes).
 * Never rejects: the caller restarts the store either way, as the operator does.
 */
export function flushLogBackup(target: string, tls?: ClientTls, timeoutMs = 180_000): Promise<FlushOutcome> {
  // Loaded on first use: most controllers never flush, and the gRPC stack is a third of the bundle's start-up.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { Client, credentials, Metadata, status: GrpcStatus } = require('@grpc/grpc-js') as typeof import('@grpc/grpc-js');
  const creds = tls ? credentials.createSsl(tls.ca, tls.key, tls.cert) : credentials.createInsecure();
  const client = new Client(target, creds);
  return new Promise<FlushOutcome>((resolve) => {
    client.makeUnaryRequest(
      FLUSH_NOW_METHOD,
      // FlushNowRequest has no fields: its encoding is empty.
      () => Buffer.alloc(0),
      (buf: Buffer) => decodeFlushNowResponse(buf),
      {},
      new Metadata(),
      { deadline: Date.now() + timeoutMs },
      (err: ServiceError | null, results?: FlushResult[]) => {
        if (err) {
          if (err.code === GrpcStatus.UNIMPLEMENTED)
            resolve({ ok: true, supported: false, tasks: [], detail: `${target} answered UNIMPLEMENTED to FlushNow` });
          else resolve({ ok: false, supported: true, tasks: [], detail: `FlushNow on ${target}: ${err.details || err.message}` });
          return;
        }
        const all = results ?? [];
        const failed = all.filter((t) => !t.success);
        const tasks = all.map((t) => t.taskName);
        if (failed.length > 0) {
          resolve({
            ok: false,
            supported: true,
            tasks,
            detail: failed.map((t) => `task ${t.taskName}: ${t.errorMessage || 'not flushed'}`).join('; '),
          });
        } else {
          resolve({ ok: true, supported: true, tasks, detail: tasks.length === 0 ? 'no log backup task' : `flushed ${tasks.join(', ')}` });
        }
      },
    );
  }).finally(() => client.close());
}
