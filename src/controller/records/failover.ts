import type { ComponentKind } from '../../tidbcluster/names';

/**
 * Failure records (the failover record): each one an extra replica of its component, kept with the
 * times members, stores and Pods turned unhealthy, so that a restarted controller keeps them.
 * `plan/failover.ts` decides them.
 */
export const FAILOVER_KINDS = ['pd', 'tikv', 'tiflash', 'tidb'] as const;

export type FailoverKind = (typeof FAILOVER_KINDS)[number];

export interface FailureRecord {
  readonly pod: string;
  /** When the record was made (RFC 3339). */
  readonly createdAt: string;
  /** PD: the failed member, deleted through PD's API. */
  readonly memberId?: string;
  /** TiKV, TiFlash: the Down store. */
  readonly storeId?: number;
  /** PD: the failed Pod and its claims, by UID, so that only these are deleted, never their successors. */
  readonly podUid?: string;
  readonly volumes?: readonly { readonly name: string; readonly uid: string }[];
  /** PD: the member, Pod and claims are deleted; the record now counts as an extra replica. */
  readonly memberDeleted?: boolean;
}

export interface ComponentFailover {
  /** By PD member name, store id or TiDB Pod name. */
  readonly records: Readonly<Record<string, FailureRecord>>;
  /** TiKV, TiFlash: set with the first record; `spec.<component>.failover.recoverByUID` equal to it recovers. */
  readonly failoverUID?: string;
}

export interface FailoverState {
  readonly components: Readonly<Partial<Record<FailoverKind, ComponentFailover>>>;
  /** Since when (RFC 3339) a member, store or Pod is seen unhealthy: `pd/<member>`, `tikv/<store id>`, `tidb/<pod>`. */
  readonly unhealthySince: Readonly<Record<string, string>>;
}

export const NO_FAILOVER: FailoverState = { components: {}, unhealthySince: {} };

export const isFailoverKind = (k: ComponentKind): k is FailoverKind => (FAILOVER_KINDS as readonly string[]).includes(k);

/** Replicas the component runs beyond its desired count because of failover. */
export function extraReplicas(kind: ComponentKind, state: FailoverState | undefined): number {
  if (!isFailoverKind(kind)) return 0;
  const records = Object.values(state?.components[kind]?.records ?? {});
  return kind === 'pd' ? records.filter((r) => r.memberDeleted).length : records.length;
}

export const hasRecords = (kind: ComponentKind, state: FailoverState | undefined): boolean =>
  isFailoverKind(kind) && Object.keys(state?.components[kind]?.records ?? {}).length > 0;

/** Reads failure records back from a status document written before. */
export function failoverOf(doc: unknown): FailoverState {
  const f = (doc as { failover?: Partial<FailoverState> } | undefined)?.failover;
  if (typeof f !== 'object' || f === null) return NO_FAILOVER;
  const components: Partial<Record<FailoverKind, ComponentFailover>> = {};
  for (const k of FAILOVER_KINDS) {
    const cf = f.components?.[k];
    if (cf && typeof cf.records === 'object' && cf.records !== null) components[k] = cf;
  }
  const since = typeof f.unhealthySince === 'object' && f.unhealthySince !== null ? f.unhealthySince : {};
  return { components, unhealthySince: since };
}
