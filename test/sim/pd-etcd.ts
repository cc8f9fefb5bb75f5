/**
 * PD's embedded etcd, as far as its clients read it: the KV store and `etcdserverpb.KV` Range, Put and
 * DeleteRange over gRPC, served on PD's client port beside the HTTP API (tikv/pd `server/server.go`,
 * `startEtcd`: PD registers its own services onto etcd's gRPC server and its HTTP API as etcd's user
 * handlers, so both share 2379). The log backup keys under `/tidb/br-stream/` (BR writes the task, TiKV
 * the checkpoints: br/pkg/streamhelper) are put here by the tests, as BR and TiKV would.
 * test/real/etcd.test.ts runs the same requests against a real etcd and this store and compares the
 * answers.
 *
 * Messages as etcd's `api/etcdserverpb/rpc.proto` and `api/mvccpb/kv.proto` define them, encoded as
 * Go's protobuf encodes proto3 (fields in number order, zero values left out):
 * - `RangeRequest { key = 1; range_end = 2; limit = 3; revision = 4; sort_order = 5; sort_target = 6;
 *   serializable = 7; keys_only = 8; count_only = 9; min_mod_revision = 10; max_mod_revision = 11;
 *   min_create_revision = 12; max_create_revision = 13 }` answered with `RangeResponse { header = 1; kvs
 *   = 2; more = 3; count = 4 }` (server/etcdserver/txn/range.go, server/storage/mvcc/kvstore_txn.go
 *   `rangeKeys`): keys in byte order; `range_end` empty (absent or empty) for one key, `\0` for every
 *   key from `key` on; `count` every key in the range, before the revision filters and the limit;
 *   the revision filters and the sort on the whole range, then `limit` and `more`, except that a sort
 *   with no order (`NONE`: ascending) on another target than the key, with a limit and no filter,
 *   orders only the first `limit + 1` keys (`rangeLimit`); `keys_only` leaves the values out and
 *   `count_only` the key-values, `serializable` changes nothing for one member; `revision` reads the
 *   store as it was then (nothing is ever compacted here, as in an etcd without auto-compaction),
 *   past the current one `etcdserver: mvcc: required revision is a future revision` (OUT_OF_RANGE);
 *   the header's revision is the current one either way;
 * - `PutRequest { key = 1; value = 2; lease = 3; prev_kv = 4; ignore_value = 5; ignore_lease = 6 }`,
 *   `PutResponse { header = 1; prev_kv = 2 }` (server/etcdserver/txn/put.go). No lease is ever granted
 *   here (the Lease service is not served), so a lease is `requested lease not found`, as in etcd;
 * - `DeleteRangeRequest { key = 1; range_end = 2; prev_kv = 3 }`, `DeleteRangeResponse { header = 1;
 *   deleted = 2; prev_kvs = 3 }` (server/etcdserver/txn/delete.go);
 * - `KeyValue { key = 1; create_revision = 2; mod_revision = 3; version = 4; value = 5; lease = 6 }`;
 * - `ResponseHeader { cluster_id = 1; member_id = 2; revision = 3; raft_term = 4 }`
 *   (server/etcdserver/api/v3rpc/header.go), the raft term a lone member's after its first election.
 *
 * Revisions as etcd's MVCC store counts them (server/storage/mvcc/kvstore_txn.go): a fresh store is at
 * revision 1; each Put, and each DeleteRange that deletes something, is one revision (a DeleteRange of
 * nothing changes none); a key's version counts its puts since it was created, and a deleted key
 * starts again at version 1 with a new create revision.
 *
 * Refused in etcd's words (server/etcdserver/api/v3rpc/key.go `checkRangeRequest`, `checkPutRequest`,
 * `checkDeleteRequest`; api/v3rpc/rpctypes/error.go): an empty key (`etcdserver: key is not
 * provided`, INVALID_ARGUMENT), a sort order or target out of its enum, a value with `ignore_value`, a
 * lease with `ignore_lease`, and `ignore_value`/`ignore_lease` on a missing key (`etcdserver: key not
 * found`). A request that is not protobuf gets grpc-go's INTERNAL `grpc: error unmarshalling request:
 * proto: cannot parse invalid wire-format data`.
 *
 * Not served: the KV service's Txn (BR wraps a task's keys in one; the tests write them as Puts and
 * DeleteRanges, which leave the same keys), Compact and RangeStream, and etcd's other services (Watch,
 * Lease, Cluster, Maintenance, Auth, health): they answer UNIMPLEMENTED (12) in grpc-go's words for a
 * method or service a server does not have (grpc/grpc-go `server.go`, `handleStream`: `unknown service
 * <s>`, `unknown method <m> for service <s>`), where etcd would answer them.
 */
