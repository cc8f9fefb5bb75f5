/**
 * The impact report says, for each config key a change sets, whether it is applied online or waits
 * for a restart: with InPlace, the PD and TiKV keys their release changes online are marked `online`
 * (the controller applies them to the running servers); other keys, other servers, and RollingUpdate
 * (a new ConfigMap name, so a restart) are not.
 */
import { buildModel, compareModels, toMarkdown, type DiffReport, type KubeObject } from '../../../src/diff';
import { cluster, render, type Obj } from '../../support/render';

function diff(before: Obj, after: Obj): DiffReport {
  return compareModels(buildModel(render(before) as KubeObject[]), buildModel(render(after) as KubeObject[]));
}
const withConfig = (tikv: string, pd = '', strategy = 'InPlace') =>
  cluster({
    configUpdateStrategy: strategy,
    pd: { replicas: 3, config: pd },
    tikv: { replicas: 3, requests: { storage: '10Gi' }, config: tikv },
  });
const keysOf = (r: DiffReport, component: string) =>
  r.clusters[0].components.find((c) => c.component === component)?.config?.flatMap((c) => c.keys.map((k) => [k.key, k.online === true])) ??
  [];

describe('config keys applied online or at the next restart', () => {
  test('InPlace: an online TiKV key and a PD schedule key are marked online; a key that needs a restart is not', () => {
    const r = diff(
      withConfig('[raftstore]\napply-pool-size = 2\n', '[schedule]\nleader-schedule-limit = 4\n'),
      withConfig('[raftstore]\napply-pool-size = 4\n[storage]\nreserve-space = "2GB"\n', '[schedule]\nleader-schedule-limit = 8\n'),
    );
    expect(keysOf(r, 'tikv')).toEqual([
      ['raftstore.apply-pool-size', true],
      ['storage.reserve-space', false],
    ]);
    expect(keysOf(r, 'pd')).toEqual([['schedule.leader-schedule-limit', true]]);
    const md = toMarkdown(r);
    expect(md).toContain(
      'InPlace: nothing restarts; the controller applies the keys marked online to the running servers, the others are read at the next restart',
    );
    expect(md).toContain('`raftstore.apply-pool-size`: `2` -> `4` (online)');
    expect(md).toContain('InPlace: nothing restarts; the controller applies every key to the running servers online');
  });

  test('RollingUpdate: a new ConfigMap, so a restart; nothing is marked online', () => {
    const r = diff(
      withConfig('[raftstore]\napply-pool-size = 2\n', '', 'RollingUpdate'),
      withConfig('[raftstore]\napply-pool-size = 4\n', '', 'RollingUpdate'),
    );
    expect(keysOf(r, 'tikv')).toEqual([['raftstore.apply-pool-size', false]]);
    expect(toMarkdown(r)).not.toContain('(online)');
  });
});
