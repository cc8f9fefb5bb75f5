/**
 * PD's embedded etcd, as far as its clients read it: the KV store and `etcdserverpb.KV/Range` over
 * gRPC, served on PD's client port beside the HTTP API (tikv/pd `server/server.go`, `startEtcd`: PD
 * registers its own services onto etcd's gRPC server and its HTTP API as etcd's user handlers, so
 * both share 2379). The log backup keys under `/tidb/br-stream/` (BR writes the task, TiKV the
 * checkpoints: br/pkg/streamhelper) are put here by the tests, as BR and TiKV would.
 *
 * Range follows etcd's `rpc.proto`: `RangeRequest { bytes key = 1; bytes range_end = 2; int64 limit = 3 }`
 * answered with `RangeResponse { ResponseHeader header = 1; repeated mvccpb.KeyValue kvs = 2; bool more
 * = 3; int64 count = 4 }`, keys in byte order, `range_end` empty for one key and `\0` for every key from
 * `key` on; `KeyValue { key = 1, create_revision = 2, mod_revision = 3, version = 4, value = 5 }`.
 * Put (`PutRequest { key = 1; value = 2 }` answered with `PutResponse { header = 1 }`) and DeleteRange
 * (`DeleteRangeRequest { key = 1; range_end = 2 }`, `DeleteRangeResponse { header = 1; int64 deleted = 2 }`),
 * one revision each, as BR writes and removes a task (the Txn BR wraps them in is not served). Other
 * methods answer UNIMPLEMENTED (12) in grpc-go's words (grpc/grpc-go `server.go`, `handleStream`:
 * `unknown service <s>`, `unknown method <m> for service <s>`).
 */
import http2 from 'node:http2';
import { BinaryReader, BinaryWriter, WireType } from '@bufbuild/protobuf/wire';

interface Entry {
  value: Buffer;
  createRevision: number;
  modRevision: number;
  version: number;
}

export class EtcdStore {
  private readonly entries = new Map<string, Entry>();
  private revision = 1;

  /** The store's revision: one more for each change. */
  get currentRevision(): number {
    return this.revision;
  }

  /** Sets a key (binary keys as latin1 strings). */
  put(key: string, value: Buffer | string): void {
    this.revision++;
    const old = this.entries.get(key);
    this.entries.set(key, { value: Buffer.from(value), createRevision: old?.createRevision ?? this.revision, modRevision: this.revision, version: (old?.version ?? 0) + 1 });
  }

  /** Deletes every key with this prefix. */
  deletePrefix(prefix: string): void {
    for (const k of [...this.entries.keys()]) if (k.startsWith(prefix)) this.entries.delete(k);
    this.revision++;
  }

  /** etcd's DeleteRange: one key, or [key, rangeEnd); how many went. */
  deleteRange(key: Buffer, rangeEnd: Buffer): number {
    const gone = this.range(key, rangeEnd).kvs.map((kv) => kv.key.toString('latin1'));
    for (const k of gone) this.entries.delete(k);
    if (gone.length > 0) this.revision++;
    return gone.length;
  }

  /** etcd's Range: one key, or [key, rangeEnd) in byte order (`\0` as rangeEnd: every key from `key`). */
  range(key: Buffer, rangeEnd: Buffer, limit = 0): { kvs: { key: Buffer; entry: Entry }[]; more: boolean; count: number; revision: number } {
    const all = [...this.entries.entries()]
      .map(([k, entry]) => ({ key: Buffer.from(k, 'latin1'), entry }))
      .filter(({ key: k }) => (rangeEnd.length === 0 ? k.equals(key) : Buffer.compare(k, key) >= 0 && (rangeEnd.equals(Buffer.from([0])) || Buffer.compare(k, rangeEnd) < 0)))
      .sort((a, b) => Buffer.compare(a.key, b.key));
    const kvs = limit > 0 ? all.slice(0, limit) : all;
    return { kvs, more: kvs.length < all.length, count: all.length, revision: this.revision };
  }
}

