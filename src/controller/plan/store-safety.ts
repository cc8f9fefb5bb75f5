/**
 * How many stores must stay Up when a TiKV or TiFlash store is taken out (a scale-in, a
 * replacement): a TiKV store goes offline only while the other Up TiKV stores can hold every
 * region's `replication.max-replicas` copies, or PD would have nowhere to move its regions. A
 * TiFlash store, and a store already Offline (its removal is under way), are not held back. Also
 * the Up TiKV stores an upgrade moves leaders to and counts them on. Pure; the callers word it.
 */
import type { ComponentKind } from '../../tidbcluster/names';
import type { PdStore } from '../clients/pd';
import type { PdState } from '../view/view';

/** The Up TiKV stores (TiFlash's carry the label `engine: tiflash`), but the one `except` names. */
export function upTikvStores(stores: readonly PdStore[], except?: PdStore): PdStore[] {
  return stores.filter((s) => s.state === 'Up' && s.labels.engine !== 'tiflash' && s.id !== except?.id);
}

/** Why a store may not be taken out now. */
export type RemovalHold =
  /** PD's `replication.max-replicas` was not read, so the rule cannot be judged. */
  | { readonly why: 'max-replicas-unknown' }
  /**
   * Fewer other Up TiKV stores than `maxReplicas`: `up` counts the Up TiKV stores with this one,
   * `others` without it.
   */
  | { readonly why: 'too-few-up-stores'; readonly up: number; readonly others: number; readonly maxReplicas: number };

/** What holds back taking `store` (of component `kind`) out of PD, or undefined when it may go. */
export function removalHold(pd: Pick<PdState, 'stores' | 'maxReplicas'>, kind: ComponentKind, store: PdStore): RemovalHold | undefined {
  if (kind !== 'tikv' || store.state === 'Offline') return undefined;
  if (pd.maxReplicas === undefined) return { why: 'max-replicas-unknown' };
  const others = upTikvStores(pd.stores, store).length;
  if (others >= pd.maxReplicas) return undefined;
  return { why: 'too-few-up-stores', up: upTikvStores(pd.stores).length, others, maxReplicas: pd.maxReplicas };
}
