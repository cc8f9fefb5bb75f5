/** The last operation record: each component's, shown in the status and kept across a restart. */
import type { ComponentKind } from '../../tidbcluster/names';

/** What the controller last did to a component, and why. */
export interface LastOperation {
  readonly action: string;
  readonly reason: string;
  readonly pod?: string;
  readonly time: string;
}

/** Reads back the last operations from a status document written before (a restart keeps them). */
export function lastOperationsOf(doc: unknown): Map<ComponentKind, LastOperation> {
  const out = new Map<ComponentKind, LastOperation>();
  const components = (doc as { components?: Record<string, { lastOperation?: LastOperation } | null> } | undefined)?.components;
  if (typeof components !== 'object' || components === null) return out;
  for (const [kind, s] of Object.entries(components)) {
    if (s?.lastOperation) out.set(kind as ComponentKind, s.lastOperation);
  }
  return out;
}
