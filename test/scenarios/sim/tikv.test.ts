/**
 * The controller's TiKV client against the TiKV simulator's two ports (test/sim/tikv.ts): the leader
 * gauge in `/metrics` and log backup's gRPC FlushNow, each answer shaped as tikv-server gives it.
 */
import { decodeFlushNowResponse, flushLogBackup, leaderCountFromMetrics, tikvLeaderCount } from '../../../src/controller/clients/tikv';
import type { PdSim } from '../../sim/pd-api';
import { freePort } from '../../sim/controller-process';
import { hasFlushNow, TikvSim, type TikvSimOptions } from '../../sim/tikv';

/** Stands in for PD's view of the store: the simulator reads only the counts of the Pod's store. */
const store = { leaderCount: 12, regionCount: 30 };
const pd = { store: (pod: string) => (pod === 'c-tikv-0' ? store : undefined) } as unknown as PdSim;

let sim: TikvSim | undefined;
const started: TikvSim[] = [];
afterEach(async () => {
  await Promise.all(started.splice(0).map((s) => s.close()));
  sim = undefined;
});

async function start(options: TikvSimOptions = {}) {
  const [statusPort, grpcPort] = [await freePort(), await freePort()];
  sim = new TikvSim(pd, { statusPort, grpcPort, metricsRefreshMs: 50, ...options });
  started.push(sim);
  await sim.serverStart('c-tikv-0', '127.0.0.1');
  return { metrics: `http://127.0.0.1:${statusPort}/metrics`, grpc: `127.0.0.1:${grpcPort}` };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the leader count in /metrics', () => {
  it('reads the type="leader" sample of tikv_raftstore_region_count, whatever other labels it has', () => {
    const text = [
      '# HELP tikv_raftstore_region_count Number of regions collected in region_collector',
      '# TYPE tikv_raftstore_region_count gauge',
      'tikv_raftstore_region_count{type="region"} 40',
      'tikv_raftstore_region_count{instance="a",type="leader"} 7',
      'tikv_raftstore_region_count_other{type="leader"} 99',
    ].join('\n');
    expect(leaderCountFromMetrics(text)).toBe(7);
    expect(leaderCountFromMetrics('tikv_raftstore_region_count{type="region"} 40\n')).toBeUndefined();
    expect(leaderCountFromMetrics('tikv_raftstore_region_count{type="leader"} 1e+01\n')).toBe(10);
  });

  it('is absent until the region collector first ticks, then follows the store at each tick', async () => {
    const { metrics } = await start({ metricsRefreshMs: 300 });
    await expect(tikvLeaderCount(metrics)).rejects.toThrow(/no tikv_raftstore_region_count\{type="leader"\} sample/);
    await sleep(400);
    expect(await tikvLeaderCount(metrics)).toBe(12);
    store.leaderCount = 0;
    // The gauge shows the last tick's count until the next one.
    expect(await tikvLeaderCount(metrics)).toBe(12);
    await sleep(350);
    expect(await tikvLeaderCount(metrics)).toBe(0);
    store.leaderCount = 12;
  });

  it('rejects when the server cannot be reached or the path is wrong', async () => {
    const { metrics } = await start();
    await expect(tikvLeaderCount(metrics.replace('/metrics', '/nope'))).rejects.toThrow(/HTTP 404/);
    const post = await fetch(metrics, { method: 'POST' });
    expect([post.status, post.headers.get('content-type'), await post.text()]).toEqual([404, null, 'path not found']);
    await sim!.close();
    await expect(tikvLeaderCount(metrics, undefined, 500)).rejects.toThrow(/ECONNREFUSED/);
  });
});

describe("log backup's FlushNow over gRPC", () => {
  it('reports no task when there is none, and records the call', async () => {
    const { grpc } = await start();
    expect(await flushLogBackup(grpc)).toEqual({ ok: true, supported: true, tasks: [], detail: 'no log backup task' });
    expect(sim!.flushes.map((f) => [f.pod, f.leaders])).toEqual([['c-tikv-0', 12]]);
  });

  it("names each task, and a task that did not flush with TiKV's message", async () => {
    const { grpc } = await start({ logBackupTasks: [{ name: 'pitr' }, { name: 'audit', error: 'storage unreachable' }] });
    expect(await flushLogBackup(grpc)).toEqual({
      ok: false,
      supported: true,
      tasks: ['pitr', 'audit'],
      detail: 'task audit: storage unreachable',
    });
    const ok = await start({ logBackupTasks: [{ name: 'pitr' }] });
    expect(await flushLogBackup(ok.grpc)).toMatchObject({ ok: true, detail: 'flushed pitr' });
  });

  it('takes UNIMPLEMENTED (log backup off) as nothing to flush, and an unreachable server as a failure', async () => {
    const { grpc } = await start({ logBackup: false });
    expect(await flushLogBackup(grpc)).toMatchObject({ ok: true, supported: false });
    await sim!.close();
    const down = await flushLogBackup(grpc, undefined, 1000);
    expect(down.ok).toBe(false);
    expect(down.detail).toMatch(/FlushNow on 127\.0\.0\.1:\d+: /);
  });

  it('answers UNIMPLEMENTED before v8.5.6, even while a task runs, and flushes from v8.5.6 on (tikv/tikv#18027)', async () => {
    const tasks = [{ name: 'pitr' }];
    const old = await start({ logBackupTasks: tasks, version: 'v8.5.5' });
    expect(await flushLogBackup(old.grpc)).toEqual({
      ok: true,
      supported: false,
      tasks: [],
      detail: `${old.grpc} answered UNIMPLEMENTED to FlushNow`,
    });
    const now = await start({ logBackupTasks: tasks, version: 'v8.5.6' });
    expect(await flushLogBackup(now.grpc)).toEqual({ ok: true, supported: true, tasks: ['pitr'], detail: 'flushed pitr' });
    expect(sim!.flushes.map((f) => [f.version, f.answered])).toEqual([['v8.5.6', 'flushed']]);
    expect(started[0].flushes.map((f) => [f.version, f.answered])).toEqual([['v8.5.5', 'unimplemented']]);
  });

  it.each([
    ['v7.5.7', false],
    ['v8.1.2', false],
    ['v8.4.0', false],
    ['v8.5.0', false],
    ['v8.5.5', false],
    ['v8.5.6', true],
    ['v8.5.7', true],
    ['v9.0.0-beta.1', true],
    ['nightly', true],
  ])('has FlushNow in TiKV %s: %s', (version, has) => {
    expect(hasFlushNow(version)).toBe(has);
  });

  it('decodes FlushNowResponse field by field, skipping fields it does not know', () => {
    // results { task_name: "t", success: true, 9: 1 } results { task_name: "u", error_message: "e" }
    const bytes = Uint8Array.from([0x0a, 0x07, 0x0a, 0x01, 0x74, 0x10, 0x01, 0x48, 0x01, 0x0a, 0x06, 0x0a, 0x01, 0x75, 0x1a, 0x01, 0x65]);
    expect(decodeFlushNowResponse(bytes)).toEqual([
      { taskName: 't', success: true, errorMessage: '' },
      { taskName: 'u', success: false, errorMessage: 'e' },
    ]);
  });
});
