/**
 * The log backup tasks as the controller reads them from PD's etcd: the keys BR and TiKV write under
 * `/tidb/br-stream/` decoded (task info, big-endian checkpoints, pauses, stores' errors), and the
 * etcd Range the controller sends answered over gRPC by the PD simulator's etcd, whose key order and
 * prefix ranges follow etcd's.
 */
import type { AddressInfo } from 'node:net';
import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import { etcdRangePrefix, prefixRangeEnd, type EtcdKeyValue } from '../../../src/controller/clients/etcd';
import { logBackupTasks } from '../../../src/controller/plan/log-backups';
import { planOneShotRuns as planOperations } from '../../../src/controller/plan/one-shot-runs';
import { LogBackupReader } from '../../../src/controller/reconcile/log-backups';
import { EtcdStore, etcdGrpcServer } from '../../sim/pd-etcd';

// br/pkg/streamhelper: StreamBackupTaskInfo of `br log start --task-name=pitr --storage=local:///backup/log`
// started at TSO 450000000000000000 (storage, start_ts, end_ts, name, table_filter, compression, security_config).
const INFO = Buffer.from('0a0f120d0a0b2f6261636b75702f6c6f67108080b4a7da93ae9f0618ffff8fbbbad6adf00d2204706974722a032a2e2a30033a00', 'hex');
const START = 450000000000000000n;
const be = (ts: bigint) => {
  const b = Buffer.alloc(8);
  b.writeBigUInt64BE(ts);
  return b;
};
const kv = (key: string, value: Buffer | string): EtcdKeyValue => ({ key, value: Buffer.from(value) });
/** The TSO of a time: milliseconds shifted by 18 bits. */
const tso = (ms: number) => BigInt(ms) << 18n;

