/**
 * The replacement records: each Pod Git asks to replace (`tidb-gitops.io/replace`), what it was
 * (its Pod, claims, store or member, by identity, so that only these are removed and never their
 * successors) and how far the replacement went. Kept in the status ConfigMap, so that a replacement
 * is done once, whoever leads; dropped once Git no longer asks for it. `plan/replace.ts` decides them.
 */

/** How far a replacement went. */
export type ReplacePhase =
  /** Taking the store offline until PD reports it Tombstone, or deleting the PD member. */
  | 'removing'
  /** The store or member is gone; the claims and then the Pod are being deleted. */
  | 'deleting'
  /** A new Pod runs on fresh claims; its store or member is back. */
  | 'done';

export interface ReplaceRecord {
  readonly component: 'pd' | 'tikv' | 'tiflash';
  readonly phase: ReplacePhase;
  /** When the replacement began, and ended (RFC 3339). */
  readonly startedAt: string;
  readonly doneAt?: string;
  /** The Pod and claims replaced, by UID. */
  readonly podUid?: string;
  readonly volumes: readonly { readonly name: string; readonly uid: string }[];
  /** TiKV, TiFlash: the store taken offline. */
  readonly storeId?: number;
  /** PD: the member deleted (a 64-bit id, as text). */
  readonly memberId?: string;
  /**
   * `pod`: asked by tidb-operator's `tidb.pingcap.com/replace-volume` on the Pod, which goes with the
   * Pod, so the record is kept until done. @default asked by Git (`tidb-gitops.io/replace`)
   */
  readonly requestedBy?: 'pod';
}

const PHASES: readonly ReplacePhase[] = ['removing', 'deleting', 'done'];

/** Reads back the replacement records, by Pod name, from a status document written before. */
export function replacementsOf(doc: unknown): Record<string, ReplaceRecord> {
  const r = (doc as { replacements?: unknown } | undefined)?.replacements;
  if (typeof r !== 'object' || r === null || Array.isArray(r)) return {};
  const out: Record<string, ReplaceRecord> = {};
  for (const [pod, v] of Object.entries(r as Record<string, Partial<ReplaceRecord>>)) {
    if (typeof v !== 'object' || v === null) continue;
    if (v.component !== 'pd' && v.component !== 'tikv' && v.component !== 'tiflash') continue;
    if (!PHASES.includes(v.phase as ReplacePhase) || typeof v.startedAt !== 'string') continue;
    out[pod] = {
      component: v.component,
      phase: v.phase as ReplacePhase,
      startedAt: v.startedAt,
      ...(typeof v.doneAt === 'string' && { doneAt: v.doneAt }),
      ...(typeof v.podUid === 'string' && { podUid: v.podUid }),
      volumes: Array.isArray(v.volumes) ? v.volumes.filter((x) => typeof x?.name === 'string' && typeof x?.uid === 'string') : [],
      ...(typeof v.storeId === 'number' && { storeId: v.storeId }),
      ...(typeof v.memberId === 'string' && { memberId: v.memberId }),
      ...(v.requestedBy === 'pod' && { requestedBy: 'pod' as const }),
    };
  }
  return out;
}
