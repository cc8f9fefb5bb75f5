/**
 * PD's etcd as the simulator serves it (test/sim/pd-etcd.ts) against a real etcd (`.kube-assets/etcd`,
 * v3.7.0, built from go.etcd.io/etcd/server/v3 with the control plane): the same requests sent to both,
 * in the same order, answered alike. The controller's own etcd client (src/controller/clients/etcd.ts)
 * makes the reads it makes (a prefix's Range, and the log backup tasks read from it); the other
 * requests go over the same gRPC client library with the messages of etcd's `rpc.proto` encoded here.
 * Both stores start at revision 1, yet revisions are compared as distances from where each began, so
 * the comparison holds whatever a real etcd starts at.
 */
import { mkdtempSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import type { Http2Server } from 'node:http2';
import { BinaryReader, BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import { Client, credentials, Metadata, type ServiceError } from '@grpc/grpc-js';
import {
  decodeRangeResponse,
  encodeRangeRequest,
  etcdRangePrefix,
  prefixRangeEnd,
  RANGE_METHOD,
  type EtcdKeyValue,
} from '../../src/controller/clients/etcd';
import { BR_STREAM_PREFIX, logBackupTasks } from '../../src/controller/plan/log-backups';
import { findKubeAssets } from '../kube/assets';
import { EtcdStore, etcdGrpcServer } from '../sim/pd-etcd';
import { freePort } from '../sim/ports';
import { pollUntil, startLogged, type LoggedServer } from '../support/poll';
import { KUBE_CONTROL_PLANE, requires } from '../support/requires';

const b = (s: string | Buffer) => (Buffer.isBuffer(s) ? s : Buffer.from(s, 'latin1'));
const be = (n: bigint) => {
  const out = Buffer.alloc(8);
  out.writeBigUInt64BE(n);
  return out;
};

// Requests, as etcd's api/etcdserverpb/rpc.proto numbers their fields; zero values left out.
interface RangeOpts {
  limit?: number;
  revision?: number;
  sortOrder?: number;
  sortTarget?: number;
  serializable?: boolean;
  keysOnly?: boolean;
  countOnly?: boolean;
  minMod?: number;
  maxMod?: number;
  minCreate?: number;
  maxCreate?: number;
  /** range_end written even when empty. */
  emptyEnd?: boolean;
}
function rangeReq(key: string | Buffer, end: string | Buffer = '', o: RangeOpts = {}): Buffer {
  const w = new BinaryWriter();
  if (b(key).length > 0) w.tag(1, WireType.LengthDelimited).bytes(b(key));
  if (b(end).length > 0 || o.emptyEnd) w.tag(2, WireType.LengthDelimited).bytes(b(end));
  const rest: [number, number | boolean | undefined][] = [
    [3, o.limit],
    [4, o.revision],
    [5, o.sortOrder],
    [6, o.sortTarget],
    [7, o.serializable],
    [8, o.keysOnly],
    [9, o.countOnly],
    [10, o.minMod],
    [11, o.maxMod],
    [12, o.minCreate],
    [13, o.maxCreate],
  ];
  for (const [no, v] of rest) if (v) w.tag(no, WireType.Varint).int64(Number(v));
  return Buffer.from(w.finish());
}
function putReq(
  key: string | Buffer,
  value: string | Buffer,
  o: { lease?: number; prevKv?: boolean; ignoreValue?: boolean; ignoreLease?: boolean } = {},
): Buffer {
  const w = new BinaryWriter();
  if (b(key).length > 0) w.tag(1, WireType.LengthDelimited).bytes(b(key));
  if (b(value).length > 0) w.tag(2, WireType.LengthDelimited).bytes(b(value));
  if (o.lease) w.tag(3, WireType.Varint).int64(o.lease);
  for (const [no, v] of [
    [4, o.prevKv],
    [5, o.ignoreValue],
    [6, o.ignoreLease],
  ] as const)
    if (v) w.tag(no, WireType.Varint).bool(true);
  return Buffer.from(w.finish());
}
function deleteReq(key: string | Buffer, end: string | Buffer = '', prevKv = false): Buffer {
  const w = new BinaryWriter();
  if (b(key).length > 0) w.tag(1, WireType.LengthDelimited).bytes(b(key));
  if (b(end).length > 0) w.tag(2, WireType.LengthDelimited).bytes(b(end));
  if (prevKv) w.tag(3, WireType.Varint).bool(true);
  return Buffer.from(w.finish());
}
const prefixReq = (prefix: string, o: RangeOpts = {}) => rangeReq(prefix, prefixRangeEnd(b(prefix)), o);

// Answers, decoded whole: which fields came (the encoding), and every revision as a distance from the
// revision the server began at.
interface Kv {
  fields: number[];
  key: Buffer;
  create: number;
  mod: number;
  version: number;
  value: Buffer;
  lease: number;
}
interface Answer {
  fields: number[];
  header: { fields: number[]; revision: number; raftTerm: number };
  kvs: Kv[];
  more?: boolean;
  count?: number;
  deleted?: number;
}
type Reply = { answer: Answer } | { code: number; details: string };

function decodeKv(buf: Uint8Array, rel: (n: number) => number): Kv {
  const kv: Kv = { fields: [], key: Buffer.alloc(0), create: 0, mod: 0, version: 0, value: Buffer.alloc(0), lease: 0 };
  const r = new BinaryReader(buf);
  while (r.pos < r.len) {
    const [no, type] = r.tag();
    kv.fields.push(no);
    if (no === 1) kv.key = Buffer.from(r.bytes());
    else if (no === 2) kv.create = rel(Number(r.int64()));
    else if (no === 3) kv.mod = rel(Number(r.int64()));
    else if (no === 4) kv.version = Number(r.int64());
    else if (no === 5) kv.value = Buffer.from(r.bytes());
    else if (no === 6) kv.lease = Number(r.int64());
    else r.skip(type);
  }
  return kv;
}

/** RangeResponse, PutResponse and DeleteRangeResponse: the header, and the key-values by where each has them. */
function decodeAnswer(method: string, buf: Buffer, base: number): Answer {
  const rel = (n: number) => (n === 0 ? 0 : n - base);
  const answer: Answer = { fields: [], header: { fields: [], revision: 0, raftTerm: 0 }, kvs: [] };
  const kvField = { Range: 2, Put: 2, DeleteRange: 3 }[method];
  const r = new BinaryReader(buf);
  while (r.pos < r.len) {
    const [no, type] = r.tag();
    answer.fields.push(no);
    if (no === 1) {
      const h = new BinaryReader(r.bytes());
      while (h.pos < h.len) {
        const [hn, ht] = h.tag();
        answer.header.fields.push(hn);
        if (hn === 3) answer.header.revision = rel(Number(h.int64()));
        else if (hn === 4) answer.header.raftTerm = Number(h.uint64());
        else h.skip(ht);
      }
    } else if (no === kvField) answer.kvs.push(decodeKv(r.bytes(), rel));
    else if (method === 'Range' && no === 3) answer.more = r.bool();
    else if (method === 'Range' && no === 4) answer.count = Number(r.int64());
    else if (method === 'DeleteRange' && no === 2) answer.deleted = Number(r.int64());
    else r.skip(type);
  }
  return answer;
}

interface Server {
  readonly name: string;
  readonly target: string;
  readonly client: Client;
  /** The revision its store was at before this file's first write. */
  base: number;
}

function unary(s: Server, method: string, body: Buffer): Promise<{ ok: Buffer } | { code: number; details: string }> {
  return new Promise((resolve) => {
    s.client.makeUnaryRequest(
      method,
      (x: Buffer) => x,
      (x: Buffer) => x,
      body,
      new Metadata(),
      { deadline: Date.now() + 5_000 },
      (err: ServiceError | null, res?: Buffer) => resolve(err ? { code: err.code, details: err.details } : { ok: res! }),
    );
  });
}

async function call(s: Server, method: string, body: Buffer): Promise<Reply> {
  const res = await unary(s, `/etcdserverpb.KV/${method}`, body);
  return 'ok' in res ? { answer: decodeAnswer(method, res.ok, s.base) } : res;
}

const controlPlane = requires(KUBE_CONTROL_PLANE);

controlPlane.describe("PD's etcd simulator answers as a real etcd", () => {
  let etcd: LoggedServer | undefined;
  let simServer: Http2Server | undefined;
  const servers: Server[] = [];
  const [real, sim] = [() => servers[0], () => servers[1]];

  beforeAll(async () => {
    const assets = findKubeAssets();
    if ('missing' in assets) throw new Error(assets.missing);
    const dir = mkdtempSync(join(existsSync('/dev/shm') ? '/dev/shm' : tmpdir(), 'tidb-gitops-etcd-'));
    const [client, peer] = [await freePort(), await freePort()];
    etcd = startLogged(
      'etcd',
      assets.assets.etcd,
      [
        '--name',
        'pd',
        '--data-dir',
        join(dir, 'data'),
        '--listen-client-urls',
        `http://127.0.0.1:${client}`,
        '--advertise-client-urls',
        `http://127.0.0.1:${client}`,
        '--listen-peer-urls',
        `http://127.0.0.1:${peer}`,
        '--initial-advertise-peer-urls',
        `http://127.0.0.1:${peer}`,
        '--initial-cluster',
        `pd=http://127.0.0.1:${peer}`,
        '--log-outputs',
        'stderr',
      ],
      dir,
    );
    await pollUntil(etcd.server, async () => (await fetch(`http://127.0.0.1:${client}/health`)).ok, 20_000, 'etcd /health');
    const store = new EtcdStore();
    simServer = etcdGrpcServer(store);
    await new Promise<void>((resolve) => simServer!.listen(0, '127.0.0.1', resolve));
    for (const [name, target] of [
      ['etcd', `127.0.0.1:${client}`],
      ['simulator', `127.0.0.1:${(simServer.address() as AddressInfo).port}`],
    ]) {
      const s: Server = { name, target, client: new Client(target, credentials.createInsecure()), base: 0 };
      const first = await call(s, 'Range', rangeReq('\0', '\0'));
      if (!('answer' in first)) throw new Error(`${name}: ${first.details}`);
      s.base = first.answer.header.revision;
      servers.push(s);
    }
  }, 30_000);

  afterAll(async () => {
    for (const s of servers) s.client.close();
    if (simServer) await new Promise<void>((resolve) => simServer!.close(() => resolve()));
    await etcd?.stop();
  }, 15_000);

  /**
   * Sends the request to the real etcd, then the simulator; expects the same reply; returns it. A
   * request naming a revision is made for each server from the distance to its first revision.
   */
  type Body = Buffer | ((s: Server) => Buffer);
  async function same(method: string, body: Body): Promise<Reply> {
    const of = (s: Server) => (Buffer.isBuffer(body) ? body : body(s));
    const want = await call(real(), method, of(real()));
    const got = await call(sim(), method, of(sim()));
    expect({ method, reply: got }).toEqual({ method, reply: want });
    return want;
  }
  const ok = async (method: string, body: Body): Promise<Answer> => {
    const reply = await same(method, body);
    if (!('answer' in reply)) throw new Error(`${method}: ${reply.code} ${reply.details}`);
    return reply.answer;
  };
  const keys = (a: Answer) => a.kvs.map((kv) => kv.key.toString('latin1'));
  /** The controller's own read of a prefix, from both; the real etcd's. */
  async function controllerRead(prefix: string) {
    const [want, got] = [await etcdRangePrefix(real().target, prefix), await etcdRangePrefix(sim().target, prefix)];
    expect(got).toEqual(want);
    return want;
  }

  test('a fresh store: revision 1, no keys, the header a lone member gives after its first election', async () => {
    // The real etcd's starting revision, which the simulator's EtcdStore starts at too.
    expect(servers.map((s) => s.base)).toEqual([1, 1]);
    const empty = await ok('Range', rangeReq('\0', '\0'));
    expect(empty).toEqual({ fields: [1], header: { fields: [1, 2, 3, 4], revision: 0, raftTerm: 2 }, kvs: [] });
  });

  test("Range: one key, a prefix, every key from a key, in byte order; empty results; through the controller's client", async () => {
    const names = ['b', 'a', 'a/', 'a0', 'ab', 'B', '\x7f', '\x80', '\xff', '\xff\xff', 'a\x00'];
    for (const n of names) await ok('Put', putReq(`/r/${n}`, `v-${n}`));
    await ok('Put', putReq('\xff/top', 'top'));
    await ok('Put', putReq('/r0', 'outside'));
    const inOrder = names.map((n) => `/r/${n}`).sort((x, y) => Buffer.compare(b(x), b(y)));
    expect((await ok('Range', prefixReq('/r/'))).kvs.map((kv) => kv.key.toString('latin1'))).toEqual(inOrder);
    const one = await ok('Range', rangeReq('/r/a'));
    expect(one.kvs.map((kv) => [kv.key.toString(), kv.value.toString(), kv.version])).toEqual([['/r/a', 'v-a', 1]]);
    expect(one.count).toBe(1);
    // An empty range_end written out is still one key.
    expect(keys(await ok('Range', rangeReq('/r/a', '', { emptyEnd: true })))).toEqual(['/r/a']);
    expect(keys(await ok('Range', prefixReq('/r/a')))).toEqual(['/r/a', '/r/a\x00', '/r/a/', '/r/a0', '/r/ab']);
    expect(keys(await ok('Range', rangeReq('/r/b', '\0')))).toEqual([
      '/r/b',
      '/r/\x7f',
      '/r/\x80',
      '/r/\xff',
      '/r/\xff\xff',
      '/r0',
      '\xff/top',
    ]);
    // Every key from 0xff on: a prefix of 0xff bytes ends nowhere.
    expect(keys(await ok('Range', prefixReq('\xff')))).toEqual(['\xff/top']);
    // Nothing: a missing key, an empty prefix, an end before the start.
    for (const req of [rangeReq('/r/zz'), prefixReq('/nothing/'), rangeReq('/r/b', '/r/a')]) {
      const none = await ok('Range', req);
      expect(none.kvs).toEqual([]);
      expect(none.count).toBeUndefined();
      expect(none.fields).toEqual([1]);
    }
    // The controller's client: its Range's bytes answered alike, and its read of a prefix.
    const raw = await Promise.all(servers.map((s) => unary(s, RANGE_METHOD, encodeRangeRequest('/r/'))));
    const [realKvs, simKvs] = raw.map((r) => ('ok' in r ? decodeRangeResponse(r.ok) : r));
    expect(simKvs).toEqual(realKvs);
    const read = await controllerRead('/r/');
    expect(read.map((kv) => kv.value.toString('latin1'))).toEqual(inOrder.map((k) => `v-${k.slice(3)}`));
    expect(await controllerRead('/nothing/')).toEqual([]);
  });

  test('limit, more and count', async () => {
    for (const n of ['d', 'a', 'c', 'b']) await ok('Put', putReq(`/l/${n}`, n));
    const two = await ok('Range', prefixReq('/l/', { limit: 2 }));
    expect([keys(two), two.more, two.count]).toEqual([['/l/a', '/l/b'], true, 4]);
    for (const limit of [3, 4, 5, -1]) await ok('Range', prefixReq('/l/', { limit }));
    const all = await ok('Range', prefixReq('/l/', { limit: 4 }));
    expect([all.kvs.length, all.more, all.count]).toEqual([4, undefined, 4]);
    await ok('Range', rangeReq('/l/a', '', { limit: 1 }));
    await ok('Range', rangeReq('/l/', '\0', { limit: 3 }));
    await ok('Range', prefixReq('/l/', { limit: 2, serializable: true }));
  });

  test('revisions: create, mod and version after puts, overwrites and deletes; a delete of nothing is no revision', async () => {
    const first = await ok('Put', putReq('/v/k', 'one'));
    const start = first.header.revision;
    const at = async (key: string) => (await ok('Range', rangeReq(key))).kvs[0];
    expect(await at('/v/k')).toMatchObject({ create: start, mod: start, version: 1 });
    await ok('Put', putReq('/v/k', 'two'));
    await ok('Put', putReq('/v/k', 'two'));
    expect(await at('/v/k')).toMatchObject({ create: start, mod: start + 2, version: 3, value: b('two') });
    await ok('Put', putReq('/v/j', 'j'));
    const gone = await ok('DeleteRange', deleteReq('/v/k'));
    expect([gone.deleted, gone.header.revision]).toEqual([1, start + 4]);
    const nothing = await ok('DeleteRange', deleteReq('/v/k'));
    expect([nothing.deleted, nothing.header.revision, nothing.fields]).toEqual([undefined, start + 4, [1]]);
    expect((await ok('Range', rangeReq('/v/k'))).header.revision).toBe(start + 4);
    await ok('Put', putReq('/v/k', 'again'));
    expect(await at('/v/k')).toMatchObject({ create: start + 5, mod: start + 5, version: 1 });
    await ok('Range', prefixReq('/v/'));
    // Two keys in one revision.
    const both = await ok('DeleteRange', deleteReq('/v/', prefixRangeEnd(b('/v/'))));
    expect([both.deleted, both.header.revision]).toEqual([2, start + 6]);
    await ok('Range', prefixReq('/v/'));
    // Every key from one on.
    await ok('Put', putReq('\xfe/a', 'x'));
    await ok('Put', putReq('\xfe/b', 'y'));
    expect((await ok('DeleteRange', deleteReq('\xfe/b', '\0'))).deleted).toBe(2);
    await ok('Range', rangeReq('\0', '\0'));
  });

  test('values of any bytes, an empty value, keys with a zero byte', async () => {
    const every = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
    await ok('Put', putReq('/bin/all', every));
    await ok('Put', putReq('/bin/\x00\xff', Buffer.from([0, 0, 0])));
    await ok('Put', putReq('/bin/empty', ''));
    const read = await ok('Range', prefixReq('/bin/'));
    expect(read.kvs.map((kv) => [kv.key, kv.value, kv.fields])).toEqual([
      [b('/bin/\x00\xff'), Buffer.from([0, 0, 0]), [1, 2, 3, 4, 5]],
      [b('/bin/all'), every, [1, 2, 3, 4, 5]],
      [b('/bin/empty'), Buffer.alloc(0), [1, 2, 3, 4]],
    ]);
    const viaController = await controllerRead('/bin/');
    expect(viaController.map((kv) => kv.value)).toEqual([Buffer.from([0, 0, 0]), every, Buffer.alloc(0)]);
  });

  test('Range options: keys only, count only, each sort, the revision filters with a limit, a read at an earlier revision', async () => {
    // Versions 1, 3, 2, 1 and values out of key order.
    const puts: [string, string][] = [
      ['a', 'z'],
      ['b', 'x'],
      ['c', 'y'],
      ['b', 'w'],
      ['c', 'v'],
      ['b', 'u'],
      ['d', 'y'],
    ];
    const revs: number[] = [];
    for (const [k, v] of puts) revs.push((await ok('Put', putReq(`/o/${k}`, v))).header.revision);
    expect(
      (await ok('Range', prefixReq('/o/', { keysOnly: true }))).kvs.every((kv) => kv.value.length === 0 && !kv.fields.includes(5)),
    ).toBe(true);
    const counted = await ok('Range', prefixReq('/o/', { countOnly: true, limit: 1 }));
    expect([counted.kvs, counted.count, counted.more]).toEqual([[], 4, undefined]);
    for (let target = 0; target <= 4; target++) {
      for (let order = 0; order <= 2; order++) {
        await ok('Range', prefixReq('/o/', { sortTarget: target, sortOrder: order }));
        await ok('Range', prefixReq('/o/', { sortTarget: target, sortOrder: order, limit: 2 }));
      }
    }
    expect(keys(await ok('Range', prefixReq('/o/', { sortTarget: 1 })))).toEqual(['/o/a', '/o/d', '/o/c', '/o/b']);
    expect(keys(await ok('Range', prefixReq('/o/', { sortTarget: 4, sortOrder: 2, keysOnly: true })))).toEqual([
      '/o/a',
      '/o/d',
      '/o/c',
      '/o/b',
    ]);
    // The filters come after the count, the limit after the filters.
    const filtered = await ok('Range', (s) => prefixReq('/o/', { minMod: revs[4] + s.base, limit: 1 }));
    expect([keys(filtered), filtered.more, filtered.count]).toEqual([['/o/b'], true, 4]);
    await ok('Range', (s) => prefixReq('/o/', { maxMod: revs[3] + s.base }));
    await ok('Range', (s) => prefixReq('/o/', { minCreate: revs[1] + s.base, maxCreate: revs[2] + s.base }));
    await ok('Range', (s) => prefixReq('/o/', { maxCreate: revs[0] + s.base, sortOrder: 2, limit: 5 }));
    // As the store was: before b's second put, and before /o/ had a key; the header says now.
    const before = await ok('Range', (s) => prefixReq('/o/', { revision: revs[2] + s.base }));
    expect(before.kvs.map((kv) => [kv.key.toString(), kv.value.toString(), kv.version])).toEqual([
      ['/o/a', 'z', 1],
      ['/o/b', 'x', 1],
      ['/o/c', 'y', 1],
    ]);
    expect(before.header.revision).toBe(revs[6]);
    await ok('Range', (s) => prefixReq('/o/', { revision: revs[0] - 1 + s.base }));
    await ok('Range', (s) => rangeReq('/o/b', '', { revision: revs[5] - 1 + s.base }));
    await ok('Range', prefixReq('/o/', { revision: -3 }));
    await ok('DeleteRange', deleteReq('/o/d'));
    await ok('Range', (s) => prefixReq('/o/', { revision: revs[6] + s.base }));
  });

  test('Put and DeleteRange options: the previous key-values, ignore_value, ignore_lease', async () => {
    const created = await ok('Put', putReq('/p/k', 'one', { prevKv: true }));
    expect(created.kvs).toEqual([]);
    const replaced = await ok('Put', putReq('/p/k', 'two', { prevKv: true }));
    expect(replaced.kvs.map((kv) => kv.value.toString())).toEqual(['one']);
    await ok('Put', putReq('/p/k', '', { ignoreValue: true, prevKv: true }));
    await ok('Put', putReq('/p/k', 'three', { ignoreLease: true }));
    expect((await ok('Range', rangeReq('/p/k'))).kvs.map((kv) => [kv.value.toString(), kv.version])).toEqual([['three', 4]]);
    await ok('Put', putReq('/p/j', 'j'));
    const deleted = await ok('DeleteRange', deleteReq('/p/', prefixRangeEnd(b('/p/')), true));
    expect(deleted.kvs.map((kv) => kv.key.toString())).toEqual(['/p/j', '/p/k']);
    await ok('DeleteRange', deleteReq('/p/', prefixRangeEnd(b('/p/')), true));
  });

  test("refusals in etcd's words: an empty key, a bad sort, a future revision, options that cannot go together, a lease, bytes that are not protobuf, an unknown method or service", async () => {
    const refused = async (method: string, body: Buffer) => {
      const reply = await same(method, body);
      if ('answer' in reply) throw new Error(`${method} was answered`);
      return reply;
    };
    const invalid = (details: string) => ({ code: 3, details });
    expect(await refused('Range', rangeReq(''))).toEqual(invalid('etcdserver: key is not provided'));
    expect(await refused('Range', rangeReq('', '\0'))).toEqual(invalid('etcdserver: key is not provided'));
    expect(await refused('Put', putReq('', 'v'))).toEqual(invalid('etcdserver: key is not provided'));
    expect(await refused('DeleteRange', deleteReq('', '\0'))).toEqual(invalid('etcdserver: key is not provided'));
    expect(await refused('Range', rangeReq('/x', '', { sortOrder: 3 }))).toEqual(invalid('etcdserver: invalid sort option'));
    expect(await refused('Range', rangeReq('/x', '', { sortTarget: 5 }))).toEqual(invalid('etcdserver: invalid sort option'));
    expect(await refused('Range', rangeReq('/x', '', { revision: 1_000_000 }))).toEqual({
      code: 11,
      details: 'etcdserver: mvcc: required revision is a future revision',
    });
    expect(await refused('Put', putReq('/x', 'v', { ignoreValue: true }))).toEqual(invalid('etcdserver: value is provided'));
    expect(await refused('Put', putReq('/x', 'v', { lease: 7, ignoreLease: true }))).toEqual(invalid('etcdserver: lease is provided'));
    expect(await refused('Put', putReq('/x', '', { ignoreValue: true }))).toEqual(invalid('etcdserver: key not found'));
    expect(await refused('Put', putReq('/x', 'v', { ignoreLease: true }))).toEqual(invalid('etcdserver: key not found'));
    expect(await refused('Put', putReq('/x', 'v', { lease: 7 }))).toEqual({ code: 5, details: 'etcdserver: requested lease not found' });
    expect(await refused('Range', Buffer.from([0xff, 0xff]))).toEqual({
      code: 13,
      details: 'grpc: error unmarshalling request: proto: cannot parse invalid wire-format data',
    });
    expect(await refused('Put', Buffer.from([0x0a, 0x05, 0x61]))).toEqual({
      code: 13,
      details: 'grpc: error unmarshalling request: proto: cannot parse invalid wire-format data',
    });
    // Nothing was written by any of them.
    await ok('Range', rangeReq('/x'));
    // A method and a service the server does not have, in grpc-go's words.
    const [realNope, simNope] = await Promise.all(servers.map((s) => unary(s, '/etcdserverpb.KV/Nope', Buffer.alloc(0))));
    expect(simNope).toEqual(realNope);
    expect(realNope).toEqual({ code: 12, details: 'unknown method Nope for service etcdserverpb.KV' });
    const [realService, simService] = await Promise.all(servers.map((s) => unary(s, '/pdpb.Nope/GetMembers', Buffer.alloc(0))));
    expect(simService).toEqual(realService);
    expect(realService).toEqual({ code: 12, details: 'unknown service pdpb.Nope' });
    // The controller's client reading the empty prefix: the same refusal.
    const messages = await Promise.all(
      servers.map((s) =>
        etcdRangePrefix(s.target, '').then(
          () => 'read',
          (err: Error) => err.message.replace(s.target, '<pd>'),
        ),
      ),
    );
    expect(messages).toEqual([
      'etcd Range  on <pd>: etcdserver: key is not provided',
      'etcd Range  on <pd>: etcdserver: key is not provided',
    ]);
  });

  test('the log backup keys as BR, TiKV and the advancer write them: the controller reads the same tasks from both', async () => {
    const start = 450000000000000000n;
    // br/pkg/streamhelper PutTask: the task's StreamBackupTaskInfo (kvproto brpb.proto: storage = 1 {
    // s3 = 3 { endpoint 1, region 2, bucket 3, prefix 4, force_path_style 10, provider 16 } }, start_ts
    // = 2, end_ts = 3, name = 4, table_filter = 5), then one key per range: its start key after the
    // prefix, its end key as the value, both binary (tablecodec's `t` + the table id, sign bit flipped).
    const info = (name: string) => {
      const s3 = new BinaryWriter()
        .tag(1, WireType.LengthDelimited)
        .string('http://minio:9000')
        .tag(3, WireType.LengthDelimited)
        .string('backups')
        .tag(4, WireType.LengthDelimited)
        .string(`log/${name}`)
        .tag(10, WireType.Varint)
        .bool(true)
        .tag(16, WireType.LengthDelimited)
        .string('ceph')
        .finish();
      const storage = new BinaryWriter().tag(3, WireType.LengthDelimited).bytes(s3).finish();
      return Buffer.from(
        new BinaryWriter()
          .tag(1, WireType.LengthDelimited)
          .bytes(storage)
          .tag(2, WireType.Varint)
          .uint64(start)
          .tag(3, WireType.Varint)
          .uint64(0xffffffffffffffffn)
          .tag(4, WireType.LengthDelimited)
          .string(name)
          .tag(5, WireType.LengthDelimited)
          .string('shop.*')
          .finish(),
      );
    };
    const table = (id: bigint) => Buffer.concat([b('t'), be(id ^ (1n << 63n))]);
    const P = BR_STREAM_PREFIX;
    for (const task of ['pitr', 'pitr2']) {
      await ok('Put', putReq(`${P}info/${task}`, info(task)));
      await ok('Put', putReq(Buffer.concat([b(`${P}ranges/${task}/`), table(106n)]), table(107n)));
      await ok('Put', putReq(Buffer.concat([b(`${P}ranges/${task}/`), table(2n ** 40n)]), table(2n ** 40n + 1n)));
    }
    // TiKV (components/backup-stream/src/metadata): each store's checkpoint and storage checkpoint, 8-byte big-endian TSOs.
    await ok('Put', putReq(`${P}checkpoint/pitr/store/1`, be(start + 900n)));
    await ok('Put', putReq(`${P}checkpoint/pitr/store/2`, be(start + 500n)));
    await ok('Put', putReq(`${P}storage-checkpoint/pitr/1`, be(start + 400n)));
    await ok('Put', putReq(`${P}checkpoint/pitr2/store/1`, be(start + 7n)));
    await ok('Put', putReq('/tidb/br-stream0', 'outside'));
    const now = Date.UTC(2026, 0, 1);
    const read = async () => logBackupTasks(await controllerRead(P), now);
    expect((await read()).map((t) => [t.name, t.state, t.storage, t.checkpointTS])).toEqual([
      ['pitr', 'Running', 's3://backups/log/pitr', (start + 500n).toString()],
      ['pitr2', 'Running', 's3://backups/log/pitr2', (start + 7n).toString()],
    ]);
    // The advancer's global checkpoint (streamhelper GlobalCheckpointOf), moved on once.
    await ok('Put', putReq(`${P}checkpoint/pitr/central_global`, be(start + 450n)));
    await ok('Put', putReq(`${P}checkpoint/pitr/central_global`, be(start + 800n)));
    expect((await read())[0].checkpointTS).toBe((start + 800n).toString());
    // A store's error pauses the task (TiKV's last-error, then streamhelper PauseV2 with severity ERROR).
    const error = Buffer.from(
      new BinaryWriter()
        .tag(1, WireType.Varint)
        .uint64(1716613800000)
        .tag(2, WireType.LengthDelimited)
        .string('KV:LogBackup:RaftReq')
        .tag(3, WireType.LengthDelimited)
        .string('the region is not found')
        .tag(4, WireType.Varint)
        .uint64(4)
        .finish(),
    );
    await ok('Put', putReq(`${P}last-error/pitr/4`, error));
    await ok(
      'Put',
      putReq(
        `${P}pause/pitr`,
        JSON.stringify({
          severity: 'ERROR',
          operation_hostname: 'tikv-4',
          operation_pid: 1,
          operation_time: '2026-01-01T00:00:00Z',
          payload_type: 'application/x-protobuf;messageType=brpb.StreamBackupError',
          payload: error.toString('base64'),
        }),
      ),
    );
    expect((await read())[0]).toMatchObject({
      name: 'pitr',
      state: 'Error',
      error: 'KV:LogBackup:RaftReq: the region is not found (store 4)',
    });
    // br log resume: the pause and the errors go.
    await ok('DeleteRange', deleteReq(`${P}pause/pitr`));
    await ok('DeleteRange', deleteReq(`${P}last-error/pitr/`, prefixRangeEnd(b(`${P}last-error/pitr/`))));
    expect((await read())[0].state).toBe('Running');
    // br log stop (streamhelper DeleteTask): the info, then every key of the task by prefix; the
    // storage checkpoints by `storage-checkpoint/<task>` with no slash, as BR deletes them.
    await ok('DeleteRange', deleteReq(`${P}info/pitr`));
    for (const p of ['ranges/pitr/', 'checkpoint/pitr/', 'last-error/pitr/', 'storage-checkpoint/pitr'])
      await ok('DeleteRange', deleteReq(`${P}${p}`, prefixRangeEnd(b(`${P}${p}`))));
    await ok('DeleteRange', deleteReq(`${P}pause/pitr`));
    expect((await read()).map((t) => t.name)).toEqual(['pitr2']);
    expect((await ok('Range', prefixReq(P, { keysOnly: true }))).kvs.map((kv) => kv.key)).toEqual([
      b(`${P}checkpoint/pitr2/store/1`),
      b(`${P}info/pitr2`),
      Buffer.concat([b(`${P}ranges/pitr2/`), table(106n)]),
      Buffer.concat([b(`${P}ranges/pitr2/`), table(2n ** 40n)]),
    ]);
  });

  test("a prefix past gRPC's 4 MiB answer limit: one Range is refused, the controller's paged read gets every key from both", async () => {
    // A task's range keys (br/pkg/streamhelper RangeKeyOf: `ranges/<task>/` and a binary start key),
    // 2,400 of them with 2 KiB end keys: about 5 MiB under the prefix.
    const P = `${BR_STREAM_PREFIX}ranges/big/`;
    const key = (i: number) => Buffer.concat([b(P), b('t'), be(BigInt(i) ^ (1n << 63n))]);
    const value = (i: number) => Buffer.alloc(2048, i % 251);
    const N = 2400;
    for (let i = 0; i < N; i += 200) {
      await Promise.all(
        servers.flatMap((s) =>
          Array.from({ length: Math.min(200, N - i) }, (_, j) => unary(s, '/etcdserverpb.KV/Put', putReq(key(i + j), value(i + j)))),
        ),
      );
    }
    // One Range of the whole prefix: over gRPC's default 4 MiB receive limit, from both.
    const whole = await Promise.all(servers.map((s) => unary(s, RANGE_METHOD, encodeRangeRequest(P))));
    expect(whole.map((r) => ('code' in r ? r.code : 'answered'))).toEqual([8, 8]);
    // Compared as text: Jest compares 5 MiB of Buffers byte by byte, slowly.
    const text = (kvs: EtcdKeyValue[]) => kvs.map((kv) => `${Buffer.from(kv.key).toString('hex')} ${kv.value.toString('base64')}`);
    const want = Array.from(
      { length: N },
      (_, i) => `${Buffer.from(key(i).toString('utf8')).toString('hex')} ${value(i).toString('base64')}`,
    );
    // The controller's page size, and pages of 7 keys (the last one short).
    for (const pageKeys of [undefined, 7]) {
      const reads = await Promise.all(servers.map((s) => etcdRangePrefix(s.target, P, undefined, 5_000, pageKeys)));
      expect(text(reads[0])).toEqual(want);
      expect(text(reads[1])).toEqual(want);
    }
    for (const s of servers) await unary(s, '/etcdserverpb.KV/DeleteRange', deleteReq(P, prefixRangeEnd(b(P))));
  }, 120_000);

  test('at the end, every key and revision alike in both', async () => {
    const all = await ok('Range', rangeReq('\0', '\0'));
    expect(all.count).toBeGreaterThan(20);
    for (const rev of [1, 2, 10]) await ok('Range', (s) => rangeReq('\0', '\0', { revision: rev + s.base }));
  });
});
