/**
 * In which order the companion controller restarts a cluster's components, as tidb-operator's upgrade
 * admission rules have it: a component steps only while none of those it waits for is upgrading or
 * scaling. The controller's planner holds to it (`controller/plan/upgrade.ts`), and `diff` says it.
 *
 * Pure: facts of the contract both sides read.
 */
import { COMPONENTS, type ComponentKind } from './names';

/** Which components must be neither upgrading nor scaling before a component may step. */
export const BLOCKED_BY: Readonly<Record<ComponentKind, readonly ComponentKind[]>> = {
  // PD's micro-services go first, one after the other, in the order the operator reconciles them;
  // PD follows, so that at most one of the three services restarts at a time.
  tso: [],
  scheduling: ['tso'],
  pd: ['tso', 'scheduling'],
  tiproxy: [],
  tiflash: ['pd'],
  tikv: ['pd', 'tiflash'],
  pump: ['pd', 'tiflash', 'tikv'],
  tidb: ['pd', 'tikv', 'tiflash', 'pump'],
  ticdc: ['pd', 'tikv', 'tiflash', 'pump', 'tidb'],
};

/** The components in the order they restart: each after every one it waits for. */
export function restartOrder(kinds: readonly ComponentKind[]): ComponentKind[] {
  const depth = (k: ComponentKind): number => Math.max(0, ...BLOCKED_BY[k].map((b) => depth(b) + 1));
  return [...kinds].sort((a, b) => depth(a) - depth(b) || COMPONENTS.indexOf(a) - COMPONENTS.indexOf(b));
}