import http2 from 'node:http2';
import { BinaryReader, BinaryWriter, WireType } from '@bufbuild/protobuf/wire';

interface Entry {
  value: Buffer;
  createRevision: number;
  modRevision: number;
  version: number;
}

/** A key and its entry, as a Range answers them. */
export interface EtcdKv {
  key: Buffer;
  entry: Entry;
}

/** A request etcd refuses: the gRPC status code and etcd's message. */
export class EtcdError extends Error {
  constructor(
    readonly code: number,
    message: string,
  ) {
    super(message);
  }
}

/** gRPC status codes, and etcd's errors as v3rpc's `togRPCError` answers them (api/v3rpc/rpctypes/error.go). */
const INVALID_ARGUMENT = 3;
const NOT_FOUND = 5;
const OUT_OF_RANGE = 11;
const UNIMPLEMENTED = 12;
const INTERNAL = 13;
const errEmptyKey = () => new EtcdError(INVALID_ARGUMENT, 'etcdserver: key is not provided');
const errSortOption = () => new EtcdError(INVALID_ARGUMENT, 'etcdserver: invalid sort option');
const errFutureRev = () => new EtcdError(OUT_OF_RANGE, 'etcdserver: mvcc: required revision is a future revision');

/** What a Range may ask for besides its keys (`RangeRequest`'s other fields). */
export interface RangeOptions {
  /** Read the store as it was at this revision; 0 (or below) for the current one. */
  revision?: number;
  /** 0 NONE, 1 ASCEND, 2 DESCEND. */
  sortOrder?: number;
  /** 0 KEY, 1 VERSION, 2 CREATE, 3 MOD, 4 VALUE. */
  sortTarget?: number;
  keysOnly?: boolean;
  countOnly?: boolean;
  minModRevision?: number;
  maxModRevision?: number;
  minCreateRevision?: number;
  maxCreateRevision?: number;
}

export interface RangeResult {
  kvs: EtcdKv[];
  more: boolean;
  count: number;
  revision: number;
  /** The values were left out (`keys_only`). */
  keysOnly?: boolean;
}

/** `\0` as a range end: every key from the start on (server/etcdserver/txn/delete.go, `mkGteRange`). */
const isGte = (rangeEnd: Buffer) => rangeEnd.length === 1 && rangeEnd[0] === 0;

export class EtcdStore {
  private readonly entries = new Map<string, Entry>();
  /** Every change, oldest first, for reads at an earlier revision (an entry, or none for a deletion). */
  private readonly changes: { revision: number; key: string; entry?: Entry }[] = [];
  private revision = 1;

  /** The store's revision: one more for each change. */
  get currentRevision(): number {
    return this.revision;
  }

  /** Sets a key (binary keys as latin1 strings). */
  put(key: string, value: Buffer | string): void {
    this.revision++;
    const old = this.entries.get(key);
    const entry = {
      value: Buffer.from(value),
      createRevision: old?.createRevision ?? this.revision,
      modRevision: this.revision,
      version: (old?.version ?? 0) + 1,
    };
    this.entries.set(key, entry);
    this.changes.push({ revision: this.revision, key, entry });
  }

  /** Deletes every key with this prefix (latin1), in one revision if any went. */
  deletePrefix(prefix: string): void {
    this.remove([...this.entries.keys()].filter((k) => k.startsWith(prefix)));
  }

