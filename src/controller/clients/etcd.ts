/**
 * PD's embedded etcd, read through its client API on PD's client URL (tikv/pd `server/server.go`,
 * `startEtcd`: PD serves etcd's gRPC services and its own HTTP API on the same port 2379), as
 * tidb-operator reads the log backup keys (pkg/backup/backup/backup_tracker.go,
 * `queryAllLogBackupKeys`). Only `etcdserverpb.KV/Range` over a prefix (etcd `api/etcdserverpb/rpc.proto`:
 * `RangeRequest { bytes key = 1; bytes range_end = 2; int64 limit = 3; int64 revision = 4 }`,
 * `RangeResponse { ResponseHeader header = 1; repeated mvccpb.KeyValue kvs = 2; bool more = 3 }`,
 * `ResponseHeader { int64 revision = 3 }`, `KeyValue { bytes key = 1; bytes value = 5 }`), with the
 * cluster client certificate when the cluster speaks TLS.
 *
 * A prefix is read a page at a time: gRPC refuses an answer over 4 MiB by default, and a task with a
 * table filter over many tables has a range key per table. Each page asks for `limit` keys from just
 * past the last key read (that key with a zero byte after it) while `more` says there are others,
 * all at the revision of the first page, so the pages are one snapshot (etcd's own client reads a
 * prefix so, client/v3/mirror/syncer.go `SyncBase`; BR pages the same way, br/pkg/streamhelper
 * prefix_scanner.go; server/etcdserver/txn/range.go answers `limit` and `more`).
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

/** How many keys a page asks for at most, as etcd's mirror reads a prefix (client/v3/mirror/syncer.go `batchLimit`). */
export const RANGE_PAGE_KEYS = 1000;

/** One page's request: `[from, prefix end)`, at most `limit` keys (0: all), at `revision` (0: the current one). */
export function encodeRangeRequest(
  prefix: string,
  page: { readonly from?: Buffer; readonly limit?: number; readonly revision?: number } = {},
): Buffer {
  const key = Buffer.from(prefix);
  const w = new BinaryWriter()
    .tag(1, WireType.LengthDelimited)
    .bytes(page.from ?? key)
    .tag(2, WireType.LengthDelimited)
    .bytes(prefixRangeEnd(key));
  if (page.limit) w.tag(3, WireType.Varint).int64(page.limit);
  if (page.revision) w.tag(4, WireType.Varint).int64(page.revision);
  return Buffer.from(w.finish());
}

/** One page's answer: its key-values, the last key's bytes, whether more follow, and the store's revision. */
export interface RangePage {
  readonly kvs: EtcdKeyValue[];
  /** The last key as etcd holds it (a range key is binary, so not its UTF-8 reading). @default none (no key) */
  readonly lastKey?: Buffer;
  readonly more: boolean;
  readonly revision: number;
}

export function decodeRangePage(buf: Buffer): RangePage {
  const kvs: EtcdKeyValue[] = [];
  let lastKey: Buffer | undefined;
  let more = false;
  let revision = 0;
  const r = new BinaryReader(buf);
  while (r.pos < r.len) {
    const [no, type] = r.tag();
    if (no === 3 && type === WireType.Varint) {
      more = r.bool();
    } else if (no === 1 && type === WireType.LengthDelimited) {
      const h = new BinaryReader(r.bytes());
      while (h.pos < h.len) {
        const [f, t] = h.tag();
        if (f === 3 && t === WireType.Varint) revision = Number(h.int64());
        else h.skip(t);
      }
    } else if (no === 2 && type === WireType.LengthDelimited) {
      const kv = new BinaryReader(r.bytes());
      let key = Buffer.alloc(0);
      let value = Buffer.alloc(0);
      while (kv.pos < kv.len) {
        const [f, t] = kv.tag();
        if (f === 1) key = Buffer.from(kv.bytes());
        else if (f === 5) value = Buffer.from(kv.bytes());
        else kv.skip(t);
      }
      kvs.push({ key: key.toString('utf8'), value });
      lastKey = key;
    } else {
      r.skip(type);
    }
  }
  return { kvs, more, revision, ...(lastKey && { lastKey }) };
}

export function decodeRangeResponse(buf: Buffer): EtcdKeyValue[] {
  return decodeRangePage(buf).kvs;
}

/** gRPC's RESOURCE_EXHAUSTED: an answer over the client's receive limit. */
const RESOURCE_EXHAUSTED = 8;

/**
 * Every key under `prefix`, in key order, read a page of `pageKeys` at a time at one revision. A page
 * over gRPC's receive limit (keys with large values) is asked for again with a quarter of the keys.
 * `target` is PD's `host:port`. Rejects with the gRPC error's words.
 */
export async function etcdRangePrefix(
  target: string,
  prefix: string,
  tls?: ClientTls,
  timeoutMs = 5_000,
  pageKeys = RANGE_PAGE_KEYS,
): Promise<EtcdKeyValue[]> {
  // Loaded on first use, as for TiKV's flush: most controllers never read etcd.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { Client, credentials, Metadata } = require('@grpc/grpc-js') as typeof import('@grpc/grpc-js');
  const client = new Client(target, tls ? credentials.createSsl(tls.ca, tls.key, tls.cert) : credentials.createInsecure());
  const page = (body: Buffer) =>
    new Promise<RangePage>((resolve, reject) => {
      client.makeUnaryRequest(
        RANGE_METHOD,
        (b: Buffer) => b,
        decodeRangePage,
        body,
        new Metadata(),
        { deadline: Date.now() + timeoutMs },
        (err: ServiceError | null, res?: RangePage) => (err ? reject(err) : resolve(res!)),
      );
    });
  const out: EtcdKeyValue[] = [];
  let from: Buffer | undefined;
  let revision = 0;
  let limit = pageKeys;
  try {
    for (;;) {
      let res: RangePage;
      try {
        res = await page(encodeRangeRequest(prefix, { ...(from && { from }), limit, revision }));
      } catch (e) {
        const err = e as ServiceError;
        if (err.code === RESOURCE_EXHAUSTED && limit > 1) {
          limit = Math.max(1, Math.floor(limit / 4));
          continue;
        }
        throw new Error(`etcd Range ${prefix} on ${target}: ${err.details || err.message}`);
      }
      out.push(...res.kvs);
      if (!res.more || !res.lastKey) return out;
      revision ||= res.revision;
      from = Buffer.concat([res.lastKey, Buffer.from([0])]);
    }
  } finally {
    client.close();
  }
}
