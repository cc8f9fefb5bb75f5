/**
 * A GitOps tool syncing rendered manifests into the simulated cluster, the way Argo CD and Flux do:
 * apply every object of the new revision, then prune the objects of the previous revision that the new
 * one no longer has, except those annotated to be kept.
 */
import type { KubeObject, KubeSim } from '../sim/kube-api';

type Obj = Record<string, any>;

/**
 * `argocd`: client-side apply (kubectl's three-way merge), Argo CD's default; honours
 * `argocd.argoproj.io/sync-options: Prune=false`. `flux`: forced server-side apply as
 * `kustomize-controller`; honours `kustomize.toolkit.fluxcd.io/prune: disabled`.
 */
export type SyncStyle = 'argocd' | 'flux';

/** Field manager of Flux's applies. */
export const FLUX_MANAGER = 'kustomize-controller';

/** Kinds applied first, as both tools order a sync: what others refer to comes before them. */
const FIRST = ['ServiceAccount', 'ConfigMap', 'Secret', 'Role', 'RoleBinding', 'Service'];

const keyOf = (o: Obj) => `${o.kind}/${o.metadata.namespace ?? 'default'}/${o.metadata.name}`;

export class GitOpsTool {
  /** Objects the last sync applied. */
  private inventory = new Map<string, Obj>();
  /** What each sync pruned and what it kept because of an annotation, as `Kind/namespace/name`. */
  readonly pruned: string[] = [];
  readonly kept: string[] = [];

  constructor(readonly style: SyncStyle) {}

  keepsOnRemoval(o: Obj): boolean {
    const a = o.metadata?.annotations ?? {};
    if (this.style === 'argocd')
      return String(a['argocd.argoproj.io/sync-options'] ?? '')
        .split(',')
        .map((s) => s.trim())
        .includes('Prune=false');
    return a['kustomize.toolkit.fluxcd.io/prune'] === 'disabled';
  }

  /** One sync of a revision's objects. */
  sync(kube: KubeSim, objects: Obj[]): void {
    const rank = (o: Obj) => (FIRST.includes(o.kind) ? FIRST.indexOf(o.kind) : FIRST.length);
    const ordered = [...objects].sort((a, b) => rank(a) - rank(b));
    for (const o of ordered) {
      if (this.style === 'argocd') kube.apply(o as KubeObject);
      else kube.serverSideApply(o as KubeObject, FLUX_MANAGER, true);
    }
    const next = new Map(objects.map((o) => [keyOf(o), o]));
    for (const [key, old] of this.inventory) {
      if (next.has(key)) continue;
      if (this.keepsOnRemoval(old)) {
        this.kept.push(key);
        continue;
      }
      if (kube.get(old.kind, old.metadata.namespace ?? 'default', old.metadata.name))
        kube.delete(old.kind, old.metadata.namespace ?? 'default', old.metadata.name);
      this.pruned.push(key);
    }
    this.inventory = next;
  }
}