describe('log backup tasks from their etcd keys', () => {
  test('the task, its storage and start, and the global checkpoint with its lag', () => {
    expect(be(START).toString('hex')).toBe('063eb89da4ed0000');
    const now = Date.UTC(2024, 4, 25, 5, 10, 29, 531);
    const at = tso(Date.UTC(2024, 4, 25, 5, 10, 0));
    const tasks = logBackupTasks(
      [
        kv('/tidb/br-stream/checkpoint/pitr/central_global', be(at)),
        kv('/tidb/br-stream/checkpoint/pitr/store/1', be(at - 100n)),
        kv('/tidb/br-stream/info/pitr', INFO),
        kv('/tidb/br-stream/ranges/pitr/m', 'n'),
      ],
      now,
    );
    expect(tasks).toEqual([
      {
        name: 'pitr',
        state: 'Running',
        storage: 'local:///backup/log',
        startTS: START.toString(),
        checkpointTS: at.toString(),
        checkpointTime: '2024-05-25T05:10:00Z',
        lagSeconds: 30,
      },
    ]);
  });

  test("without a global checkpoint the lowest store's, never below the start", () => {
    const stores = [
      kv('/tidb/br-stream/checkpoint/pitr/store/1', be(START + 900n)),
      kv('/tidb/br-stream/checkpoint/pitr/store/2', be(START + 500n)),
    ];
    expect(logBackupTasks([kv('/tidb/br-stream/info/pitr', INFO), ...stores], 0)[0].checkpointTS).toBe((START + 500n).toString());
    expect(
      logBackupTasks([kv('/tidb/br-stream/info/pitr', INFO), kv('/tidb/br-stream/checkpoint/pitr/store/1', be(5n))], 0)[0].checkpointTS,
    ).toBe(START.toString());
    // The keys of a task whose name starts like this one's are not its.
    expect(
      logBackupTasks([kv('/tidb/br-stream/info/pitr', INFO), kv('/tidb/br-stream/checkpoint/pitr2/central_global', be(START + 7n))], 0)[0]
        .checkpointTS,
    ).toBe(START.toString());
  });

  test("paused by hand, or by a failure with the stores' errors", () => {
    const manual = JSON.stringify({
      severity: 'MANUAL',
      operation_hostname: 'h',
      operation_pid: 1,
      operation_time: '2024-05-25T05:10:00Z',
      payload_type: '',
      payload: null,
    });
    expect(logBackupTasks([kv('/tidb/br-stream/info/pitr', INFO), kv('/tidb/br-stream/pause/pitr', manual)], 0)[0].state).toBe('Paused');
    expect(logBackupTasks([kv('/tidb/br-stream/info/pitr', INFO), kv('/tidb/br-stream/pause/pitr', '')], 0)[0].state).toBe('Paused');
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
    const failed = logBackupTasks(
      [
        kv('/tidb/br-stream/info/pitr', INFO),
        kv('/tidb/br-stream/last-error/pitr/4', error),
        kv('/tidb/br-stream/pause/pitr', JSON.stringify({ severity: 'ERROR' })),
      ],
      0,
    )[0];
    expect(failed).toMatchObject({ state: 'Error', error: 'KV:LogBackup:RaftReq: the region is not found (store 4)' });
  });

  test("paused by TiDB's advancer for checkpoint lag: a MANUAL pause with no payload from one of the cluster's TiDB Pods", () => {
    // br/pkg/streamhelper/client.go: `PauseTask` with no option marshals `NewLocalPauseV2()` (severity MANUAL,
    // the host and pid of the process, RFC 3339 time; no payload, which Go writes as "" and null); the
    // advancer runs inside tidb-server (advancer.go `importantTick`), so the host is a TiDB Pod's.
    const pauseV2 = (host: string, payload?: string) =>
      JSON.stringify({
        severity: 'MANUAL',
        operation_hostname: host,
        operation_pid: 1,
        operation_time: '2024-05-27T05:10:00Z',
        payload_type: payload ? 'text/plain;charset=UTF-8' : '',
        payload: payload ? Buffer.from(payload).toString('base64') : null,
      });
    const read = (value: string, cluster?: string) =>
      logBackupTasks([kv('/tidb/br-stream/info/pitr', INFO), kv('/tidb/br-stream/pause/pitr', value)], 0, cluster ? { cluster } : {})[0];
    expect(read(pauseV2('demo-tidb-1'), 'demo')).toMatchObject({
      state: 'Paused',
      pause: { severity: 'MANUAL', host: 'demo-tidb-1', time: '2024-05-27T05:10:00Z', lag: true },
    });
    // A br log pause from a Job's Pod, with or without --message; another cluster's TiDB; no cluster named.
    expect(read(pauseV2('backup-pitr-log-pause-2-x7k2p'), 'demo').pause).toEqual({
      severity: 'MANUAL',
      host: 'backup-pitr-log-pause-2-x7k2p',
      time: '2024-05-27T05:10:00Z',
    });
    expect(read(pauseV2('demo-tidb-1', 'maintenance'), 'demo').pause).toEqual({
      severity: 'MANUAL',
      host: 'demo-tidb-1',
      time: '2024-05-27T05:10:00Z',
      message: 'maintenance',
    });
    expect(read(pauseV2('other-tidb-0'), 'demo').pause?.lag).toBeUndefined();
    expect(read(pauseV2('demo-tidb-x'), 'demo').pause?.lag).toBeUndefined();
    expect(read(pauseV2('demo-tidb-1')).pause?.lag).toBeUndefined();
    // Older BR's empty value: paused, nothing more known.
    expect(read('', 'demo')).toMatchObject({ state: 'Paused' });
    expect(read('', 'demo').pause).toBeUndefined();
  });

  test('a restore waits while a task runs into the cluster', () => {
    const [step] = planOperations({
      operations: [{ job: 'restore-r', template: { json: '{}', digest: 'sha256:a', spec: 'sha256:a' }, pods: [] }],
      logBackup: 'the log backup task pitr runs in this cluster (Running); stop it before restoring into the cluster',
      clusterId: '7',
      now: 0,
    });
    expect(step.record).toEqual({
      job: 'restore-r',
      phase: 'Waiting',
      reason: 'the log backup task pitr runs in this cluster (Running); stop it before restoring into the cluster',
    });
    const [backup] = planOperations({
      operations: [{ job: 'backup-b', template: { json: '{}', digest: 'sha256:a', spec: 'sha256:a' }, pods: [] }],
      logBackup: 'x',
      clusterId: '7',
      now: 0,
    });
    expect(backup.create).toBe(true);
  });
});

