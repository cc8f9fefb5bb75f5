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
 * - `pause/<task>`: present while paused; empty (older BR) or JSON whose `severity` is `MANUAL` for a
 *   pause asked for, `ERROR` for one a failure made (streamhelper `PauseV2`);
 * - `last-error/<task>/<store>`: a `brpb.StreamBackupError` (happen_at = 1, error_code = 2,
 *   error_message = 3, store_id = 4).
 */
import { BinaryReader, WireType } from '@bufbuild/protobuf/wire';
import type { EtcdKeyValue } from '../clients/etcd';
import { compareCodeUnits } from '../../base/order';

/** The prefix every log backup key is under. */
export const BR_STREAM_PREFIX = '/tidb/br-stream/';

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
}

/** The physical part of a TSO, in milliseconds since the epoch: its bits above the 18 logical ones. */
export const tsoMillis = (tso: bigint): number => Number(tso >> 18n);

/** The tasks under {@link BR_STREAM_PREFIX}, by name. */
export function logBackupTasks(kvs: readonly EtcdKeyValue[], now: number): LogBackupTask[] {
  const under = (kind: string, task: string) => kvs.filter((kv) => kv.key.startsWith(`${BR_STREAM_PREFIX}${kind}/${task}/`) || kv.key === `${BR_STREAM_PREFIX}${kind}/${task}`);
  const tasks: LogBackupTask[] = [];
  for (const kv of kvs) {
    if (!kv.key.startsWith(`${BR_STREAM_PREFIX}info/`)) continue;
    const name = kv.key.slice(`${BR_STREAM_PREFIX}info/`.length);
    const info = decodeTaskInfo(kv.value);
    const checkpoints = under('checkpoint', name);
    const global = checkpoints.find((c) => c.key === `${BR_STREAM_PREFIX}checkpoint/${name}/central_global`);
    const stores = checkpoints.filter((c) => c.key.startsWith(`${BR_STREAM_PREFIX}checkpoint/${name}/store/`)).map((c) => bigEndian(c.value)).filter((v): v is bigint => v !== undefined);
    let checkpoint = global ? (bigEndian(global.value) ?? 0n) : stores.length > 0 ? stores.reduce((a, b) => (b < a ? b : a)) : 0n;
    if (checkpoint < info.startTs) checkpoint = info.startTs;
    const pause = kvs.find((p) => p.key === `${BR_STREAM_PREFIX}pause/${name}`);
    const errors = under('last-error', name).map((e) => decodeStreamError(e.value)).filter((e) => e !== '');
    const errorPause = pause !== undefined && (pauseSeverity(pause.value) === 'ERROR' || errors.length > 0);
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
    });
  }
  return tasks.sort((a, b) => compareCodeUnits(a.name, b.name));
}

function bigEndian(value: Buffer): bigint | undefined {
  return value.length === 8 ? value.readBigUInt64BE(0) : undefined;
}

/** `MANUAL`, `ERROR`, or `MANUAL` for the empty value older BR writes. */
function pauseSeverity(value: Buffer): string {
  if (value.length === 0) return 'MANUAL';
  try {
    const severity = (JSON.parse(value.toString('utf8')) as { severity?: unknown }).severity;
    return typeof severity === 'string' ? severity : 'MANUAL';
  } catch {
    return 'MANUAL';
  }
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