  /** etcd's DeleteRange: one key, or [key, rangeEnd); how many went, in one revision if any. */
  deleteRange(key: Buffer, rangeEnd: Buffer): number {
    return this.remove(this.range(key, rangeEnd).kvs.map((kv) => kv.key.toString('latin1')));
  }

  private remove(keys: string[]): number {
    if (keys.length === 0) return 0;
    this.revision++;
    for (const k of keys) {
      this.entries.delete(k);
      this.changes.push({ revision: this.revision, key: k });
    }
    return keys.length;
  }

  /** The keys as they were at `revision`. */
  private entriesAt(revision: number): Map<string, Entry> {
    const out = new Map<string, Entry>();
    for (const c of this.changes) {
      if (c.revision > revision) break;
      if (c.entry) out.set(c.key, c.entry);
      else out.delete(c.key);
    }
    return out;
  }

  /**
   * etcd's Range: one key, or [key, rangeEnd) in byte order (`\0` as rangeEnd: every key from `key`),
   * then the revision filters, the sort and the limit as server/etcdserver/txn/range.go applies them.
   */
  range(key: Buffer, rangeEnd: Buffer, limit = 0, options: RangeOptions = {}): RangeResult {
    const at = options.revision ?? 0;
    if (at > this.revision) throw errFutureRev();
    const entries = at > 0 && at < this.revision ? this.entriesAt(at) : this.entries;
    const inRange = (k: Buffer) =>
      rangeEnd.length === 0 ? k.equals(key) : Buffer.compare(k, key) >= 0 && (isGte(rangeEnd) || Buffer.compare(k, rangeEnd) < 0);
    const all = [...entries.entries()]
      .map(([k, entry]) => ({ key: Buffer.from(k, 'latin1'), entry }))
      .filter(({ key: k }) => inRange(k))
      .sort((a, b) => Buffer.compare(a.key, b.key));
    if (options.countOnly) return { kvs: [], more: false, count: all.length, revision: this.revision };
    const {
      minModRevision: minMod = 0,
      maxModRevision: maxMod = 0,
      minCreateRevision: minCreate = 0,
      maxCreateRevision: maxCreate = 0,
    } = options;
    const target = options.sortTarget ?? 0;
    const asked = options.sortOrder ?? 0;
    // `rangeLimit`: with the default order (none asked for, or ascending keys) and no revision filter,
    // the store reads one key past the limit in key order, and a sort on another target (`NONE` then
    // means ascending) orders that page only; otherwise everything in the range is read.
    const paged = limit > 0 && (asked === 0 || (target === 0 && asked === 1)) && !(minMod || maxMod || minCreate || maxCreate);
    let kvs = (paged ? all.slice(0, limit + 1) : all).filter(
      ({ entry: e }) =>
        !(
          (maxMod !== 0 && e.modRevision > maxMod) ||
          (minMod !== 0 && e.modRevision < minMod) ||
          (maxCreate !== 0 && e.createRevision > maxCreate) ||
          (minCreate !== 0 && e.createRevision < minCreate)
        ),
    );
    // `sortRangeResults`: a target other than the key with no order is ascending; ascending by key is the order already.
    const order = target !== 0 && asked === 0 ? 1 : asked;
    if (!(order === 0 || (target === 0 && order === 1))) {
      const orders: ((a: EtcdKv, b: EtcdKv) => number)[] = [
        (a, b) => Buffer.compare(a.key, b.key),
        (a, b) => a.entry.version - b.entry.version,
        (a, b) => a.entry.createRevision - b.entry.createRevision,
        (a, b) => a.entry.modRevision - b.entry.modRevision,
        (a, b) => Buffer.compare(a.entry.value, b.entry.value),
      ];
      const by = orders[target];
      // Stable, as Go's sort.Sort is for the dozen keys or fewer the tests range over (an insertion sort).
      kvs = [...kvs].sort(order === 2 ? (a, b) => by(b, a) : by);
    }
    const more = limit > 0 && kvs.length > limit;
    if (more) kvs = kvs.slice(0, limit);
    return { kvs, more, count: all.length, revision: this.revision, ...(options.keysOnly && { keysOnly: true }) };
  }
}

