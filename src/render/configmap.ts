import type { ConfigMap } from '../../imports/k8s';
import type { ResolvedCluster, ResolvedComponent } from '../tidbcluster/resolve';
import { names, selectorLabels } from '../tidbcluster/names';
import { namespaced } from './component';
import { configMapHash } from './config/hash';

/**
 * A component's ConfigMap. With `configUpdateStrategy: RollingUpdate` its name carries a hash of the
 * data (as the operator computes it), so a config change is a new pod template, i.e. a rolling restart;
 * with `InPlace` the name stays `<cluster>-<component>` and running Pods keep their config.
 */
export function componentConfigMap(cluster: ResolvedCluster, comp: ResolvedComponent, data: Record<string, string>): ConfigMap {
  const base = names.configMap(cluster.name, comp.kind);
  const rolling = comp.configUpdateStrategy === 'RollingUpdate';
  const name = rolling ? names.configRevision(cluster.name, comp.kind, configMapHash(data)) : base;
  return {
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: namespaced(cluster, name, selectorLabels(cluster.instance, comp.kind), rolling ? KEEP_AFTER_REMOVAL : undefined),
    data,
  };
}

/**
 * A config revision's ConfigMap must outlive its removal from Git: Pods of the old revision mount it
 * until the rollout has replaced them, and the StatefulSet re-creates a failed old Pod from it. These
 * annotations tell Argo CD and Flux not to prune it, and Argo CD not to count it as out of sync once
 * Git no longer has it; the companion controller deletes it when nothing uses it any more.
 */
export const KEEP_AFTER_REMOVAL: Readonly<Record<string, string>> = {
  'argocd.argoproj.io/sync-options': 'Prune=false',
  'argocd.argoproj.io/compare-options': 'IgnoreExtraneous',
  'kustomize.toolkit.fluxcd.io/prune': 'disabled',
};
