/**
 * The log backup (PITR) tasks of a cluster as PD's etcd holds them, whoever started them (BR by hand,
 * tidb-operator): the keys under `/tidb/br-stream/` (pingcap/tidb br/pkg/streamhelper/models.go and
 * client.go; what TiKV writes, tikv components/backup-stream/src/metadata/keys.rs). Pure.
 *
 * - `info/<task>`: the task, a `brpb.StreamBackupTaskInfo` (kvproto proto/brpb.proto: storage = 1,
 *   start_ts = 2, end_ts = 3, name = 4);
 * - `checkpoint/<task>/central_global` (the TiDB advancer's global checkpoint) and
 *   `checkpoint/<task>/store/<id>` (each store's), 8-byte big-endian TSOs; the task's checkpoint is the
 *   global one when there is one, else the lowest store's, never below its start
 *   (streamhelper `GetGlobalCheckPointTS`);
 * - `pause/<task>`: present while paused; empty (older BR) or JSON (streamhelper client.go `PauseV2`:
 *   `severity`, `operation_hostname`, `operation_pid`, `operation_time`, `payload_type`, `payload`),
 *   `severity` `ERROR` for one a failure made, else `MANUAL` (`NewLocalPauseV2`). `MANUAL` covers two
 *   writers: `br log pause` (task/stream.go `RunStreamPause`, a text payload with `--message`), and
 *   TiDB's log backup advancer, which pauses a task whose checkpoint lags past its limit (advancer.go
 *   `importantTick` after `isCheckpointLagged`; `tidb_advancer_check_point_lag_limit`, 48 h by
 *   default) with no payload, from the TiDB server it runs in: `br log status` shows that host as
 *   the pause's operator;
 * - `last-error/<task>/<store>`: a `brpb.StreamBackupError` (happen_at = 1, error_code = 2,
 *   error_message = 3, store_id = 4).
 */
import { BinaryReader, WireType } from '@bufbuild/protobuf/wire';
import type { EtcdKeyValue } from '../clients/etcd';
import { compareCodeUnits } from '../../base/order';
import { names } from '../../tidbcluster/names';

/** The prefix every log backup key is under. */
export const BR_STREAM_PREFIX = '/tidb/br-stream/';

/**
 * The folders under {@link BR_STREAM_PREFIX} a task is read from, as tidb-operator reads them
 * (pkg/backup/backup/backup_tracker.go `queryAllLogBackupKeys`): not `ranges/`, a key per table range,
 * which a table filter over many tables makes the bulk of the prefix.
 */
export const TASK_KEY_FOLDERS = ['info/', 'checkpoint/', 'pause/', 'last-error/'] as const;

export interface LogBackupTask {
  readonly name: string;
  /** `Running`, `Paused` (asked for), or `Error` (paused by a failure). */
  readonly state: 'Running' | 'Paused' | 'Error';
  /** Where the log goes, as BR's storage URL (S3, GCS, Azure or local). @default none (not readable) */
  readonly storage?: string;
  readonly startTS: string;
  /** Up to where the log is complete: a restore can reach this TSO. */
  readonly checkpointTS: string;
  /** The checkpoint's time (RFC 3339), from the TSO's physical part. */
  readonly checkpointTime: string;
  /** How far the checkpoint is behind now, in seconds. */
  readonly lagSeconds: number;
  /** The stores' last errors, or why it paused. @default none */
  readonly error?: string;
  /** Who paused it and when, from its pause record. @default none (running, or older BR's empty record) */
  readonly pause?: LogTaskPause;
}

/** A task's pause record (`PauseV2`), as `br log status` shows it. */
export interface LogTaskPause {
  /** `MANUAL` or `ERROR`. */
  readonly severity: string;
  /** The host of the process that paused it (`operation_hostname`). @default none */
  readonly host?: string;
  /** When (`operation_time`, RFC 3339). @default none */
  readonly time?: string;
  /** The text `br log pause --message` attached. @default none */
  readonly message?: string;
  /**
   * TiDB's log backup advancer paused it for checkpoint lag: a `MANUAL` pause with no payload, written
   * from one of the cluster's TiDB Pods (`<cluster>-tidb-<n>`, the hostname of a Pod that does not use
   * the host's network). @default false
   */
  readonly lag?: boolean;
}

