import { settingsOf } from '../../../../src/controller/model/settings';
import type { StatefulSet } from '../../../../src/controller/model/objects';
import { cluster, render, type Obj } from '../../../support/render';

const settingsByComponent = (objects: Obj[]) =>
  Object.fromEntries(
    objects
      .filter((o) => o.kind === 'StatefulSet')
      .map((o) => [o.metadata.labels['app.kubernetes.io/component'], settingsOf(o as StatefulSet)]),
  );

const KEYS = ['minReadySeconds', 'checkQuorumBeforeUpgrade', 'checkStoresUpBeforeUpgrade', 'flushLogBackup'];

describe("the operator's upgrade annotations reach the controller's settings", () => {
  it('each component takes the keys that name it, and only those', () => {
    const tc = cluster(
      { tiflash: { replicas: 1, storageClaims: [{ resources: { requests: { storage: '10Gi' } } }] } },
      {
        annotations: {
          'tidb.pingcap.com/pd-min-ready-seconds': '10',
          'tidb.pingcap.com/tikv-min-ready-seconds': '60',
          'tidb.pingcap.com/tiflash-min-ready-seconds': '0',
          'tidb.pingcap.com/tidb-min-ready-seconds': '15',
          'tidb.pingcap.com/pd-check-quorum-before-upgrade': 'true',
          'tidb.pingcap.com/tikv-check-all-stores-up-before-upgrade': 'false',
          'tidb.pingcap.com/tikv-restart-without-flush-log-backup': 'anything',
        },
      },
    );
    const s = settingsByComponent(render(tc));
    const picked = (kind: string) => Object.fromEntries(KEYS.filter((k) => k in s[kind]).map((k) => [k, s[kind][k]]));
    expect(picked('pd')).toEqual({ minReadySeconds: 10, checkQuorumBeforeUpgrade: true });
    expect(picked('tikv')).toEqual({ minReadySeconds: 60, checkStoresUpBeforeUpgrade: false, flushLogBackup: false });
    expect(picked('tiflash')).toEqual({ minReadySeconds: 0 });
    expect(picked('tidb')).toEqual({ minReadySeconds: 15 });
  });

  it('a cluster without them renders settings without these keys', () => {
    const s = settingsByComponent(render(cluster()));
    for (const kind of ['pd', 'tikv', 'tidb']) expect(KEYS.filter((k) => k in s[kind])).toEqual([]);
  });
});
