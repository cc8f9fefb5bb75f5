/**
 * What the planner needs read from PD before it plans (src/controller/plan/probes.ts,
 * `pdReadsWanted`): PD at all, its stores, and the tombstones and max-replicas a store removal needs.
 */
import { pdReadsWanted } from '../../../../src/controller/plan/probes';
import { NO_FAILOVER, type FailoverState } from '../../../../src/controller/records/failover';
import type { ComponentKind } from '../../../../src/tidbcluster/names';
import type { ComponentState } from '../../../../src/controller/view/view';
import { pod, pods, sts, type StsOpts } from '../../../support/plan-fixtures';

const comp = (kind: ComponentKind, o: StsOpts = {}): ComponentState => ({ kind, sts: sts(kind, o), pods: pods(kind, ['r1', 'r1', 'r1']) });

describe('pdReadsWanted', () => {
  it('reads nothing from PD for a cluster without PD, stores or micro-services', () => {
    expect(pdReadsWanted([comp('tidb'), comp('ticdc')], NO_FAILOVER)).toBeUndefined();
  });

  it('reads members only for PD alone, and the registry of each micro-service the cluster runs', () => {
    expect(pdReadsWanted([comp('pd')], NO_FAILOVER)).toEqual({ stores: false, storeRemovals: false, msServices: [] });
    expect(pdReadsWanted([comp('pd'), comp('tso'), comp('scheduling')], NO_FAILOVER)).toEqual({
      stores: false,
      storeRemovals: false,
      msServices: ['tso', 'scheduling'],
    });
  });

  it('reads stores for TiKV or TiFlash, and tombstones and max-replicas only while one scales in', () => {
    expect(pdReadsWanted([comp('pd'), comp('tikv')], NO_FAILOVER)).toEqual({ stores: true, storeRemovals: false, msServices: [] });
    expect(pdReadsWanted([comp('pd'), comp('tiflash', { replicas: 3, desired: 2 })], NO_FAILOVER)?.storeRemovals).toBe(true);
    expect(pdReadsWanted([comp('tikv', { replicas: 3, desired: 4 })], NO_FAILOVER)?.storeRemovals).toBe(false);
  });

  it('counts failover replicas as wanted: they are no scale-in', () => {
    const failover: FailoverState = {
      components: { tikv: { records: { '7': { pod: 'c-tikv-2', createdAt: '2026-01-01T00:00:00Z', storeId: 7 } } } },
      unhealthySince: {},
    };
    expect(pdReadsWanted([comp('tikv', { replicas: 4, desired: 3 })], failover)?.storeRemovals).toBe(false);
    expect(pdReadsWanted([comp('tikv', { replicas: 4, desired: 3 })], NO_FAILOVER)?.storeRemovals).toBe(true);
  });

  it('reads them too while Git asks for a store to be replaced', () => {
    expect(pdReadsWanted([comp('tikv', { settings: { replace: ['c-tikv-1'] } })], NO_FAILOVER)?.storeRemovals).toBe(true);
    expect(pdReadsWanted([comp('tikv', { settings: { replace: [] } })], NO_FAILOVER)?.storeRemovals).toBe(false);
    expect(pdReadsWanted([comp('pd', { settings: { replace: ['c-pd-1'] } })], NO_FAILOVER)?.storeRemovals).toBe(false);
  });

  it("and while a store's Pod asks for it with tidb-operator's replace-volume annotation (not once it is terminating)", () => {
    const asking = (o: { terminating?: boolean } = {}): ComponentState => ({
      kind: 'tikv',
      sts: sts('tikv'),
      pods: [
        pod('tikv', 0, 'r1'),
        pod('tikv', 1, 'r1', { annotations: { 'tidb.pingcap.com/replace-volume': 'true' }, ...o }),
        pod('tikv', 2, 'r1'),
      ],
    });
    expect(pdReadsWanted([comp('pd'), asking()], NO_FAILOVER)?.storeRemovals).toBe(true);
    expect(pdReadsWanted([comp('pd'), asking({ terminating: true })], NO_FAILOVER)?.storeRemovals).toBe(false);
  });
});