function decodeRangeRequest(buf: Buffer): { key: Buffer; rangeEnd: Buffer; limit: number } {
  const r = new BinaryReader(buf);
  let key = Buffer.alloc(0);
  let rangeEnd = Buffer.alloc(0);
  let limit = 0;
  while (r.pos < r.len) {
    const [no, type] = r.tag();
    if (no === 1) key = Buffer.from(r.bytes());
    else if (no === 2) rangeEnd = Buffer.from(r.bytes());
    else if (no === 3) limit = Number(r.int64());
    else r.skip(type);
  }
  return { key, rangeEnd, limit };
}

function decodePutRequest(buf: Buffer): { key: Buffer; value: Buffer } {
  const r = new BinaryReader(buf);
  let key = Buffer.alloc(0);
  let value = Buffer.alloc(0);
  while (r.pos < r.len) {
    const [no, type] = r.tag();
    if (no === 1) key = Buffer.from(r.bytes());
    else if (no === 2) value = Buffer.from(r.bytes());
    else r.skip(type);
  }
  return { key, value };
}

/** `ResponseHeader { cluster_id = 1, member_id = 2, revision = 3, raft_term = 4 }` as field 1. */
function header(w: BinaryWriter, revision: number): BinaryWriter {
  return w.tag(1, WireType.LengthDelimited).fork().tag(1, WireType.Varint).uint64(7000000000000000001n).tag(3, WireType.Varint).int64(revision).tag(4, WireType.Varint).uint64(2).join();
}

function encodeRangeResponse(res: ReturnType<EtcdStore['range']>): Buffer {
  const w = header(new BinaryWriter(), res.revision);
  for (const { key, entry } of res.kvs) {
    w.tag(2, WireType.LengthDelimited).fork()
      .tag(1, WireType.LengthDelimited).bytes(key)
      .tag(2, WireType.Varint).int64(entry.createRevision)
      .tag(3, WireType.Varint).int64(entry.modRevision)
      .tag(4, WireType.Varint).int64(entry.version)
      .tag(5, WireType.LengthDelimited).bytes(entry.value)
      .join();
  }
  if (res.more) w.tag(3, WireType.Varint).bool(true);
  w.tag(4, WireType.Varint).int64(res.count);
  return Buffer.from(w.finish());
}

/** A gRPC message in its 5-byte frame (not compressed). */
function frame(message: Buffer): Buffer {
  const head = Buffer.alloc(5);
  head.writeUInt32BE(message.length, 1);
  return Buffer.concat([head, message]);
}

/** An HTTP/2 server (cleartext, prior knowledge, as gRPC clients speak it) answering etcd's KV/Range. */
export function etcdGrpcServer(store: EtcdStore): http2.Http2Server {
  const server = http2.createServer();
  server.on('stream', (stream, headers) => {
    const chunks: Buffer[] = [];
    stream.on('data', (c: Buffer) => chunks.push(c));
    stream.on('end', () => {
      const reply = (status: number, body?: Buffer, message = '') => {
        stream.respond({ ':status': 200, 'content-type': 'application/grpc' }, { waitForTrailers: true });
        stream.on('wantTrailers', () => stream.sendTrailers({ 'grpc-status': String(status), ...(message && { 'grpc-message': encodeURIComponent(message) }) }));
        stream.end(body ? frame(body) : undefined);
      };
      const [, service = '', method = ''] = /^\/([^/]*)\/(.*)$/.exec(String(headers[':path'])) ?? [];
      if (service !== 'etcdserverpb.KV') return reply(12, undefined, `unknown service ${service}`);
      if (!['Range', 'Put', 'DeleteRange'].includes(method)) return reply(12, undefined, `unknown method ${method} for service ${service}`);
      const body = Buffer.concat(chunks);
      const message = body.subarray(5, 5 + body.readUInt32BE(1));
      if (method === 'Put') {
        const { key, value } = decodePutRequest(message);
        store.put(key.toString('latin1'), value);
        return reply(0, header(new BinaryWriter(), store.currentRevision).finish() as Buffer);
      }
      if (method === 'DeleteRange') {
        const req = decodeRangeRequest(message);
        const deleted = store.deleteRange(req.key, req.rangeEnd);
        const w = header(new BinaryWriter(), store.currentRevision);
        if (deleted > 0) w.tag(2, WireType.Varint).int64(deleted);
        return reply(0, Buffer.from(w.finish()));
      }
      const req = decodeRangeRequest(message);
      reply(0, encodeRangeResponse(store.range(req.key, req.rangeEnd, req.limit)));
    });
  });
  return server;
}