/** A message's fields, the last of each as proto3 reads scalars: varints and length-delimited bytes. */
class Fields {
  private readonly varints = new Map<number, bigint>();
  private readonly bytesOf = new Map<number, Buffer>();

  constructor(buf: Buffer) {
    const r = new BinaryReader(buf);
    while (r.pos < r.len) {
      const [no, type] = r.tag();
      if (type === WireType.Varint) this.varints.set(no, BigInt(r.uint64()));
      else if (type === WireType.LengthDelimited) this.bytesOf.set(no, Buffer.from(r.bytes()));
      else r.skip(type);
    }
  }

  bytes(no: number): Buffer {
    return this.bytesOf.get(no) ?? Buffer.alloc(0);
  }

  int64(no: number): number {
    return Number(BigInt.asIntN(64, this.varints.get(no) ?? 0n));
  }

  int32(no: number): number {
    return Number(BigInt.asIntN(32, this.varints.get(no) ?? 0n));
  }

  bool(no: number): boolean {
    return (this.varints.get(no) ?? 0n) !== 0n;
  }
}

const CLUSTER_ID = 7000000000000000001n;
const MEMBER_ID = 9372538179322589801n;
const RAFT_TERM = 2n;

/** `ResponseHeader` as field 1. */
function header(w: BinaryWriter, revision: number): BinaryWriter {
  return w
    .tag(1, WireType.LengthDelimited)
    .fork()
    .tag(1, WireType.Varint)
    .uint64(CLUSTER_ID)
    .tag(2, WireType.Varint)
    .uint64(MEMBER_ID)
    .tag(3, WireType.Varint)
    .int64(revision)
    .tag(4, WireType.Varint)
    .uint64(RAFT_TERM)
    .join();
}

/** A `KeyValue` as field `no`; its value left out for `keys_only`. */
function keyValue(w: BinaryWriter, no: number, { key, entry }: EtcdKv, keysOnly = false): BinaryWriter {
  w.tag(no, WireType.LengthDelimited)
    .fork()
    .tag(1, WireType.LengthDelimited)
    .bytes(key)
    .tag(2, WireType.Varint)
    .int64(entry.createRevision)
    .tag(3, WireType.Varint)
    .int64(entry.modRevision)
    .tag(4, WireType.Varint)
    .int64(entry.version);
  if (!keysOnly && entry.value.length > 0) w.tag(5, WireType.LengthDelimited).bytes(entry.value);
  return w.join();
}

function encodeRangeResponse(res: RangeResult): Buffer {
  const w = header(new BinaryWriter(), res.revision);
  for (const kv of res.kvs) keyValue(w, 2, kv, res.keysOnly);
  if (res.more) w.tag(3, WireType.Varint).bool(true);
  if (res.count > 0) w.tag(4, WireType.Varint).int64(res.count);
  return Buffer.from(w.finish());
}

