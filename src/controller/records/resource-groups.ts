/**
 * The records of the resource groups the controller manages, kept in the status ConfigMap: which
 * groups are its own (created or adopted from a `ResourceGroup`), what Git asked of each when it last
 * made the group match (so that a change by hand is told from a change in Git), and the
 * deletionPolicy Git last gave it.
 */
import { PRIORITIES, type ResourceGroupInfo, type RunawayRuleInfo } from '../../tidbcluster/contract/resource-groups';

/** What Git asked of a group when the controller last made it match. */
export type AppliedGroup = Pick<ResourceGroupInfo, 'ruPerSecond' | 'priority' | 'burstable' | 'queryLimit'>;

/** One group the controller manages, by name. */
export interface ResourceGroupRecord {
  /** The document's name. */
  readonly document: string;
  /** What is done with it once its document leaves Git. */
  readonly deletionPolicy: 'Retain' | 'Delete';
  /** What Git asked when the group last matched. @default none (never made to match yet) */
  readonly applied?: AppliedGroup;
  /** Its document left Git with `Retain`: kept on the server, no longer changed. @default false */
  readonly retained?: boolean;
}

/** The part of a declared group that the server holds. */
export const appliedOf = (g: ResourceGroupInfo): AppliedGroup => ({
  ruPerSecond: g.ruPerSecond,
  ...(g.priority && { priority: g.priority }),
  ...(g.burstable && { burstable: true }),
  ...(g.queryLimit && { queryLimit: g.queryLimit }),
});

const positive = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) > 0;

function ruleOf(v: unknown): RunawayRuleInfo | undefined {
  const r = v as Partial<RunawayRuleInfo> | undefined;
  if (!r || !positive(r.execElapsedMs) || !['DRYRUN', 'COOLDOWN', 'KILL'].includes(r.action as string)) return undefined;
  const w = r.watch;
  const watch =
    w && ['EXACT', 'SIMILAR', 'PLAN'].includes(w.type)
      ? { type: w.type, ...(positive(w.durationMs) && { durationMs: w.durationMs }) }
      : undefined;
  return { execElapsedMs: r.execElapsedMs, action: r.action as RunawayRuleInfo['action'], ...(watch && { watch }) };
}

function appliedFrom(v: unknown): AppliedGroup | undefined {
  const a = v as Partial<AppliedGroup> | undefined;
  if (!a || !positive(a.ruPerSecond)) return undefined;
  const rule = ruleOf(a.queryLimit);
  return {
    ruPerSecond: a.ruPerSecond,
    ...((PRIORITIES as readonly unknown[]).includes(a.priority) && { priority: a.priority }),
    ...(a.burstable === true && { burstable: true }),
    ...(rule && { queryLimit: rule }),
  };
}

/** Reads back the records from a status document written before (`resourceGroupRecords`). */
export function resourceGroupsOf(doc: unknown): Record<string, ResourceGroupRecord> {
  const out: Record<string, ResourceGroupRecord> = {};
  const all = (doc as { resourceGroupRecords?: Record<string, Partial<ResourceGroupRecord>> } | undefined)?.resourceGroupRecords;
  if (!all || typeof all !== 'object') return out;
  for (const [name, r] of Object.entries(all)) {
    if (typeof r?.document !== 'string' || (r.deletionPolicy !== 'Retain' && r.deletionPolicy !== 'Delete')) continue;
    const applied = appliedFrom(r.applied);
    out[name] = {
      document: r.document,
      deletionPolicy: r.deletionPolicy,
      ...(applied && { applied }),
      ...(r.retained === true && { retained: true }),
    };
  }
  return out;
}
