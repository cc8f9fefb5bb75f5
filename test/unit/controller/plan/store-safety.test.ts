/**
 * How many stores must stay Up when a store is taken out (src/controller/plan/store-safety.ts), as
 * a TiKV scale-in, a replacement and a TiKV upgrade ask it, and how the scale-in and the replacement
 * word it (with the codes their waits carry).
 */
import type { PdStore } from '../../../../src/controller/clients/pd';
import { removalHold, upTikvStores } from '../../../../src/controller/plan/store-safety';
import type { ComponentState } from '../../../../src/controller/view/view';
import { pdState, planOne, pods, store, sts } from '../../../support/plan-fixtures';

const tiflash = (ord: number, state = 'Up'): PdStore => ({
  ...store(ord, 0, state),
  id: 100 + ord,
  address: `c-tiflash-${ord}.c-tiflash-peer.ns.svc:3930`,
  labels: { engine: 'tiflash' },
});

describe('upTikvStores', () => {
  const stores = [store(0, 5), store(1, 5, 'Down'), store(2, 5), tiflash(0)];

  it('counts the Up TiKV stores, never a TiFlash one (an upgrade shares leaders among them)', () => {
    expect(upTikvStores(stores).map((s) => s.id)).toEqual([1, 3]);
  });

  it('leaves out the store named (an upgrade moves its leaders to the others)', () => {
    expect(upTikvStores(stores, stores[0]).map((s) => s.id)).toEqual([3]);
    expect(upTikvStores([store(0, 5), tiflash(0)], store(0, 5))).toEqual([]);
  });
});

describe('removalHold', () => {
  const pd = (stores: PdStore[], maxReplicas?: number) => ({ stores, maxReplicas });

  describe('a TiKV scale-in or replacement', () => {
    it('holds an Up store while the others could not keep max-replicas copies', () => {
      const stores = [store(0, 1), store(1, 1), store(2, 1)];
      expect(removalHold(pd(stores, 3), 'tikv', stores[2])).toEqual({ why: 'too-few-up-stores', up: 3, others: 2, maxReplicas: 3 });
    });

    it('lets an Up store go when as many others as max-replicas stay Up', () => {
      const stores = [store(0, 1), store(1, 1), store(2, 1), store(3, 1)];
      expect(removalHold(pd(stores, 3), 'tikv', stores[3])).toBeUndefined();
    });

    it('counts a store that is not Up out of both counts: it lets it go while the Up ones reach max-replicas', () => {
      const stores = [store(0, 1), store(1, 1), store(2, 1), store(3, 0, 'Down')];
      expect(removalHold(pd(stores, 3), 'tikv', stores[3])).toBeUndefined();
      expect(removalHold(pd(stores, 4), 'tikv', stores[3])).toEqual({ why: 'too-few-up-stores', up: 3, others: 3, maxReplicas: 4 });
    });

    it('does not count TiFlash stores as room for TiKV regions', () => {
      const stores = [store(0, 1), store(1, 1), store(2, 1), tiflash(0), tiflash(1)];
      expect(removalHold(pd(stores, 3), 'tikv', stores[2])).toEqual({ why: 'too-few-up-stores', up: 3, others: 2, maxReplicas: 3 });
    });

    it('waits for max-replicas when PD did not give it', () => {
      const stores = [store(0, 1), store(1, 1), store(2, 1), store(3, 1)];
      expect(removalHold(pd(stores), 'tikv', stores[3])).toEqual({ why: 'max-replicas-unknown' });
    });

    it('does not hold a store already Offline: its removal is under way', () => {
      const stores = [store(0, 1), store(1, 1), store(2, 0, 'Offline')];
      expect(removalHold(pd(stores, 3), 'tikv', stores[2])).toBeUndefined();
      expect(removalHold(pd(stores), 'tikv', stores[2])).toBeUndefined();
    });
  });

  it('does not hold a TiFlash store', () => {
    const stores = [store(0, 1), tiflash(0)];
    expect(removalHold(pd(stores, 3), 'tiflash', stores[1])).toBeUndefined();
    expect(removalHold(pd(stores), 'tiflash', stores[1])).toBeUndefined();
  });
});

describe('as the planners word it', () => {
  const tikv = (replicas: number, desired: number, settings: Record<string, unknown> = {}): ComponentState => ({
    kind: 'tikv',
    sts: sts('tikv', { replicas, desired, settings }),
    pods: pods(
      'tikv',
      Array.from({ length: replicas }, () => 'r1'),
    ),
  });

  it('a scale-in counts the Up stores with the one leaving', () => {
    const p = planOne(tikv(3, 2), pdState({ maxReplicas: 3, tombstones: [] }));
    expect(p.reason).toBe('TiKV cannot scale in: 3 Up stores and PD keeps 3 replicas of each region (replication.max-replicas)');
    expect(p.event).toEqual({ type: 'Warning', reason: 'FailedScaleIn', message: p.reason });
    expect(p.wait).toBe('too-few-up-stores');
    expect(planOne(tikv(3, 2), pdState({ tombstones: [] })).reason).toBe('reading PD max-replicas before a TiKV scale-in');
  });

  it('a scale-in waits on an Offline store with its id, whatever max-replicas says', () => {
    const stores = [store(0, 9), store(1, 9), { ...store(2, 0, 'Offline'), regionCount: 70 }];
    const p = planOne(tikv(3, 2), pdState({ stores, maxReplicas: 3, tombstones: [] }));
    expect(p.reason).toBe('store 3 (c-tikv-2) is Offline: PD is moving its 70 regions away; replicas stay until it is Tombstone');
    expect({ wait: p.wait, storeId: p.storeId }).toEqual({ wait: 'store-offline-moving', storeId: 3 });
  });

  it('a replacement counts the other Up stores', () => {
    const p = planOne(
      tikv(3, 3, { replace: ['c-tikv-1'] }),
      pdState({ stores: [store(0, 10), store(1, 10), store(2, 10, 'Down')], maxReplicas: 3 }),
    );
    expect(p.reason).toBe(
      'cannot replace c-tikv-1 yet: only 1 other TiKV stores are Up and PD keeps 3 replicas of each region (replication.max-replicas): its regions would have nowhere to go',
    );
    expect(planOne(tikv(3, 3, { replace: ['c-tikv-1'] }), pdState()).reason).toBe('reading PD max-replicas before replacing c-tikv-1');
  });
});