/** The cluster's log backup tasks as last read from PD (`at`: when), or why they could not be. */
export type LogBackupView = ({ readonly tasks: readonly LogBackupTask[] } | { readonly error: string }) & { readonly at: number };

export interface LogBackupTasksOptions {
  /** The TidbCluster's name, to know its TiDB Pods among the pausing hosts. @default none (no pause is known as the advancer's) */
  readonly cluster?: string;
}

/** The physical part of a TSO, in milliseconds since the epoch: its bits above the 18 logical ones. */
export const tsoMillis = (tso: bigint): number => Number(tso >> 18n);

/** The tasks under {@link BR_STREAM_PREFIX}, by name. */
export function logBackupTasks(kvs: readonly EtcdKeyValue[], now: number, options: LogBackupTasksOptions = {}): LogBackupTask[] {
  const under = (kind: string, task: string) =>
    kvs.filter((kv) => kv.key.startsWith(`${BR_STREAM_PREFIX}${kind}/${task}/`) || kv.key === `${BR_STREAM_PREFIX}${kind}/${task}`);
  const tasks: LogBackupTask[] = [];
  for (const kv of kvs) {
    if (!kv.key.startsWith(`${BR_STREAM_PREFIX}info/`)) continue;
    const name = kv.key.slice(`${BR_STREAM_PREFIX}info/`.length);
    const info = decodeTaskInfo(kv.value);
    const checkpoints = under('checkpoint', name);
    const global = checkpoints.find((c) => c.key === `${BR_STREAM_PREFIX}checkpoint/${name}/central_global`);
    const stores = checkpoints
      .filter((c) => c.key.startsWith(`${BR_STREAM_PREFIX}checkpoint/${name}/store/`))
      .map((c) => bigEndian(c.value))
      .filter((v): v is bigint => v !== undefined);
    let checkpoint = global ? (bigEndian(global.value) ?? 0n) : stores.length > 0 ? stores.reduce((a, b) => (b < a ? b : a)) : 0n;
    if (checkpoint < info.startTs) checkpoint = info.startTs;
    const pause = kvs.find((p) => p.key === `${BR_STREAM_PREFIX}pause/${name}`);
    const errors = under('last-error', name)
      .map((e) => decodeStreamError(e.value))
      .filter((e) => e !== '');
    const record = pause && pauseRecord(pause.value, options.cluster);
    const errorPause = pause !== undefined && (record?.severity === 'ERROR' || errors.length > 0);
    const physical = tsoMillis(checkpoint);
    tasks.push({
      name,
      state: pause === undefined ? 'Running' : errorPause ? 'Error' : 'Paused',
      ...(info.storage && { storage: info.storage }),
      startTS: info.startTs.toString(),
      checkpointTS: checkpoint.toString(),
      checkpointTime: new Date(physical).toISOString().replace(/\.\d{3}Z$/, 'Z'),
      lagSeconds: Math.max(0, Math.round((now - physical) / 1000)),
      ...(errors.length > 0 && { error: errors.join('; ') }),
      ...(record && { pause: record }),
    });
  }
  return tasks.sort((a, b) => compareCodeUnits(a.name, b.name));
}

function bigEndian(value: Buffer): bigint | undefined {
  return value.length === 8 ? value.readBigUInt64BE(0) : undefined;
}

