/**
 * The controller applies PD's and TiKV's InPlace config online: a change in Git of a key the
 * servers change without a restart reaches every running member (TiKV's status servers, PD's
 * leader) with no Pod restarted, each member reports it, and the status and Events say so; a key
 * that needs a restart is not sent and waits for the next one. The servers are the PD and TiKV
 * simulators, which answer `/config` as PD v8.5 and TiKV v8.5 do (test/sim/pd-config.ts,
 * test/sim/tikv-config.ts). These need the bundle (`npm run build`), which `npm test` makes first.
 */
import { ConfigRefused, pdConfig, setPdConfig, setTikvConfig, tikvConfig } from '../../../src/controller/clients/online-config';
import { render } from '../../support/render';
import { worldViolations } from '../../support/rbac';
import { World, simCluster } from '../../sim/world';

jest.setTimeout(120_000);

let world: World | undefined;
afterEach(async () => {
  const w = world;
  world = undefined;
  if (!w) return;
  try {
    expect(worldViolations(w)).toEqual([]);
    expect(w.violations).toEqual([]);
    expect(w.processes.failures).toEqual([]);
  } finally {
    await w.close();
  }
});

const TIKV_PODS = ['c-tikv-0', 'c-tikv-1', 'c-tikv-2'];

function spec(tikvConfig: string, pdConfig: string) {
  return {
    pd: { replicas: 3, requests: { storage: '1Gi' }, config: pdConfig },
    tikv: { replicas: 3, requests: { storage: '1Gi' }, config: tikvConfig },
    tidb: { replicas: 2 },
  };
}

const uids = (w: World, component: string) => Object.fromEntries(w.pods(component).map((p) => [p.metadata.name, p.metadata.uid]));
const tikvBase = (w: World, pod: string) => `http://${w.kube.podIPOf(w.namespace, pod)}:20180`;

