/**
 * The log backup tasks as the controller reads them from PD's etcd: the keys BR and TiKV write under
 * `/tidb/br-stream/` decoded (task info, big-endian checkpoints, pauses, stores' errors), and the
 * etcd Range the controller sends answered over gRPC by the PD simulator's etcd, whose key order and
 * prefix ranges follow etcd's.
 */
import type { AddressInfo } from 'node:net';
import { BinaryWriter, WireType } from '@bufbuild/protobuf/wire';
import { etcdRangePrefix, prefixRangeEnd, type EtcdKeyValue } from '../src/controller/clients/etcd';
import { logBackupTasks } from '../src/controller/plan/log-backups';
import { planOperations } from '../src/controller/plan/operations';
import { EtcdStore, etcdGrpcServer } from './sim/pd-etcd';

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
    const tasks = logBackupTasks([kv('/tidb/br-stream/checkpoint/pitr/central_global', be(at)), kv('/tidb/br-stream/checkpoint/pitr/store/1', be(at - 100n)), kv('/tidb/br-stream/info/pitr', INFO), kv('/tidb/br-stream/ranges/pitr/m', 'n')], now);
    expect(tasks).toEqual([{ name: 'pitr', state: 'Running', storage: 'local:///backup/log', startTS: START.toString(), checkpointTS: at.toString(), checkpointTime: '2024-05-25T05:10:00Z', lagSeconds: 30 }]);
  });

  test('without a global checkpoint the lowest store\'s, never below the start', () => {
    const stores = [kv('/tidb/br-stream/checkpoint/pitr/store/1', be(START + 900n)), kv('/tidb/br-stream/checkpoint/pitr/store/2', be(START + 500n))];
    expect(logBackupTasks([kv('/tidb/br-stream/info/pitr', INFO), ...stores], 0)[0].checkpointTS).toBe((START + 500n).toString());
    expect(logBackupTasks([kv('/tidb/br-stream/info/pitr', INFO), kv('/tidb/br-stream/checkpoint/pitr/store/1', be(5n))], 0)[0].checkpointTS).toBe(START.toString());
    // The keys of a task whose name starts like this one's are not its.
    expect(logBackupTasks([kv('/tidb/br-stream/info/pitr', INFO), kv('/tidb/br-stream/checkpoint/pitr2/central_global', be(START + 7n))], 0)[0].checkpointTS).toBe(START.toString());
  });

  test('paused by hand, or by a failure with the stores\' errors', () => {
    const manual = JSON.stringify({ severity: 'MANUAL', operation_hostname: 'h', operation_pid: 1, operation_time: '2024-05-25T05:10:00Z', payload_type: '', payload: null });
    expect(logBackupTasks([kv('/tidb/br-stream/info/pitr', INFO), kv('/tidb/br-stream/pause/pitr', manual)], 0)[0].state).toBe('Paused');
    expect(logBackupTasks([kv('/tidb/br-stream/info/pitr', INFO), kv('/tidb/br-stream/pause/pitr', '')], 0)[0].state).toBe('Paused');
    const error = Buffer.from(new BinaryWriter().tag(1, WireType.Varint).uint64(1716613800000).tag(2, WireType.LengthDelimited).string('KV:LogBackup:RaftReq').tag(3, WireType.LengthDelimited).string('the region is not found').tag(4, WireType.Varint).uint64(4).finish());
    const failed = logBackupTasks([kv('/tidb/br-stream/info/pitr', INFO), kv('/tidb/br-stream/last-error/pitr/4', error), kv('/tidb/br-stream/pause/pitr', JSON.stringify({ severity: 'ERROR' }))], 0)[0];
    expect(failed).toMatchObject({ state: 'Error', error: 'KV:LogBackup:RaftReq: the region is not found (store 4)' });
  });

  test('a restore waits while a task runs into the cluster', () => {
    const [step] = planOperations({ operations: [{ job: 'restore-r', template: { json: '{}', digest: 'sha256:a' }, pods: [] }], logBackup: 'the log backup task pitr runs in this cluster (Running); stop it before restoring into the cluster', now: 0 });
    expect(step.record).toEqual({ job: 'restore-r', phase: 'Waiting', reason: 'the log backup task pitr runs in this cluster (Running); stop it before restoring into the cluster' });
    const [backup] = planOperations({ operations: [{ job: 'backup-b', template: { json: '{}', digest: 'sha256:a' }, pods: [] }], logBackup: 'x', now: 0 });
    expect(backup.create).toBe(true);
  });
});

describe('etcd Range over gRPC', () => {
  test('a prefix\'s range ends at the prefix with its last byte one higher', () => {
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
    await expect(etcdRangePrefix('127.0.0.1:1', '/tidb/br-stream/', undefined, 2000)).rejects.toThrow(/etcd Range \/tidb\/br-stream\/ on 127\.0\.0\.1:1/);
  });
});