/** The pause record; undefined for the empty value older BR writes (a pause asked for). */
function pauseRecord(value: Buffer, cluster: string | undefined): LogTaskPause | undefined {
  if (value.length === 0) return undefined;
  let v: Record<string, unknown>;
  try {
    v = JSON.parse(value.toString('utf8')) as Record<string, unknown>;
    if (typeof v !== 'object' || v === null) return { severity: 'MANUAL' };
  } catch {
    return { severity: 'MANUAL' };
  }
  const text = (k: string) => (typeof v[k] === 'string' && v[k] !== '' ? (v[k] as string) : undefined);
  const severity = text('severity') ?? 'MANUAL';
  const host = text('operation_hostname');
  const time = text('operation_time');
  const type = text('payload_type');
  // Go's encoding/json writes a []byte as base64.
  const payload = text('payload') !== undefined ? Buffer.from(text('payload')!, 'base64') : undefined;
  const message = type?.startsWith('text/plain') && payload ? payload.toString('utf8') : undefined;
  const pods = cluster !== undefined ? `${names.statefulSet(cluster, 'tidb')}-` : undefined;
  const tidb = pods !== undefined && host !== undefined && host.startsWith(pods) && /^\d+$/.test(host.slice(pods.length));
  const lag = severity === 'MANUAL' && type === undefined && (payload === undefined || payload.length === 0) && tidb;
  return { severity, ...(host && { host }), ...(time && { time }), ...(message && { message }), ...(lag && { lag }) };
}

/** `StreamBackupTaskInfo`: its start TS and storage URL. */
function decodeTaskInfo(buf: Buffer): { startTs: bigint; storage?: string } {
  let startTs = 0n;
  let storage: string | undefined;
  try {
    const r = new BinaryReader(buf);
    while (r.pos < r.len) {
      const [no, type] = r.tag();
      if (no === 2 && type === WireType.Varint) startTs = BigInt(r.uint64());
      else if (no === 1 && type === WireType.LengthDelimited) storage = storageUrl(r.bytes());
      else r.skip(type);
    }
  } catch {
    // A value this reader does not understand: the task is still listed.
  }
  return { startTs, ...(storage && { storage }) };
}

/** `StorageBackend`: local (2: path = 1), s3 (3: bucket = 3, prefix = 4), gcs (4: bucket = 2, prefix = 3), azure (7: bucket = 2, prefix = 3). */
function storageUrl(buf: Uint8Array): string | undefined {
  const r = new BinaryReader(buf);
  while (r.pos < r.len) {
    const [no, type] = r.tag();
    if (type !== WireType.LengthDelimited) {
      r.skip(type);
      continue;
    }
    const fields = strings(r.bytes());
    if (no === 2) return `local://${fields[1] ?? ''}`;
    if (no === 3) return `s3://${fields[3] ?? ''}/${fields[4] ?? ''}`;
    if (no === 4) return `gcs://${fields[2] ?? ''}/${fields[3] ?? ''}`;
    if (no === 7) return `azure://${fields[2] ?? ''}/${fields[3] ?? ''}`;
  }
  return undefined;
}

function strings(buf: Uint8Array): Record<number, string> {
  const out: Record<number, string> = {};
  const r = new BinaryReader(buf);
  while (r.pos < r.len) {
    const [no, type] = r.tag();
    if (type === WireType.LengthDelimited) out[no] = Buffer.from(r.bytes()).toString('utf8');
    else r.skip(type);
  }
  return out;
}

/** `StreamBackupError`: `<error_code>: <error_message>` (store <id>). */
function decodeStreamError(buf: Buffer): string {
  let code = '';
  let message = '';
  let store = '';
  try {
    const r = new BinaryReader(buf);
    while (r.pos < r.len) {
      const [no, type] = r.tag();
      if (no === 2 && type === WireType.LengthDelimited) code = r.string();
      else if (no === 3 && type === WireType.LengthDelimited) message = r.string();
      else if (no === 4 && type === WireType.Varint) store = String(r.uint64());
      else r.skip(type);
    }
  } catch {
    return '';
  }
  const text = [code, message].filter((s) => s !== '').join(': ');
  return text === '' ? '' : `${text}${store ? ` (store ${store})` : ''}`;
}