describe('online config', () => {
  it('applies an InPlace change of online keys to every running member without a restart, and leaves restart keys for the next one', async () => {
    const w = await World.start({
      cluster: simCluster(spec('[raftstore]\napply-pool-size = 2\n', '[schedule]\nleader-schedule-limit = 4\n')),
      render,
    });
    world = w;
    await w.startController();
    await w.waitFor(() => w.settled('pd', 3) && w.settled('tikv', 3), 30_000, 'the cluster to come up');
    await w.waitFor(() => w.status()?.onlineConfig?.tikv?.state === 'current', 10_000, 'the online config to be looked at');
    expect(w.events('ConfigAppliedOnline')).toEqual([]);
    const before = { pd: uids(w, 'pd'), tikv: uids(w, 'tikv') };
    const stops = w.stops.length;

    await w.applyCluster(
      simCluster(
        spec(
          '[raftstore]\napply-pool-size = 4\nraft-base-tick-interval = "2s"\n[storage]\nreserve-space = "1GB"\n',
          '[schedule]\nleader-schedule-limit = 8\nenable-cross-table-merge = false\n',
        ),
      ),
    );
    await w.waitFor(
      () => TIKV_PODS.every((p) => w.tikv.configValue(p, 'raftstore.apply-pool-size') === 4),
      30_000,
      'every TiKV server to hold apply-pool-size 4',
    );
    await w.waitFor(
      async () =>
        (await pdConfig(w.pd.url)).schedule !== undefined &&
        ((await pdConfig(w.pd.url)).schedule as Record<string, unknown>)['leader-schedule-limit'] === 8,
      30_000,
      'PD to hold leader-schedule-limit 8',
    );
    await w.waitFor(
      () =>
        w.events('ConfigAppliedOnline').length >= 2 &&
        w.status()?.onlineConfigRecords?.tikv?.keys?.['raftstore.apply-pool-size']?.value === 4,
      10_000,
      'the Events and the records',
    );

    // Each member reports the value on its own status port.
    for (const pod of TIKV_PODS)
      expect(((await tikvConfig(tikvBase(w, pod))).raftstore as Record<string, unknown>)['apply-pool-size']).toBe(4);
    // No Pod was restarted.
    expect(uids(w, 'pd')).toEqual(before.pd);
    expect(uids(w, 'tikv')).toEqual(before.tikv);
    expect(w.stops.length).toBe(stops);

    const tikvEvent = w.events('ConfigAppliedOnline').find((e) => e.involvedObject.name === 'c-tikv')!;
    expect(tikvEvent.message).toBe('applied raftstore.apply-pool-size = 4 online to c-tikv-0, c-tikv-1, c-tikv-2, without a restart');
    const pdEvent = w.events('ConfigAppliedOnline').find((e) => e.involvedObject.name === 'c-pd')!;
    // In the order of the rendered file's keys.
    expect(pdEvent.message).toMatch(
      /^applied schedule\.enable-cross-table-merge = "false", schedule\.leader-schedule-limit = 8 online to c-pd-\d, without a restart$/,
    );
    expect(((await pdConfig(w.pd.url)).schedule as Record<string, unknown>)['enable-cross-table-merge']).toBe('false');
    expect(w.events('ConfigOnlineFailed')).toEqual([]);
    const records = w.status()!.onlineConfigRecords;
    expect(records.tikv.members).toEqual(TIKV_PODS);
    expect(records.pd.keys['schedule.leader-schedule-limit'].value).toBe(8);

    // The keys that need a restart were not sent: the servers still hold what they started with.
    for (const pod of TIKV_PODS) {
      expect(w.tikv.configValue(pod, 'raftstore.raft-base-tick-interval')).toBe('1s');
      expect(w.tikv.configValue(pod, 'storage.reserve-space')).toBe('5GiB');
    }
    await w.waitFor(() => w.status()?.onlineConfig?.tikv?.state === 'current', 10_000, 'the next pass to find TiKV current');
    const tikv = w.status()!.onlineConfig.tikv;
    expect(tikv.waitingForRestart).toEqual(['raftstore.raft-base-tick-interval', 'storage.reserve-space']);
    expect(tikv.onlineKeys).toEqual(['raftstore.apply-pool-size']);
    expect(tikv.lastApplied).toBe(records.tikv.time);
    expect(w.status()!.onlineConfig.pd.state).toBe('current');
  });

  it('the servers refuse what they do not change online, in their own words', async () => {
    const w = await World.start({ cluster: simCluster(spec('[raftstore]\napply-pool-size = 2\n', '')), render });
    world = w;
    await w.startController();
    await w.waitFor(() => w.settled('pd', 3) && w.settled('tikv', 3), 30_000, 'the cluster to come up');
    const refusal = (p: Promise<void>) =>
      p.then(
        () => 'accepted',
        (e: unknown) => (e instanceof ConfigRefused ? e.words : `${e}`),
      );

    // tikv/tikv src/config/mod.rs `to_config_change`, via status_server `update_config`.
    const base = tikvBase(w, 'c-tikv-0');
    expect(await refusal(setTikvConfig(base, { 'server.grpc-concurrency': 8 }))).toBe(
      'failed to update, error: "config grpc_concurrency can not be changed"',
    );
    expect(await refusal(setTikvConfig(base, { 'raftstore.no-such-key': 1 }))).toBe(
      'failed to update, error: "unexpect fields: no_such_key"',
    );
    expect(await refusal(setTikvConfig(base, { 'raftstore.apply-pool-size': 'four' }))).toBe(
      'failed to update, error: "failed to parse: four"',
    );
    expect(await refusal(setTikvConfig(base, { 'server.labels': ['a'] as never }))).toBe(
      'failed to decode, error: "array type are not supported"',
    );
    expect(await refusal(setTikvConfig(base, { 'raftstore.apply-pool-size': 3 }))).toBe('accepted');
    expect(w.tikv.configValue('c-tikv-0', 'raftstore.apply-pool-size')).toBe(3);
    expect(w.tikv.configValue('c-tikv-1', 'raftstore.apply-pool-size')).toBe(2);

    // tikv/pd server/api/config.go `SetConfig`, `updateConfig`.
    expect(await refusal(setPdConfig(w.pd.url, 'lease', 5))).toBe('config prefix lease not found');
    expect(await refusal(setPdConfig(w.pd.url, 'schedule.no-such-key', 5))).toBe('config item no-such-key not found');
    expect(await refusal(setPdConfig(w.pd.url, 'log.file.filename', 'x'))).toBe('only support changing log level');
    expect(await refusal(setPdConfig(w.pd.url, 'schedule.leader-schedule-limit', '8'))).toBe(
      'json: cannot unmarshal string into Go struct field ScheduleConfig.leader-schedule-limit of type uint64',
    );
    expect(await refusal(setPdConfig(w.pd.url, 'schedule.enable-cross-table-merge', false))).toBe(
      'json: invalid use of ,string struct tag, trying to unmarshal unquoted value into bool',
    );
    expect(await refusal(setPdConfig(w.pd.url, 'schedule.halt-scheduling', false))).toBe('accepted');
    expect(await refusal(setPdConfig(w.pd.url, 'schedule.max-store-down-time', '45m'))).toBe('accepted');
    expect(await refusal(setPdConfig(w.pd.url, 'replication.max-replicas', 5))).toBe('accepted');
    expect(((await pdConfig(w.pd.url)).replication as Record<string, unknown>)['max-replicas']).toBe(5);
    expect(((await pdConfig(w.pd.url)).schedule as Record<string, unknown>)['max-store-down-time']).toBe('45m0s');
  });
});
