/**
 * `spec.pvReclaimPolicy`: the reclaim policy of the PersistentVolumes bound to the cluster's claims,
 * as tidb-operator's reclaim policy manager sets it (`pkg/manager/meta/reclaim_policy_manager.go`):
 * the claims of the cluster's PD, TiKV, TiDB, TiFlash and Pump that are bound, each PV whose policy
 * differs. Pure: the claims and the PVs as read in, the patches to make out.
 *
 * A PV counts only when it names the claim back (`spec.claimRef`: namespace, name and, when both
 * know it, uid), so a PV that was released and rebound elsewhere, or a claim naming a PV it does not
 * hold, never changes another workload's volume.
 */
import { LABEL } from '../../tidbcluster/names';
import type { PersistentVolume, Pvc } from '../model/objects';

/** The components whose volumes the operator sets the policy of (its `IsPD`...`IsPump` checks). */
export const RECLAIM_POLICY_COMPONENTS: readonly string[] = ['pd', 'tikv', 'tidb', 'tiflash', 'pump'];

/** The policies `spec.pvReclaimPolicy` takes (the renderer refuses any other). */
export type ReclaimPolicy = 'Retain' | 'Delete';

/** A claim bound to a PV: the PV to read. */
export interface BoundClaim {
  readonly claim: string;
  readonly uid?: string;
  readonly volume: string;
}

/** One PV to patch. */
export interface ReclaimPolicyPatch {
  readonly volume: string;
  readonly claim: string;
  /** The policy it has now (`""` when the PV says none). */
  readonly from: string;
  readonly to: ReclaimPolicy;
}

/** The bound claims of the cluster's components whose PVs follow `spec.pvReclaimPolicy`, by claim name. */
export function boundClaims(claims: readonly Pvc[]): BoundClaim[] {
  return claims
    .filter((c) => RECLAIM_POLICY_COMPONENTS.includes(c.metadata.labels?.[LABEL.component] ?? ''))
    .filter((c) => typeof c.spec?.volumeName === 'string' && c.spec.volumeName !== '' && typeof c.metadata.name === 'string')
    .map((c) => ({ claim: c.metadata.name!, ...(c.metadata.uid && { uid: c.metadata.uid }), volume: c.spec!.volumeName! }))
    .sort((a, b) => a.claim.localeCompare(b.claim));
}

/** Whether the PV is bound to this claim of this namespace. */
export function volumeHoldsClaim(pv: PersistentVolume, namespace: string, claim: BoundClaim): boolean {
  const ref = pv.spec?.claimRef;
  if (!ref || ref.namespace !== namespace || ref.name !== claim.claim) return false;
  return !(ref.uid && claim.uid && ref.uid !== claim.uid);
}

/**
 * The PVs to patch: each bound claim's PV that holds the claim and whose policy is not `policy`. A PV
 * not read (undefined: gone, or not yet known) is skipped.
 */
export function reclaimPolicyPatches(
  namespace: string,
  claims: readonly BoundClaim[],
  volumes: ReadonlyMap<string, PersistentVolume | undefined>,
  policy: ReclaimPolicy,
): ReclaimPolicyPatch[] {
  const out: ReclaimPolicyPatch[] = [];
  for (const c of claims) {
    const pv = volumes.get(c.volume);
    if (!pv || !volumeHoldsClaim(pv, namespace, c)) continue;
    const from = pv.spec?.persistentVolumeReclaimPolicy ?? '';
    if (from !== policy) out.push({ volume: c.volume, claim: c.claim, from, to: policy });
  }
  return out;
}

/** `spec.pvReclaimPolicy` as the settings annotation carries it; anything else reads as the default. */
export function reclaimPolicyOf(value: unknown): ReclaimPolicy {
  return value === 'Delete' ? 'Delete' : 'Retain';
}
