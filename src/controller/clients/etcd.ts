/**
 * PD's embedded etcd, read through its client API on PD's client URL (tikv/pd `server/server.go`,
 * `startEtcd`: PD serves etcd's gRPC services and its own HTTP API on the same port 2379), as
 * tidb-operator reads the log backup keys (pkg/backup/backup/backup_tracker.go,
 * `queryAllLogBackupKeys`). Only `etcdserverpb.KV/Range` over a prefix (etcd `api/etcdserverpb/rpc.proto`:
 * `RangeRequest { bytes key = 1; bytes range_end = 2 }`, `RangeResponse { repeated mvccpb.KeyValue kvs
 * = 2 }`, `KeyValue { bytes key = 1; bytes value = 5 }`), with the cluster client certificate when
 * the cluster speaks TLS.
 */
import { BinaryReader, BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import type { ServiceError } from '@grpc/grpc-js';
import type { ClientTls } from './http';

export interface EtcdKeyValue {
  readonly key: string;
  readonly value: Buffer;
}

export const RANGE_METHOD = '/etcdserverpb.KV/Range';

/** The end of a prefix's range: the prefix with its last byte one higher (etcd's `GetPrefixRangeEnd`). */
export function prefixRangeEnd(prefix: Buffer): Buffer {
  const end = Buffer.from(prefix);
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i] < 0xff) {
      end[i]++;
      return end.subarray(0, i + 1);
    }
  }
  // Every byte 0xff: no end, every key from the prefix on.
  return Buffer.from([0]);
}

export function encodeRangeRequest(prefix: string): Buffer {
  const key = Buffer.from(prefix);
  return Buffer.from(new BinaryWriter().tag(1, WireType.LengthDelimited).bytes(key).tag(2, WireType.LengthDelimited).bytes(prefixRangeEnd(key)).finish());
}

export function decodeRangeResponse(buf: Buffer): EtcdKeyValue[] {
  const out: EtcdKeyValue[] = [];
  const r = new BinaryReader(buf);
  while (r.pos < r.len) {
    const [no, type] = r.tag();
    if (no !== 2 || type !== WireType.LengthDelimited) {
      r.skip(type);
      continue;
    }
    const kv = new BinaryReader(r.bytes());
    let key = '';
    let value = Buffer.alloc(0);
    while (kv.pos < kv.len) {
      const [f, t] = kv.tag();
      if (f === 1) key = Buffer.from(kv.bytes()).toString('utf8');
      else if (f === 5) value = Buffer.from(kv.bytes());
      else kv.skip(t);
    }
    out.push({ key, value });
  }
  return out;
}

/** Every key under `prefix`, in key order. `target` is PD's `host:port`. Rejects with the gRPC error's words. */
export function etcdRangePrefix(target: string, prefix: string, tls?: ClientTls, timeoutMs = 5_000): Promise<EtcdKeyValue[]> {
  // Loaded on first use, as for TiKV's flush: most controllers never read etcd.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { Client, credentials, Metadata } = require('@grpc/grpc-js') as typeof import('@grpc/grpc-js');
  const client = new Client(target, tls ? credentials.createSsl(tls.ca, tls.key, tls.cert) : credentials.createInsecure());
  return new Promise<EtcdKeyValue[]>((resolve, reject) => {
    client.makeUnaryRequest(
      RANGE_METHOD,
      (p: string) => encodeRangeRequest(p),
      (buf: Buffer) => decodeRangeResponse(buf),
      prefix,
      new Metadata(),
      { deadline: Date.now() + timeoutMs },
      (err: ServiceError | null, kvs?: EtcdKeyValue[]) => (err ? reject(new Error(`etcd Range ${prefix} on ${target}: ${err.details || err.message}`)) : resolve(kvs ?? [])),
    );
  }).finally(() => client.close());
}
