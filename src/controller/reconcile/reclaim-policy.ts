/**
 * Sets `spec.pvReclaimPolicy` on the PVs bound to the cluster's claims (decisions in
 * `plan/reclaim-policy.ts`), for a cluster whose ClusterRole grants `get` and `patch` on
 * persistentvolumes (`tidb-gitops.io/pv-reclaim-policy: "true"`). At most one look every `everyMs`
 * (at once when Git changes the policy): each bound claim's PV is read, and patched when it differs.
 *
 * Never throws: a refusal (the ClusterRole not applied, or applied without the rule) is the status's
 * `problem` and one Warning Event, and the next look tries again. A side task of the pass, which
 * reads the policy from the StatefulSets' settings.
 */
import type { Pvc, PersistentVolume } from '../model/objects';
import { boundClaims, reclaimPolicyOf, reclaimPolicyPatches, volumeHoldsClaim, type ReclaimPolicy } from '../plan/reclaim-policy';
import { KubeError, describe } from '../clients/kube-errors';
import { settingsOf } from '../model/settings';
import type { SidePass, SideTask } from './side-task';
import { names } from '../../tidbcluster/names';

/** What the status ConfigMap says about the PVs' reclaim policy (`volumes`). */
export interface ReclaimPolicyStatus {
  /** `spec.pvReclaimPolicy`, as Git asks for it. */
  readonly pvReclaimPolicy: ReclaimPolicy;
  /** The reclaim policy of each bound claim's PV, by claim, as last read or set. */
  readonly volumes: Readonly<Record<string, string>>;
  /** Why the policy is not applied now, in words; null when it is. */
  readonly problem: string | null;
}

export interface ReclaimPolicyDeps {
  readonly namespace: string;
  readonly cluster: string;
  readonly persistentVolume: (name: string) => Promise<PersistentVolume | undefined>;
  readonly patchReclaimPolicy: (name: string, policy: ReclaimPolicy) => Promise<void>;
  /** A Warning Event (the caller picks the object). */
  readonly warn: (reason: string, message: string) => Promise<void>;
  readonly info: (message: string, fields: Record<string, unknown>) => void;
  /** The cluster's claims as the informer cache holds them now. @default the claims the pass observed */
  readonly claims?: () => readonly Pvc[];
  /** @default 10000 */
  readonly everyMs?: number;
}

/** The status line when the API server refuses the controller a PV. */
export function notGrantedProblem(namespace: string, cluster: string, error: string): string {
  return (
    `pvReclaimPolicy is not applied: the controller may not get or patch PersistentVolumes (${error}); ` +
    `grant it with the annotation tidb-gitops.io/pv-reclaim-policy: "true" on the TidbCluster, and apply the ClusterRole and ClusterRoleBinding ` +
    `${names.nodeReader(namespace, cluster)} it renders (an Argo CD project must list both in clusterResourceWhitelist)`
  );
}

export class ReclaimPolicySetter implements SideTask {
  readonly name = 'PV reclaim policy';
  readonly readsOnly = false;
  private nextAt = 0;
  /** A refusal was reported: one Warning Event until the policy is applied again. */
  private warned = false;
  private status: ReclaimPolicyStatus | undefined;

  constructor(private readonly d: ReclaimPolicyDeps) {}

  current(): ReclaimPolicyStatus | undefined {
    return this.status;
  }

  /** `spec.pvReclaimPolicy` (every StatefulSet's settings carry it) onto the PVs of the cluster's claims. */
  run({ view }: SidePass): Promise<void> {
    const sts = view.components[0]?.sts;
    return this.pass({
      claims: this.d.claims?.() ?? view.volumes ?? [],
      policy: reclaimPolicyOf(sts ? settingsOf(sts).pvReclaimPolicy : undefined),
      now: view.now,
    });
  }

  async pass(input: { readonly claims: readonly Pvc[]; readonly policy: ReclaimPolicy; readonly now: number }): Promise<void> {
    const changed = this.status !== undefined && this.status.pvReclaimPolicy !== input.policy;
    if (input.now < this.nextAt && !changed) return;
    this.nextAt = input.now + (this.d.everyMs ?? 10_000);
    const claims = boundClaims(input.claims);
    const volumes = new Map<string, PersistentVolume | undefined>();
    const found: Record<string, string> = {};
    try {
      for (const c of claims) volumes.set(c.volume, await this.d.persistentVolume(c.volume));
      for (const c of claims) {
        const pv = volumes.get(c.volume);
        if (pv && volumeHoldsClaim(pv, this.d.namespace, c)) found[c.claim] = pv.spec?.persistentVolumeReclaimPolicy ?? '';
      }
      for (const p of reclaimPolicyPatches(this.d.namespace, claims, volumes, input.policy)) {
        await this.d.patchReclaimPolicy(p.volume, p.to);
        found[p.claim] = p.to;
        this.d.info('set the reclaim policy of a PersistentVolume', { volume: p.volume, claim: p.claim, from: p.from, to: p.to });
      }
      this.status = { pvReclaimPolicy: input.policy, volumes: found, problem: null };
      this.warned = false;
    } catch (err) {
      const error = describe(err);
      const problem =
        err instanceof KubeError && err.code === 403
          ? notGrantedProblem(this.d.namespace, this.d.cluster, error)
          : `pvReclaimPolicy is not applied yet: ${error}`;
      this.status = { pvReclaimPolicy: input.policy, volumes: this.status?.volumes ?? {}, problem };
      if (err instanceof KubeError && err.code === 403 && !this.warned) {
        this.warned = true;
        await this.d.warn('ReclaimPolicyNotApplied', problem);
      }
    }
  }
}