describe('etcd Range over gRPC', () => {
  test("a prefix's range ends at the prefix with its last byte one higher", () => {
    expect(prefixRangeEnd(Buffer.from('/tidb/br-stream/')).toString()).toBe('/tidb/br-stream0');
    expect(prefixRangeEnd(Buffer.from([0x61, 0xff]))).toEqual(Buffer.from([0x62]));
    expect(prefixRangeEnd(Buffer.from([0xff]))).toEqual(Buffer.from([0]));
  });

  test('reads every key under the prefix, in key order, and nothing else', async () => {
    const store = new EtcdStore();
    store.put('/tidb/br-stream/info/pitr', INFO);
    store.put('/tidb/br-stream/checkpoint/pitr/central_global', be(START + 1n));
    store.put('/tidb/br-stream0', 'outside');
    store.put('/pd/7000000000000000001/config', 'outside');
    const server = etcdGrpcServer(store);
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    try {
      const target = `127.0.0.1:${(server.address() as AddressInfo).port}`;
      const kvs = await etcdRangePrefix(target, '/tidb/br-stream/');
      expect(kvs.map((k) => k.key)).toEqual(['/tidb/br-stream/checkpoint/pitr/central_global', '/tidb/br-stream/info/pitr']);
      expect(kvs[1].value).toEqual(INFO);
      expect(await etcdRangePrefix(target, '/nothing/')).toEqual([]);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
    await expect(etcdRangePrefix('127.0.0.1:1', '/tidb/br-stream/', undefined, 2000)).rejects.toThrow(
      /etcd Range \/tidb\/br-stream\/ on 127\.0\.0\.1:1/,
    );
  });

  test("a page at a time from past the last key, every page at the first one's revision: writes between pages are not seen", async () => {
    const store = new EtcdStore();
    for (const k of ['a', 'b', 'c', 'd', 'e']) store.put(`/p/${k}`, k);
    const server = etcdGrpcServer(store);
    const asked: string[] = [];
    // After the first page is answered, a key comes between pages and one of the next page goes.
    server.on('stream', (stream) => {
      asked.push('Range');
      stream.on('close', () => {
        if (asked.length !== 1) return;
        store.put('/p/b0', 'new');
        store.deleteRange(Buffer.from('/p/d'), Buffer.alloc(0));
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    try {
      const target = `127.0.0.1:${(server.address() as AddressInfo).port}`;
      const kvs = await etcdRangePrefix(target, '/p/', undefined, 5_000, 2);
      expect(kvs.map((k) => `${k.key}=${k.value}`)).toEqual(['/p/a=a', '/p/b=b', '/p/c=c', '/p/d=d', '/p/e=e']);
      expect(asked).toHaveLength(3);
      // Read again: the writes are there.
      expect((await etcdRangePrefix(target, '/p/', undefined, 5_000, 2)).map((k) => k.key)).toEqual([
        '/p/a',
        '/p/b',
        '/p/b0',
        '/p/c',
        '/p/e',
      ]);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });

  test("the controller reads a task's info, checkpoints, pause and errors, not its range keys", async () => {
    const store = new EtcdStore();
    store.put('/tidb/br-stream/info/pitr', INFO);
    store.put('/tidb/br-stream/pause/pitr', '');
    for (let i = 0; i < 50; i++) store.put(`/tidb/br-stream/ranges/pitr/t${i}`, 'x');
    const server = etcdGrpcServer(store);
    const keys: string[] = [];
    // Each Range's key: past the 5-byte gRPC frame header, field 1's tag and its one-byte length.
    server.on('stream', (stream) => stream.on('data', (d: Buffer) => keys.push(Buffer.from(d.subarray(7, 7 + d[6])).toString())));
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
    try {
      const reader = new LogBackupReader({
        cluster: { name: 'demo', namespace: 'ns', logBackups: ['backup-pitr'] } as never,
        pd: { baseUrl: `http://127.0.0.1:${(server.address() as AddressInfo).port}` },
        log: { info() {}, warn() {}, error() {}, debug() {} } as never,
        options: { resyncMs: 30_000 },
      });
      const view = await reader.read(0);
      expect(view && 'tasks' in view && view.tasks.map((t) => [t.name, t.state])).toEqual([['pitr', 'Paused']]);
      expect(keys.sort()).toEqual([
        '/tidb/br-stream/checkpoint/',
        '/tidb/br-stream/info/',
        '/tidb/br-stream/last-error/',
        '/tidb/br-stream/pause/',
      ]);
    } finally {
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});
