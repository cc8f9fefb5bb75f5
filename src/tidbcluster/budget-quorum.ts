/**
 * Budgets that would let a drain take a quorum away. PD is a Raft group of its members: with `n` of
 * them it keeps serving while a majority (`floor(n/2) + 1`) is up, so a drain may take at most
 * `floor((n-1)/2)` at once. Each region is a Raft group of `replication.max-replicas` replicas (3 by
 * default) on as many TiKV stores, any of which a region may share: a drain that takes more than
 * `floor((r-1)/2)` stores at once can take a majority of some region's replicas.
 *
 * A budget looser than that is refused with the arithmetic. Where even the tightest budget there is
 * (1: a budget of 0 refuses every eviction and is refused itself) loses quorum, as on a PD of two
 * members, the render goes on with a warning: nothing a budget can say makes such a PD survive a drain.
 *
 * Pure: reads the resolved budgets and replica counts, reports at the annotation (or, for the
 * default budget, at the replica count).
 */
import type { SpecIssue } from './errors';
import { isTomlTable, type TomlTable } from '../base/toml';
import { DISRUPTION_BUDGETS_ANNOTATION, type DisruptionBudgets } from './guard-rails';

/** PD's `replication.max-replicas` when its config sets none. */
export const DEFAULT_MAX_REPLICAS = 3;

/**
 * How many Pods a budget lets go at once: a percentage of the replicas rounded up, as the disruption
 * controller scales `maxUnavailable`; undefined when it cannot tell.
 */
export function podsAllowed(max: number | string | undefined, replicas: number | undefined): number | undefined {
  if (typeof max === 'number') return max;
  const pct = typeof max === 'string' ? /^(\d+)%$/.exec(max) : null;
  if (!pct || replicas === undefined) return undefined;
  return Math.ceil((Number(pct[1]) * replicas) / 100);
}

/** How many members of a Raft group of `n` may be down while a majority is up. */
export const tolerableLoss = (n: number): number => Math.floor((n - 1) / 2);

/** `replication.max-replicas` of a PD config, or the default when it has none (or not a count). */
export function maxReplicas(pdConfig: TomlTable | undefined): number {
  const replication = pdConfig?.replication;
  const value = isTomlTable(replication) ? replication['max-replicas'] : undefined;
  const n = typeof value === 'bigint' ? Number(value) : value;
  return typeof n === 'number' && Number.isInteger(n) && n >= 1 ? n : DEFAULT_MAX_REPLICAS;
}

export interface QuorumInput {
  readonly budgets: DisruptionBudgets;
  /** The annotation's text, to tell a budget the user set from the default. @default none */
  readonly annotation?: string;
  /** PD members. @default none (no PD in this cluster) */
  readonly pdReplicas?: number;
  /** TiKV stores. @default none (no TiKV in this cluster) */
  readonly tikvReplicas?: number;
  /** Replicas of each region, from the PD config (or the PD joined). */
  readonly maxReplicas: number;
}

const ANNOTATION_PATH = `metadata.annotations["${DISRUPTION_BUDGETS_ANNOTATION}"]`;
const plural = (n: number, one: string, many: string): string => `${n} ${n === 1 ? one : many}`;

/** Refuses (into `issues`) or warns of (into `warnings`) each budget that can take a quorum away. */
export function checkBudgetQuorum(input: QuorumInput, issues: SpecIssue[], warnings: SpecIssue[]): void {
  const explicit = (c: string) => input.annotation !== undefined && new RegExp(`(^|,)\\s*${c}\\s*=`).test(input.annotation);
  const pd = input.budgets.pd;
  if (pd && input.pdReplicas !== undefined && input.pdReplicas >= 2) {
    const n = input.pdReplicas;
    const allowed = podsAllowed(pd.maxUnavailable, n)!;
    const keep = Math.floor(n / 2) + 1;
    const tolerable = tolerableLoss(n);
    const arithmetic = `${plural(n, 'PD member', 'PD members')} need ${keep} up to keep a majority, so a drain may take at most ${tolerable} at once; pd=${pd.maxUnavailable} lets it take ${allowed}`;
    if (allowed > Math.max(tolerable, 1)) {
      issues.push({
        path: ANNOTATION_PATH,
        message: `pd=${pd.maxUnavailable}: ${arithmetic}, and PD (so the whole cluster) stops until they are back; write pd=${Math.max(tolerable, 1)}`,
      });
    } else if (allowed > tolerable) {
      warnings.push({
        path: explicit('pd') ? ANNOTATION_PATH : 'spec.pd.replicas',
        message: `${arithmetic}: a drain that evicts one member stops PD (and the whole cluster) until it is back, and no budget can prevent it (0 refuses every eviction); run 3 PD members (or 1, which has no quorum to lose)`,
      });
    }
  }
  const tikv = input.budgets.tikv;
  if (tikv && input.tikvReplicas !== undefined) {
    const r = input.maxReplicas;
    const allowed = podsAllowed(tikv.maxUnavailable, input.tikvReplicas)!;
    const tolerable = tolerableLoss(r);
    if (allowed > Math.max(tolerable, 1)) {
      const of =
        typeof tikv.maxUnavailable === 'string'
          ? ` (${tikv.maxUnavailable} of ${plural(input.tikvReplicas, 'store', 'stores')}, rounded up)`
          : '';
      issues.push({
        path: ANNOTATION_PATH,
        message:
          `tikv=${tikv.maxUnavailable}: lets a drain take ${plural(allowed, 'TiKV store', 'TiKV stores')} at once${of}, and a region keeps ${r} replicas (replication.max-replicas), ` +
          `which need ${Math.floor(r / 2) + 1} up to keep a majority: ${allowed} stores may hold ${Math.min(allowed, r)} of one region's replicas, and it cannot be read or written until they are back; write tikv=${Math.max(tolerable, 1)}`,
      });
    }
  }
}