/** Range, Put and DeleteRange: a request's fields in, the response's bytes out, or an EtcdError. */
const METHODS: Record<string, (store: EtcdStore, req: Fields) => Buffer> = {
  Range(store, req) {
    const key = req.bytes(1);
    if (key.length === 0) throw errEmptyKey();
    const [sortOrder, sortTarget] = [req.int32(5), req.int32(6)];
    if (sortOrder < 0 || sortOrder > 2 || sortTarget < 0 || sortTarget > 4) throw errSortOption();
    const res = store.range(key, req.bytes(2), req.int64(3), {
      revision: req.int64(4),
      sortOrder,
      sortTarget,
      keysOnly: req.bool(8),
      countOnly: req.bool(9),
      minModRevision: req.int64(10),
      maxModRevision: req.int64(11),
      minCreateRevision: req.int64(12),
      maxCreateRevision: req.int64(13),
    });
    return encodeRangeResponse(res);
  },
  Put(store, req) {
    const [key, value, lease, prevKv, ignoreValue, ignoreLease] = [
      req.bytes(1),
      req.bytes(2),
      req.int64(3),
      req.bool(4),
      req.bool(5),
      req.bool(6),
    ];
    if (key.length === 0) throw errEmptyKey();
    if (ignoreValue && value.length > 0) throw new EtcdError(INVALID_ARGUMENT, 'etcdserver: value is provided');
    if (ignoreLease && lease !== 0) throw new EtcdError(INVALID_ARGUMENT, 'etcdserver: lease is provided');
    if (lease !== 0) throw new EtcdError(NOT_FOUND, 'etcdserver: requested lease not found');
    const [prev] = store.range(key, Buffer.alloc(0)).kvs;
    if ((ignoreValue || ignoreLease) && !prev) throw new EtcdError(INVALID_ARGUMENT, 'etcdserver: key not found');
    store.put(key.toString('latin1'), ignoreValue ? prev.entry.value : value);
    const w = header(new BinaryWriter(), store.currentRevision);
    if (prevKv && prev) keyValue(w, 2, prev);
    return Buffer.from(w.finish());
  },
  DeleteRange(store, req) {
    const [key, rangeEnd, prevKv] = [req.bytes(1), req.bytes(2), req.bool(3)];
    if (key.length === 0) throw errEmptyKey();
    const prev = prevKv ? store.range(key, rangeEnd).kvs : [];
    const deleted = store.deleteRange(key, rangeEnd);
    const w = header(new BinaryWriter(), store.currentRevision);
    if (deleted > 0) w.tag(2, WireType.Varint).int64(deleted);
    for (const kv of prev) keyValue(w, 3, kv);
    return Buffer.from(w.finish());
  },
};

/**
 * A status message as grpc-go puts it in `grpc-message` (internal/transport/http_util.go,
 * `encodeGrpcMessage`): printable ASCII other than `%` as it is, every other byte of its UTF-8 as `%XX`.
 */
function grpcMessage(message: string): string {
  return [...Buffer.from(message, 'utf8')]
    .map((c) => (c >= 0x20 && c <= 0x7e && c !== 0x25 ? String.fromCharCode(c) : `%${c.toString(16).toUpperCase().padStart(2, '0')}`))
    .join('');
}

/** A gRPC message in its 5-byte frame (not compressed). */
function frame(message: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt32BE(message.length, 1);
  return Buffer.concat([head, message]);
}

/** An HTTP/2 server (cleartext, prior knowledge, as gRPC clients speak it) answering etcd's KV Range, Put and DeleteRange. */
export function etcdGrpcServer(store: EtcdStore): http2.Http2Server {
  const server = http2.createServer();
  server.on('stream', (stream, headers) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => {
      const reply = (status: number, body?: Buffer, message = '') => {
        stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
        stream.on('wantTrailers', () =>
          stream.sendTrailers({ 'grpc-status': String(status), ...(message && { 'grpc-message': grpcMessage(message) }) }),
        );
        stream.end(body ? frame(body) : undefined);
      };
      const [, service = '', method = ''] = /^\/([^/]*)\/(.*)$/.exec(String(headers[':path'])) ?? [];
      if (service !== 'etcdserverpb.KV') return reply(UNIMPLEMENTED, undefined, `unknown service ${service}`);
      const handle = Object.hasOwn(METHODS, method) ? METHODS[method] : undefined;
      if (!handle) return reply(UNIMPLEMENTED, undefined, `unknown method ${method} for service ${service}`);
      let req: Fields;
      try {
        const body = Buffer.concat(chunks);
        const length = body.readUInt32BE(1);
        if (body.length < 5 + length) throw new RangeError('short frame');
        req = new Fields(body.subarray(5, 5 + length));
      } catch {
        return reply(INTERNAL, undefined, 'grpc: error unmarshalling request: proto: cannot parse invalid wire-format data');
      }
      try {
        reply(0, handle(store, req));
      } catch (err) {
        if (!(err instanceof EtcdError)) throw err;
        reply(err.code, undefined, err.message);
      }
    });
  });
  return server;
}
